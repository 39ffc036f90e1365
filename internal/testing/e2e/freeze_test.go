package e2e

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestPusherSeesRollbackOfOwnPush: a server restored from a snapshot taken
// before an acknowledged push (or a stale mirror put in its place) serves
// an older log. The pusher's next fetch must refuse it as a rollback and
// leave origin/main where the push put it; before, the fetch succeeded and
// moved origin/main back (the remembered remote tip was set by fetches
// only, and a remote log behind the local one passed as unpushed work).
func TestPusherSeesRollbackOfOwnPush(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("freeze.git", true)
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "one", url, true)
	snap := repo + ".snapshot"
	if out, err := exec.Command("cp", "-a", repo, snap).CombinedOutput(); err != nil {
		t.Fatalf("snapshot: %v\n%s", err, out)
	}
	c := u.commit(dir, "f.txt", "acknowledged\n")
	if r := u.run(dir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("push:\n%s", r)
	}
	if got := u.rev(dir, "refs/remotes/origin/main"); got != c {
		t.Fatalf("origin/main = %s after the push, want %s", got, c)
	}
	// The server is put back to the snapshot.
	if err := os.RemoveAll(repo); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(snap, repo); err != nil {
		t.Fatal(err)
	}
	r := u.run(dir, "git", "fetch", "origin")
	if r.code == 0 {
		t.Fatalf("the pusher's fetch accepted a server that lost an acknowledged push:\n%s", r)
	}
	if !strings.Contains(r.stderr, "went back") || !strings.Contains(r.stderr, "rollback or freeze") {
		t.Errorf("the refusal does not name the rollback:\n%s", r)
	}
	if got := u.rev(dir, "refs/remotes/origin/main"); got != c {
		t.Errorf("origin/main moved back from %s to %s", c, got)
	}
	// A pull fails the same way, and the pusher's main stays.
	if r := u.run(dir, "git", "pull", "-q"); r.code == 0 {
		t.Errorf("git pull accepted the rolled-back server:\n%s", r)
	}
	if got := u.rev(dir, "main"); got != c {
		t.Errorf("main moved from %s to %s", c, got)
	}
}
