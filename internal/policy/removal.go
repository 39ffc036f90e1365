package policy

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Removing a person or team that a rule file names: the rules keys must be
// able to remove a person at once, without the cooperation of that person
// or of the team whose rule file names them (a maintainer who leaves, a
// compromised identity). The removal is allowed; every rule file that names
// the removed person or team (in its rules, as a signer of its delegation
// or of one it makes), and every file below it, counts for nothing from
// then on: its namespace fails closed, as when the organisation removes a
// person its rule file names, until the files' owners mend it.

// MissingNames returns the persons and teams (team:NAME) that rule file
// file of p names, in itself or in a file or delegation above it, and p
// does not have: removed since the file was signed. Empty when there are
// none or p has no such file.
func (p *Policy) MissingNames(file string) []string {
	var n *node
	for _, x := range p.nodes {
		if x.d.Name == file && !x.org {
			n = x
		}
	}
	if n == nil {
		return nil
	}
	set := map[string]bool{}
	check := func(groups []string) {
		for _, g := range groups {
			if _, ok := p.Members(g); !ok {
				set[g] = true
			}
		}
	}
	for _, d := range n.chain {
		check(d.Signers)
		f, ok := p.files[d.Name]
		if !ok {
			continue
		}
		for _, r := range f.Rules {
			check(r.Allow)
			check(r.TestsBy)
			check(requireGroups(r.Require))
		}
		for _, sub := range f.Delegations {
			check(sub.Signers)
		}
	}
	out := make([]string, 0, len(set))
	for g := range set {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// ClosedByRemoval reports whether p's rule file f counts for nothing
// because persons or teams it names were removed, and the change from
// prev does not write it: the file is as prev held it (same signed
// content), it names a person or team p lacks, and in prev it counted or
// was closed so already. Such a file is not signed again (its signers may
// be the ones removed); it fails closed. A file cannot come to name an
// unknown person otherwise: a file a change writes must count.
func (p *Policy) ClosedByRemoval(prev *Policy, f *RuleFile) bool {
	if prev == nil || f.Untrusted == "" || f.Meta == nil {
		return false
	}
	old, ok := prev.RuleFile(f.Name)
	if !ok || old.Meta == nil {
		return false
	}
	a, err1 := old.Meta.Signed.MarshalJSON()
	b, err2 := f.Meta.Signed.MarshalJSON()
	if err1 != nil || err2 != nil || string(a) != string(b) {
		return false
	}
	if len(p.MissingNames(f.Name)) == 0 {
		return false
	}
	return old.Untrusted == "" || len(prev.MissingNames(f.Name)) > 0
}

// RemovalEffects describes, for each rule file of p that counts for nothing
// because p removed a person or team it names (ClosedByRemoval against
// prev), what fails and who can mend it.
func (p *Policy) RemovalEffects(prev *Policy) []string {
	var out []string
	for _, n := range p.nodes {
		if n.org || !p.ClosedByRemoval(prev, n.file) {
			continue
		}
		if old, ok := prev.RuleFile(n.d.Name); !ok || old.Untrusted != "" {
			continue // closed before this change
		}
		removed := p.MissingNames(n.d.Name)
		ns := strings.Join(n.d.Patterns(), " ")
		msg := fmt.Sprintf("rule file %s (delegated: rules keys -> %s) names %s, removed: it counts for nothing from this change on, and every update in its namespace (%s) fails until it is mended",
			n.d.Name, strings.Join(chainNames(n.chain), " -> "), strings.Join(removed, ", "), ns)
		// Who can mend it: the file's own signers when they remain and
		// only its rules name the removed, else the delegating file's.
		signersGone := slices.ContainsFunc(n.d.Signers, func(g string) bool { return slices.Contains(removed, g) })
		parent, flag := "the rules keys", ""
		if n.d.Parent != "" {
			parent, flag = "the signers of rule file "+n.d.Parent, " --file "+n.d.Parent
		}
		switch {
		case signersGone:
			msg += fmt.Sprintf(": its delegation names them as signers, so %s must delegate it anew (git secure policy remove-delegation %s, then delegate %s%s with other signers)", parent, n.d.Name, n.d.Name, flag)
		case slices.ContainsFunc(n.file.Delegations, func(d *Delegation) bool {
			return slices.ContainsFunc(d.Signers, func(g string) bool { return slices.Contains(removed, g) })
		}) || p.namedInRules(n.file, removed):
			msg += fmt.Sprintf(": its signers (%s) change what names them (git secure policy remove-rule or remove-delegation, --file %s) and sign it", strings.Join(n.d.Signers, ", "), n.d.Name)
		default:
			msg += " once the file above it is mended"
		}
		out = append(out, msg)
	}
	return out
}

func (p *Policy) namedInRules(f *RuleFile, names []string) bool {
	for _, r := range f.Rules {
		for _, g := range slices.Concat(r.Allow, r.TestsBy, requireGroups(r.Require)) {
			if slices.Contains(names, g) {
				return true
			}
		}
	}
	return false
}
