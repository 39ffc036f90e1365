package gitrepo

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// bombTree writes a tree holding src/crypto/aes.c and, when depth > 0, a
// directory bomb/ that nests depth levels of fan entries with names of
// nameLen bytes, every entry of a level pointing at the next level's one
// tree (the attack of notes/attacks 01: four trees of 31 entries list
// 923 521 paths). It returns the tree without bomb/ and the one with it.
func bombTree(t testing.TB, r *Repo, depth, nameLen, fan int) (base, bomb Hash) {
	t.Helper()
	blob, err := r.WriteObject("blob", []byte("x\n"))
	if err != nil {
		t.Fatal(err)
	}
	must := func(h Hash, err error) Hash {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	aes := must(r.WriteObject("blob", []byte("aes\n")))
	crypto := must(r.WriteTree([]TreeEntry{{Mode: ModeFile, Name: "aes.c", Hash: aes}}))
	src := must(r.WriteTree([]TreeEntry{{Mode: ModeTree, Name: "crypto", Hash: crypto}}))
	top := []TreeEntry{{Mode: ModeTree, Name: "src", Hash: src}}
	base = must(r.WriteTree(top))
	child, mode := blob, uint32(ModeFile)
	for lvl := range depth {
		var ents []TreeEntry
		for i := range fan {
			name := fmt.Sprintf("%02d", i) + strings.Repeat(string(rune('a'+lvl%26)), max(nameLen-2, 1))
			ents = append(ents, TreeEntry{Mode: mode, Name: name, Hash: child})
		}
		child, mode = must(r.WriteTree(ents)), ModeTree
	}
	bomb = must(r.WriteTree(append(top, TreeEntry{Mode: ModeTree, Name: "bomb", Hash: child})))
	return base, bomb
}

// prefixFilter reaches the paths under one directory (as a path rule's
// literal components do).
type prefixFilter string

func (p prefixFilter) Reach(dir string) Reach {
	switch {
	case dir == "" || strings.HasPrefix(string(p), dir+"/"):
		return ReachSome
	case dir == string(p) || strings.HasPrefix(dir, string(p)+"/"):
		return ReachAll
	}
	return ReachNone
}

// bothReaders opens the sandbox's repository twice: with the in-process
// readers and with every read through git (GIT_SECURE_NO_FASTPATH=1).
func bothReaders(t *testing.T) map[string]*Repo {
	t.Helper()
	s, dir, _ := newRepo(t, 1)
	out := map[string]*Repo{}
	for name, env := range map[string][]string{
		"in-process": inProcessEnv(s),
		"git":        append(inProcessEnv(s), EnvNoFastPath+"=1"),
	} {
		r, err := OpenWithEnv(dir, env)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		out[name] = r
	}
	return out
}

// TestChangedPathsTreeBomb: a diff that a few small trees blow up (the
// same subtree named many times, long names nested deep) is refused while
// it is measured, naming the bound, after reading each distinct pair of
// trees once; with a filter that skips bomb/ it lists nothing and reads
// only the directories the filter reaches. Both readers agree.
func TestChangedPathsTreeBomb(t *testing.T) {
	cases := []struct {
		name                string
		depth, nameLen, fan int
		bound               string
		maxReads            int
	}{
		// 923 521 paths of 413 bytes: 380 MB of names.
		{"fan", 4, 100, 31, "MiB of changed path names", 20},
		// 1 048 576 paths of 15 bytes.
		{"fan short names", 4, 3, 32, "more than 1000000 changed paths", 20},
		// One path of 200 names of 20 000 bytes (before: 400 MB of
		// prefixes held at once).
		{"chain", 200, 20000, 1, "a path longer than 4096 bytes", 420},
		// A million paths (within that bound) of 3 000 bytes: 100
		// names of 1 000 bytes a level, 3 levels.
		{"wide long names", 3, 1000, 100, "MiB of changed path names", 20},
	}
	for name, r := range bothReaders(t) {
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				base, bomb := bombTree(t, r, c.depth, c.nameLen, c.fan)
				paths, st, err := r.ChangedPathsCounted(base, bomb, nil)
				if !errors.Is(err, ErrDiffBound) || !strings.Contains(err.Error(), c.bound) {
					t.Fatalf("got %d paths, error %v; want %v naming %q", len(paths), err, ErrDiffBound, c.bound)
				}
				if st.Reads > c.maxReads || st.Listed != 0 {
					t.Errorf("refused after %d tree reads and %d directories listed; want at most %d reads, nothing listed", st.Reads, st.Listed, c.maxReads)
				}
				// The path rules reach src/crypto only: bomb/ is skipped.
				paths, st, err = r.ChangedPathsCounted(base, bomb, prefixFilter("src/crypto"))
				if err != nil || len(paths) != 0 {
					t.Fatalf("under src/crypto: %q, %v; want nothing changed", paths, err)
				}
				if st.Reads > 2 || st.Listed != 0 {
					t.Errorf("under src/crypto: %d reads, %d listed; want the top trees only", st.Reads, st.Listed)
				}
			})
		}
	}
}

