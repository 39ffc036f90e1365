package cli

import (
	"errors"
	"fmt"
	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/verify"
)

func (a *app) explainCommand() *cli.Command {
	return &cli.Command{
		Name:      "explain",
		Usage:     "which rules apply to REF, which are met, who can still approve and how",
		ArgsUsage: "REF",
		Description: `Explains the pending update of REF (its value here against its latest entry) or,
when there is none, the update its latest entry recorded. Exit 0 when the update
satisfies the policy, 1 when it does not.`,
		Flags: []cli.Flag{keyFlag, jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("explain takes exactly one REF")
			}
			r, err := a.open()
			if err != nil {
				return err
			}
			x, err := r.Explain(c.Args().First(), c.String("key"))
			if err != nil {
				return err
			}
			if c.Bool("json") {
				if err := a.printJSON(x); err != nil {
					return err
				}
			} else {
				a.printExplanation(x)
			}
			if !x.Satisfied {
				return cli.Exit("", ExitFailed)
			}
			return nil
		},
	}
}

func (a *app) printExplanation(x *porcelain.Explanation) {
	state := fmt.Sprintf("recorded at %s (entry #%d)", shortHash(x.Recorded), x.Entry)
	if x.Entry == 0 {
		state = "not recorded yet"
	}
	a.out("%s: %s\n", x.Ref, state)
	if x.Pending {
		a.out("pending update: %s -> %s (not recorded yet)\n", shortHash(x.Old), shortHash(x.New))
	} else if x.Entry != 0 {
		a.out("latest update: %s -> %s\n", shortHash(x.Old), shortHash(x.New))
	}
	signer := x.Signer
	if signer == "" {
		signer = "(no person: pass --key, or set user.signingkey)"
	}
	a.out("signer: %s; approved by: %s\n", signer, orNone(x.Approved))
	if !x.Protected {
		a.out("no rule protects %s: anyone in the policy may record it\n", x.Ref)
	}
	for _, r := range x.Rules {
		a.out("rule %s %s\n", r.Name, ruleSummary(ruleJSON{Refs: r.Refs, Paths: r.Paths, Allow: r.Allow, Threshold: r.Threshold, Require: r.Require, TestsBy: r.TestsBy, EveryRef: r.EveryRef}))
		switch {
		case !r.Applies:
			a.out("  does not apply to this update (no protected file changes)\n")
		default:
			a.out("  counted: %s\n", orNone(r.Signed))
			if len(r.Files) > 0 {
				a.out("  protected files changed: %s\n", strings.Join(r.Files, ", "))
			}
		}
	}
	for _, n := range x.Notes {
		a.out("note: %s\n", n)
	}
	if x.Satisfied {
		a.out("result: satisfied\n")
		return
	}
	a.out("result: NOT satisfied\n")
	for _, f := range x.Failures {
		a.out("  - %s: %s\n    next: %s\n", orWord(f.Rule, "policy"), f.Detail, f.Next)
	}
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "nobody"
	}
	return strings.Join(xs, ", ")
}

func orWord(s, w string) string {
	if s == "" {
		return w
	}
	return s
}

func (a *app) policyCheck(c *cli.Context) error {
	r, err := a.open()
	if err != nil {
		return err
	}
	st, err := r.LoadStaged()
	if err != nil {
		return err
	}
	opts, err := cmdutil.JudgedOptions(r.Git, "")
	if err != nil {
		return err
	}
	// What a staged policy would refuse in history, not whether the
	// server's state is fresh.
	opts.Now, opts.PolicyOverride, opts.SkipFreshness = a.env.Now(), st.Policy, true
	res, err := verify.Verify(r.Git, opts)
	var failed *verify.Failed
	if err != nil && !errors.As(err, &failed) {
		return err
	}
	if c.Bool("json") {
		out := cmdutil.NewVerifyJSON(res, failed)
		if err := a.printJSON(out); err != nil {
			return err
		}
		if failed != nil {
			return cli.Exit("", ExitFailed)
		}
		return nil
	}
	what := "the staged policy"
	if st.Commit.IsZero() {
		what = "the policy in force (nothing is staged)"
	}
	if failed == nil {
		a.out("%s accepts all %d entries of the log's history\n", what, res.Entries)
		return nil
	}
	a.out("%s would have refused %d past update(s):\n", what, len(failed.Problems))
	for _, p := range failed.Problems {
		a.out("  - %s\n", p.Error())
	}
	return cli.Exit("", ExitFailed)
}
