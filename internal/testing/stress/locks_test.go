package stress

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// makeLock leaves a lock file where a process killed in the middle of a ref
// or config update leaves one.
func makeLock(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStaleLockIsNamed: the crash test's repairable state, made
// deterministically. A process killed inside git's ref transaction leaves
// <ref>.lock behind; every later update of that ref fails until the file is
// removed. The error must name the lock file, the one thing to fix; saying
// "someone else changed it, run the command again" sends the user into a
// loop.
func TestStaleLockIsNamed(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the binary against real repositories")
	}
	t.Parallel()
	u := newUser(t, "p0")
	var bugs []string
	check := func(t *testing.T, r result, lock string) {
		t.Helper()
		if r.code == 0 {
			t.Fatalf("succeeded despite the stale lock %s:\n%s", lock, r)
		}
		msg := strings.ReplaceAll(r.stderr, "/./", "/")
		if !strings.Contains(msg, filepath.Base(lock)) {
			bugs = append(bugs, t.Name()+": "+oneLine(r.stderr))
			t.Logf("BUG: the error does not name the stale lock %s:\n%s", lock, r)
			return
		}
		if !strings.Contains(msg, lock) {
			t.Logf("note: the error names %s but not its full path %s:\n%s", filepath.Base(lock), lock, r)
		}
	}
	t.Run("rsl_record", func(t *testing.T) {
		dir := localRepo(u, "record")
		if err := u.writeCommit(dir, "a.txt", "a\n", "a"); err != nil {
			t.Fatal(err)
		}
		lock := filepath.Join(dir, ".git", "refs", "secure", "rsl.lock")
		makeLock(t, lock)
		check(t, u.run(dir, "git", "secure", "rsl", "record", "main"), lock)
		os.Remove(lock)
		if r := u.run(dir, "git", "secure", "rsl", "record", "main"); r.code != 0 {
			t.Fatalf("record after removing the lock:\n%s", r)
		}
	})
	t.Run("rsl_record_branch_lock", func(t *testing.T) {
		dir := localRepo(u, "record-branch")
		if err := u.writeCommit(dir, "a.txt", "a\n", "a"); err != nil {
			t.Fatal(err)
		}
		// record never locks the user's branch: a stale branch lock (the
		// user's problem, git names it on their next commit) does not stop
		// it, and it leaves the lock as it found it.
		lock := filepath.Join(dir, ".git", "refs", "heads", "main.lock")
		makeLock(t, lock)
		if r := u.run(dir, "git", "secure", "rsl", "record", "main"); r.code != 0 {
			t.Fatalf("record with a stale branch lock:\n%s", r)
		}
		if _, err := os.Stat(lock); err != nil {
			t.Fatalf("record touched the branch lock: %v", err)
		}
	})
	t.Run("policy_apply", func(t *testing.T) {
		dir := localRepo(u, "apply")
		u.secure(dir, "policy", "add-rule", "extra", "--ref", "refs/heads/extra", "--allow", u.name)
		lock := filepath.Join(dir, ".git", "refs", "secure", "policy.lock")
		makeLock(t, lock)
		check(t, u.run(dir, "git", "secure", "policy", "apply"), lock)
		os.Remove(lock)
		if r := u.run(dir, "git", "secure", "policy", "apply"); r.code != 0 {
			t.Fatalf("apply after removing the lock:\n%s", r)
		}
	})
	t.Run("push_server_branch_lock", func(t *testing.T) {
		p := newProjectOn(t, startServer(t, trFile), "srvlock", []*user{u})
		dir := p.dirs[0]
		if err := u.writeCommit(dir, "b.txt", "b\n", "b"); err != nil {
			t.Fatal(err)
		}
		lock := filepath.Join(p.repo, "refs", "heads", "main.lock")
		makeLock(t, lock)
		check(t, u.run(dir, "git", "push", "origin", "HEAD:main"), lock)
		os.Remove(lock)
		if r := u.run(dir, "git", "push", "origin", "HEAD:main"); r.code != 0 {
			t.Fatalf("push after removing the lock:\n%s", r)
		}
	})
	t.Run("push_server_log_lock", func(t *testing.T) {
		p := newProjectOn(t, startServer(t, trFile), "srvrsllock", []*user{u})
		dir := p.dirs[0]
		if err := u.writeCommit(dir, "b.txt", "b\n", "b"); err != nil {
			t.Fatal(err)
		}
		lock := filepath.Join(p.repo, "refs", "secure", "rsl.lock")
		makeLock(t, lock)
		check(t, u.run(dir, "git", "push", "origin", "HEAD:main"), lock)
	})
	t.Run("push_then_fetch_client_log_lock", func(t *testing.T) {
		// The helper adopts the remote's log into the clone's
		// refs/secure/rsl: a stale lock there must be named too.
		owner := newUser(t, "p1")
		p := newProjectOn(t, startServer(t, trFile), "clientlock", []*user{owner, u})
		if err := owner.writeCommit(p.dirs[0], "c.txt", "c\n", "c"); err != nil {
			t.Fatal(err)
		}
		owner.git(p.dirs[0], "push", "-q", "origin", "HEAD:main")
		lock := filepath.Join(p.dirs[1], ".git", "refs", "secure", "rsl.lock")
		makeLock(t, lock)
		check(t, u.run(p.dirs[1], "git", "fetch", "origin"), lock)
	})
	if len(bugs) > 0 {
		t.Errorf("a stale ref lock (left by a killed git-secure or git) makes git-secure fail with a message that does not name the lock file (%d of the cases):\n%s", len(bugs), strings.Join(bugs, "\n"))
	}
}

