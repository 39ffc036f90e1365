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
func benchRepo(b testing.TB, u *user, name, url string, secure bool) string {
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

func benchCommit(b *testing.B, hooks bool) {
	u := newUser(b, "alice")
	// The same repository either way (git-secure initialised, so the same
	// refs and objects); only the hooks differ.
	dir := benchRepo(b, u, "repo", "", true)
	if !hooks {
		u.secure(dir, "hooks", "uninstall")
	}
	if hp := u.run(dir, "git", "config", "core.hooksPath").stdout; (hp != "") != hooks {
		b.Fatalf("core.hooksPath = %q with hooks=%v", hp, hooks)
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

// BenchmarkCommitPlain: git commit -a of one changed file, git-secure's
// hooks uninstalled.
func BenchmarkCommitPlain(b *testing.B) { benchCommit(b, false) }

// BenchmarkCommitWithHooks: the same with git-secure initialised and its
// hooks installed (core.hooksPath, every hook forwarded).
func BenchmarkCommitWithHooks(b *testing.B) { benchCommit(b, true) }

// pushMode is what a push benchmark measures.
type pushMode int

const (
	// plainPush: plain git, a server without git-secure.
	plainPush pushMode = iota
	// plainToEnforcing: plain git (no hooks, no helper) pushing an
	// unprotected branch to a server whose pre-receive hook verifies every
	// push: the server's share of a protected push.
	plainToEnforcing
	// securePush: git-secure's helper records, signs and pushes main to the
	// enforcing server.
	securePush
)

func benchPush(b *testing.B, tr transport, mode pushMode) {
	srv := startServer(b, tr)
	_, url := srv.newRepo("bench.git", mode != plainPush)
	u := newUser(b, "alice")
	branch := "main"
	var dir string
	if mode == plainToEnforcing {
		// An admin protects main on the server; alice, with plain git
		// only, pushes a feature branch.
		benchRepo(b, newUser(b, "admin"), "seed", url, true)
		dir = u.path("repo")
		u.git(u.sb.Home, "clone", "-q", url, dir)
		u.configure(dir)
		branch = "feature"
		u.git(dir, "checkout", "-q", "-b", branch)
		u.git(dir, "push", "-q", "origin", branch)
	} else {
		dir = benchRepo(b, u, "repo", url, mode == securePush)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c := u.commit(dir, "bench.txt", fmt.Sprintf("%d\n", i))
		b.StartTimer()
		u.git(dir, "push", "-q", "origin", branch)
		b.StopTimer()
		if i == 0 || i == b.N-1 {
			if got := srv.admin.refs(filepath.Join(srv.root, "bench.git"))["refs/heads/"+branch]; got != c {
				b.Fatalf("server %s = %q, want %s", branch, got, c)
			}
		}
		b.StartTimer()
	}
	b.StopTimer()
	if mode == securePush {
		entries := srv.admin.rslLog(filepath.Join(srv.root, "bench.git"))
		if last := entries[len(entries)-1]; last.Ref != "refs/heads/main" || last.New != u.rev(dir, "main") {
			b.Fatalf("last entry %+v does not record the last push", last)
		}
	}
}

// BenchmarkPushPlain: push one new commit to main without git-secure (no
// helper, no server hook), per transport.
func BenchmarkPushPlain(b *testing.B) {
	for _, tr := range transports {
		b.Run(string(tr), func(b *testing.B) { benchPush(b, tr, plainPush) })
	}
}

// BenchmarkPushPlainToEnforcing: plain git pushing an unprotected branch to
// an enforcing server: the cost of the server's verification alone.
func BenchmarkPushPlainToEnforcing(b *testing.B) {
	for _, tr := range transports {
		b.Run(string(tr), func(b *testing.B) { benchPush(b, tr, plainToEnforcing) })
	}
}

// BenchmarkPushSecure: the same commit through git-remote-secure, which
// checks the remote's log, records and signs an entry and pushes it
// atomically with main, to a server whose pre-receive hook verifies it.
func BenchmarkPushSecure(b *testing.B) {
	for _, tr := range transports {
		b.Run(string(tr), func(b *testing.B) { benchPush(b, tr, securePush) })
	}
}
