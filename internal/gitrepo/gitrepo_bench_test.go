package gitrepo

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// benchRepo builds a repository with n linear commits (each changing one
// file) through a single git fast-import process and returns its path and
// the commit hashes.
func benchRepo(b *testing.B, n int) (*testutil.Sandbox, string, []Hash) {
	b.Helper()
	s := testutil.NewSandbox(b)
	dir := s.InitRepo("bench", 0)
	var in bytes.Buffer
	for i := 1; i <= n; i++ {
		content := fmt.Sprintf("content %d\n", i)
		msg := fmt.Sprintf("commit %d\n\nsome body text for commit %d\n", i, i)
		fmt.Fprintf(&in, "commit refs/heads/main\nmark :%d\n", i)
		fmt.Fprintf(&in, "author Bench Author <author@example.com> %d +0100\n", 1700000000+i)
		fmt.Fprintf(&in, "committer Bench Committer <committer@example.com> %d +0100\n", 1700000000+i)
		fmt.Fprintf(&in, "data %d\n%s", len(msg), msg)
		if i > 1 {
			fmt.Fprintf(&in, "from :%d\n", i-1)
		}
		fmt.Fprintf(&in, "M 100644 inline dir%d/file%d.txt\ndata %d\n%s\n", i%10, i%97, len(content), content)
	}
	if _, err := s.RunErr(dir, in.Bytes(), "git", "fast-import", "--quiet"); err != nil {
		b.Fatal(err)
	}
	out := s.Git(dir, "rev-list", "--reverse", "main")
	lines := strings.Split(out, "\n")
	if len(lines) != n {
		b.Fatalf("got %d commits", len(lines))
	}
	hashes := make([]Hash, n)
	for i, l := range lines {
		hashes[i] = mustParse(b, l)
	}
	return s, dir, hashes
}

// BenchmarkReadCommits5000 reads 5 000 commits by hash: through the
// long-lived cat-file batch reader and (first 200 only) with one
// "git cat-file -p" process per commit. Each sub-benchmark reports
// ns/commit; bench/gogit measures go-git on the same shape.
func BenchmarkReadCommits5000(b *testing.B) {
	const n = 5000
	s, dir, hashes := benchRepo(b, n)

	b.Run("batch", func(b *testing.B) {
		r, err := OpenWithEnv(dir, s.Environ())
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		if _, err := r.ReadCommit(hashes[0]); err != nil { // start the process
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for _, h := range hashes {
				c, err := r.ReadCommit(h)
				if err != nil || c.Hash != h {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/commit")
	})

	b.Run("process-per-commit-200", func(b *testing.B) {
		const m = 200
		env := s.Environ()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for _, h := range hashes[:m] {
				cmd := exec.Command("git", "cat-file", "-p", h.String())
				cmd.Dir = dir
				cmd.Env = env
				out, err := cmd.Output()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ParseCommit(out); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*m), "ns/commit")
	})
}

// BenchmarkWriteObject measures WriteObject for new blobs (one
// hash-object process each) and for existing ones (in-process hash plus a
// batch-check lookup).
func BenchmarkWriteObject(b *testing.B) {
	s := testutil.NewSandbox(b)
	dir := s.InitRepo("w", 1)
	r, err := OpenWithEnv(dir, s.Environ())
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.Run("new", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := r.WriteObject("blob", []byte(fmt.Sprintf("blob %d %d\n", i, b.N))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("existing", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := r.WriteObject("blob", []byte("blob 0 1\n")); err != nil {
				b.Fatal(err)
			}
		}
	})
}
