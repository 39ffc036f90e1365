package policycmd

import (
	"context"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/report"
)

// AddPersonOptions are the arguments and flags of policy add-person.
type AddPersonOptions struct {
	F    *factory.Factory
	Args []string // NAME
	Keys []string // public key files
	// GitHub and GitLab are the person's forge accounts ("" for none),
	// GitHubID and GitLabID their numeric account ids.
	GitHub, GitLab, GitHubID, GitLabID string
}

func newCmdAddPerson(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "add-person",
		Usage:     "add a person with one or more keys (all count as one person)",
		ArgsUsage: "NAME",
		Flags:     append([]cli.Flag{&cli.StringSliceFlag{Name: "key", Usage: "public key `FILE`, or a keyless identity \"sigstore-oidc ISSUER SUBJECT\" (repeatable)", Required: true}}, forgeAccountFlags...),
		Action: func(c *cli.Context) error {
			return runAddPerson(c.Context, &AddPersonOptions{F: f, Args: c.Args().Slice(), Keys: c.StringSlice("key"),
				GitHub: c.String("github"), GitHubID: c.String("github-id"), GitLab: c.String("gitlab"), GitLabID: c.String("gitlab-id")})
		},
	}
}

func runAddPerson(_ context.Context, opts *AddPersonOptions) error {
	if len(opts.Args) != 1 {
		return report.Usagef("add-person takes exactly one NAME")
	}
	keys, err := cmdutil.ReadPublicKeys(opts.Keys)
	if err != nil {
		return err
	}
	name := opts.Args[0]
	if err := cmdutil.Stage(opts.F, "add person "+name, func(p, base *policy.Policy, now time.Time) error {
		return p.AddPerson(base, name, keys, now)
	}); err != nil {
		return err
	}
	return setForgeAccounts(opts.F, name, []forgeAccount{{"github", opts.GitHub, opts.GitHubID}, {"gitlab", opts.GitLab, opts.GitLabID}})
}

// AddRuleOptions are the arguments and flags of policy add-rule.
type AddRuleOptions struct {
	F       *factory.Factory
	Args    []string // NAME
	Refs    []string
	Paths   []string
	Allow   []string
	Require []string // GROUP=N
	TestsBy []string
	// Threshold is --threshold; ThresholdSet says whether it was given.
	Threshold     int
	ThresholdSet  bool
	TreeApprovals bool
	// SignedPush is --require-signed-push.
	SignedPush bool
	// File is the rule file to add the rule to (--file); empty for the
	// top-level rules.
	File string
}

func newCmdAddRule(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "add-rule",
		Usage:     "protect refs and/or files: who may change them, and how many must agree",
		ArgsUsage: "NAME",
		Description: `--ref alone protects refs (who may move them). --path alone protects files on
the refs that some rule's --ref names (the branches and tags that ship: main,
releases), not on review branches, which stay free to push; a merge into a
protected ref is still checked for the files it brings. --path with --ref protects
those files on those refs; --ref 'refs/**' (or '**') makes a path rule judge every
ref. A forge's own refs (refs/pull/, refs/merge-requests/, refs/changes/,
refs/keep-around/) are covered only by a --ref that names them, e.g.
'refs/pull/**'. Patterns: * (not /), ** (any),
? (one character). A protected tag (refs/tags/...) can be created once and never
moved or deleted. Examples:
   git secure policy add-rule main --ref refs/heads/main --allow alice --allow bob --threshold 2
   git secure policy add-rule main --ref refs/heads/main --require team:developers=2 --require team:security=1
   git secure policy add-rule crypto --path 'src/crypto/**' --allow team:security
   git secure policy add-rule tested --ref refs/heads/main --allow team:developers --require-tests-by ci
   git secure policy add-rule release --ref 'refs/tags/v*' --allow alice --require-signed-push`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "ref", Usage: "ref `PATTERN`, e.g. refs/heads/main or refs/tags/v* (repeatable)"},
			&cli.StringSliceFlag{Name: "path", Usage: "file `PATTERN`, e.g. src/crypto/** (repeatable)"},
			&cli.StringSliceFlag{Name: "allow", Usage: "`PERSON` or team:NAME who may sign (repeatable)"},
			&cli.IntFlag{Name: "threshold", Usage: "distinct allowed persons `N` required (default 1, or the sum of --require)"},
			&cli.StringSliceFlag{Name: "require", Usage: "`GROUP=N`: N distinct persons of GROUP (a person or team:NAME) must sign or approve, every --require at once (repeatable)"},
			&cli.StringSliceFlag{Name: "require-tests-by", Usage: "`GROUP` (person or team:NAME) that must have attested a passing test run on the new tree (git secure attest run)"},
			&cli.BoolFlag{Name: "tree-approvals", Usage: "let approvals bound to the new tree count (git secure attest approve --tree): they survive a rebase or amend that keeps the tree"},
			&cli.BoolFlag{Name: "require-signed-push", Usage: "every entry must arrive in a push signed with git push --signed by a person of the policy; the server stores the certificate (refs/secure/pushcerts) and refuses unsigned pushes"},
			fileFlag,
		},
		Action: func(c *cli.Context) error {
			return runAddRule(c.Context, &AddRuleOptions{F: f, Args: c.Args().Slice(), Refs: c.StringSlice("ref"), Paths: c.StringSlice("path"),
				Allow: c.StringSlice("allow"), Require: c.StringSlice("require"), TestsBy: c.StringSlice("require-tests-by"),
				Threshold: c.Int("threshold"), ThresholdSet: c.IsSet("threshold"), TreeApprovals: c.Bool("tree-approvals"), SignedPush: c.Bool("require-signed-push"), File: c.String("file")})
		},
	}
}

