package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchRepo makes a repository with history for u; with secure, git-secure
// is initialised in it (which installs its hooks and routes origin through
// git-remote-secure) and main is protected.
func benchRepo(b *testing.B, u *user, name, url string, secure bool) string {
	b.Helper()
	dir := u.sb.InitRepo(name, 5)
	u.configure(dir)
	if url != "" {
		u.git(dir, "remote", "add", "origin", url)
	}
	if secure {
		u.secure(dir, "init")
		u.secure(dir, "policy", "add-person", u.name, "--key", u.key.Public)
		u.secure(dir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", u.name)
		u.secure(dir, "policy", "apply")
	}
	if url != "" {
		u.git(dir, "push", "-q", "-u", "origin", "main")
	}
	return dir
}

func benchCommit(b *testing.B, secure bool) {
	u := newUser(b, "alice")
	dir := benchRepo(b, u, "repo", "", secure)
	if secure {
		if hp := u.git(dir, "config", "core.hooksPath"); hp == "" {
			b.Fatal("hooks not installed")
		}
	}
	u.commit(dir, "bench.txt", "start\n")
	file := filepath.Join(dir, "bench.txt")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := os.WriteFile(file, fmt.Appendf(nil, "%d\n", i), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		u.git(dir, "commit", "-q", "-a", "-m", "bench")
	}
}

// BenchmarkCommitPlain: git commit -a of one changed file without
// git-secure.
func BenchmarkCommitPlain(b *testing.B) { benchCommit(b, false) }

// BenchmarkCommitWithHooks: the same with git-secure initialised and its
// hooks installed (core.hooksPath, every hook forwarded).
func BenchmarkCommitWithHooks(b *testing.B) { benchCommit(b, true) }

func benchPush(b *testing.B, secure bool) {
	srv := startServer(b, trFile)
	_, url := srv.newRepo("bench.git", secure)
	u := newUser(b, "alice")
	dir := benchRepo(b, u, "repo", url, secure)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c := u.commit(dir, "bench.txt", fmt.Sprintf("%d\n", i))
		b.StartTimer()
		u.git(dir, "push", "-q", "origin", "main")
		b.StopTimer()
		if i == 0 || i == b.N-1 {
			if got := srv.admin.refs(filepath.Join(srv.root, "bench.git"))["refs/heads/main"]; got != c {
				b.Fatalf("server main = %q, want %s", got, c)
			}
		}
		b.StartTimer()
	}
	b.StopTimer()
	if secure {
		entries := srv.admin.rslLog(filepath.Join(srv.root, "bench.git"))
		if last := entries[len(entries)-1]; last.Ref != "refs/heads/main" || last.New != u.rev(dir, "main") {
			b.Fatalf("last entry %+v does not record the last push", last)
		}
	}
}

// BenchmarkPushPlain: push one new commit to main over file:// without
// git-secure (no helper, no server hook).
func BenchmarkPushPlain(b *testing.B) { benchPush(b, false) }

// BenchmarkPushSecure: the same through git-remote-secure, which fetches and
// verifies the remote's log, records and signs an entry and pushes it
// atomically with main, to a server whose pre-receive hook verifies it.
func BenchmarkPushSecure(b *testing.B) { benchPush(b, true) }
