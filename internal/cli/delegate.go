package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/sign"
)

// fileFlag selects a rule file (TUF delegated targets) instead of
// targets.json on add-rule, remove-rule, sign, apply and list.
var fileFlag = &cli.StringFlag{Name: "file", Usage: "rule file `NAME` (a delegation's) instead of the top-level rules"}

// delegateCommands are the policy subcommands that manage delegations.
func (a *app) delegateCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:      "delegate",
			Usage:     "hand a namespace (refs and/or paths) to a rule file its own signers keep",
			ArgsUsage: "NAME",
			Description: `Creates the rule file NAME, owned by the persons given with --key: they add,
change and remove rules inside the namespace (git secure policy add-rule --file
NAME ...; sign --file NAME; apply) without the rules keys, and can delegate
further (delegate --file NAME). Their rules apply only inside the namespace;
the rules of targets.json (and of every file the search reaches) still apply.
Delegations are searched in order, depth first (TUF order); a --terminating one
that matches ends the search. The new file must be signed by its signers too
before the change applies (they run git secure policy sign --file NAME).
Examples:
   git secure policy delegate security --path 'src/crypto/**' --key team:security
   git secure policy delegate crypto --file security --path 'src/crypto/**' --key erin --key frank --threshold 1
   git secure policy delegate release --ref 'refs/heads/release/*' --key team:release --terminating`,
			Flags: []cli.Flag{
				&cli.StringSliceFlag{Name: "ref", Usage: "ref `PATTERN` of the namespace (repeatable)"},
				&cli.StringSliceFlag{Name: "path", Usage: "file `PATTERN` of the namespace (repeatable)"},
				&cli.StringSliceFlag{Name: "key", Usage: "signer: `PERSON`, team:NAME, or a public key FILE of a person (repeatable)", Required: true},
				&cli.IntFlag{Name: "threshold", Usage: "distinct signer persons `N` who must sign the rule file (default 1)"},
				&cli.BoolFlag{Name: "terminating", Usage: "a ref or file this namespace matches is not searched further in later delegations"},
				&cli.StringFlag{Name: "file", Usage: "the delegating rule file `NAME` (default: the top-level rules)"},
			},
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return usageErr("delegate takes exactly one NAME")
				}
				if c.IsSet("threshold") && c.Int("threshold") < 1 {
					return usageErr("--threshold must be at least 1")
				}
				d := policy.Delegation{Name: c.Args().First(), Refs: everyRefSpelled(c.StringSlice("ref")), Paths: c.StringSlice("path"),
					Threshold: c.Int("threshold"), Terminating: c.Bool("terminating")}
				keys := c.StringSlice("key")
				parent := c.String("file")
				return a.stage("delegate "+d.Name, func(p, base *policy.Policy, now time.Time) error {
					signers, err := signerGroups(p, keys)
					if err != nil {
						return err
					}
					d.Signers = signers
					return p.Delegate(base, parent, d, now)
				})
			},
		},
		{
			Name:      "remove-delegation",
			Usage:     "remove a delegation, its rule file and every file below it",
			ArgsUsage: "NAME",
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return usageErr("remove-delegation takes exactly one NAME")
				}
				name := c.Args().First()
				return a.stage("remove delegation "+name, func(p, base *policy.Policy, now time.Time) error {
					return p.RemoveDelegation(base, name, now)
				})
			},
		},
	}
}

// signerGroups turns --key values into persons and teams: a name or
// team:NAME as given, a public key file into the person who owns it.
func signerGroups(p *policy.Policy, keys []string) ([]string, error) {
	var out []string
	for _, k := range keys {
		if _, ok := p.Members(k); ok {
			out = append(out, k)
			continue
		}
		if _, err := os.Stat(k); err != nil {
			return nil, fmt.Errorf("%w: --key %s: no person or team of that name, and no such key file (add the person first: git secure policy add-person)", policy.ErrInvalidChange, k)
		}
		pubs, err := readPublicKeys([]string{k})
		if err != nil {
			return nil, err
		}
		person, ok := p.PersonByFingerprint(sign.Fingerprint(pubs[0]))
		if !ok {
			return nil, fmt.Errorf("%w: --key %s: key %s belongs to no person (add it with git secure policy add-person)", policy.ErrInvalidChange, k, sign.Fingerprint(pubs[0]))
		}
		out = append(out, person.Name)
	}
	return out, nil
}

