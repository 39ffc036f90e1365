package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPartialPushLandsWhole: git applies a push without --atomic one ref per
// transaction, after the pre-receive hook accepted the whole push, and can
// still refuse one ref. Whatever part git refuses, the server must not be
// left with the log ahead of its branch or the branch ahead of its entry
// (every later fetch and push would fail, for everyone). Each case pushes
// main and its entry with plain git, not atomically, straight to the
// server's URL (past git-remote-secure, which pushes atomically).
func TestPartialPushLandsWhole(t *testing.T) {
	cases := []struct {
		name string
		// prepare makes the client's main and entry (and may hold a lock on
		// the server); it returns the refspecs to push.
		prepare func(t *testing.T, u *user, dir, repo string) []string
		// refused is what the pusher must be told.
		refused string
	}{
		{
			// Deleting the branch HEAD names: git refuses it after the hook
			// (receive.denyDeleteCurrent) while the log entry that records
			// the deletion would land.
			name: "delete of the current branch",
			prepare: func(t *testing.T, u *user, dir, repo string) []string {
				u.git(dir, "checkout", "-q", "-b", "other")
				u.git(dir, "branch", "-q", "-D", "main")
				u.secure(dir, "rsl", "record", "refs/heads/main")
				return []string{":refs/heads/main", "refs/secure/rsl:refs/secure/rsl"}
			},
			refused: "would record refs/heads/main at (deleted), but refs/heads/main would be at",
		},
		{
			// The branch's lock is taken (a concurrent push): the branch
			// fails after the hook, the log would land alone.
			name: "branch locked",
			prepare: func(t *testing.T, u *user, dir, repo string) []string {
				u.commit(dir, "f.txt", "locked branch\n")
				u.secure(dir, "rsl", "record", "refs/heads/main")
				lock(t, filepath.Join(repo, "refs", "heads", "main.lock"))
				return []string{"main:main", "refs/secure/rsl:refs/secure/rsl"}
			},
			refused: "would record refs/heads/main at",
		},
		{
			// The log's lock is taken: the branch would land without its
			// entry.
			name: "log locked",
			prepare: func(t *testing.T, u *user, dir, repo string) []string {
				u.commit(dir, "f.txt", "locked log\n")
				u.secure(dir, "rsl", "record", "refs/heads/main")
				lock(t, filepath.Join(repo, "refs", "secure", "rsl.lock"))
				return []string{"main:main", "refs/secure/rsl:refs/secure/rsl"}
			},
			refused: "refs/heads/main is protected and would move to",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, trFile)
			repo, url := srv.newRepo("partial.git", true)
			u := newUser(t, "alice")
			dir := benchRepo(t, u, "one", url, true)
			before := srv.admin.refs(repo)
			if r := srv.admin.run(repo, "git", "secure", "verify"); r.code != 0 {
				t.Fatalf("the server does not verify before the push:\n%s", r)
			}
			specs := tc.prepare(t, u, dir, repo)
			r := u.pushDirect(dir, "file://"+repo, append([]string{"--no-verify", "--porcelain", "file://" + repo}, specs...)...)
			if r.code == 0 {
				t.Fatalf("a push git could only apply in part succeeded:\n%s", r)
			}
			if !strings.Contains(r.stderr, tc.refused) {
				t.Errorf("the pusher is not told why (want %q):\n%s", tc.refused, r)
			}
			for _, l := range []string{"refs/heads/main.lock", "refs/secure/rsl.lock"} {
				os.Remove(filepath.Join(repo, l))
			}
			after := srv.admin.refs(repo)
			for _, ref := range []string{"refs/heads/main", "refs/secure/rsl"} {
				if after[ref] != before[ref] {
					t.Errorf("%s moved from %s to %s: part of the push landed", ref, before[ref], after[ref])
				}
			}
			if r := srv.admin.run(repo, "git", "secure", "verify"); r.code != 0 {
				t.Fatalf("the server no longer verifies:\n%s", r)
			}
			// Everyone else keeps working: a fresh clone verifies.
			bob := newUser(t, "bob")
			if r := bob.run(bob.sb.Home, "git", "clone", "-q", "secure::"+url, "clone"); r.code != 0 {
				t.Fatalf("a fresh clone of the server fails:\n%s", r)
			}
		})
	}
}

