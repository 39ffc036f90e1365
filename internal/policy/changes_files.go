package policy

import (
	"fmt"
	"slices"
	"strings"
)

// ruleFileChanges describes what a staged change does to the delegations
// and the rule files: a change that only widens a team's rule file must
// not be shown to its signers as "renews the expiry".
func ruleFileChanges(base, staged *Policy) []string {
	out := diffNamed("delegation", allDelegations(base), allDelegations(staged), func(d *Delegation) string { return d.Name }, describeDelegation)
	out = append(out, delegationOrder(base, staged, "")...)
	seen := map[string]bool{}
	var names []string
	for _, p := range []*Policy{staged, base} {
		for _, f := range p.RuleFiles() {
			if !seen[f.Name] {
				seen[f.Name] = true
				names = append(names, f.Name)
			}
		}
	}
	for _, name := range names {
		out = append(out, delegationOrder(base, staged, name)...)
		in := " in rule file " + name
		out = append(out, diffNamed("rule", fileRules(base, name), fileRules(staged, name), func(r *Rule) string { return r.Name + in }, describeRule)...)
	}
	return out
}

// allDelegations lists every delegation of p in the search order.
func allDelegations(p *Policy) []*Delegation {
	var out []*Delegation
	for _, f := range p.RuleFiles() {
		if d, ok := p.Delegation(f.Name); ok {
			out = append(out, d)
		}
	}
	return out
}

// fileRules returns the rules of the named rule file as signed: without
// what verification derives from where the file sits (chain, trust,
// scope), which differs between a signed file and its unsigned edit.
func fileRules(p *Policy, name string) []*Rule {
	f, ok := p.RuleFile(name)
	if !ok {
		return nil
	}
	out := make([]*Rule, 0, len(f.Rules))
	for _, r := range f.Rules {
		out = append(out, &Rule{Name: r.Name, Refs: r.Refs, Paths: r.Paths, Allow: r.Allow, Threshold: r.Threshold,
			Require: r.Require, TestsBy: r.TestsBy, TreeApprovals: r.TreeApprovals, SignedPush: r.SignedPush, EveryRef: r.EveryRef, File: r.File})
	}
	return out
}

func describeDelegation(d *Delegation) string {
	parts := Namespace(d.Refs, d.Paths)
	parts = append(parts, fmt.Sprintf("signed by %d of %s", d.Threshold, strings.Join(d.Signers, " or ")))
	if d.Terminating {
		parts = append(parts, "terminating")
	}
	if d.Parent != "" {
		parts = append(parts, "delegated by rule file "+d.Parent)
	}
	return strings.Join(parts, ", ")
}

// delegationOrder describes a change of the order of the delegations of
// file ("" for targets.json) that both policies hold: the order is their
// precedence (TUF's search), so a change that only reorders them changes
// which rules apply, and must not pass for none.
func delegationOrder(base, staged *Policy, file string) []string {
	names := func(p *Policy, other *Policy) []string {
		var out []string
		for _, d := range p.Delegations(file) {
			if slices.ContainsFunc(other.Delegations(file), func(o *Delegation) bool { return o.Name == d.Name }) {
				out = append(out, d.Name)
			}
		}
		return out
	}
	was, now := names(base, staged), names(staged, base)
	if slices.Equal(was, now) {
		return nil
	}
	where := "targets.json"
	if file != "" {
		where = "rule file " + file
	}
	return []string{fmt.Sprintf("changes the order of the delegations of %s to %s (was %s): an earlier terminating delegation shadows the later ones",
		where, strings.Join(now, ", "), strings.Join(was, ", "))}
}
