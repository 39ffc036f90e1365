package fastpath

import (
	"sort"
	"strings"
)

// Prefixes answers whether a name starts with any of a set of string
// prefixes in O(log n), not by trying each one: a push names one prefix
// per ref it updates, and listing the server's refs against every one of
// them was quadratic in the refs of the push (a few thousand refs/pull/*
// took minutes).
type Prefixes struct {
	sorted []string // minimal: none is a prefix of another
}

// NewPrefixes returns the set of prefixes; the slice is not kept.
func NewPrefixes(prefixes []string) Prefixes {
	all := append([]string(nil), prefixes...)
	sort.Strings(all)
	// After sorting, a prefix of another comes right before the names it
	// covers: keep only the shortest of each run.
	var kept []string
	for _, p := range all {
		if n := len(kept); n > 0 && strings.HasPrefix(p, kept[n-1]) {
			continue
		}
		kept = append(kept, p)
	}
	return Prefixes{sorted: kept}
}

// Minimal returns the prefixes, sorted, without any that another covers.
func (ps Prefixes) Minimal() []string { return ps.sorted }

// Match reports whether name starts with one of the prefixes. Were some p
// a prefix of name, every string between p and name in order starts with
// p, so (no kept prefix starting with another) p is the greatest kept
// prefix not after name.
func (ps Prefixes) Match(name string) bool {
	i := sort.SearchStrings(ps.sorted, name)
	if i < len(ps.sorted) && ps.sorted[i] == name {
		return true
	}
	return i > 0 && strings.HasPrefix(name, ps.sorted[i-1])
}