// TestChangedPathsRepeatedSubtreeWithinBounds: a subtree named many times
// within the bounds is read once and listed in full, the same by both
// readers; a filter that reaches part of it lists only that part.
func TestChangedPathsRepeatedSubtreeWithinBounds(t *testing.T) {
	var want []string
	for name, r := range bothReaders(t) {
		base, bomb := bombTree(t, r, 3, 4, 20)
		paths, st, err := r.ChangedPathsCounted(base, bomb, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(paths) != 8000 || !strings.HasPrefix(paths[0], "bomb/00cc/00bb/00aa") {
			t.Fatalf("%s: %d paths, first %q; want 8000 under bomb/", name, len(paths), paths[0])
		}
		// Three levels, one tree each (and the top): each pair read once.
		if st.Reads != 8 || st.Listed != 1+1+20+400 {
			t.Errorf("%s: %d reads, %d listed; want 8 reads and 422 directories listed", name, st.Reads, st.Listed)
		}
		if want == nil {
			want = paths
		} else if strings.Join(want, "\n") != strings.Join(paths, "\n") {
			t.Errorf("the readers list different paths")
		}
		part, _, err := r.ChangedPathsCounted(base, bomb, prefixFilter("bomb/05cc"))
		if err != nil || len(part) != 400 || !strings.HasPrefix(part[0], "bomb/05cc/") {
			t.Errorf("%s: under bomb/05cc: %d paths, %v; want 400", name, len(part), err)
		}
	}
}

// TestChangedPathsRepeatedSubtreeTooDeep: a deep subtree met first near
// the top and then again deep down is refused by measure (its remembered
// size carries its height and its longest path), before anything is
// listed. (A path of 4096 bytes holds at most 2048 directories, so the
// path bound comes before the depth bound.)
func TestChangedPathsRepeatedSubtreeTooDeep(t *testing.T) {
	for name, r := range bothReaders(t) {
		blob, err := r.WriteObject("blob", []byte("x\n"))
		if err != nil {
			t.Fatal(err)
		}
		// deep: a chain of 3000 directories down to one file.
		deep, mode := blob, uint32(ModeFile)
		for range 3000 {
			if deep, err = r.WriteTree([]TreeEntry{{Mode: mode, Name: "d", Hash: deep}}); err != nil {
				t.Fatal(err)
			}
			mode = ModeTree
		}
		// holder: deep at the top ("a") and under 2000 more directories ("b").
		other := deep
		for range 2000 {
			if other, err = r.WriteTree([]TreeEntry{{Mode: ModeTree, Name: "e", Hash: other}}); err != nil {
				t.Fatal(err)
			}
		}
		top, err := r.WriteTree([]TreeEntry{{Mode: ModeTree, Name: "a", Hash: deep}, {Mode: ModeTree, Name: "b", Hash: other}})
		if err != nil {
			t.Fatal(err)
		}
		_, st, err := r.ChangedPathsCounted(ZeroHash, top, nil)
		if !errors.Is(err, ErrDiffBound) || !strings.Contains(err.Error(), "longer than 4096 bytes") || st.Listed != 0 || st.Reads > 2*5002 {
			t.Errorf("%s: %v after %d reads, listing %d directories; want the path bound while measuring, each tree read once", name, err, st.Reads, st.Listed)
		}
	}
}

// TestChangedPathsEmptySubtreesNotWalked: subtrees that change no file
// (here each holds only an empty tree), named 923 521 times beside one
// changed file, are measured once and not walked when listing.
func TestChangedPathsEmptySubtreesNotWalked(t *testing.T) {
	for name, r := range bothReaders(t) {
		empty, err := r.WriteObject("tree", nil)
		if err != nil {
			t.Fatal(err)
		}
		child, err := r.WriteTree([]TreeEntry{{Mode: ModeTree, Name: "empty", Hash: empty}})
		if err != nil {
			t.Fatal(err)
		}
		for range 4 {
			var ents []TreeEntry
			for i := range 31 {
				ents = append(ents, TreeEntry{Mode: ModeTree, Name: fmt.Sprintf("%02d", i), Hash: child})
			}
			if child, err = r.WriteTree(ents); err != nil {
				t.Fatal(err)
			}
		}
		blob, err := r.WriteObject("blob", []byte("x\n"))
		if err != nil {
			t.Fatal(err)
		}
		top, err := r.WriteTree([]TreeEntry{{Mode: ModeTree, Name: "bomb", Hash: child}, {Mode: ModeFile, Name: "f", Hash: blob}})
		if err != nil {
			t.Fatal(err)
		}
		paths, st, err := r.ChangedPathsCounted(ZeroHash, top, nil)
		if err != nil || len(paths) != 1 || paths[0] != "f" {
			t.Fatalf("%s: %q, %v; want f", name, paths, err)
		}
		if st.Reads > 20 || st.Listed > 1 {
			t.Errorf("%s: %d reads, %d directories listed; want each pair read once and only the top listed", name, st.Reads, st.Listed)
		}
	}
}
