package e2e

import (
	"strings"
	"testing"
)

// Issue 15.5: the review hand-off with plain git. alice's push of main is
// refused for lack of a second signer; the refusal says how to publish the
// commit for review; bob fetches it, approves the exact update and pushes
// the approval with a plain git push; alice's retry of git push lands.
func TestReviewHandOff(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("handoff.git", true)
	alice, bob := newUser(t, "alice"), newUser(t, "bob")
	adir := alice.sb.InitRepo("project", 3)
	alice.configure(adir)
	alice.secure(adir, "init")
	alice.secure(adir, "policy", "add-person", "alice", "--key", alice.key.Public)
	alice.secure(adir, "policy", "add-person", "bob", "--key", bob.key.Public)
	alice.secure(adir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob", "--threshold", "2")
	alice.secure(adir, "policy", "apply")
	alice.git(adir, "remote", "add", "origin", url)
	alice.git(adir, "push", "-q", "-u", "origin", "main")

	bdir := bob.path("project")
	bob.secure(bob.sb.Home, "clone", url, bdir)
	bob.configure(bdir)

	// alice's change needs bob: the push is refused and says what to do.
	change := alice.commit(adir, "feature.txt", "needs review\n")
	r := alice.run(adir, "git", "push")
	if r.code == 0 {
		t.Fatalf("a push of main with one signer of two was accepted:\n%s", r)
	}
	review := "git push origin " + change[:12] + ":refs/heads/review/main-" + change[:12]
	for _, want := range []string{"1 more needed", review, "git secure attest approve refs/heads/main --to " + change[:12]} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, r)
		}
	}
	if n := strings.Count(r.stderr, "failed to push"); n != 1 {
		t.Errorf("the refusal prints 'failed to push' %d times, want once:\n%s", n, r)
	}
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(line, "git-secure: ") && len(line) > 100 {
			t.Errorf("a line of the refusal is %d columns long:\n%s", len(line), line)
		}
	}
	// alice publishes the commit for review exactly as told.
	alice.git(adir, strings.Fields(review)[1:]...)
	if got := srv.admin.rev(repo, "refs/heads/review/main-"+change[:12]); got != change {
		t.Fatalf("the review branch on the server is %s, want %s", got, change)
	}

	// bob fetches, approves the exact update, pushes the approval.
	bob.git(bdir, "fetch", "-q")
	out := bob.run(bdir, "git", "secure", "attest", "approve", "main", "--to", change)
	if out.code != 0 {
		t.Fatalf("bob's approval of the fetched review commit:\n%s", out)
	}
	if r := bob.run(bdir, "git", "push"); r.code != 0 {
		t.Fatalf("bob's git push of his approval:\n%s", r)
	}
	if got, want := srv.admin.rev(repo, "refs/secure/attestations"), bob.rev(bdir, "refs/secure/attestations"); got != want {
		t.Fatalf("the server's approvals are %s, want bob's %s", got, want)
	}

	// alice retries the same git push: it lands and verifies.
	if r := alice.run(adir, "git", "push"); r.code != 0 {
		t.Fatalf("alice's retry after bob's approval:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/heads/main"); got != change {
		t.Fatalf("the server's main is %s, want %s", got, change)
	}
	srv.admin.secure(repo, "verify")
	bob.git(bdir, "pull", "-q")
	bob.secure(bdir, "verify")
}
