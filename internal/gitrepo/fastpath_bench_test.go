package gitrepo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// BenchmarkFastPaths measures each in-process reader against git doing the
// same (the switch EnvNoInProcess set), on what a push reads: a commit
// (loose, then packed), the refs under refs/ (loose and packed), the
// configuration, a tree, one ref moved and one object written, and
// opening the repository from a hook. The figures are in the doc of
// package fastpath.
func BenchmarkFastPaths(b *testing.B) {
	b.Setenv("TZ", "UTC") // as the sandbox's git has it
	s := testutil.NewSandbox(b)
	dir := s.InitRepo("fp", 20)
	for i := 0; i < 50; i++ {
		s.Git(dir, "update-ref", fmt.Sprintf("refs/tags/t%d", i), "HEAD")
	}
	s.Git(dir, "pack-refs", "--all")
	packed := mustParse(b, s.Git(dir, "rev-parse", "HEAD~10"))
	s.Git(dir, "repack", "-adq")
	s.Commit(dir, "loose.txt", "loose\n", "loose commit")
	loose := mustParse(b, s.Git(dir, "rev-parse", "HEAD"))
	tree := mustParse(b, s.Git(dir, "rev-parse", "HEAD^{tree}"))
	parent := mustParse(b, s.Git(dir, "rev-parse", "HEAD~1"))
	s.Git(dir, "update-ref", "refs/heads/moving", loose.String())
	gitDir := strings.TrimSpace(s.Git(dir, "rev-parse", "--absolute-git-dir"))

	for _, mode := range []struct {
		name string
		env  []string
	}{
		{"inprocess", inProcessEnv(s)},
		{"git", append(inProcessEnv(s), EnvNoInProcess+"=1")},
	} {
		opened := func(b *testing.B) *Repo {
			r, err := OpenWithEnv(dir, mode.env)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { r.Close() })
			if _, err := r.ReadCommit(parent); err != nil { // start cat-file
				b.Fatal(err)
			}
			return r
		}
		b.Run("read-loose-commit/"+mode.name, func(b *testing.B) {
			r := opened(b)
			for i := 0; i < b.N; i++ {
				if _, err := r.ReadCommit(loose); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("read-packed-commit/"+mode.name, func(b *testing.B) {
			r := opened(b)
			for i := 0; i < b.N; i++ {
				if _, err := r.ReadCommit(packed); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("read-tree/"+mode.name, func(b *testing.B) {
			r := opened(b)
			for i := 0; i < b.N; i++ {
				if _, err := r.ReadTree(tree); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("list-refs/"+mode.name, func(b *testing.B) {
			r := opened(b)
			for i := 0; i < b.N; i++ {
				if refs, err := r.ListRefs(); err != nil || len(refs) < 50 {
					b.Fatal(len(refs), err)
				}
			}
		})
		b.Run("config/"+mode.name, func(b *testing.B) {
			r := opened(b)
			for i := 0; i < b.N; i++ {
				r.dropConfig()
				if _, err := r.ConfigList(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("update-ref/"+mode.name, func(b *testing.B) {
			r := opened(b)
			from, to := loose, parent
			if cur, _, _ := r.ResolveRef("refs/heads/moving"); cur != from {
				from, to = to, from
			}
			for i := 0; i < b.N; i++ {
				if err := r.UpdateRefs([]RefUpdate{{Name: "refs/heads/moving", Old: from, New: to}}, "bench"); err != nil {
					b.Fatal(err)
				}
				from, to = to, from
			}
		})
		b.Run("write-object/"+mode.name, func(b *testing.B) {
			r := opened(b)
			for i := 0; i < b.N; i++ {
				if _, err := r.WriteObject("blob", []byte(fmt.Sprintf("%s %d %d\n", mode.name, i, b.N))); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("open-hook/"+mode.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				r, err := OpenGitDir(gitDir, dir, mode.env)
				if err != nil {
					if r, err = OpenWithEnv(dir, mode.env); err != nil {
						b.Fatal(err)
					}
				}
				r.Close()
			}
		})
	}
}
