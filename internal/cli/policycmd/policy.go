// Package policycmd is "git secure policy": persons, teams, rules, global
// rules and freshness, each change staged on refs/secure/policy-staging,
// then signed and put in force (sign, apply), listed, checked against the
// log's history, or discarded. The work is done by internal/porcelain and
// internal/policy.
package policycmd

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/report"
)

// NewCmdPolicy is "git secure policy ...".
func NewCmdPolicy(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:  "policy",
		Usage: "persons, rules, and staged policy changes (sign, apply)",
		Description: `Changes are staged on refs/secure/policy-staging; "policy sign" adds your
signature, "policy apply" signs if needed and puts the change in force once the
rules keys' threshold (and, for root changes, the root thresholds) are met.`,
		Subcommands: []*cli.Command{
			newCmdAddPerson(f),
			cmdutil.NewCmdRemove(f, "remove-person", "remove a person (refused while a top-level rule, team or delegation names them; rule files that name them count for nothing from then on)", "remove person ", (*policy.Policy).RemovePerson),
			newCmdAddKey(f),
			newCmdSetForgeAccount(f),
			newCmdRemoveKey(f),
			newCmdAddRule(f),
			newCmdAddTeam(f),
			cmdutil.NewCmdRemove(f, "remove-team", "remove a team no rule names", "remove team ", (*policy.Policy).RemoveTeam),
			newCmdAddGlobalRule(f),
			cmdutil.NewCmdRemove(f, "remove-global-rule", "remove a global rule", "remove global rule ", (*policy.Policy).RemoveGlobalRule),
			newCmdRemoveRule(f),
			newCmdList(f),
			newCmdSign(f),
			newCmdApply(f),
			newCmdDelegate(f),
			cmdutil.NewCmdRemove(f, "remove-delegation", "remove a delegation, its rule file and every file below it", "remove delegation ", (*policy.Policy).RemoveDelegation),
			newCmdRenew(f),
			newCmdCheck(f),
			newCmdDiscard(f),
			newCmdSetFreshness(f),
			newCmdInherit(f),
			cmdutil.NewCmdRemoveSetting(f, "remove-freshness", "stop requiring freshness statements (a root change)", "remove freshness", (*policy.Policy).RemoveFreshness),
		},
	}
}

// RemoveRuleOptions are the arguments and flags of policy remove-rule.
type RemoveRuleOptions struct {
	F    *factory.Factory
	Args []string // NAME
	// File is the rule file holding the rule (--file); empty for the
	// top-level rules.
	File string
}

func newCmdRemoveRule(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "remove-rule",
		Usage:     "remove a rule",
		ArgsUsage: "NAME",
		Flags:     []cli.Flag{fileFlag},
		Action: func(c *cli.Context) error {
			return runRemoveRule(c.Context, &RemoveRuleOptions{F: f, Args: c.Args().Slice(), File: c.String("file")})
		},
	}
}

func runRemoveRule(_ context.Context, opts *RemoveRuleOptions) error {
	if len(opts.Args) != 1 {
		return report.Usagef("remove-rule takes exactly one NAME")
	}
	name, file := opts.Args[0], opts.File
	return cmdutil.Stage(opts.F, "remove rule "+name, func(p, base *policy.Policy, now time.Time) error {
		return p.RemoveRuleIn(base, file, name, now)
	})
}