// TestAtomicPushAccepted: the same kinds of push, atomic and complete, are
// accepted by the transaction check (git-remote-secure's pushes are).
func TestAtomicPushAccepted(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("atomic.git", true)
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "one", url, true)
	c := u.commit(dir, "f.txt", "plain atomic\n")
	u.secure(dir, "rsl", "record", "refs/heads/main")
	r := u.pushDirect(dir, "file://"+repo, "--no-verify", "--atomic", "file://"+repo, "main:main", "refs/secure/rsl:refs/secure/rsl")
	if r.code != 0 {
		t.Fatalf("an atomic push of main and its entry:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/heads/main"); got != c {
		t.Fatalf("server main = %s, want %s", got, c)
	}
	// Through git-remote-secure, as people push.
	c = u.commit(dir, "f.txt", "through the helper\n")
	if r := u.run(dir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("push through the helper:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/heads/main"); got != c {
		t.Fatalf("server main = %s, want %s", got, c)
	}
	// An unprotected branch alone, with plain git, needs no entry.
	u.git(dir, "branch", "feature")
	if r := u.pushDirect(dir, "file://"+repo, "--no-verify", "file://"+repo, "feature"); r.code != 0 {
		t.Fatalf("plain push of an unprotected branch:\n%s", r)
	}
	if r := srv.admin.run(repo, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("the server does not verify:\n%s", r)
	}
}

// TestOthersPushPastACutPush: a server killed in the middle of a push can
// still leave main ahead of its entry (git commits one lock rename per
// ref). Until someone allowed to move main records it, other pushes (that
// leave main and its record alone) are accepted, with a warning; a push
// that touches main is judged as always.
func TestOthersPushPastACutPush(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("cut.git", true)
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "one", url, true)
	u.secure(dir, "policy", "add-rule", "releases", "--ref", "refs/heads/release/*", "--allow", u.name)
	u.secure(dir, "policy", "apply")
	if r := u.run(dir, "git", "push", "origin", "refs/secure/*:refs/secure/*"); r.code != 0 {
		t.Fatalf("push of the policy:\n%s", r)
	}
	if r := srv.admin.run(repo, "git", "secure", "explain", "refs/heads/release/1"); !strings.Contains(r.stdout, "rule releases ref refs/heads/release/*") {
		t.Fatalf("the server does not have the releases rule:\n%s", r)
	}
	// The cut: main moved on the server, its entry never written.
	c := u.commit(dir, "cut.txt", "cut\n")
	srv.admin.git(repo, "fetch", "-q", dir, "main")
	srv.admin.git(repo, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/heads/main", c)
	u.git(dir, "reset", "-q", "--hard", "HEAD~1")
	if r := srv.admin.run(repo, "git", "secure", "verify"); r.code == 0 {
		t.Fatalf("the cut server verifies:\n%s", r)
	}
	// A protected branch that is not main, and an unprotected one.
	u.git(dir, "branch", "release/1")
	r := u.pushDirect(dir, "file://"+repo, "--no-verify", "--atomic", "file://"+repo, "release/1")
	if r.code == 0 || !strings.Contains(r.stderr, "refs/heads/release/1") {
		t.Fatalf("a protected branch without its entry must still be refused:\n%s", r)
	}
	u.secure(dir, "rsl", "record", "refs/heads/release/1")
	r = u.pushDirect(dir, "file://"+repo, "--no-verify", "--atomic", "file://"+repo, "release/1", "refs/secure/rsl:refs/secure/rsl")
	if r.code != 0 {
		t.Fatalf("a push that leaves the cut main alone is refused:\n%s", r)
	}
	if !strings.Contains(r.stderr, "warning: refs/heads/main") || !strings.Contains(r.stderr, "this push leaves refs/heads/main alone") {
		t.Errorf("the pusher is not warned about main:\n%s", r)
	}
	if got, want := srv.admin.rev(repo, "refs/heads/release/1"), u.rev(dir, "release/1"); got != want {
		t.Fatalf("server release/1 = %s, want %s", got, want)
	}
	// A push that moves main is judged whole: the unrecorded state of main
	// is not forgiven for it.
	u.commit(dir, "g.txt", "on top of the recorded main\n")
	r = u.pushDirect(dir, "file://"+repo, "--no-verify", "--atomic", "file://"+repo, "+main:main")
	if r.code == 0 {
		t.Fatalf("a push of main without an entry was accepted on a cut server:\n%s", r)
	}
	// The clones still refuse the cut state until it is repaired.
	if r := srv.admin.run(repo, "git", "secure", "verify"); r.code == 0 || !strings.Contains(r.stderr, "refs/heads/main") {
		t.Fatalf("the server should still fail on main:\n%s", r)
	}
}

func lock(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(path) })
}

// TestVerifiedPushNeedsNoSecondLook: a push pre-receive verified whole,
// whose log entries record only refs the push moves (every push through
// git-remote-secure), lands without starting git-secure in the
// reference-transaction hook (pre-receive leaves its lines in
// secure/verified-push.PID; the script compares); a push whose new entry
// records a ref the push does not move still gets the check, which
// reads that ref on the server. No marker is left behind.
func TestVerifiedPushNeedsNoSecondLook(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("verified.git", true)
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "one", url, true)
	traced := func(args ...string) string {
		t.Helper()
		r := u.run(dir, "env", append([]string{"GIT_SECURE_TRACE=1"}, args...)...)
		if r.code != 0 {
			t.Fatalf("push:\n%s", r)
		}
		if !strings.Contains(r.stderr, "trace: pre-receive") {
			t.Fatalf("no pre-receive trace: the server hook did not verify?\n%s", r)
		}
		return r.stderr
	}
	c := u.commit(dir, "f.txt", "through the helper\n")
	if out := traced("git", "push", "origin", "main"); strings.Contains(out, "trace: reference-transaction") {
		t.Errorf("git-secure started for the transaction of a push it verified whole:\n%s", out)
	}
	if got := srv.admin.rev(repo, "refs/heads/main"); got != c {
		t.Fatalf("server main = %s, want %s", got, c)
	}
	// feature is on the server already; an entry recording it, pushed
	// alone, names a ref outside the push's lines.
	u.git(dir, "branch", "feature")
	u.pushDirect(dir, url, "--no-verify", url, "feature")
	u.secure(dir, "rsl", "record", "feature")
	out := traced(append(append([]string{"git"}, direct(url)...), "push", "--no-verify", "--atomic", url, "refs/secure/rsl:refs/secure/rsl")...)
	if !strings.Contains(out, "trace: reference-transaction") {
		t.Errorf("the transaction check was skipped for an entry recording a ref outside the push:\n%s", out)
	}
	if left, _ := filepath.Glob(filepath.Join(repo, "secure", "*-push.*")); len(left) != 0 {
		t.Errorf("markers left behind: %v", left)
	}
	if r := srv.admin.run(repo, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("the server does not verify:\n%s", r)
	}
}
