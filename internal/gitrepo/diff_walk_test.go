package gitrepo

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestWalkChangedPaths: a measured diff walks exactly the paths
// ChangedPathsUnder lists (in tree order, so compared sorted), counts
// them before walking, and a walk stops at the callback's first error,
// returned as it is.
func TestWalkChangedPaths(t *testing.T) {
	for name, r := range bothReaders(t) {
		t.Run(name, func(t *testing.T) {
			base, bomb := bombTree(t, r, 3, 5, 4)
			for _, f := range []PathFilter{nil, prefixFilter("bomb/01aaa"), prefixFilter("src")} {
				want, err := r.ChangedPathsUnder(ZeroHash, bomb, f)
				if err != nil {
					t.Fatal(err)
				}
				pd, err := r.MeasureChangedPaths(ZeroHash, bomb, f)
				if err != nil {
					t.Fatal(err)
				}
				if pd.Paths() != len(want) {
					t.Errorf("filter %v: measured %d paths, want %d", f, pd.Paths(), len(want))
				}
				for range 2 { // a second walk walks again
					var got []string
					if err := pd.Walk(func(p string) error { got = append(got, strings.Clone(p)); return nil }); err != nil {
						t.Fatal(err)
					}
					slices.Sort(got)
					if !slices.Equal(got, want) {
						t.Errorf("filter %v: walked %q, want %q", f, got, want)
					}
				}
			}
			pd, err := r.MeasureChangedPaths(base, bomb, nil)
			if err != nil {
				t.Fatal(err)
			}
			stop := errors.New("stop")
			n := 0
			if err := pd.Walk(func(string) error { n++; return stop }); err != stop || n != 1 {
				t.Errorf("walk stopped by its callback: %v after %d paths, want the callback's error after 1", err, n)
			}
			if _, err := r.MeasureChangedPaths(ZeroHash, mustBomb(t, r), nil); !errors.Is(err, ErrDiffBound) {
				t.Errorf("measuring a diff beyond the bounds: %v, want ErrDiffBound", err)
			}
		})
	}
}

// mustBomb is the tree of notes/attacks 01: 923 521 paths of 400 bytes.
func mustBomb(t *testing.T, r *Repo) Hash {
	_, bomb := bombTree(t, r, 4, 100, 31)
	return bomb
}
