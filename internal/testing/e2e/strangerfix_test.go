package e2e

import (
	"strings"
	"testing"
)

// Found adopting git-secure as a stranger (a team of three): alice fetched,
// bob pushed a branch (a new log entry on the remote), then alice added a
// person and applied: her push was refused (her log no longer extends the
// remote's) and every later push, fetch or apply left her stuck with a
// policy entry that sits on an old tip. The push replays her own policy
// entries on top of the remote's log (signed again, compare-and-swap), as
// it does for ref entries that lose the race.
func TestPolicyApplyRacesAPush(t *testing.T) {
	srv, repo, _, alice, bob, carol, adir, bdir := handOffWorld(t)
	alice.secure(adir, "policy", "add-rule", "features", "--ref", "refs/heads/feature/**", "--allow", "bob")
	alice.secure(adir, "policy", "apply")
	alice.git(adir, "push", "-q")
	bob.git(bdir, "pull", "-q")

	// bob pushes after alice's last fetch.
	bob.git(bdir, "checkout", "-q", "-b", "feature/x")
	bob.commit(bdir, "x.txt", "x\n")
	bob.git(bdir, "push", "-q", "origin", "feature/x")
	serverLog := srv.admin.rev(repo, "refs/secure/rsl")

	dave := newUser(t, "dave")
	alice.secure(adir, "policy", "add-person", "dave", "--key", dave.key.Public)
	alice.secure(adir, "policy", "apply")
	r := alice.run(adir, "git", "push")
	if r.code != 0 {
		t.Fatalf("alice's push of her policy change after bob's push:\n%s", r)
	}
	log := srv.admin.checkLinearLog(repo)
	if log[len(log)-1].Ref != "refs/secure/policy" {
		t.Fatalf("the server's last entry is not alice's policy change: %+v", log[len(log)-1])
	}
	if srv.admin.run(repo, "git", "merge-base", "--is-ancestor", serverLog, "refs/secure/rsl").code != 0 {
		t.Fatalf("bob's entry is no longer in the server's log")
	}
	if !strings.Contains(srv.admin.secure(repo, "policy", "list"), "dave") {
		t.Errorf("the server's policy does not name dave")
	}
	if got, want := alice.rev(adir, "refs/secure/rsl"), srv.admin.rev(repo, "refs/secure/rsl"); got != want {
		t.Errorf("alice's log %s, the server's %s", got, want)
	}
	if !strings.Contains(r.stderr, "recorded again on top of the remote's log") {
		t.Errorf("the push does not say it recorded the policy change again:\n%s", r)
	}
	srv.admin.secure(repo, "verify")
	alice.git(adir, "fetch", "-q") // bob's branch, which the log records
	alice.secure(adir, "verify")
	bob.git(bdir, "fetch", "-q")
	bob.secure(bdir, "verify")
	_ = carol
}

// A policy change that raced another policy change cannot be replayed (it
// was made on the policy before the other one): the push says so and how
// to start again from the remote's state, and doing that works.
func TestPolicyApplyRacesAPolicyChange(t *testing.T) {
	srv, repo, url, alice, _, _, adir, _ := handOffWorld(t)
	other := alice.path("other")
	alice.secure(alice.sb.Home, "clone", url, other)
	alice.configure(other)
	dave, erin := newUser(t, "dave"), newUser(t, "erin")
	alice.secure(other, "policy", "add-person", "erin", "--key", erin.key.Public)
	alice.secure(other, "policy", "apply")
	alice.git(other, "push", "-q")

	alice.secure(adir, "policy", "add-person", "dave", "--key", dave.key.Public)
	alice.secure(adir, "policy", "apply")
	r := alice.run(adir, "git", "push")
	if r.code == 0 {
		t.Fatalf("a policy change made on a policy that changed since was pushed:\n%s", r)
	}
	if !strings.Contains(r.stderr, "someone else changed the policy meanwhile") || strings.Contains(r.stderr, "rewrote its log") {
		t.Fatalf("the refusal does not say why:\n%s", r)
	}
	i := strings.Index(r.stderr, "git update-ref refs/secure/rsl ")
	j := strings.Index(r.stderr, ", then make the change again")
	if i < 0 || j < i {
		t.Fatalf("the refusal does not say how to start again:\n%s", r)
	}
	alice.must(adir, "sh", "-c", r.stderr[i:j])
	alice.git(adir, "fetch", "-q")
	alice.secure(adir, "policy", "add-person", "dave", "--key", dave.key.Public)
	alice.secure(adir, "policy", "apply")
	alice.git(adir, "push", "-q")
	list := srv.admin.secure(repo, "policy", "list")
	if !strings.Contains(list, "dave") || !strings.Contains(list, "erin") {
		t.Errorf("the server's policy lacks dave or erin:\n%s", list)
	}
	srv.admin.secure(repo, "verify")
}
