package e2e

import (
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/rsl"
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

// Key rotation without losing a person's rules: bob gets a new key
// (add-key), then loses the old one (remove-key). His entries signed with
// the old key before the change still verify; after it, a push signed
// with the old key is refused by his own clone and by the server; his new
// key pushes. A person's last key is not removed.
func TestKeyRotation(t *testing.T) {
	srv, repo, url, alice, bob, carol, adir, bdir := handOffWorld(t)
	alice.secure(adir, "policy", "add-rule", "features", "--ref", "refs/heads/feature/**", "--allow", "bob")
	alice.secure(adir, "policy", "apply")
	alice.git(adir, "push", "-q")
	bob.git(bdir, "pull", "-q")
	bob.git(bdir, "checkout", "-q", "-b", "feature/x")
	bob.commit(bdir, "x.txt", "old key\n")
	bob.git(bdir, "push", "-q", "origin", "feature/x")

	newKey := bob.sb.NewKey("bob-new", "ed25519")
	alice.git(adir, "pull", "-q")
	alice.secure(adir, "policy", "add-key", "bob", "--key", newKey.Public)
	alice.secure(adir, "policy", "apply")
	alice.secure(adir, "policy", "remove-key", "bob", bob.key.Public)
	alice.secure(adir, "policy", "apply")
	if r := alice.run(adir, "git", "secure", "policy", "remove-key", "carol", carol.key.Public); r.code == 0 || !strings.Contains(r.stderr, "last key of carol") || !strings.Contains(r.stderr, "policy add-key carol") {
		t.Errorf("removing carol's only key:\n%s", r)
	}
	alice.git(adir, "push", "-q")
	list := srv.admin.secure(repo, "policy", "list")
	if !strings.Contains(list, "features") {
		t.Errorf("bob's rule is gone after the rotation:\n%s", list)
	}

	// The old key signs nothing any more: bob's clone refuses, and so does
	// the server an entry signed with it that goes past the helper.
	bob.git(bdir, "pull", "-q", "origin", "feature/x")
	bob.git(bdir, "fetch", "-q")
	old := bob.commit(bdir, "y.txt", "still the old key\n")
	if r := bob.run(bdir, "git", "push", "origin", "feature/x"); r.code == 0 || !strings.Contains(r.stderr, "was removed from person bob") || !strings.Contains(r.stderr, "bob's key(s) now") {
		t.Errorf("a push signed with the removed key must say it was removed from bob and which keys bob has now:\n%s", r)
	}
	tip := forge(t, bob, bdir, &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/feature/x", Old: hash(t, srv.admin.rev(repo, "refs/heads/feature/x")), New: hash(t, old)})
	r := bob.pushDirect(bdir, url, "--no-verify", "--atomic", url, old+":refs/heads/feature/x", tip+":refs/secure/rsl")
	if r.code == 0 || !strings.Contains(r.stderr, "a key the policy in force does not know") {
		t.Errorf("the server took an entry signed with the removed key:\n%s", r)
	}
	bob.git(bdir, "config", "user.signingkey", newKey.Private)
	if r := bob.run(bdir, "git", "push", "origin", "feature/x"); r.code != 0 {
		t.Fatalf("bob's push with his new key:\n%s", r)
	}
	srv.admin.secure(repo, "verify") // the old key's entries verify under the policy of their time
	mirror := t.TempDir() + "/fresh.git"
	carol.git(carol.sb.Home, "clone", "-q", "--mirror", url, mirror)
	carol.secure(mirror, "verify", "--full")
}

// Found adopting git-secure on a GitHub mirror: git secure rsl repair
// fetched +refs/* from the remote, refs/pull/* included (thousands on a
// mirror, and a stale one the server cannot serve failed the whole scan
// with "not our ref"), although nothing judges them. It leaves a forge's
// namespaces out as the remote helper does.
func TestRepairSkipsForgeRefs(t *testing.T) {
	srv := startServer(t, trFile)
	path, url := srv.newRepo("mirror.git", true)
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "work", url, true)
	pr1 := addForgeRefs(t, srv.admin, path, 20)
	defer breakForgeRef(t, srv.admin, path)()
	r := u.run(dir, "git", "secure", "rsl", "repair")
	if r.code != 0 || strings.Contains(r.stderr, "not our ref") {
		t.Fatalf("rsl repair of a remote with forge refs:\n%s", r)
	}
	if u.run(dir, "git", "cat-file", "-e", pr1).code == 0 {
		t.Errorf("rsl repair fetched the pull requests' commits")
	}
}

// Found adopting git-secure: protecting an existing branch that this clone
// has only as a remote-tracking ref dead-ended, since rsl record reads the
// local branch ("ref refs/heads/release does not exist"). rsl record
// REMOTE/BRANCH records refs/heads/BRANCH at the value the remote serves,
// the plain name says which command to run, and the push then verifies.
func TestRecordRemoteOnlyBranch(t *testing.T) {
	srv, repo, url, alice, _, _, adir, _ := handOffWorld(t)
	other := alice.path("plain")
	alice.git(alice.sb.Home, "clone", "-q", url, other) // plain git, past the helper
	alice.configure(other)
	alice.git(other, "checkout", "-q", "-b", "release")
	rel := alice.commit(other, "r.txt", "release\n")
	alice.pushDirect(other, url, "-q", url, "release")

	alice.git(adir, "fetch", "-q")
	r := alice.run(adir, "git", "secure", "rsl", "record", "release")
	if r.code == 0 || !strings.Contains(r.stderr, "git secure rsl record origin/release") {
		t.Fatalf("recording a branch this clone has only as origin/release:\n%s", r)
	}
	alice.secure(adir, "rsl", "record", "origin/release")
	log := alice.rslLog(adir)
	if last := log[len(log)-1]; last.Ref != "refs/heads/release" || last.New != rel {
		t.Fatalf("the entry records %s at %s, want refs/heads/release at %s", last.Ref, last.New, rel)
	}
	if alice.refValue(adir, "refs/heads/release") != "" {
		t.Errorf("rsl record created a local branch")
	}
	alice.git(adir, "push", "-q")
	srv.admin.secure(repo, "verify")
	alice.secure(adir, "verify")
}
