package policy

import (
	"slices"
	"strings"
)

// Within reports whether every name pattern matches is also matched by
// outer (the language of pattern is a subset of outer's), under Match's
// rules. It is sound: true only when containment holds. It may answer false
// for a pattern that is inside in a way the bounded search below does not
// prove; a delegation then refuses the rule, which its owners rewrite.
//
// Used when a rule file is edited: a rule or delegation outside its
// delegation's namespace is refused. Verification does not rely on it: it
// clips every rule to its namespace (Rule.CoversPath, Policy.Covers).
func Within(outer, pattern string) bool {
	if outer == pattern || outer == "**" || Match(outer, pattern) && !strings.ContainsAny(pattern, "*?") {
		return true
	}
	return within(outer, pattern)
}

// WithinFold is Within for path patterns, which match with ASCII case
// folded (and more, see MatchFold): a pattern inside outer once both are
// folded is inside.
func WithinFold(outer, pattern string) bool {
	return Within(outer, pattern) || within(asciiLower(outer), asciiLower(pattern))
}

// withinAny reports whether pattern is within one of outers (fold: as
// path patterns).
func withinAny(outers []string, pattern string, fold bool) bool {
	return slices.ContainsFunc(outers, func(o string) bool {
		if fold {
			return WithinFold(o, pattern)
		}
		return Within(o, pattern)
	})
}

type tokKind uint8

const (
	tokLit  tokKind = iota
	tokOne          // ?
	tokStar         // *
	tokAny          // **
)

type tok struct {
	kind tokKind
	r    rune
}

func tokens(pat string) []tok {
	var out []tok
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		switch {
		case rs[i] == '*' && i+1 < len(rs) && rs[i+1] == '*':
			out = append(out, tok{kind: tokAny})
			i++
		case rs[i] == '*':
			out = append(out, tok{kind: tokStar})
		case rs[i] == '?':
			out = append(out, tok{kind: tokOne})
		default:
			out = append(out, tok{kind: tokLit, r: rs[i]})
		}
	}
	return out
}

// nfa is a pattern as a set of positions: position i has consumed the
// tokens before i; len(toks) accepts.
type nfa []tok

func (a nfa) closure(set []bool) {
	for i := 0; i < len(a); i++ {
		if set[i] && (a[i].kind == tokStar || a[i].kind == tokAny) {
			set[i+1] = true
		}
	}
}

func (a nfa) step(set []bool, c rune) []bool {
	next := make([]bool, len(a)+1)
	for i := 0; i < len(a); i++ {
		if !set[i] {
			continue
		}
		switch t := a[i]; t.kind {
		case tokLit:
			next[i+1] = next[i+1] || c == t.r
		case tokOne:
			next[i+1] = next[i+1] || c != '/'
		case tokStar:
			next[i] = next[i] || c != '/'
		case tokAny:
			next[i] = true
		}
	}
	a.closure(next)
	return next
}

func setKey(s []bool) string {
	b := make([]byte, len(s))
	for i, x := range s {
		if x {
			b[i] = 1
		}
	}
	return string(b)
}

// maxWithinStates bounds the search; beyond it the answer is "not proved".
const maxWithinStates = 20000

// within decides containment by exploring the product of both patterns'
// subset automata over an alphabet of the literal characters of both, '/'
// and one character neither names (every other character behaves like it).
func within(outer, pattern string) bool {
	o, p := nfa(tokens(outer)), nfa(tokens(pattern))
	alpha := map[rune]bool{'/': true}
	for _, t := range append(slices.Clone(o), p...) {
		if t.kind == tokLit {
			alpha[t.r] = true
		}
	}
	other := rune(0xE000)
	for alpha[other] {
		other++
	}
	alpha[other] = true
	letters := make([]rune, 0, len(alpha))
	for r := range alpha {
		letters = append(letters, r)
	}
	slices.Sort(letters)
	type state struct{ p, o []bool }
	start := state{make([]bool, len(p)+1), make([]bool, len(o)+1)}
	start.p[0], start.o[0] = true, true
	p.closure(start.p)
	o.closure(start.o)
	seen := map[string]bool{}
	queue := []state{start}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		key := setKey(s.p) + "|" + setKey(s.o)
		if seen[key] {
			continue
		}
		if seen[key] = true; len(seen) > maxWithinStates {
			return false
		}
		if s.p[len(p)] && !s.o[len(o)] {
			return false // a name pattern matches and outer does not
		}
		for _, c := range letters {
			np := p.step(s.p, c)
			if !slices.Contains(np, true) {
				continue
			}
			queue = append(queue, state{np, o.step(s.o, c)})
		}
	}
	return true
}
