package gitrepo

import (
	"errors"
	"fmt"
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

// TestWalkDirsSkips: WalkDirs asks before each directory that holds
// changes, with its depth, skips one it is told to, and gives each path
// the depth of its directory.
func TestWalkDirsSkips(t *testing.T) {
	for name, r := range bothReaders(t) {
		t.Run(name, func(t *testing.T) {
			_, bomb := bombTree(t, r, 2, 3, 3) // src/crypto/aes.c, bomb/{00b,01b,02b}/{00a,01a,02a}
			pd, err := r.MeasureChangedPaths(ZeroHash, bomb, nil)
			if err != nil {
				t.Fatal(err)
			}
			var dirs, paths []string
			err = pd.WalkDirs(func(dir string, depth int) bool {
				dirs = append(dirs, fmt.Sprintf("%s@%d", dir, depth))
				return dir != "bomb/01b" && dir != "src/crypto"
			}, func(p string, depth int) error {
				if want := strings.Count(p, "/"); depth != want {
					t.Errorf("%s: depth %d, want %d", p, depth, want)
				}
				paths = append(paths, strings.Clone(p))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(dirs)
			slices.Sort(paths)
			wantDirs := []string{"bomb/00b@2", "bomb/01b@2", "bomb/02b@2", "bomb@1", "src/crypto@2", "src@1"}
			wantPaths := []string{"bomb/00b/00a", "bomb/00b/01a", "bomb/00b/02a", "bomb/02b/00a", "bomb/02b/01a", "bomb/02b/02a"}
			if !slices.Equal(dirs, wantDirs) || !slices.Equal(paths, wantPaths) {
				t.Errorf("entered %q, walked %q; want %q, %q", dirs, paths, wantDirs, wantPaths)
			}
		})
	}
}
