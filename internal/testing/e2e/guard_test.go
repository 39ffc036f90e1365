package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The pre-push hook skips starting git-secure only while git-remote-secure
// carries the push: a marker left by a dead helper, or naming another
// remote, must not let a protected branch go to a remote that does not
// carry log entries.
func TestPrePushMarker(t *testing.T) {
	srv := startServer(t, trFile)
	_, url := srv.newRepo("marker.git", true)
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "repo", url, true) // pushed main through the helper
	marker := filepath.Join(dir, ".git", "git-secure-push")
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the helper left its marker behind after the push (stat: %v)", err)
	}
	// A remote added after the install with an explicit pushurl does not
	// go through the helper (git ignores url.secure::.pushInsteadOf for
	// it) until git secure hooks install routes it by name.
	u.git(dir, "remote", "add", "direct", url)
	u.git(dir, "config", "remote.direct.pushurl", url)
	u.commit(dir, "f.txt", "1\n")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, content string }{
		{"no marker", ""},
		{"dead helper", fmt.Sprintf("%d direct\n", dead.Process.Pid)},
		{"live helper of another remote", fmt.Sprintf("%d origin\n", os.Getpid())},
		{"garbage", "x\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.content != "" {
				if err := os.WriteFile(marker, []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(marker)
			}
			before := srv.admin.refs(filepath.Join(srv.root, "marker.git"))["refs/heads/main"]
			r := u.run(dir, "git", "push", "direct", "main")
			if r.code == 0 {
				t.Fatalf("push of protected main to a remote without the helper succeeded:\n%s", r)
			}
			if !strings.Contains(r.stderr, "does not carry its log entries") {
				t.Errorf("refused for the wrong reason (want the pre-push hook's):\n%s", r)
			}
			if got := srv.admin.refs(filepath.Join(srv.root, "marker.git"))["refs/heads/main"]; got != before {
				t.Fatalf("server main moved to %s", got)
			}
		})
	}
	// Through the helper the same push goes.
	u.git(dir, "push", "-q", "origin", "main")
}

// hooks install --guard-refs: a plain git command cannot move git-secure's
// refs; git-secure's own commands and the helper can; without the flag
// nothing is guarded and commits start no extra process.
func TestRefGuard(t *testing.T) {
	srv := startServer(t, trFile)
	_, url := srv.newRepo("guard.git", true)
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "repo", url, true)
	u.secure(dir, "hooks", "install", "--guard-refs")
	hook := filepath.Join(dir, ".git", "secure", "hooks", "reference-transaction")
	if !strings.Contains(readFile(t, hook), "hook reference-transaction") {
		t.Fatalf("--guard-refs did not install the guard:\n%s", readFile(t, hook))
	}
	log := u.rev(dir, "refs/secure/rsl")
	head := u.rev(dir, "HEAD")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"move the log", []string{"update-ref", "refs/secure/rsl", head}, "refusing to change refs/secure/rsl outside git-secure"},
		{"delete the policy", []string{"update-ref", "-d", "refs/secure/policy"}, "refusing to delete refs/secure/policy outside git-secure"},
		{"create metadata", []string{"update-ref", "refs/secure/attestations", head}, "refusing to change refs/secure/attestations outside git-secure"},
		{"fetch a remote's log unverified", []string{"fetch", "-q", url, "+refs/heads/main:refs/secure/rsl"}, "outside git-secure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := u.run(dir, "git", tc.args...)
			if r.code == 0 {
				t.Fatalf("git %s succeeded with the guard installed:\n%s", strings.Join(tc.args, " "), r)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("refused for the wrong reason, want %q:\n%s\n%s", tc.want, r.stdout, r.stderr)
			}
			if got := u.rev(dir, "refs/secure/rsl"); got != log {
				t.Fatalf("the log moved to %s", got)
			}
		})
	}
	// Ordinary work and git-secure's own updates pass the guard.
	u.commit(dir, "g.txt", "1\n")
	u.git(dir, "push", "-q", "origin", "main")
	if got := u.rev(dir, "refs/secure/rsl"); got == log {
		t.Fatal("the push through the helper did not advance the local log")
	}
	u.secure(dir, "verify")
	// Reinstalling without the flag removes the guard.
	u.secure(dir, "hooks", "install")
	if _, err := os.Stat(hook); !os.IsNotExist(err) {
		t.Errorf("reinstall without --guard-refs kept the guard (stat: %v)", err)
	}
	u.git(dir, "update-ref", "refs/secure/scratch", head)
}

