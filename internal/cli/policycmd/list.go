package policycmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"
	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/sign"
)

// ListOptions are the flags of policy list.
type ListOptions struct {
	F      *factory.Factory
	JSON   bool
	Staged bool // show the staged change instead of the policy in force
	// File shows only that rule file (--file NAME).
	File    string
	FileSet bool
}

func newCmdList(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "show the policy in force (and what is staged)",
		Flags: []cli.Flag{cmdutil.JSONFlag, &cli.BoolFlag{Name: "staged", Usage: "show the staged change instead"}, fileFlag},
		Action: func(c *cli.Context) error {
			return runList(c.Context, &ListOptions{F: f, JSON: c.Bool("json"), Staged: c.Bool("staged"), File: c.String("file"), FileSet: c.IsSet("file")})
		},
	}
}

func runList(_ context.Context, opts *ListOptions) error {
	r, err := opts.F.Repo()
	if err != nil {
		return err
	}
	st, err := r.LoadStaged()
	if err != nil {
		return err
	}
	p := st.Base
	if opts.Staged {
		p = st.Policy
		if !st.Commit.IsZero() && !opts.JSON {
			printStagedOrigin(opts.F, r, st)
		}
	}
	if opts.FileSet {
		return listRuleFile(opts.F, p, st, opts.File, opts.JSON)
	}
	j := newPolicyJSON(p, st)
	if st.Changed() {
		j.StagedChanges = policy.Changes(st.Base, st.Policy)
	}
	if opts.JSON {
		return opts.F.PrintJSON(j)
	}
	if opts.Staged && !st.Changed() {
		opts.F.Out("nothing is staged: the policy in force is\n\n")
	}
	printPolicy(opts.F, j, p)
	switch {
	case !j.Staged:
	case opts.Staged:
		opts.F.Out("\nthis is the staged policy, not in force yet: git secure policy apply puts it in force (git secure policy list shows the one in force)\n")
	default:
		opts.F.Out("\na change is staged, not in force yet:\n")
		for _, ch := range j.StagedChanges {
			opts.F.Out("  %s\n", ch)
		}
		opts.F.Out("git secure policy list --staged shows the whole staged policy; git secure policy apply puts it in force\n")
	}
	return nil
}

// printStagedOrigin says what would be signed, and whether this clone
// made it (policy sign and apply need --staged COMMIT for a change it did
// not make).
func printStagedOrigin(f *factory.Factory, r *porcelain.Repo, st *porcelain.Staged) {
	origin := "made in this clone"
	if r.Foreign(st) {
		origin = "not made in this clone: sign or apply it only with --staged " + st.Commit.String()[:12] + " once you checked every change"
	}
	f.Out("staged change %s (%s):\n", st.Commit.String()[:12], origin)
	for _, ch := range policy.Changes(st.Base, st.Policy) {
		f.Out("  %s\n", ch)
	}
	f.Out("\n")
}

// PolicyJSON is the document policy list --json writes.
type PolicyJSON struct {
	RootVersion   int64               `json:"rootVersion"`
	RulesVersion  int64               `json:"rulesVersion"`
	RootExpires   time.Time           `json:"rootExpires"`
	RulesExpires  time.Time           `json:"rulesExpires"`
	RootKeys      []string            `json:"rootKeys"`
	RootThreshold int                 `json:"rootThreshold"`
	RulesKeys     []string            `json:"rulesKeys"`
	RulesThresh   int                 `json:"rulesThreshold"`
	Persons       []personJSON        `json:"persons"`
	Teams         []teamJSON          `json:"teams"`
	Rules         []porcelain.RuleDoc `json:"rules"`
	GlobalRules   []globalJSON        `json:"globalRules"`
	Revoked       []revokeJSON        `json:"revokedKeys"`
	Staged        bool                `json:"staged"`
	// StagedChanges is what the staged change adds, removes and changes
	// against the policy in force, one line each.
	StagedChanges []string   `json:"stagedChanges,omitempty"`
	Freshness     *freshJSON `json:"freshness,omitempty"`
	// Delegations are the rule files, in search order.
	Delegations []DelegationJSON `json:"delegations,omitempty"`
}

type teamJSON struct {
	Name    string   `json:"name"`
	Members []string `json:"members"`
}

type globalJSON struct {
	Name       string   `json:"name"`
	Type       string   `json:"type"`
	Refs       []string `json:"refs,omitempty"`
	MinPersons int      `json:"minPersons,omitempty"`
}

type revokeJSON struct {
	Key       string `json:"key"`
	FromEntry uint64 `json:"fromEntry"`
}

type personJSON struct {
	Name string   `json:"name"`
	Keys []string `json:"keys"`
	// KeyKinds says, for each of Keys, what kind of key it is (its
	// type, a security key's options, an OpenPGP key's fingerprint).
	KeyKinds []string `json:"keyKinds"`
}

