package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The remembered listing (state.go) saves a round trip per push. After a
// push that had to ask the remote (the first one, or any after a failed
// push, which forgets the listing), an ordinary server's listing names
// HEAD (it points at main), and a listing holding HEAD was never read
// back: from then on every push asked the remote again. The push after
// such a push must answer git from memory.
func TestRememberedListingWithServerHEAD(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("head.git", true)
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "one", url, true)
	if got := srv.admin.run(repo, "git", "rev-parse", "--verify", "-q", "HEAD"); got.code != 0 {
		t.Fatalf("the server's HEAD does not resolve (the test needs it to):\n%s", got)
	}
	// Forget the listing, as a failed push does: the next push lists the
	// remote, HEAD included, and remembers what it saw.
	if err := os.Remove(filepath.Join(dir, ".git", "secure", "remotes", "origin")); err != nil {
		t.Fatal(err)
	}
	u.commit(dir, "one.txt", "1\n")
	u.git(dir, "push", "-q", "origin", "main")
	u.commit(dir, "one.txt", "2\n")
	r := u.run(dir, "env", "GIT_SECURE_TRACE=1", "git", "push", "-q", "origin", "main")
	if r.code != 0 {
		t.Fatalf("push:\n%s", r)
	}
	if !strings.Contains(r.stderr, "list for-push (remembered)") {
		t.Fatalf("a push right after a push asked the remote for its refs instead of using the remembered listing:\n%s", r)
	}
	u.secure(dir, "verify")
}
