package e2e

import (
	"os"
	"path/filepath"
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

// Found as a stranger on a cobra mirror: after the maintainer's signed
// deletion of a protected branch, every clone that had fetched it (git
// fetch keeps remote-tracking refs of deleted branches unless told to
// prune) failed git secure verify with "origin serves ... without a log
// entry: it was pushed past git-secure", and was sent to rsl repair. The
// failure stays (verify cannot tell a stale remote-tracking ref from a
// server serving the deleted branch again), but the hint names the
// deletion's entry and the prune that clears it, and the prune does.
func TestVerifyStaleTrackingRefOfDeletedBranch(t *testing.T) {
	_, _, alice, bob, adir, bdir := tagDay(t, "refs/heads/rel/*")
	alice.git(adir, "push", "-q", "origin", "main:refs/heads/rel/1")
	bob.git(bdir, "fetch", "-q")
	alice.git(adir, "push", "-q", "origin", "--delete", "rel/1")
	bob.git(bdir, "fetch", "-q")
	r := bob.run(bdir, "git", "secure", "verify")
	if r.code != 1 || !strings.Contains(r.stderr, "refs/heads/rel/1") {
		t.Fatalf("verify with a stale origin/rel/1 of a deleted protected branch:\n%s", r)
	}
	if strings.Contains(r.stderr, "pushed past git-secure") || !strings.Contains(r.stderr, "git fetch --prune origin") {
		t.Errorf("the hint for a remote-tracking ref left from before a recorded deletion does not name the prune:\n%s", r)
	}
	bob.git(bdir, "fetch", "-q", "--prune")
	if r := bob.run(bdir, "git", "secure", "verify"); r.code != 0 {
		t.Errorf("verify after git fetch --prune:\n%s", r)
	}
}

// Found as a stranger: git gc failed on every enforcing server ("fatal:
// failed to run pack-refs"), and the gc --auto after a push failed
// quietly. After writing packed-refs, git 2.39 removes each loose ref in
// a transaction of its own, "old 0{40} REF", and runs the hook on it: the
// line of a protected branch or of refs/secure/policy read as a deletion
// without an entry. The ref keeps its value (packed-refs holds it); a real
// deletion still is judged (TestDeleteProtectedPackedBranch).
func TestServerPacksItsRefs(t *testing.T) {
	srv, repo, alice, _, adir, _ := tagDay(t, "refs/heads/rel/*")
	alice.git(adir, "push", "-q", "origin", "main:refs/heads/rel/1")
	before := srv.admin.refValue(repo, "refs/heads/rel/1")
	if r := srv.admin.run(repo, "git", "pack-refs", "--all"); r.code != 0 {
		t.Fatalf("git pack-refs --all on the enforcing server:\n%s", r)
	}
	for _, ref := range []string{"refs/heads/rel/1", "refs/secure/policy", "refs/secure/rsl"} {
		if _, err := os.Stat(filepath.Join(repo, ref)); !os.IsNotExist(err) {
			t.Errorf("%s is still a loose ref after pack-refs: %v", ref, err)
		}
	}
	if got := srv.admin.refValue(repo, "refs/heads/rel/1"); got != before {
		t.Fatalf("rel/1 moved from %s to %s in pack-refs", before, got)
	}
	alice.git(adir, "push", "-q", "origin", "main:refs/heads/rel/2")
	if r := srv.admin.run(repo, "git", "gc", "-q"); r.code != 0 {
		t.Fatalf("git gc on the enforcing server:\n%s", r)
	}
	srv.admin.secure(repo, "verify")

	// A deletion without an entry of a packed protected branch is still
	// refused.
	url := srv.base + "/tags.git"
	r := alice.pushDirect(adir, url, url, "--delete", "rel/2")
	if r.code == 0 || !strings.Contains(r.stderr, "refs/heads/rel/2") {
		t.Fatalf("a deletion of rel/2 without an entry was not refused:\n%s", r)
	}
}
