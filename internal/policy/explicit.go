package policy

import (
	"slices"
	"strings"
)

// ReplaceRefPrefix is the namespace git reads replacement objects from
// (git replace): while refs/replace/X exists, git shows, archives and
// serves the object it points at wherever X is asked for.
const ReplaceRefPrefix = "refs/replace/"

// ForgeRefPrefixes are the namespaces that hosting services write
// themselves: GitHub's pull requests, GitLab's merge requests and
// keep-around refs, Gerrit's changes. Nobody pushes them through the log,
// so no rule covers them unless it names them explicitly (see
// Policy.Covers): a mirror of a forge carries hundreds of them, and none is
// a branch that ships.
var ForgeRefPrefixes = []string{"refs/pull/", "refs/merge-requests/", "refs/changes/", "refs/keep-around/"}

// ForgePrefix returns the entry of ForgeRefPrefixes that ref lies under.
func ForgePrefix(ref string) (string, bool) {
	for _, p := range ForgeRefPrefixes {
		if strings.HasPrefix(ref, p) {
			return p, true
		}
	}
	return "", false
}

// NamesExplicitly reports whether r covers ref through a ref pattern that
// begins with prefix, spelled out (prefix holds no wildcard). Patterns that
// only happen to match, such as refs/** or *, and path rules without ref
// patterns do not name it: a namespace that changes how git reads objects,
// or that a forge writes, is covered only by a rule written for it.
func (r *Rule) NamesExplicitly(ref, prefix string) bool {
	return namesExplicitly(r.Refs, ref, prefix)
}

func namesExplicitly(patterns []string, ref, prefix string) bool {
	if !strings.HasPrefix(ref, prefix) {
		return false
	}
	for _, p := range patterns {
		if strings.HasPrefix(p, prefix) && Match(p, ref) {
			return true
		}
	}
	return false
}

// RulesNaming returns the rules that govern ref (RulesFor: targets.json's
// and the rule files' the delegation search reaches) and name it
// explicitly under prefix (see Rule.NamesExplicitly), in policy order.
func (p *Policy) RulesNaming(ref, prefix string) []*Rule {
	var out []*Rule
	for _, r := range p.RulesFor(ref) {
		if r.NamesExplicitly(ref, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// ForgeExcludes returns git's negative refspecs (^refs/pull/*, ...) that
// keep the forges' namespaces out of a fetch of refs/*: every one that no
// rule of p names in a ref pattern (all of them when p is nil). A mirror
// of a forge holds thousands of such refs that nothing judges.
func ForgeExcludes(p *Policy) []string {
	out := make([]string, 0, len(ForgeRefPrefixes))
	for _, prefix := range ForgeRefPrefixes {
		if p == nil || !p.namesNamespace(prefix) {
			out = append(out, "^"+prefix+"*")
		}
	}
	return out
}

// namesNamespace reports whether a rule, of targets.json or of any rule
// file, or a delegation has a ref pattern under prefix: a rule file's rule
// on refs/pull/* is judged as targets.json's is, so the namespace must be
// fetched for it (fetching more than the rules govern costs only time).
func (p *Policy) namesNamespace(prefix string) bool {
	under := func(patterns []string) bool {
		return slices.ContainsFunc(patterns, func(pat string) bool { return strings.HasPrefix(pat, prefix) })
	}
	for _, r := range p.rules {
		if under(r.Refs) {
			return true
		}
	}
	for _, n := range p.nodes {
		if under(n.d.Refs) {
			return true
		}
		if n.file == nil {
			continue
		}
		for _, r := range n.file.Rules {
			if under(r.Refs) {
				return true
			}
		}
	}
	return false
}
