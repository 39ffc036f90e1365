package e2e

import (
	"os/exec"
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

// Issue 15.7: on a terminal, git-secure's own messages (the command's
// errors, the remote helper's notes and hints) are wrapped to 100
// columns, each hint on lines of its own; without one (logs, scripts)
// each message stays on one line.
func TestMessagesWrappedOnTerminal(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) to give the command a terminal")
	}
	u := newUser(t, "alice")
	s256 := u.path("s256")
	u.git(u.sb.Home, "init", "-q", "--object-format=sha256", s256)
	const want = "SHA-256 repositories are not supported yet"
	r := u.run(s256, "script", "-qec", "git secure verify", "/dev/null")
	if r.code != 2 {
		t.Fatalf("git secure verify in a SHA-256 repository on a terminal: want exit 2:\n%s", r)
	}
	out := strings.ReplaceAll(r.stdout, "\r", "")
	checkWidth(t, out)
	if joined := unwrap(out); !strings.Contains(joined, want) {
		t.Errorf("the wrapped error does not say %q:\n%s", want, out)
	}
	if r := u.run(s256, "git", "secure", "verify"); !strings.Contains(r.stderr, want) || strings.Count(r.stderr, "\n") != 0 {
		t.Errorf("without a terminal the error is not one line:\n%s", r)
	}

	// The helper's hints on a refused push, on a terminal.
	srv, _, _, alice, _, _, adir, _ := handOffWorld(t)
	_ = srv
	alice.commit(adir, "one.txt", "1\n")
	r = alice.run(adir, "script", "-qec", "git push", "/dev/null")
	out = strings.ReplaceAll(r.stdout, "\r", "")
	if !strings.Contains(out, "git-secure: hint:") {
		t.Fatalf("the refused push on a terminal shows no hint:\n%s", r)
	}
	checkWidth(t, out)
}

// checkWidth fails for a line of git-secure's own longer than 100 columns.
func checkWidth(t *testing.T, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "git-secure: ") && len(line) > 100 {
			t.Errorf("a line is %d columns long:\n%s", len(line), line)
		}
	}
}

// unwrap joins wrapped continuation lines back into one line each.
func unwrap(out string) string {
	lines := strings.Split(out, "\n")
	var b strings.Builder
	for i, line := range lines {
		if i > 0 && strings.Contains(line, ":   ") {
			_, rest, _ := strings.Cut(line, ":   ")
			b.WriteString(" " + rest)
			continue
		}
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(line)
	}
	return b.String()
}
