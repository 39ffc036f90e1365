package policycmd

import (
	"context"
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/verify"
)

// StagedOptions are the flags of the commands on the staged change: sign,
// apply, check, discard.
type StagedOptions struct {
	F    *factory.Factory
	Key  string
	JSON bool
	// Staged is the staged commit the user reviewed (--staged COMMIT):
	// needed to sign or apply a change this clone did not make.
	Staged string
	// File limits signing to one rule file (--file NAME).
	File string
}

// stagedCommitFlag names the staged change someone reviewed: a staged
// change not made in this clone (a fetch brought it; anyone who can push
// can stage one) is signed or applied only when named.
var stagedCommitFlag = &cli.StringFlag{
	Name:  "staged",
	Usage: "the staged change's `COMMIT` (7 or more hex digits), after reviewing it with git secure policy list --staged: needed when the change was not made in this clone",
}

func newCmdSign(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:  "sign",
		Usage: "add your signature to the staged change",
		Flags: []cli.Flag{cmdutil.KeyFlag, stagedCommitFlag, fileFlag},
		Action: func(c *cli.Context) error {
			return runSign(c.Context, &StagedOptions{F: f, Key: c.String("key"), Staged: c.String("staged"), File: c.String("file")})
		},
	}
}

func runSign(_ context.Context, opts *StagedOptions) error {
	r, err := opts.F.Repo()
	if err != nil {
		return err
	}
	st, err := r.SignReviewed(opts.Key, opts.Staged, opts.File)
	if err != nil {
		return err
	}
	opts.F.Out("signed the staged change\n")
	return cmdutil.PrintStatus(opts.F, st)
}

func newCmdApply(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:  "apply",
		Usage: "sign if needed and put the staged change in force when its thresholds are met",
		Flags: []cli.Flag{cmdutil.KeyFlag, cmdutil.JSONFlag, stagedCommitFlag, fileFlag},
		Action: func(c *cli.Context) error {
			return runApply(c.Context, &StagedOptions{F: f, Key: c.String("key"), JSON: c.Bool("json"), Staged: c.String("staged"), File: c.String("file")})
		},
	}
}

func runApply(_ context.Context, opts *StagedOptions) error {
	f := opts.F
	r, err := f.Repo()
	if err != nil {
		return err
	}
	res, st, err := r.ApplyReviewed(opts.Key, opts.Staged, opts.File)
	if err != nil {
		if errors.Is(err, porcelain.ErrThresholdPending) && st != nil {
			cmdutil.PrintStatus(f, st)
			f.Info("git-secure: hint: each missing signer fetches refs/secure/policy-staging, reviews what it changes (git secure policy list --staged) and signs it with git secure policy sign --staged COMMIT (the staged commit list names), then anyone runs git secure policy apply (with --staged COMMIT where the change was not made in their clone)\n")
		}
		return err
	}
	if opts.JSON {
		return f.PrintJSON(res)
	}
	f.Out("policy applied: root v%d, rules v%d, recorded as entry #%d\n", res.RootVersion, res.RulesVersion, res.Entry)
	return nil
}

func newCmdCheck(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "replay the whole history under the staged policy: what would it have refused?",
		Flags: []cli.Flag{cmdutil.JSONFlag},
		Action: func(c *cli.Context) error {
			return runCheck(c.Context, &StagedOptions{F: f, JSON: c.Bool("json")})
		},
	}
}

// runCheck replays the log under the staged policy (or the one in force
// when nothing is staged): exit 1 when it would have refused an update.
func runCheck(_ context.Context, opts *StagedOptions) error {
	f := opts.F
	r, err := f.Repo()
	if err != nil {
		return err
	}
	st, err := r.LoadStaged()
	if err != nil {
		return err
	}
	vo, err := cmdutil.JudgedOptions(r.Git, "")
	if err != nil {
		return err
	}
	// What a staged policy would refuse in history, not whether the
	// server's state is fresh.
	vo.Now, vo.PolicyOverride, vo.SkipFreshness = f.Now(), st.Policy, true
	res, err := verify.Verify(r.Git, vo)
	failed, ok := cmdutil.Failed(err)
	if !ok {
		return err
	}
	if opts.JSON {
		return cmdutil.PrintVerifyJSON(f, cmdutil.NewVerifyJSON(res, failed))
	}
	what := "the staged policy"
	if st.Commit.IsZero() {
		what = "the policy in force (nothing is staged)"
	}
	if failed == nil {
		f.Out("%s accepts all %d entries of the log's history\n", what, res.Entries)
		return nil
	}
	f.Out("%s would have refused %d past update(s):\n", what, len(failed.Problems))
	for _, p := range failed.Problems {
		f.Out("  - %s\n", p.Error())
	}
	return report.Exit(report.ExitFailed)
}

func newCmdDiscard(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:  "discard",
		Usage: "drop the staged change",
		Action: func(c *cli.Context) error {
			return runDiscard(c.Context, &StagedOptions{F: f})
		},
	}
}

func runDiscard(_ context.Context, opts *StagedOptions) error {
	r, err := opts.F.Repo()
	if err != nil {
		return err
	}
	return r.Discard()
}
