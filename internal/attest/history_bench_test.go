package attest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// BenchmarkStoreHistory measures what the append-only store costs with n
// envelopes, one commit each (as Add makes them): the server hook's
// comparison of one push (Dropped between the last two tips), and the
// verification's walk over the whole history (WithHistory), which it
// makes only when an entry's rules are not met with the tip.
func BenchmarkStoreHistory(b *testing.B) {
	for _, n := range []int{1000} {
		sb := testutil.NewSandbox(b)
		dir := sb.InitRepo("repo", 1)
		r, err := gitrepo.OpenWithEnv(dir, sb.Environ())
		if err != nil {
			b.Fatal(err)
		}
		tips := make([]gitrepo.Hash, 0, n)
		var tree, tip gitrepo.Hash
		for i := 0; i < n; i++ {
			blob, err := r.WriteObject("blob", fmt.Appendf(nil, "envelope %d", i))
			if err != nil {
				b.Fatal(err)
			}
			a := sha256.Sum256(fmt.Appendf(nil, "update %d", i))
			parts := []string{"approvals", hex.EncodeToString(a[:]), fmt.Sprintf("%064x.json", i%3)}
			if tree, err = putEntry(r, tree, parts, gitrepo.ModeFile, blob); err != nil {
				b.Fatal(err)
			}
			var parents []gitrepo.Hash
			if !tip.IsZero() {
				parents = []gitrepo.Hash{tip}
			}
			if tip, err = r.WriteObject("commit", gitrepo.EncodeCommit(tree, parents, who, who, "add\n")); err != nil {
				b.Fatal(err)
			}
			tips = append(tips, tip)
		}
		trees := func(c gitrepo.Hash) gitrepo.Hash {
			commit, err := r.ReadCommit(c)
			if err != nil {
				b.Fatal(err)
			}
			return commit.Tree
		}
		oldTree, newTree := trees(tips[n-2]), trees(tips[n-1])
		b.Run(fmt.Sprintf("push/envelopes=%d", n), func(b *testing.B) {
			for b.Loop() {
				if d, err := Dropped(r, oldTree, newTree); err != nil || len(d) != 0 {
					b.Fatal(d, err)
				}
			}
		})
		file := historyFile(r.GitDir())
		b.Run(fmt.Sprintf("history-cold/envelopes=%d", n), func(b *testing.B) {
			for b.Loop() {
				os.Remove(file)
				s, err := OpenStoreAt(r, tip)
				if err != nil {
					b.Fatal(err)
				}
				if _, dropped, err := s.WithHistory(); err != nil || dropped {
					b.Fatal(dropped, err)
				}
			}
		})
		// The next walk, one commit later, starts from the file.
		os.Remove(file)
		before, err := OpenStoreAt(r, tips[n-2])
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := before.WithHistory(); err != nil {
			b.Fatal(err)
		}
		saved, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("history-one-more/envelopes=%d", n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				if err := os.WriteFile(file, saved, 0o644); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				s, err := OpenStoreAt(r, tip)
				if err != nil {
					b.Fatal(err)
				}
				if _, dropped, err := s.WithHistory(); err != nil || dropped {
					b.Fatal(dropped, err)
				}
			}
		})
		r.Close()
	}
}
