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
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) { reviewHandOff(t, tr) })
	}
}

func reviewHandOff(t *testing.T, tr transport) {
	srv := startServer(t, tr)
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

	// alice's change needs bob: a dry run says so, the push is refused
	// and says what to do.
	change := alice.commit(adir, "feature.txt", "needs review\n")
	if r := alice.run(adir, "git", "push", "--dry-run"); r.code == 0 || !strings.Contains(r.stderr, "1 more") {
		t.Errorf("git push --dry-run of a push short of its threshold:\n%s", r)
	}
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

	// bob pulls, approves the exact update, pushes the approval (README).
	bob.git(bdir, "pull", "-q")
	out := bob.run(bdir, "git", "secure", "attest", "approve", "main", "--to", "origin/review/main-"+change[:12])
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

// handOffWorld is a repository on an enforcing server whose main needs 2
// of alice, bob and carol; bob has a clone of his own.
func handOffWorld(t *testing.T) (srv *server, repo, url string, alice, bob, carol *user, adir, bdir string) {
	t.Helper()
	srv = startServer(t, trFile)
	repo, url = srv.newRepo("stale.git", true)
	alice, bob, carol = newUser(t, "alice"), newUser(t, "bob"), newUser(t, "carol")
	adir = alice.sb.InitRepo("project", 3)
	alice.configure(adir)
	alice.secure(adir, "init")
	for _, u := range []*user{alice, bob, carol} {
		alice.secure(adir, "policy", "add-person", u.name, "--key", u.key.Public)
	}
	alice.secure(adir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob", "--allow", "carol", "--threshold", "2")
	alice.secure(adir, "policy", "apply")
	alice.git(adir, "remote", "add", "origin", url)
	alice.git(adir, "push", "-q", "-u", "origin", "main")
	bdir = bob.path("project")
	bob.secure(bob.sb.Home, "clone", url, bdir)
	bob.configure(bdir)
	return
}

// Issue 15.5: an approval is made on the remote's latest log. bob fetched
// alice's review commit while main was still at its old value; alice then
// pushed another change. Without a refresh, bob's approval is of the
// update from the old value, which can no longer happen: alice's push is
// refused although bob approved. attest approve fetches first.
func TestApproveRefreshesFirst(t *testing.T) {
	srv, repo, _, alice, bob, carol, adir, bdir := handOffWorld(t)
	first := alice.commit(adir, "one.txt", "1\n")
	second := alice.commit(adir, "two.txt", "2\n")
	alice.git(adir, "push", "-q", "origin", second+":refs/heads/review/two")
	bob.git(bdir, "fetch", "-q") // bob has the review commit, main at its old value

	// carol approves the first change; alice pushes it.
	alice.secure(adir, "attest", "approve", "main", "--to", first, "--key", carol.key.Private)
	alice.git(adir, "push", "-q", "origin", first+":refs/heads/main")

	r := bob.run(bdir, "git", "secure", "attest", "approve", "main", "--to", second)
	if r.code != 0 {
		t.Fatalf("bob's approval:\n%s", r)
	}
	if want := first[:12] + " -> " + second[:12]; !strings.Contains(r.stdout, want) {
		t.Fatalf("bob approved from a stale log: want the update %s:\n%s", want, r)
	}
	if !strings.Contains(r.stderr, "fetching from origin first") {
		t.Errorf("the approval does not say it fetched:\n%s", r)
	}
	// bob's main is behind origin's (alice pushed): a plain git push of
	// main is refused as not a fast-forward until he pulls. His approval is
	// simply ahead of the remote's store: nothing has diverged.
	if r := bob.run(bdir, "git", "pull", "-q"); r.code != 0 || strings.Contains(r.stderr, "diverged") {
		t.Fatalf("bob's pull with an unpushed approval:\n%s", r)
	}
	bob.git(bdir, "push", "-q")
	if r := alice.run(adir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("alice's push of the change bob approved:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/heads/main"); got != second {
		t.Fatalf("server main = %s, want %s", got, second)
	}
	srv.admin.secure(repo, "verify")

	// A remote that cannot be reached: refused, naming the fetch.
	bob.git(bdir, "remote", "set-url", "origin", bob.path("gone.git"))
	third := alice.commit(adir, "three.txt", "3\n")
	alice.git(adir, "push", "-q", "origin", third+":refs/heads/review/three")
	r = bob.run(bdir, "git", "secure", "attest", "approve", "main", "--to", second)
	if r.code == 0 || !strings.Contains(r.stderr, "run git fetch origin and approve again") {
		t.Fatalf("an approval whose refresh failed: want a refusal naming the fetch:\n%s", r)
	}
}

// An approval of a commit that does not contain the branch's current value
// says it can only land as a force push.
func TestApproveWarnsNotFastForward(t *testing.T) {
	_, _, _, alice, bob, carol, adir, bdir := handOffWorld(t)
	base := alice.rev(adir, "HEAD")
	first := alice.commit(adir, "one.txt", "1\n")
	alice.secure(adir, "attest", "approve", "main", "--to", first, "--key", carol.key.Private)
	alice.git(adir, "push", "-q", "origin", "main")
	alice.git(adir, "checkout", "-q", "-b", "side", base)
	side := alice.commit(adir, "side.txt", "s\n")
	alice.git(adir, "push", "-q", "origin", side+":refs/heads/review/side")
	r := bob.run(bdir, "git", "secure", "attest", "approve", "main", "--to", side)
	if r.code != 0 || !strings.Contains(r.stderr, "not a fast-forward, so only a force push") || !strings.Contains(r.stderr, "rebased onto "+first[:12]) {
		t.Fatalf("an approval of a commit main moved past: want a warning:\n%s", r)
	}
}

// Issue 15.7: git push --dry-run runs the policy check the server would
// make: a push short of its threshold exits non-zero and says why, records
// nothing and sends nothing; once approved, the dry run passes.
func TestDryRunRunsPolicyCheck(t *testing.T) {
	srv, repo, _, alice, _, carol, adir, _ := handOffWorld(t)
	change := alice.commit(adir, "one.txt", "1\n")
	logBefore, serverBefore := alice.rev(adir, "refs/secure/rsl"), srv.admin.rev(repo, "refs/heads/main")
	r := alice.run(adir, "git", "push", "--dry-run")
	if r.code == 0 || !containsAll(r.stderr, "the server would refuse this push", "1 more") {
		t.Fatalf("a dry run of a push short of its threshold: want a non-zero exit saying what would be refused:\n%s", r)
	}
	// The same hand-off the real push's refusal prints (a stranger tries
	// --dry-run first), saying that nothing was sent.
	for _, want := range []string{
		"nothing was sent (dry run), so publish it for review:",
		"git push origin " + change[:12] + ":refs/heads/review/main-" + change[:12],
		"git secure attest approve refs/heads/main --to " + change[:12] + " && git push",
		"and you run this git push without --dry-run",
	} {
		if !strings.Contains(strings.ReplaceAll(r.stderr, "\ngit-secure: hint:  ", ""), want) {
			t.Errorf("the dry run does not say %q:\n%s", want, r)
		}
	}
	if strings.Contains(r.stderr, "kept nothing of this push") {
		t.Errorf("the dry run speaks of a push the server refused:\n%s", r)
	}
	if got := alice.rev(adir, "refs/secure/rsl"); got != logBefore {
		t.Errorf("a dry run moved the local log %s -> %s", logBefore, got)
	}
	if got := srv.admin.rev(repo, "refs/heads/main"); got != serverBefore {
		t.Errorf("a dry run moved the server's main to %s", got)
	}
	alice.secure(adir, "attest", "approve", "main", "--to", change, "--key", carol.key.Private)
	if r := alice.run(adir, "git", "push", "--dry-run"); r.code != 0 {
		t.Fatalf("a dry run of an approved push:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/heads/main"); got != serverBefore {
		t.Errorf("a dry run moved the server's main to %s", got)
	}
}

// Issue 15.7: git push --atomic through the helper (option atomic): every
// ref lands, with its entries, in one push.
func TestAtomicThroughHelper(t *testing.T) {
	srv, repo, _, alice, _, carol, adir, _ := handOffWorld(t)
	change := alice.commit(adir, "one.txt", "1\n")
	alice.secure(adir, "attest", "approve", "main", "--to", change, "--key", carol.key.Private)
	alice.git(adir, "branch", "topic", change+"~1")
	r := alice.run(adir, "git", "push", "--atomic", "origin", "main", "topic")
	if r.code != 0 {
		t.Fatalf("git push --atomic through the helper:\n%s", r)
	}
	for ref, want := range map[string]string{"refs/heads/main": change, "refs/heads/topic": alice.rev(adir, "topic")} {
		if got := srv.admin.rev(repo, ref); got != want {
			t.Errorf("server %s = %s, want %s", ref, got, want)
		}
	}
	srv.admin.secure(repo, "verify")
}
