package cli

import (
	"fmt"
	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/porcelain"
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
		a.out("rule %s %s\n", r.Name, cmdutil.RuleSummary(cmdutil.RuleJSON{Refs: r.Refs, Paths: r.Paths, Allow: r.Allow, Threshold: r.Threshold, Require: r.Require, TestsBy: r.TestsBy, EveryRef: r.EveryRef}))
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
