package verify

import (
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
)

// countingSource answers ChangedPaths with n paths per pair of trees
// (sizes[a[0]]) and counts the calls.
type countingSource struct {
	Source
	sizes map[byte]int
	calls map[byte]int
}

func (s *countingSource) ChangedPaths(a, b gitrepo.Hash) ([]string, error) {
	s.calls[a[0]]++
	long := strings.Repeat("x", 84)
	out := make([]string, s.sizes[a[0]])
	for i := range out {
		out[i] = long
	}
	return out, nil
}

func tree(b byte) gitrepo.Hash { return gitrepo.Hash{b} }

// The diff cache keeps the most recently used diffs within maxCachedBytes:
// a diff asked again while cached is not computed again, the least
// recently used goes first, one larger than the cache is never kept, and
// a rule's covered paths are memoized with the diff they come from and
// dropped with it.
func TestDiffCacheBound(t *testing.T) {
	per := maxCachedBytes / 3 / 100 // paths of a third of the cache
	src := &countingSource{sizes: map[byte]int{1: per, 2: per, 3: per, 4: per, 9: maxCachedBytes/100 + 1}, calls: map[byte]int{}}
	d := newDiffCache(src, nil)
	ask := func(b byte) []string {
		t.Helper()
		p, err := d.ChangedPaths(tree(b), tree(100))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, b := range []byte{1, 2, 1, 3, 1} {
		ask(b)
	}
	if src.calls[1] != 1 || src.calls[2] != 1 || src.calls[3] != 1 {
		t.Fatalf("diffs computed %v; want each once while it fits", src.calls)
	}
	r := &policy.Rule{Name: "x", Paths: []string{"x*"}}
	p1 := ask(1)
	if got := coveredPaths(d, r, p1); len(got) != per {
		t.Fatalf("%d covered paths, want %d", len(got), per)
	}
	if c := d.cachedOf(p1); c == nil || c.covered[r] == nil {
		t.Fatal("the covered paths of a cached diff are not memoized")
	}
	// 4 does not fit beside 1, 2 and 3 (with 1's memo): 2, the least
	// recently used, goes.
	ask(4)
	if _, ok := d.diffs[diffKey{a: tree(2), b: tree(100)}]; ok {
		t.Fatal("the least recently used diff was kept past the bound")
	}
	ask(2)
	if src.calls[2] != 2 {
		t.Fatalf("an evicted diff was served from the cache: %v", src.calls)
	}
	if d.held > maxCachedBytes || len(d.diffs) > maxCachedDiffs {
		t.Fatalf("the cache holds %d bytes in %d diffs, bounds %d and %d", d.held, len(d.diffs), maxCachedBytes, maxCachedDiffs)
	}
	held := 0
	for c := d.newest; c != nil; c = c.next {
		held += c.bytes
		if d.byFirst[&c.paths[0]] != c {
			t.Fatal("a cached diff is not found by its first path")
		}
	}
	if held != d.held || len(d.byFirst) != len(d.diffs) {
		t.Fatalf("the recency list holds %d bytes, the cache counts %d; %d by first path, %d diffs", held, d.held, len(d.byFirst), len(d.diffs))
	}
	// Larger than the whole cache: computed each time, nothing evicted
	// for it.
	before := len(d.diffs)
	ask(9)
	ask(9)
	if src.calls[9] != 2 || len(d.diffs) != before {
		t.Fatalf("a diff larger than the cache: computed %d times, %d -> %d diffs cached", src.calls[9], before, len(d.diffs))
	}
	// A memo of an evicted diff is gone with it: its paths are matched
	// again, not served from a stale memo.
	for b := byte(10); b < 14; b++ {
		src.sizes[b] = per
		ask(b)
	}
	if d.cachedOf(p1) != nil {
		t.Fatal("diff 1 still cached after four newer diffs of a third of the cache each")
	}
	if got := coveredPaths(d, r, p1); len(got) != per {
		t.Fatalf("%d covered paths after eviction, want %d", len(got), per)
	}
}
