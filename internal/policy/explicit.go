package policy

import "strings"

// ReplaceRefPrefix is the namespace git reads replacement objects from
// (git replace): while refs/replace/X exists, git shows, archives and
// serves the object it points at wherever X is asked for.
const ReplaceRefPrefix = "refs/replace/"

// NamesExplicitly reports whether r covers ref through a ref pattern that
// begins with prefix, spelled out (prefix holds no wildcard). Patterns that
// only happen to match, such as refs/** or *, and path rules, which cover
// every ref, do not name it: a namespace that changes how git reads objects
// is allowed only by a rule written for it.
func (r *Rule) NamesExplicitly(ref, prefix string) bool {
	for _, p := range r.Refs {
		if strings.HasPrefix(p, prefix) && strings.HasPrefix(ref, prefix) && Match(p, ref) {
			return true
		}
	}
	return false
}

// RulesNaming returns the rules that name ref explicitly under prefix (see
// Rule.NamesExplicitly), in policy order.
func (p *Policy) RulesNaming(ref, prefix string) []*Rule {
	var out []*Rule
	for _, r := range p.rules {
		if r.NamesExplicitly(ref, prefix) {
			out = append(out, r)
		}
	}
	return out
}