// TestStaleConfigLock: the helper records the last verified remote log tip
// in remote.<name>.securetip (its rollback detection). A process killed
// while writing .git/config leaves .git/config.lock; the helper must then
// not carry on silently with an old securetip, which would let the remote
// roll its log back unnoticed.
func TestStaleConfigLock(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the binary against real repositories")
	}
	t.Parallel()
	// Without the lock (the control), the rollback is refused.
	control, _ := rollbackAfterFetch(t, "control", false)
	if control.after.code == 0 {
		t.Fatalf("control: the server's rollback was accepted without any lock:\n%s", control.after)
	}
	if !strings.Contains(control.after.stderr, "went back") {
		t.Errorf("control: the refusal does not say the log went back:\n%s", control.after)
	}
	got, tips := rollbackAfterFetch(t, "locked", true)
	if got.fetch.code != 0 {
		if !strings.Contains(got.fetch.stderr, "config.lock") {
			t.Errorf("the fetch failed without naming the stale config.lock:\n%s", got.fetch)
		}
		return
	}
	if got.after.code != 0 {
		return // refused: fine
	}
	warned := strings.Contains(got.fetch.stderr, "config.lock") || strings.Contains(got.fetch.stderr, "securetip")
	if got.seen != tips[1] && !warned {
		t.Errorf("with a stale .git/config.lock the helper silently stops updating remote.origin.securetip (still %.12s while the server's log is at %.12s; nothing said) and then accepts the server rolling its log back from %.12s to %.12s (the same rollback is refused without the lock):\nfetch:\n%s\nfetch after the rollback:\n%s", got.seen, tips[1], tips[1], tips[0], got.fetch, got.after)
	}
	t.Errorf("the rolled-back log was accepted:\n%s", got.after)
}

type rollbackRun struct {
	fetch, after result
	seen         string
}

// rollbackAfterFetch: b has seen the server's log at T1; with lock, b's
// .git/config.lock is left stale; a pushes twice (T2, T3); b fetches; the
// server rolls its log and main back to T2; b fetches again.
func rollbackAfterFetch(t *testing.T, name string, lock bool) (rollbackRun, []string) {
	a, b := newUser(t, "p0"), newUser(t, "p1")
	p := newProjectOn(t, startServer(t, trFile), name, []*user{a, b})
	admin := p.srv.admin
	t1 := admin.refs(p.repo)["refs/secure/rsl"]
	if got := b.git(p.dirs[1], "config", "remote.origin.securetip"); got != t1 {
		t.Fatalf("securetip %s, want %s", got, t1)
	}
	if lock {
		makeLock(t, filepath.Join(p.dirs[1], ".git", "config.lock"))
	}
	var tips []string
	for i := 0; i < 2; i++ {
		if err := a.writeCommit(p.dirs[0], "x.txt", strings.Repeat("x", i+1), "x"); err != nil {
			t.Fatal(err)
		}
		a.git(p.dirs[0], "push", "-q", "origin", "HEAD:main")
		tips = append(tips, admin.refs(p.repo)["refs/secure/rsl"])
	}
	var out rollbackRun
	out.fetch = b.run(p.dirs[1], "git", "fetch", "origin")
	if out.fetch.code != 0 {
		return out, tips
	}
	out.seen = b.run(p.dirs[1], "git", "config", "remote.origin.securetip").stdout
	entries, err := admin.rslLog(p.repo)
	if err != nil {
		t.Fatal(err)
	}
	last := entries[len(entries)-1]
	admin.git(p.repo, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/secure/rsl", tips[0], tips[1]) // past the server's hooks
	admin.git(p.repo, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/heads/main", last.Old, last.New)
	out.after = b.run(p.dirs[1], "git", "fetch", "origin")
	return out, tips
}
