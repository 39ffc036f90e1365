// Package explaincmd is "git secure explain REF": which rules apply to
// an update of REF, which are met, and who can still approve it and how.
// internal/porcelain evaluates; this package prints.
package explaincmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
)

// Options are the argument and flags of explain.
type Options struct {
	F    *factory.Factory
	Ref  string
	Key  string
	JSON bool
}

// NewCmdExplain is "git secure explain REF".
func NewCmdExplain(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "explain",
		Usage:     "which rules apply to REF, which are met, who can still approve and how",
		ArgsUsage: "REF",
		Description: `Explains the pending update of REF (its value here against its latest entry) or,
when there is none, the update its latest entry recorded. Exit 0 when the update
satisfies the policy, 1 when it does not.`,
		Flags: []cli.Flag{cmdutil.KeyFlag, cmdutil.JSONFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return report.Usagef("explain takes exactly one REF")
			}
			return runExplain(c.Context, &Options{F: f, Ref: c.Args().First(), Key: c.String("key"), JSON: c.Bool("json")})
		},
	}
}

// runExplain explains the update of opts.Ref: exit 1 when it does not
// satisfy the policy.
func runExplain(_ context.Context, opts *Options) error {
	f := opts.F
	r, ref, err := f.SetUpRef(opts.Ref)
	if err != nil {
		return err
	}
	x, err := r.Explain(ref, opts.Key)
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := f.PrintJSON(x); err != nil {
			return err
		}
	} else {
		PrintExplanation(f, x)
	}
	if !x.Satisfied && !x.Missing {
		return report.Exit(report.ExitFailed)
	}
	return nil
}

// printMissing prints the rules that would apply to x.Ref, which is
// neither here nor in the log: there is no update to judge.
func printMissing(f *factory.Factory, x *porcelain.Explanation) {
	f.Out("%s: not here and not in the log: fetch it (git fetch) or create it to explain its update\n", x.Ref)
	if !x.Protected {
		f.Out("no rule protects %s: anyone in the policy may record it\n", x.Ref)
	}
	for _, r := range x.Rules {
		f.Out("rule %s %s\n", r.Name, cmdutil.RuleSummary(r.RuleDoc))
	}
}

// PrintExplanation prints x for people (explain, verify --mergeable).
func PrintExplanation(f *factory.Factory, x *porcelain.Explanation) {
	if x.Missing {
		printMissing(f, x)
		return
	}
	state := fmt.Sprintf("recorded at %s (entry #%d)", cmdutil.ShortHash(x.Recorded), x.Entry)
	if x.Entry == 0 {
		state = "not recorded yet"
	}
	f.Out("%s: %s\n", x.Ref, state)
	if x.Pending {
		f.Out("pending update: %s -> %s (not recorded yet)\n", cmdutil.ShortHash(x.Old), cmdutil.ShortHash(x.New))
	} else if x.Entry != 0 {
		f.Out("latest update: %s -> %s\n", cmdutil.ShortHash(x.Old), cmdutil.ShortHash(x.New))
	}
	signer := x.Signer
	switch {
	case signer != "":
	case x.SignerKey != "":
		signer = fmt.Sprintf("(your key %s is no person in the policy: git secure policy add-person, or pass --key)", x.SignerKey)
	case x.Pending:
		signer = "(no key: pass --key, or set user.signingkey with gpg.format ssh)"
	default:
		signer = "(no person in the policy)"
	}
	f.Out("signer: %s; approved by: %s\n", signer, cmdutil.OrNone(x.Approved))
	for _, v := range x.ViaForge {
		f.Out("  through the forge: %s\n", v)
	}
	if !x.Protected {
		f.Out("no rule protects %s: anyone in the policy may record it\n", x.Ref)
	}
	for _, r := range x.Rules {
		f.Out("rule %s %s\n", r.Name, cmdutil.RuleSummary(r.RuleDoc))
		if len(r.Chain) > 0 {
			top := "rules keys"
			if r.Org {
				top = "organisation rules keys"
			}
			f.Out("  delegated: %s\n", strings.Join(append([]string{top}, r.Chain...), " -> "))
		}
		if r.Untrusted != "" {
			f.Out("  rule file counts for nothing: %s\n", r.Untrusted)
		}
		switch {
		case !r.Applies:
			f.Out("  does not apply to this update (no protected file changes)\n")
		default:
			f.Out("  counted: %s\n", cmdutil.OrNone(r.Signed))
			if len(r.Files) > 0 {
				more := ""
				if r.MoreFiles > 0 {
					more = fmt.Sprintf(" and %d more", r.MoreFiles)
				}
				f.Out("  protected files changed: %s%s\n", strings.Join(r.Files, ", "), more)
			}
		}
	}
	for _, n := range x.Notes {
		f.Out("note: %s\n", n)
	}
	if x.Satisfied {
		f.Out("result: satisfied\n")
		return
	}
	f.Out("result: NOT satisfied\n")
	for _, fl := range x.Failures {
		f.Out("  - %s: %s\n    next: %s\n", cmdutil.OrWord(fl.Rule, "policy"), fl.Detail, fl.Next)
	}
}
