package e2e

import (
	"strings"
	"testing"
)

// Found as a stranger on a mirror of spf13/cobra (a git clone --mirror
// keeps its refs in packed-refs): the maintainer's signed deletion of a
// protected branch, pushed through git-remote-secure, was refused by the
// server's reference-transaction hook ("is protected and would move to
// (deleted) without its entry") and the push died with "unexpected
// disconnect". git deletes a packed ref in a packed-refs transaction of its
// own, prepared inside the push's, and runs the hook on it with the line
// "0{40} 0{40} REF" alone, without the log's line. That transaction lands
// only with the push's, which the hook judges whole.
func TestDeleteProtectedPackedBranch(t *testing.T) {
	srv, repo, alice, _, adir, _ := tagDay(t, "refs/heads/rel/*")
	alice.git(adir, "push", "-q", "origin", "main:refs/heads/rel/1")
	srv.admin.git(repo, "-c", "core.hooksPath=/dev/null", "pack-refs", "--all") // as a git clone --mirror leaves them
	if r := srv.admin.run(repo, "git", "show-ref", "--verify", "-q", "refs/heads/rel/1"); r.code != 0 {
		t.Fatalf("rel/1 is not on the server:\n%s", r)
	}
	r := alice.run(adir, "git", "push", "origin", "--delete", "rel/1")
	if r.code != 0 {
		t.Fatalf("alice's signed deletion of the packed protected branch rel/1 was refused:\n%s", r)
	}
	if got := srv.admin.refValue(repo, "refs/heads/rel/1"); got != "" {
		t.Fatalf("the server still has rel/1 at %s", got)
	}
	srv.admin.secure(repo, "verify")

	// A plain deletion (no entry) of a packed protected branch is still
	// refused, by pre-receive.
	alice.git(adir, "push", "-q", "origin", "main:refs/heads/rel/2")
	srv.admin.git(repo, "-c", "core.hooksPath=/dev/null", "pack-refs", "--all") // as a git clone --mirror leaves them
	url := srv.base + "/tags.git"
	r = alice.pushDirect(adir, url, url, "--delete", "rel/2")
	if r.code == 0 || !strings.Contains(r.stderr, "refs/heads/rel/2") {
		t.Fatalf("a deletion of rel/2 without an entry was not refused:\n%s", r)
	}
}