// The helper answers "list for-push" from the refs it remembers from its
// last contact with the remote. When the remote moved meanwhile the push
// must still be refused (and nothing lost), the memory dropped, and the
// next push after a pull must go through; secure.pushListing=remote asks
// the remote every time.
func TestRememberedListing(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("listing.git", true)
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "one", url, true)
	state := filepath.Join(dir, ".git", "secure", "remotes", "origin")
	if got := readFile(t, state); !strings.Contains(got, u.rev(dir, "main")+" refs/heads/main") || strings.Contains(got, url) {
		t.Fatalf("remembered listing after a push (want main's value, no URL):\n%s", got)
	}
	// A second clone of the same person moves main.
	two := u.path("two")
	u.git(u.sb.Home, "clone", "-q", url, two)
	u.configure(two)
	u.secure(two, "hooks", "install")
	u.git(two, "fetch", "-q")
	u.commit(two, "two.txt", "2\n")
	u.git(two, "push", "-q", "origin", "main")
	theirs := srv.admin.rev(repo, "refs/heads/main")

	mine := u.commit(dir, "one.txt", "1\n")
	r := u.run(dir, "git", "push", "origin", "main")
	if r.code == 0 {
		t.Fatalf("a push built on a stale main succeeded:\n%s", r)
	}
	if !strings.Contains(r.stderr, "fetch first") && !strings.Contains(r.stderr, "non-fast-forward") {
		t.Errorf("the refusal does not say to integrate first:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/heads/main"); got != theirs {
		t.Fatalf("server main moved to %s", got)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("a failed push kept the remembered listing (stat: %v)", err)
	}
	u.git(dir, "pull", "-q", "--rebase", "origin", "main")
	u.git(dir, "push", "-q", "origin", "main")
	if got, want := srv.admin.rev(repo, "refs/heads/main^"), theirs; got != want {
		t.Fatalf("after pull and push, server main^ = %s, want the other clone's %s", got, want)
	}
	if srv.admin.rev(repo, "refs/heads/main") == mine {
		t.Fatal("the rebased commit should differ from the original")
	}
	u.secure(dir, "verify")

	// Always asking the remote: git itself sees the remote moved and
	// refuses before the helper pushes anything.
	u.git(dir, "config", "secure.pushListing", "remote")
	u.commit(two, "two.txt", "3\n")
	u.git(two, "pull", "-q", "--rebase", "origin", "main")
	u.git(two, "push", "-q", "origin", "main")
	u.commit(dir, "one.txt", "4\n")
	r = u.run(dir, "git", "push", "origin", "main")
	if r.code == 0 || !strings.Contains(r.stderr, "rejected") {
		t.Fatalf("with secure.pushListing=remote a stale push was not rejected by git:\n%s", r)
	}
}

// git push --dry-run through the helper: git's answer, nothing recorded,
// nothing sent.
func TestDryRunPush(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("dry.git", true)
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "repo", url, true)
	u.commit(dir, "f.txt", "1\n")
	logBefore, serverBefore := u.rev(dir, "refs/secure/rsl"), srv.admin.rev(repo, "refs/heads/main")
	r := u.run(dir, "git", "push", "--dry-run", "origin", "main")
	if r.code != 0 {
		t.Fatalf("git push --dry-run:\n%s", r)
	}
	if got := u.rev(dir, "refs/secure/rsl"); got != logBefore {
		t.Errorf("a dry run recorded an entry: local log %s -> %s", logBefore, got)
	}
	if got := srv.admin.rev(repo, "refs/heads/main"); got != serverBefore {
		t.Fatalf("a dry run moved the server's main to %s", got)
	}
	// A dry run of a push the server would refuse as not a fast-forward.
	u.git(dir, "reset", "-q", "--hard", "HEAD~2")
	u.commit(dir, "g.txt", "diverged\n")
	r = u.run(dir, "git", "push", "--dry-run", "origin", "main")
	if r.code == 0 || !strings.Contains(r.stderr, "rejected") {
		t.Fatalf("a dry run of a non-fast-forward push was not rejected:\n%s", r)
	}
}

