package policy

import (
	"slices"
	"sync"
)

// Which rules govern an item (a ref, or a file on a ref): targets.json's
// rules always; then TUF's search over the delegations, pre-order, in the
// order each file lists them: a delegation whose namespace (and every
// namespace above it) matches the item is visited, its rule file's rules
// that cover the item apply, and its own delegations are searched next. A
// terminating delegation that matches the item ends the search of its own
// file once its subtree is done: the later delegations of that file are
// not consulted for that item. The files above it go on being searched: a
// team orders only its own delegations, and cannot switch off one that a
// file above it lists later. Every rule reached applies
// (they add up; none replaces another): a rule file can add requirements
// inside its namespace and never remove one that targets.json or another
// file sets.

// rulesCache keeps RulesFor's answers for a policy with rule files, where
// walking the delegations costs more than matching a few rules: verify
// asks several times per entry, for few distinct refs. Safe for
// concurrent readers of one Policy.
type rulesCache struct {
	mu     sync.Mutex
	byRef  map[string][]*Rule
	named  map[string]bool       // namedByRuleFile's answers by ref
	scopes map[string]*PathScope // PathScopeFor's answers by ref (nil: no path rule)
}

func (c *rulesCache) getScope(ref string) (*PathScope, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.scopes[ref]
	return s, ok
}

func (c *rulesCache) putScope(ref string, s *PathScope) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.scopes == nil || len(c.scopes) >= maxCachedRefs {
		c.scopes = map[string]*PathScope{}
	}
	c.scopes[ref] = s
}

// maxCachedRefs bounds the cache (a log may name many refs).
const maxCachedRefs = 4096

func (c *rulesCache) get(ref string) ([]*Rule, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rs, ok := c.byRef[ref]
	return slices.Clone(rs), ok
}

func (c *rulesCache) put(ref string, rs []*Rule) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.byRef) >= maxCachedRefs {
		clear(c.byRef)
	}
	c.byRef[ref] = rs
}

func (c *rulesCache) getNamed(ref string) (bool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	named, ok := c.named[ref]
	return named, ok
}

func (c *rulesCache) putNamed(ref string, named bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.named == nil || len(c.named) >= maxCachedRefs {
		c.named = map[string]bool{}
	}
	c.named[ref] = named
}

// ruleScope clips a rule of a rule file to its namespace, for one ref.
type ruleScope struct {
	n   *node
	ref string
}

// coversPath reports whether the item (ref, path) is in the namespace of
// the scope's delegation chain and is reached by the search: no earlier
// terminating delegation matches it.
func (s *ruleScope) coversPath(path string) bool {
	if !chainPaths(s.n.chain, path) {
		return false
	}
	for _, t := range s.n.shadows {
		if chainRefs(t.chain, s.ref) && chainHolds(t.chain, path) {
			return false
		}
	}
	return true
}

// shadowedWhole reports whether an earlier terminating delegation whose
// namespace holds every file of ref ends the search before n.
func (n *node) shadowedWhole(ref string) bool {
	for _, t := range n.shadows {
		if !chainHasPaths(t.chain) && chainRefs(t.chain, ref) {
			return true
		}
	}
	return false
}

// delegatedRulesFor appends to out the rules of the rule files the search
// reaches for ref (and for files on it), each clipped to its namespace;
// a delegation whose file counts for nothing gives a rule that is never
// met over its whole namespace (fail closed).
func (p *Policy) delegatedRulesFor(ref string, out []*Rule, named func() bool) []*Rule {
	for _, n := range p.nodes {
		if n.blocked || !chainRefs(n.chain, ref) || n.shadowedWhole(ref) {
			continue
		}
		chain := make([]string, len(n.chain))
		for i, d := range n.chain {
			chain[i] = d.Name
		}
		scope := &ruleScope{n: n, ref: ref}
		pathScoped := chainHasPaths(n.chain)
		if n.file.Untrusted != "" {
			// Named for the file, which no rule name can spell.
			r := &Rule{Name: RulesDir + "/" + n.d.Name + ".json", File: n.d.Name, Chain: chain, Org: n.org, Untrusted: n.file.Untrusted, Threshold: 1, scope: scope}
			if pathScoped {
				// A path rule: only an update that changes a file of
				// the namespace fails.
				for _, d := range n.chain {
					if len(d.Paths) > 0 {
						r.Paths = d.Paths
					}
				}
			}
			out = append(out, r)
			continue
		}
		for _, src := range n.file.Rules {
			if pathScoped && !src.IsPathRule() {
				continue // a whole-ref rule beyond a path namespace (Warnings)
			}
			r := *src
			r.Name = n.d.Name + ":" + src.Name
			r.Chain = chain
			r.Org = n.org
			r.scope = scope
			if p.covers(&r, ref, named) {
				out = append(out, &r)
			}
		}
	}
	return out
}
