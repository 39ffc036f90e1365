package policy

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Changes lists, one short phrase each, what staged changes relative to
// base: root and rules keys and thresholds, freshness, persons and their
// keys, teams, rules, global rules and revocations. Expiry and version
// bumps alone give "renews the expiry". The phrases name repository text
// (person and rule names) unescaped: callers print them through display.
// It is what someone is shown before signing a change they did not make.
func Changes(base, staged *Policy) []string {
	var out []string
	for _, role := range []string{"root", "targets"} {
		bk, bt := base.RoleKeys(role)
		sk, st := staged.RoleKeys(role)
		what := role
		if role == "targets" {
			what = "rules"
		}
		for _, fp := range missingFrom(fingerprints(sk), fingerprints(bk)) {
			out = append(out, fmt.Sprintf("adds %s key %s", what, fp))
		}
		for _, fp := range missingFrom(fingerprints(bk), fingerprints(sk)) {
			out = append(out, fmt.Sprintf("removes %s key %s", what, fp))
		}
		if bt != st {
			out = append(out, fmt.Sprintf("sets the %s threshold to %d (was %d)", what, st, bt))
		}
	}
	bf, sf := base.Freshness(), staged.Freshness()
	switch {
	case bf == nil && sf != nil:
		out = append(out, fmt.Sprintf("sets freshness (max age %s, keys %s)", sf.MaxAge, strings.Join(fingerprints(sf.Keys), ", ")))
	case bf != nil && sf == nil:
		out = append(out, "removes freshness")
	case bf != nil && (bf.MaxAge != sf.MaxAge || bf.Threshold != sf.Threshold || !slices.Equal(fingerprints(bf.Keys), fingerprints(sf.Keys))):
		out = append(out, fmt.Sprintf("changes freshness (max age %s, keys %s)", sf.MaxAge, strings.Join(fingerprints(sf.Keys), ", ")))
	}
	bp, sp := personKeys(base), personKeys(staged)
	for _, name := range sortedKeys(sp) {
		old, ok := bp[name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("adds person %s (%s)", name, strings.Join(sp[name], ", ")))
		case !slices.Equal(old, sp[name]):
			out = append(out, fmt.Sprintf("changes the keys of person %s to %s", name, strings.Join(sp[name], ", ")))
		}
	}
	for _, name := range sortedKeys(bp) {
		if _, ok := sp[name]; !ok {
			out = append(out, "removes person "+name)
		}
	}
	out = append(out, diffNamed("team", base.Teams(), staged.Teams(), func(t *Team) string { return t.Name },
		func(t *Team) string { return "members " + strings.Join(t.Members, " and ") })...)
	out = append(out, diffNamed("rule", base.Rules(), staged.Rules(), func(r *Rule) string { return r.Name }, describeRule)...)
	out = append(out, diffNamed("global rule", base.GlobalRules(), staged.GlobalRules(), func(g *GlobalRule) string { return g.Name },
		func(g *GlobalRule) string { return fmt.Sprintf("%s on %s", g.Type, strings.Join(g.Refs, ", ")) })...)
	out = append(out, ruleFileChanges(base, staged)...)
	out = append(out, forgeChanges(base, staged)...)
	for _, rv := range staged.Revocations() {
		if !slices.Contains(base.Revocations(), rv) {
			out = append(out, fmt.Sprintf("revokes key %s from entry #%d", rv.Fingerprint, rv.FromEntry))
		}
	}
	for _, rv := range base.Revocations() {
		if !slices.Contains(staged.Revocations(), rv) {
			out = append(out, fmt.Sprintf("drops the revocation of key %s", rv.Fingerprint))
		}
	}
	if len(out) == 0 {
		out = append(out, "renews the expiry")
	}
	return out
}

// Namespace names ref and path patterns for people ("ref refs/heads/*",
// "path docs/**"), as a rule or delegation lists them.
func Namespace(refs, paths []string) []string {
	out := make([]string, 0, len(refs)+len(paths))
	for _, ref := range refs {
		out = append(out, "ref "+ref)
	}
	for _, p := range paths {
		out = append(out, "path "+p)
	}
	return out
}

func describeRule(r *Rule) string {
	parts := Namespace(r.Refs, r.Paths)
	parts = append(parts, fmt.Sprintf("%d of %s", r.Threshold, strings.Join(r.Allow, " or ")))
	for _, q := range r.Require {
		parts = append(parts, "requires "+q.String())
	}
	if len(r.TestsBy) > 0 {
		parts = append(parts, "tests by "+strings.Join(r.TestsBy, ", "))
	}
	if r.TreeApprovals {
		parts = append(parts, "tree approvals")
	}
	if r.SignedPush {
		parts = append(parts, "signed pushes")
	}
	return strings.Join(parts, ", ")
}

// diffNamed compares two lists of named things: added, removed and changed
// (any field differs) items, each described.
func diffNamed[T any](kind string, base, staged []*T, name func(*T) string, describe func(*T) string) []string {
	var out []string
	old := map[string]*T{}
	for _, x := range base {
		old[name(x)] = x
	}
	seen := map[string]bool{}
	for _, x := range staged {
		n := name(x)
		seen[n] = true
		switch o, ok := old[n]; {
		case !ok:
			out = append(out, fmt.Sprintf("adds %s %s (%s)", kind, n, describe(x)))
		case !reflect.DeepEqual(o, x):
			out = append(out, fmt.Sprintf("changes %s %s to %s", kind, n, describe(x)))
		}
	}
	for _, x := range base {
		if !seen[name(x)] {
			out = append(out, fmt.Sprintf("removes %s %s", kind, name(x)))
		}
	}
	return out
}

func personKeys(p *Policy) map[string][]string {
	out := map[string][]string{}
	for _, person := range p.Persons() {
		fps := fingerprints(person.Keys)
		slices.Sort(fps)
		out[person.Name] = fps
	}
	return out
}

func fingerprints(keys []*Key) []string {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k.Fingerprint)
	}
	slices.Sort(out)
	return out
}

// missingFrom returns the elements of a that b lacks.
func missingFrom(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