// newPolicyJSON is policy list's document of p (st says whether a change
// is staged).
func newPolicyJSON(p *policy.Policy, st *porcelain.Staged) PolicyJSON {
	j := PolicyJSON{RootVersion: p.Root.Signed.Version, RulesVersion: p.Targets.Signed.Version,
		RootExpires: p.Root.Signed.Expires, RulesExpires: p.Targets.Signed.Expires, Staged: st.Changed(),
		Persons: []personJSON{}, Rules: []porcelain.RuleDoc{}, Teams: []teamJSON{}, GlobalRules: []globalJSON{}, Revoked: []revokeJSON{}}
	for _, t := range p.Teams() {
		j.Teams = append(j.Teams, teamJSON{Name: t.Name, Members: t.Members})
	}
	for _, g := range p.GlobalRules() {
		j.GlobalRules = append(j.GlobalRules, globalJSON{Name: g.Name, Type: g.Type, Refs: g.Refs, MinPersons: g.N})
	}
	for _, r := range p.Revocations() {
		j.Revoked = append(j.Revoked, revokeJSON{Key: r.Fingerprint, FromEntry: r.FromEntry})
	}
	rk, rt := p.RoleKeys(metadata.ROOT)
	for _, k := range rk {
		j.RootKeys = append(j.RootKeys, k.Fingerprint)
	}
	j.RootThreshold = rt
	tk, tt := p.RoleKeys(metadata.TARGETS)
	for _, k := range tk {
		j.RulesKeys = append(j.RulesKeys, k.Fingerprint)
	}
	j.RulesThresh = tt
	j.Freshness = newFreshJSON(p)
	for _, person := range p.Persons() {
		pj := personJSON{Name: person.Name}
		for _, k := range person.Keys {
			pj.Keys = append(pj.Keys, k.Fingerprint)
			pj.KeyKinds = append(pj.KeyKinds, sign.DescribeKey(k.Public))
		}
		j.Persons = append(j.Persons, pj)
	}
	for _, r := range p.Rules() {
		j.Rules = append(j.Rules, porcelain.NewRuleDoc(r))
	}
	if ds := newDelegationsJSON(p); len(ds) > 0 {
		j.Delegations = ds
	}
	return j
}

// printPolicy prints policy list's document j of p for people.
func printPolicy(f *factory.Factory, j PolicyJSON, p *policy.Policy) {
	f.Out("root v%d (expires %s): threshold %d of %s\n", j.RootVersion, j.RootExpires.Format("2006-01-02"), j.RootThreshold, strings.Join(j.RootKeys, ", "))
	f.Out("rules v%d (expires %s): signed by %d of %s\n", j.RulesVersion, j.RulesExpires.Format("2006-01-02"), j.RulesThresh, strings.Join(j.RulesKeys, ", "))
	printFreshness(f, j.Freshness)
	f.Out("\npersons:\n")
	if len(j.Persons) == 0 {
		f.Out("  (none: add with git secure policy add-person NAME --key FILE)\n")
	}
	for _, pj := range j.Persons {
		keys := make([]string, len(pj.Keys))
		for i, k := range pj.Keys {
			keys[i] = k
			if i < len(pj.KeyKinds) && !strings.HasPrefix(pj.KeyKinds[i], "ssh-") && !strings.HasPrefix(pj.KeyKinds[i], "ecdsa-") {
				keys[i] += " (" + pj.KeyKinds[i] + ")" // security and OpenPGP keys
			}
		}
		f.Out("  %-16s %s\n", pj.Name, strings.Join(keys, ", "))
	}
	f.Out("\nrules:\n")
	if len(j.Rules) == 0 {
		f.Out("  (none: nothing is protected yet)\n")
	}
	for _, r := range j.Rules {
		f.Out("  %-16s %s\n", r.Name, cmdutil.RuleSummary(r))
	}
	printDelegations(f, j.Delegations, "")
	if len(j.Teams) > 0 {
		f.Out("\nteams:\n")
		for _, t := range j.Teams {
			f.Out("  %-16s %s\n", t.Name, strings.Join(t.Members, ", "))
		}
	}
	if len(j.GlobalRules) > 0 {
		f.Out("\nglobal rules:\n")
		for _, g := range j.GlobalRules {
			scope := "every ref"
			if len(g.Refs) > 0 {
				scope = strings.Join(g.Refs, ", ")
			}
			what := "no force push or deletion"
			if g.Type == policy.GlobalMinPersons {
				what = fmt.Sprintf("at least %d persons per protected update", g.MinPersons)
			}
			f.Out("  %-16s %s: %s\n", g.Name, scope, what)
		}
	}
	printForgePolicy(f, p)
	if len(j.Revoked) > 0 {
		f.Out("\nrevoked keys:\n")
		for _, r := range j.Revoked {
			f.Out("  %s from entry #%d\n", r.Key, r.FromEntry)
		}
	}
}
