package e2e

import (
	"strings"
	"testing"
)

// Found adopting git-secure as a stranger (README quick start): bob's push
// of main was refused for a second signer; he published a review branch
// (the push succeeded, so the helper remembered the remote's listing);
// alice approved and pushed her approval. bob's retry then answered git
// from the remembered listing, which predates alice's approval, so it
// never fetched it: the server took the push (it holds the approval), but
// the push said "1 more needed" and bob's own verify and explain failed
// until his next fetch. A push whose entry lacks approvals the local store
// does not hold asks the remote for its metadata before recording.
func TestPushFetchesApprovalsMadeSinceLastContact(t *testing.T) {
	srv, repo, _, alice, bob, _, adir, bdir := handOffWorld(t)
	change := bob.commit(bdir, "fix.txt", "fix\n")
	if r := bob.run(bdir, "git", "push"); r.code == 0 {
		t.Fatalf("a push of main with one signer of two was accepted:\n%s", r)
	}
	bob.git(bdir, "push", "-q", "origin", "HEAD:refs/heads/review/fix")
	alice.git(adir, "fetch", "-q")
	alice.secure(adir, "attest", "approve", "main", "--to", change)
	alice.git(adir, "push", "-q")

	r := bob.run(bdir, "git", "push")
	if r.code != 0 {
		t.Fatalf("bob's push after alice's approval:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/heads/main"); got != change {
		t.Fatalf("server main = %s, want %s", got, change)
	}
	if strings.Contains(r.stderr, "more needed") {
		t.Errorf("the push says an approval is missing although the server holds it:\n%s", r)
	}
	if got, want := bob.rev(bdir, "refs/secure/attestations"), srv.admin.rev(repo, "refs/secure/attestations"); got != want {
		t.Errorf("bob's approvals after his push are %s, the server's %s", got, want)
	}
	if r := bob.run(bdir, "git", "secure", "verify"); r.code != 0 {
		t.Errorf("bob's verify right after his accepted push:\n%s", r)
	}
	if r := bob.run(bdir, "git", "secure", "explain", "main"); r.code != 0 || !strings.Contains(r.stdout, "counted: alice, bob") {
		t.Errorf("bob's explain right after his accepted push:\n%s", r)
	}
}

