package e2e

import (
	"strings"
	"testing"
)

// Issue 15.7: a push that loses the race for the log to another pusher is
// retried by the helper; the user sees that it retried and that it landed,
// not git's "failed to push", lock or "Updates were rejected" lines of the
// attempt that lost.
func TestRacingPushIsQuiet(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("race.git", true)
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "one", url, true) // the push remembers the remote's listing
	two := u.path("two")
	u.git(u.sb.Home, "clone", "-q", url, two)
	u.configure(two)
	u.secure(two, "hooks", "install")
	u.git(two, "checkout", "-q", "-b", "other")
	u.commit(two, "two.txt", "2\n")
	u.git(two, "push", "-q", "origin", "other") // the server's log moves on

	u.git(dir, "checkout", "-q", "-b", "mine")
	mine := u.commit(dir, "one.txt", "1\n")
	r := u.run(dir, "git", "push", "origin", "mine")
	if r.code != 0 {
		t.Fatalf("a push that lost the race for the log was not retried:\n%s", r)
	}
	if !strings.Contains(r.stderr, "someone else pushed first") {
		t.Fatalf("the push did not race (no retry said):\n%s", r)
	}
	for _, noise := range []string{"failed to push", "cannot lock ref", "Updates were rejected", "[rejected]"} {
		if strings.Contains(r.stderr, noise) {
			t.Errorf("a push that landed prints %q:\n%s", noise, r)
		}
	}
	if got := srv.admin.rev(repo, "refs/heads/mine"); got != mine {
		t.Fatalf("server mine = %s, want %s", got, mine)
	}
	srv.admin.secure(repo, "verify")
}

// Issue 15.7: git asks a remote helper for progress (option progress true)
// when its stderr is a terminal or --progress is given; the helper's own
// fetch then shows git's progress, as plain git does.
func TestFetchProgressThroughHelper(t *testing.T) {
	srv := startServer(t, trFile)
	_, url := srv.newRepo("progress.git", true)
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "one", url, true)
	two := u.path("two")
	r := u.run(u.sb.Home, "git", "clone", "--progress", "secure::"+url, two)
	if r.code != 0 {
		t.Fatalf("git clone --progress through the helper:\n%s", r)
	}
	if !strings.Contains(r.stderr, "Receiving objects") && !strings.Contains(r.stderr, "Counting objects") {
		t.Errorf("git clone --progress through the helper shows no progress:\n%s", r)
	}
	u.commit(dir, "f.txt", "1\n")
	u.git(dir, "push", "-q", "origin", "main")
	r = u.run(two, "git", "fetch", "--progress", "origin")
	if r.code != 0 {
		t.Fatalf("git fetch --progress through the helper:\n%s", r)
	}
	if !strings.Contains(r.stderr, "Receiving objects") && !strings.Contains(r.stderr, "Counting objects") && !strings.Contains(r.stderr, "Unpacking objects") {
		t.Errorf("git fetch --progress through the helper shows no progress:\n%s", r)
	}
	if r := u.run(two, "git", "fetch", "origin"); strings.Contains(r.stderr, "objects") {
		t.Errorf("a fetch without a terminal or --progress shows progress:\n%s", r)
	}
}