// git push --force-with-lease and -o through the helper: the lease is
// checked by the real push against the remote (a remembered listing
// cannot defeat it), push options reach the server.
func TestLeaseAndPushOptions(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("lease.git", true)
	srv.admin.git(repo, "config", "receive.advertisePushOptions", "true")
	seen := filepath.Join(t.TempDir(), "push-options")
	writeScript(t, filepath.Join(repo, "hooks", "post-receive"), "cat >/dev/null\necho \"${GIT_PUSH_OPTION_0:-none}\" >> '"+seen+"'\n")
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "repo", url, true)
	u.git(dir, "checkout", "-q", "-b", "topic")
	u.commit(dir, "t.txt", "1\n")
	u.git(dir, "push", "-q", "-o", "note=first", "origin", "topic")
	if got := lines(t, seen); len(got) == 0 || got[len(got)-1] != "note=first" {
		t.Fatalf("push options seen by the server: %q, want note=first last", got)
	}
	// Rewrite topic and force it with a lease that holds.
	u.git(dir, "commit", "-q", "--amend", "-m", "rewritten")
	if r := u.run(dir, "git", "push", "--force-with-lease", "origin", "topic"); r.code != 0 {
		t.Fatalf("push --force-with-lease with a valid lease:\n%s", r)
	}
	if got, want := srv.admin.rev(repo, "refs/heads/topic"), u.rev(dir, "topic"); got != want {
		t.Fatalf("server topic = %s, want the rewritten %s", got, want)
	}
	// Someone else moves topic on the server; our lease (the old value)
	// no longer holds.
	other := srv.admin.rev(repo, "refs/heads/main")
	srv.admin.git(repo, "update-ref", "refs/heads/topic", other)
	u.git(dir, "commit", "-q", "--amend", "-m", "again")
	lease := "--force-with-lease=topic:" + u.rev(dir, "origin/topic")
	r := u.run(dir, "git", "push", lease, "origin", "topic")
	if r.code == 0 {
		t.Fatalf("a push whose lease no longer holds succeeded:\n%s", r)
	}
	if !strings.Contains(r.stderr, "stale info") {
		t.Errorf("the refusal does not say the lease failed:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/heads/topic"); got != other {
		t.Fatalf("server topic moved to %s", got)
	}
}

// TestInterruptedServerCommit: a server killed while committing a push
// (git's files ref store renames one lock per ref, so the branch can land
// without its log entry) is repaired by the pusher's next git push, which
// would otherwise find the branch up to date. Only the pusher's own push
// is repaired so: the same state made by anyone else is never signed for.
func TestInterruptedServerCommit(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("interrupted.git", true)
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "one", url, true)
	u.git(dir, "config", "secure.pushListing", "remote") // the listing shows the server as it is
	u.git(dir, "fetch", "-q")                            // verified: a checkpoint, as every clone has
	c := u.commit(dir, "f.txt", "new\n")
	// The server's main moved to c without an entry.
	srv.admin.git(repo, "fetch", "-q", dir, "main")
	srv.admin.git(repo, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/heads/main", c) // a crash: no hook ran
	if r := srv.admin.run(repo, "git", "secure", "verify"); r.code == 0 || !strings.Contains(r.stderr, "changed without an entry") {
		t.Fatalf("the server should fail verification with main moved without an entry:\n%s", r)
	}
	// Not this clone's push (no in-flight note): nothing is signed for it.
	if r := u.run(dir, "git", "push", "origin", "main"); r.code != 0 || strings.Contains(r.stderr, "log records") {
		t.Fatalf("push with main moved by someone else: want it left alone:\n%s", r)
	}
	if r := srv.admin.run(repo, "git", "secure", "verify"); r.code == 0 {
		t.Fatalf("a push signed for a branch someone else moved without an entry:\n%s", r)
	}
	// This clone's push, cut on the server: the helper's in-flight note
	// (left when it never learned the outcome) and git's lock of the log,
	// which the next push trips over and names.
	note := filepath.Join(dir, ".git", "secure", "remotes", "origin.inflight")
	if err := os.WriteFile(note, []byte(c+" refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(repo, "refs", "secure", "rsl.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := u.run(dir, "git", "push", "origin", "main")
	if r.code == 0 || !strings.Contains(r.stderr, "refs/secure/rsl.lock': File exists") {
		t.Fatalf("push with the server's log locked: want a failure naming %s:\n%s", lock, r)
	}
	os.Remove(lock)
	r = u.run(dir, "git", "push", "origin", "main")
	if r.code != 0 || !strings.Contains(r.stderr, "log records") {
		t.Fatalf("push after the interrupted one: want it to record the missing entry and say why:\n%s", r)
	}
	if r := srv.admin.run(repo, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("the server does not verify after the repairing push:\n%s", r)
	}
	if last := srv.admin.rslLog(repo); last[len(last)-1].Ref != "refs/heads/main" || last[len(last)-1].New != c {
		t.Fatalf("last entry %+v, want main -> %s", last[len(last)-1], c)
	}
	if _, err := os.Stat(note); !os.IsNotExist(err) {
		t.Errorf("the in-flight note stays after a successful push (stat: %v)", err)
	}
	// Once repaired, nothing more is relisted.
	if r := u.run(dir, "git", "push", "origin", "main"); r.code != 0 || strings.Contains(r.stderr, "log records") {
		t.Fatalf("push with nothing to repair:\n%s", r)
	}
}