func runAddRule(_ context.Context, opts *AddRuleOptions) error {
	f := opts.F
	if len(opts.Args) != 1 {
		return report.Usagef("add-rule takes exactly one NAME")
	}
	rule := policy.Rule{Name: opts.Args[0], Refs: everyRefSpelled(opts.Refs), Paths: opts.Paths, Allow: opts.Allow, Threshold: opts.Threshold, TestsBy: opts.TestsBy, TreeApprovals: opts.TreeApprovals, SignedPush: opts.SignedPush}
	for _, q := range opts.Require {
		req, err := policy.ParseRequirement(q)
		if err != nil {
			return report.Usagef("%v", err)
		}
		rule.Require = append(rule.Require, req)
	}
	if opts.ThresholdSet && rule.Threshold < 1 {
		return report.Usagef("--threshold must be at least 1")
	}
	return cmdutil.Stage(f, "add rule "+rule.Name, func(p, base *policy.Policy, now time.Time) error {
		if err := p.AddRuleIn(base, opts.File, rule, now); err != nil {
			return err
		}
		if len(rule.Refs) == 0 && !p.HasRefPatterns() {
			f.Info("git-secure: warning: rule %s protects its files on the refs that rules name with --ref, and no rule names one yet\n", rule.Name)
			f.Info("git-secure: hint: add a rule for the branches that ship (git secure policy add-rule main --ref refs/heads/main ...), or give this one --ref\n")
		}
		return nil
	})
}

// everyRefSpelled reads --ref '**' as refs/**, the pattern for every ref.
func everyRefSpelled(refs []string) []string {
	out := slices.Clone(refs)
	for i, r := range out {
		if r == "**" {
			out[i] = "refs/**"
		}
	}
	return out
}

// AddTeamOptions are the arguments and flags of policy add-team.
type AddTeamOptions struct {
	F       *factory.Factory
	Args    []string // NAME
	Members []string
}

func newCmdAddTeam(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "add-team",
		Usage:     "add a team: a named set of persons that rules can allow or require (team:NAME)",
		ArgsUsage: "NAME",
		Flags:     []cli.Flag{&cli.StringSliceFlag{Name: "member", Usage: "`PERSON` (repeatable)", Required: true}},
		Action: func(c *cli.Context) error {
			return runAddTeam(c.Context, &AddTeamOptions{F: f, Args: c.Args().Slice(), Members: c.StringSlice("member")})
		},
	}
}

func runAddTeam(_ context.Context, opts *AddTeamOptions) error {
	if len(opts.Args) != 1 {
		return report.Usagef("add-team takes exactly one NAME")
	}
	name, members := opts.Args[0], opts.Members
	return cmdutil.Stage(opts.F, "add team "+name, func(p, base *policy.Policy, now time.Time) error {
		return p.AddTeam(base, name, members, now)
	})
}

// AddGlobalRuleOptions are the arguments and flags of policy
// add-global-rule.
type AddGlobalRuleOptions struct {
	F           *factory.Factory
	Args        []string // NAME
	Refs        []string
	NoForcePush bool
	// MinPersons is --min-persons; MinPersonsSet says whether it was given.
	MinPersons    int
	MinPersonsSet bool
}

func newCmdAddGlobalRule(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "add-global-rule",
		Usage:     "a rule on top of all others: --no-force-push, or --min-persons N for every protected update",
		ArgsUsage: "NAME",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "ref", Usage: "ref `PATTERN` it applies to (repeatable; default: every ref)"},
			&cli.BoolFlag{Name: "no-force-push", Usage: "matching refs may only fast-forward (no rewrite, no deletion)"},
			&cli.IntFlag{Name: "min-persons", Usage: "every update of a protected ref needs `N` distinct persons"},
		},
		Action: func(c *cli.Context) error {
			return runAddGlobalRule(c.Context, &AddGlobalRuleOptions{F: f, Args: c.Args().Slice(), Refs: c.StringSlice("ref"),
				NoForcePush: c.Bool("no-force-push"), MinPersons: c.Int("min-persons"), MinPersonsSet: c.IsSet("min-persons")})
		},
	}
}

func runAddGlobalRule(_ context.Context, opts *AddGlobalRuleOptions) error {
	if len(opts.Args) != 1 {
		return report.Usagef("add-global-rule takes exactly one NAME")
	}
	g := policy.GlobalRule{Name: opts.Args[0], Refs: opts.Refs}
	switch {
	case opts.NoForcePush && !opts.MinPersonsSet:
		g.Type = policy.GlobalNoForcePush
	case opts.MinPersonsSet && !opts.NoForcePush:
		g.Type, g.N = policy.GlobalMinPersons, opts.MinPersons
	default:
		return report.Usagef("give exactly one of --no-force-push or --min-persons N")
	}
	return cmdutil.Stage(opts.F, "add global rule "+g.Name, func(p, base *policy.Policy, now time.Time) error {
		return p.AddGlobalRule(base, g, now)
	})
}

// RenewOptions are the flags of policy renew.
type RenewOptions struct {
	F    *factory.Factory
	Root bool
}

func newCmdRenew(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:  "renew",
		Usage: "stage a new version of the rules (and with --root the root) that expires a year from now",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "root", Usage: "renew the root too (needs the root keys' threshold)"}},
		Action: func(c *cli.Context) error {
			return runRenew(c.Context, &RenewOptions{F: f, Root: c.Bool("root")})
		},
	}
}

func runRenew(_ context.Context, opts *RenewOptions) error {
	return cmdutil.Stage(opts.F, "renew", func(p, base *policy.Policy, now time.Time) error {
		return p.Renew(base, opts.Root, now)
	})
}
