package policy

import (
	"sort"
	"strings"
)

// PathScope tells a diff which directories may hold a path that some of a
// set of path rules covers (CoversPath), so that it need not list the
// others: a tree of a million files under bomb/ changes nothing that
// src/crypto/** protects. It errs towards listing: a directory is skipped
// only when no pattern's literal leading components, under either fold
// CoversPath matches with (ASCII case, FoldPath), can agree with it; the
// files and directories CoversPath adds for a pattern (the directories it
// spells out, .gitattributes above its files, the root's .gitmodules) lie
// in directories that agree with those components, or at the top.
type PathScope struct {
	// prefixes holds each pattern's literal leading components, per fold.
	prefixes []patternPrefix
	// every: some rule's paths cannot be told apart by directory (a rule
	// file that counts for nothing covers its whole namespace).
	every bool
	key   string
}

// PathScopeFor is NewPathScope(p.RulesFor(ref)), remembered per ref where
// RulesFor's answers are (a policy with rule files). A verifier asks for
// it at every entry that needs a diff, and building it from a hundred
// rule files' patterns each time allocated twenty times what the rest of
// the verification did (BenchmarkVerifyRuleFiles, 10 000 entries: 547 MB
// an operation). A PathScope is not changed after it is built, so one
// serves every caller.
func (p *Policy) PathScopeFor(ref string) *PathScope {
	if p.rulesFor == nil {
		return NewPathScope(p.RulesFor(ref))
	}
	if s, ok := p.rulesFor.getScope(ref); ok {
		return s
	}
	s := NewPathScope(p.RulesFor(ref))
	p.rulesFor.putScope(ref, s)
	return s
}

// NewPathScope is the scope of the path rules among rules (nil when none
// is a path rule).
func NewPathScope(rules []*Rule) *PathScope {
	s := &PathScope{}
	var pats []string
	for _, r := range rules {
		if !r.IsPathRule() {
			continue
		}
		if r.Untrusted != "" {
			s.every = true
		}
		pats = append(pats, r.Paths...)
	}
	if len(pats) == 0 && !s.every {
		return nil
	}
	sort.Strings(pats)
	var key strings.Builder
	seen := map[string]bool{}
	for _, p := range pats {
		if seen[p] {
			continue
		}
		seen[p] = true
		key.WriteString(p)
		key.WriteByte(0)
		for _, folded := range []string{asciiLower(p), FoldPath(p)} {
			s.prefixes = append(s.prefixes, literalPrefix(folded))
		}
	}
	if s.every {
		s.prefixes = nil
		s.key = "\x00every"
	} else {
		s.key = key.String()
	}
	return s
}

// patternPrefix is what a pattern key says about directories: its
// leading components that hold no wildcard and, for a pattern without a
// wildcard, how many components it has (deep: it has a wildcard, and a
// .gitattributes file in any directory below its literal components may
// change how its files are written, so every directory there is reached).
type patternPrefix struct {
	lit   []string
	comps int
	deep  bool
}

func literalPrefix(pat string) patternPrefix {
	comps := strings.Split(pat, "/")
	pp := patternPrefix{lit: comps, comps: len(comps), deep: strings.ContainsAny(pat, "*?")}
	for i, c := range comps {
		if strings.ContainsAny(c, "*?") {
			pp.lit = comps[:i]
			break
		}
	}
	return pp
}

// Key names the scope: two scopes with one key skip the same directories.
func (s *PathScope) Key() string { return s.key }

// Reach reports whether a path under directory dir may be covered (may),
// and whether that holds for every directory below it too (every), when
// the scope need not be asked about them.
func (s *PathScope) Reach(dir string) (may, every bool) {
	if s.every {
		return true, true
	}
	if dir == "" {
		return true, false
	}
	keys := [2][]string{strings.Split(asciiLower(dir), "/"), strings.Split(FoldPath(dir), "/")}
	for i, pp := range s.prefixes {
		d, l := keys[i%2], pp.lit
		if !pp.deep && len(d) >= pp.comps {
			// A literal path: it, the directories it spells out and
			// the .gitattributes above it all lie higher up.
			continue
		}
		n := min(len(l), len(d))
		if !slicesEqual(l[:n], d[:n]) {
			continue
		}
		may = true
		if pp.deep && len(d) >= len(l) {
			return true, true
		}
	}
	return may, false
}

func slicesEqual(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
