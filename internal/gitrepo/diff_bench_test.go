package gitrepo

import (
	"fmt"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// importTree writes a tree of dirs directories of files files each (one
// blob), as a monorepo import adds in one commit.
func importTree(b *testing.B, r *Repo, dirs, files int) Hash {
	b.Helper()
	blob, err := r.WriteObject("blob", []byte("x\n"))
	if err != nil {
		b.Fatal(err)
	}
	var top []TreeEntry
	for d := range dirs {
		var ents []TreeEntry
		for f := range files {
			ents = append(ents, TreeEntry{Mode: ModeFile, Name: fmt.Sprintf("file%05d.go", f), Hash: blob})
		}
		// Every directory distinct: a real import repeats few subtrees.
		ents = append(ents, TreeEntry{Mode: ModeFile, Name: fmt.Sprintf("id%05d", d), Hash: blob})
		h, err := r.WriteTree(ents)
		if err != nil {
			b.Fatal(err)
		}
		top = append(top, TreeEntry{Mode: ModeTree, Name: fmt.Sprintf("pkg/dir%05d", d)[4:], Hash: h})
	}
	h, err := r.WriteTree(top)
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkChangedPaths: an honest import (200 000 files in 400
// directories) listed in full and through a filter that reaches one
// directory; the tree bomb of notes/attacks 01 (refused while measured)
// and the same bomb outside the filter's reach (skipped).
func BenchmarkChangedPaths(b *testing.B) {
	s := testutil.NewSandbox(b)
	dir := s.InitRepo("repo", 1)
	r, err := OpenWithEnv(dir, inProcessEnv(s))
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	big := importTree(b, r, 400, 500)
	base, bomb := bombTree(b, r, 4, 100, 31)
	b.Run("import-200k", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			p, err := r.ChangedPaths(ZeroHash, big)
			if err != nil || len(p) != 400*501 {
				b.Fatal(len(p), err)
			}
		}
	})
	b.Run("import-200k-filtered", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			p, err := r.ChangedPathsUnder(ZeroHash, big, prefixFilter("dir00007"))
			if err != nil || len(p) != 501 {
				b.Fatal(len(p), err)
			}
		}
	})
	b.Run("bomb-refused", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := r.ChangedPaths(base, bomb); err == nil {
				b.Fatal("bomb listed")
			}
		}
	})
	b.Run("bomb-skipped", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if p, err := r.ChangedPathsUnder(base, bomb, prefixFilter("src/crypto")); err != nil || len(p) != 0 {
				b.Fatal(len(p), err)
			}
		}
	})
}
