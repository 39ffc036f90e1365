package gogit

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// benchRepo builds the same repository as internal/gitrepo's benchRepo:
// n linear commits, each changing one file, through one git fast-import.
func benchRepo(b *testing.B, n int) (string, []plumbing.Hash) {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "bench")
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	run := func(stdin []byte, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	run(nil, "init", "-q", "-b", "main")
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
	run(in.Bytes(), "fast-import", "--quiet")
	lines := strings.Split(run(nil, "rev-list", "--reverse", "main"), "\n")
	if len(lines) != n {
		b.Fatalf("got %d commits, want %d", len(lines), n)
	}
	hashes := make([]plumbing.Hash, n)
	for i, l := range lines {
		hashes[i] = plumbing.NewHash(l)
	}
	return dir, hashes
}

// BenchmarkReadCommits5000 reads 5 000 commits by hash through go-git and
// reports ns/commit, as internal/gitrepo's benchmark of the same name does
// for git-secure's readers.
func BenchmarkReadCommits5000(b *testing.B) {
	const n = 5000
	dir, hashes := benchRepo(b, n)
	b.Run("go-git", func(b *testing.B) {
		repo, err := git.PlainOpen(dir)
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for _, h := range hashes {
				c, err := repo.CommitObject(h)
				if err != nil || c.Hash != h {
					b.Fatalf("read %s: %v", h, err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/commit")
	})
}