type delegationJSON struct {
	Name        string     `json:"name"`
	Parent      string     `json:"parent,omitempty"`
	Chain       []string   `json:"chain"`
	Refs        []string   `json:"refs,omitempty"`
	Paths       []string   `json:"paths,omitempty"`
	Signers     []string   `json:"signers"`
	Threshold   int        `json:"threshold"`
	Terminating bool       `json:"terminating,omitempty"`
	Version     int64      `json:"version"`
	SignedBy    []string   `json:"signedBy"`
	Untrusted   string     `json:"untrusted,omitempty"`
	Outside     []string   `json:"outside,omitempty"`
	Rules       []ruleJSON `json:"rules"`
}

func delegationsJSON(p *policy.Policy) []delegationJSON {
	out := []delegationJSON{}
	for _, f := range p.RuleFiles() {
		d, _ := p.Delegation(f.Name)
		j := delegationJSON{Name: d.Name, Parent: d.Parent, Chain: p.Chain(d.Name), Refs: d.Refs, Paths: d.Paths, Signers: d.Signers,
			Threshold: d.Threshold, Terminating: d.Terminating, SignedBy: f.SignedBy, Untrusted: f.Untrusted, Outside: f.Outside, Rules: []ruleJSON{}}
		if f.Meta != nil {
			j.Version = f.Meta.Signed.Version
		}
		for _, r := range f.Rules {
			j.Rules = append(j.Rules, toRuleJSON(r))
		}
		out = append(out, j)
	}
	return out
}

func toRuleJSON(r *policy.Rule) ruleJSON {
	rj := ruleJSON{Name: r.Name, Refs: r.Refs, Paths: r.Paths, Allow: r.Allow, Threshold: r.Threshold, TestsBy: r.TestsBy, TreeApprovals: r.TreeApprovals, EveryRef: r.EveryRef}
	for _, q := range r.Require {
		rj.Require = append(rj.Require, q.String())
	}
	return rj
}

// printDelegations prints the delegations of p (only the named file's
// when file is set) as text.
func (a *app) printDelegations(p *policy.Policy, file string) {
	ds := delegationsJSON(p)
	if file == "" && len(ds) == 0 {
		return
	}
	a.out("\nrule files (delegations, in search order):\n")
	for _, d := range ds {
		if file != "" && d.Name != file {
			continue
		}
		var ns []string
		for _, x := range d.Refs {
			ns = append(ns, "ref "+x)
		}
		for _, x := range d.Paths {
			ns = append(ns, "path "+x)
		}
		term := ""
		if d.Terminating {
			term = ", terminating"
		}
		a.out("  %-16s %s (via %s%s): %d of %s sign it; v%d signed by %s\n", d.Name, strings.Join(ns, ", "),
			strings.Join(append([]string{"rules keys"}, d.Chain...), " -> "), term, d.Threshold, strings.Join(d.Signers, ", "), d.Version, orNone(d.SignedBy))
		if d.Untrusted != "" {
			a.out("    counts for nothing (every update in its namespace fails): %s\n", d.Untrusted)
		}
		for _, o := range d.Outside {
			a.out("    warning: %s\n", o)
		}
		if len(d.Rules) == 0 {
			a.out("    (no rules)\n")
		}
		for _, r := range d.Rules {
			a.out("    %-14s %s\n", r.Name, ruleSummary(r))
		}
	}
}

// listRuleFile prints one rule file (policy list --file NAME).
func (a *app) listRuleFile(p *policy.Policy, st *porcelain.Staged, name string, asJSON bool) error {
	if _, ok := p.RuleFile(name); !ok {
		return usageErr("no rule file named %s (see git secure policy list)", name)
	}
	if asJSON {
		for _, d := range delegationsJSON(p) {
			if d.Name == name {
				return a.printJSON(d)
			}
		}
	}
	a.printDelegations(p, name)
	if st.Changed() {
		a.out("\na change is staged: see git secure policy list --staged --file %s\n", name)
	}
	return nil
}
