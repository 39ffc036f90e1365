package policy

import "strings"

// CaseVariant is a ref pattern that a ref name matches only as a
// case-insensitive file system sees it.
type CaseVariant struct {
	// Owner names what holds the pattern: "rule NAME", "global rule
	// NAME", or "delegation to rule file NAME".
	Owner   string
	Pattern string
}

// CaseVariantOf returns a ref pattern of p that ref matches only when
// spelled as a case-insensitive or Windows file system stores it
// ([MatchFold]), not as written ([Match]): refs/heads/Main against
// refs/heads/main, refs/Tags/v1 against refs/tags/v*. Such a ref is a
// second name for refs the pattern covers: the files ref backend of a
// macOS or Windows server or clone writes both to one file, so a push of
// the variant, judged under other rules or none, moves the covered ref
// unjudged. Every pattern counts (rules, rule files, delegations, global
// rules), trusted or not: refusing a variant is never less safe.
func (p *Policy) CaseVariantOf(ref string) (CaseVariant, bool) {
	if p == nil {
		return CaseVariant{}, false
	}
	key := FoldPath(ref)
	variant := func(patterns []string) (string, bool) {
		for _, pat := range patterns {
			if !Match(pat, ref) && matchFoldKey(pat, ref, key) {
				return pat, true
			}
		}
		return "", false
	}
	for _, r := range p.rules {
		if pat, ok := variant(r.Refs); ok {
			return CaseVariant{"rule " + r.Name, pat}, true
		}
	}
	for _, g := range p.global {
		if pat, ok := variant(g.Refs); ok {
			return CaseVariant{"global rule " + g.Name, pat}, true
		}
	}
	for _, n := range p.nodes {
		if pat, ok := variant(n.d.Refs); ok {
			return CaseVariant{"delegation to rule file " + n.d.Name, pat}, true
		}
		if n.file == nil {
			continue
		}
		for _, r := range n.file.Rules {
			if pat, ok := variant(r.Refs); ok {
				return CaseVariant{"rule " + r.Name + " of rule file " + n.file.Name, pat}, true
			}
		}
	}
	return CaseVariant{}, false
}

// ReservedVariant returns the namespace, refs/secure/ (git-secure's
// metadata) or refs/replace/ (git's replace refs, which change what every
// other ref reads as), that ref falls in only as a case-insensitive file
// system spells it: refs/Secure/rsl, refs/SECURE/policy, refs/Replace/<id>.
// No pattern of a policy names these namespaces, so CaseVariantOf cannot
// see such a name; on a macOS or Windows server the files backend stores
// it as the real ref (a loose file that shadows a packed log, policy or
// replace ref), so a push of it, judged as an ordinary unprotected ref,
// would roll back or replace what the namespace holds.
func ReservedVariant(ref string) (string, bool) {
	key := FoldPath(ref)
	for _, ns := range [...]string{"refs/secure/", "refs/replace/"} {
		if strings.HasPrefix(key, ns) && !strings.HasPrefix(ref, ns) {
			return ns, true
		}
	}
	return "", false
}
