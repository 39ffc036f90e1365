package policycmd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/sign"
)

// fileFlag selects a rule file (TUF delegated targets) instead of
// targets.json on add-rule, remove-rule, sign, apply and list.
var fileFlag = &cli.StringFlag{Name: "file", Usage: "rule file `NAME` (a delegation's) instead of the top-level rules"}

// DelegateOptions are the arguments and flags of policy delegate.
type DelegateOptions struct {
	F     *factory.Factory
	Args  []string // NAME
	Refs  []string
	Paths []string
	// Keys are the signers: persons, team:NAME, or public key files.
	Keys []string
	// Threshold is --threshold; ThresholdSet says whether it was given.
	Threshold    int
	ThresholdSet bool
	Terminating  bool
	// Parent is the delegating rule file (--file); empty for the
	// top-level rules.
	Parent string
}

func newCmdDelegate(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "delegate",
		Usage:     "hand a namespace (refs and/or paths) to a rule file its own signers keep",
		ArgsUsage: "NAME",
		Description: `Creates the rule file NAME, owned by the persons given with --key: they add,
change and remove rules inside the namespace (git secure policy add-rule --file
NAME ...; sign --file NAME; apply) without the rules keys, and can delegate
further (delegate --file NAME). Their rules apply only inside the namespace;
the rules of targets.json (and of every file the search reaches) still apply.
Delegations are searched in order, depth first (TUF order); a --terminating one
that matches ends the search of the file that lists it (files above it are still
searched: a team cannot switch off what the rules keys delegate). The new file must be signed by its signers too
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
			return runDelegate(c.Context, &DelegateOptions{F: f, Args: c.Args().Slice(), Refs: c.StringSlice("ref"), Paths: c.StringSlice("path"),
				Keys: c.StringSlice("key"), Threshold: c.Int("threshold"), ThresholdSet: c.IsSet("threshold"),
				Terminating: c.Bool("terminating"), Parent: c.String("file")})
		},
	}
}

func runDelegate(_ context.Context, opts *DelegateOptions) error {
	if len(opts.Args) != 1 {
		return report.Usagef("delegate takes exactly one NAME")
	}
	if opts.ThresholdSet && opts.Threshold < 1 {
		return report.Usagef("--threshold must be at least 1")
	}
	d := policy.Delegation{Name: opts.Args[0], Refs: everyRefSpelled(opts.Refs), Paths: opts.Paths,
		Threshold: opts.Threshold, Terminating: opts.Terminating}
	return cmdutil.Stage(opts.F, "delegate "+d.Name, func(p, base *policy.Policy, now time.Time) error {
		signers, err := signerGroups(p, opts.Keys)
		if err != nil {
			return err
		}
		d.Signers = signers
		return p.Delegate(base, opts.Parent, d, now)
	})
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
		pub, err := cmdutil.ReadPublicKey(k)
		if err != nil {
			return nil, err
		}
		person, ok := p.PersonByFingerprint(sign.Fingerprint(pub))
		if !ok {
			return nil, fmt.Errorf("%w: --key %s: key %s belongs to no person (add it with git secure policy add-person)", policy.ErrInvalidChange, k, sign.Fingerprint(pub))
		}
		out = append(out, person.Name)
	}
	return out, nil
}

// DelegationJSON is one rule file in policy list --json (and the whole
// document of policy list --file NAME --json).
type DelegationJSON struct {
	Name        string              `json:"name"`
	Parent      string              `json:"parent,omitempty"`
	Chain       []string            `json:"chain"`
	Refs        []string            `json:"refs,omitempty"`
	Paths       []string            `json:"paths,omitempty"`
	Signers     []string            `json:"signers"`
	Threshold   int                 `json:"threshold"`
	Terminating bool                `json:"terminating,omitempty"`
	Version     int64               `json:"version"`
	SignedBy    []string            `json:"signedBy"`
	Untrusted   string              `json:"untrusted,omitempty"`
	Outside     []string            `json:"outside,omitempty"`
	Rules       []porcelain.RuleDoc `json:"rules"`
}

// newDelegationsJSON lists p's rule files in search order.
func newDelegationsJSON(p *policy.Policy) []DelegationJSON {
	out := []DelegationJSON{}
	for _, f := range p.RuleFiles() {
		d, _ := p.Delegation(f.Name)
		j := DelegationJSON{Name: d.Name, Parent: d.Parent, Chain: p.Chain(d.Name), Refs: d.Refs, Paths: d.Paths, Signers: d.Signers,
			Threshold: d.Threshold, Terminating: d.Terminating, SignedBy: f.SignedBy, Untrusted: f.Untrusted, Outside: f.Outside, Rules: []porcelain.RuleDoc{}}
		if f.Meta != nil {
			j.Version = f.Meta.Signed.Version
		}
		for _, r := range f.Rules {
			j.Rules = append(j.Rules, porcelain.NewRuleDoc(r))
		}
		out = append(out, j)
	}
	return out
}

// printDelegations prints the rule files ds (only the named file's when
// file is set) for people.
func printDelegations(f *factory.Factory, ds []DelegationJSON, file string) {
	if file == "" && len(ds) == 0 {
		return
	}
	f.Out("\nrule files (delegations, in search order):\n")
	for _, d := range ds {
		if file != "" && d.Name != file {
			continue
		}
		ns := policy.Namespace(d.Refs, d.Paths)
		term := ""
		if d.Terminating {
			term = ", terminating"
		}
		f.Out("  %-16s %s (via %s%s): %d of %s sign it; v%d signed by %s\n", d.Name, strings.Join(ns, ", "),
			strings.Join(append([]string{"rules keys"}, d.Chain...), " -> "), term, d.Threshold, strings.Join(d.Signers, ", "), d.Version, orNobody(d.SignedBy))
		if d.Untrusted != "" {
			f.Out("    counts for nothing (every update in its namespace fails): %s\n", d.Untrusted)
		}
		for _, o := range d.Outside {
			f.Out("    warning: %s\n", o)
		}
		if len(d.Rules) == 0 {
			f.Out("    (no rules)\n")
		}
		for _, r := range d.Rules {
			f.Out("    %-14s %s\n", r.Name, cmdutil.RuleSummary(r))
		}
	}
}

// orNobody joins names, or says nobody.
func orNobody(names []string) string {
	if len(names) == 0 {
		return "nobody"
	}
	return strings.Join(names, ", ")
}

// listRuleFile prints one rule file (policy list --file NAME).
func listRuleFile(f *factory.Factory, p *policy.Policy, st *porcelain.Staged, name string, asJSON bool) error {
	if _, ok := p.RuleFile(name); !ok {
		return report.Usagef("no rule file named %s (see git secure policy list)", name)
	}
	ds := newDelegationsJSON(p)
	if asJSON {
		for _, d := range ds {
			if d.Name == name {
				return f.PrintJSON(d)
			}
		}
	}
	printDelegations(f, ds, name)
	if st.Changed() {
		f.Out("\na change is staged: see git secure policy list --staged --file %s\n", name)
	}
	return nil
}
