package forgecmd

import (
	"errors"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
)

// RecordMergeOptions are the flags of forge record-merge.
type RecordMergeOptions struct {
	F   *factory.Factory
	Ref string
	To  string // the forge's value of Ref (default: Ref's value here)
	Key string // the forge app's signing key
	// JSON writes the result (or the refusal's recorded part) as JSON.
	JSON bool
}

func newCmdRecordMerge(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "record-merge",
		Usage:     "record the forge's move of a branch (merge button, squash, rebase merge) if the approvals recorded for it meet the policy",
		ArgsUsage: "REF",
		Description: `Run by the CI job a push to a protected branch triggers, with the forge app key
(--key; the policy must trust it: trust add-forge-app). It records, signed by the
bridge, the move of REF from the value the log records to --to (default: REF's
value here) if and only if the policy allows it with the approvals recorded for
it: the bridge is no person and never counts, so persons must meet every rule,
with their own approvals or forge reviews (git secure forge record-approvals,
bound to the tree of the reviewed result: the commit a merge button, squash or
rebase merge makes has that tree; the rule needs --tree-approvals). Two merges
made before the job ran are recorded as two steps, each needing its own
approvals. Otherwise it exits 1 naming who must still approve, or saying the
move must be reverted. Push the log afterwards: git push origin refs/secure/rsl.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "to", Usage: "the `COMMIT` the forge moved REF to (default: REF's value here)"},
			cmdutil.KeyFlag, cmdutil.JSONFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return report.Usagef("forge record-merge takes one REF (the branch the forge moved), got %d arguments", c.NArg())
			}
			return runRecordMerge(&RecordMergeOptions{F: f, Ref: c.Args().First(), To: c.String("to"), Key: c.String("key"), JSON: c.Bool("json")})
		},
	}
}

func runRecordMerge(opts *RecordMergeOptions) error {
	f := opts.F
	r, err := f.Repo()
	if err != nil {
		return err
	}
	ref, err := r.FullRefName(opts.Ref)
	if err != nil {
		return err
	}
	rev := opts.To
	if rev == "" {
		rev = ref
	}
	to, err := r.Git.ResolveRevision(rev)
	if err != nil {
		return report.Usagef("unknown commit %q: fetch it first (git fetch origin %s)", rev, opts.Ref)
	}
	res, err := r.RecordForgeMerge(ref, to, opts.Key)
	var refused *porcelain.ForgeMergeRefused
	if errors.As(err, &refused) {
		res = refused.Result
	} else if err != nil {
		return err
	}
	if opts.JSON && err == nil {
		return f.PrintJSON(res)
	}
	for _, e := range res.Entries {
		f.Out("recorded entry #%d: %s %s..%s, signed by forge app %s, approved by %s\n", e.Entry, res.Ref, cmdutil.ShortHash(e.Old), cmdutil.ShortHash(e.New), res.App, strings.Join(e.Approvers, ", "))
	}
	if res.NoOp != "" {
		f.Out("nothing to record: %s\n", res.NoOp)
	}
	if refused != nil && refused.Step != nil {
		x := refused.Step
		f.Out("%s %s..%s is not allowed with the approvals recorded for it:\n", x.Ref, cmdutil.ShortHash(x.Old), cmdutil.ShortHash(x.New))
		for _, fl := range x.Failures {
			f.Out("  rule %s: %s\n", fl.Rule, fl.Detail)
			if fl.Next != "" {
				f.Out("    next: %s\n", fl.Next)
			}
		}
		if len(x.Approved) > 0 {
			f.Out("  approved by: %s\n", strings.Join(x.Approved, ", "))
		}
		for _, v := range x.ViaForge {
			f.Out("  through the forge: %s\n", v)
		}
		for _, n := range x.Notes {
			f.Out("  note: %s\n", n)
		}
	}
	if err != nil {
		if len(res.Entries) > 0 {
			f.Out("next: git push origin refs/secure/rsl (the recorded steps), then fix the rest\n")
		}
		return err
	}
	if len(res.Entries) > 0 {
		f.Out("next: git push origin refs/secure/rsl\n")
	}
	return nil
}
