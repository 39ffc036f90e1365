package e2e

import (
	"strings"
	"testing"
)

// crash moves ref on the server to commit c (fetched from dir) past every
// hook: what a server killed between renaming the branch's lock and the
// log's leaves.
func crash(srv *server, repo, dir, ref, c string) {
	srv.admin.git(repo, "fetch", "-q", dir, c)
	srv.admin.git(repo, "-c", "core.hooksPath=/dev/null", "update-ref", ref, c)
}

// TestRepairOutOfStepRef: a server left with main ahead of its entry is
// repaired by someone who is not the pusher, both ways (record the
// server's value, or put main back); meanwhile others push other refs; a
// person the rule does not allow cannot record it; a move that needs a
// second person is not signed; the repaired server verifies in a fresh
// clone.
func TestRepairOutOfStepRef(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("repair.git", true)
	alice, bob, carol := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "carol")
	dir := alice.sb.InitRepo("alice", 2)
	alice.configure(dir)
	alice.git(dir, "remote", "add", "origin", url)
	alice.secure(dir, "init")
	for _, u := range []*user{alice, bob, carol} {
		alice.secure(dir, "policy", "add-person", u.name, "--key", u.key.Public)
	}
	alice.secure(dir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob")
	alice.secure(dir, "policy", "add-rule", "releases", "--ref", "refs/heads/release/*", "--allow", "alice", "--allow", "bob", "--threshold", "2")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "-u", "origin", "main")
	clone := func(u *user, name string) string {
		t.Helper()
		d := u.path(name)
		u.git(u.sb.Home, "clone", "-q", "secure::"+url, d)
		u.configure(d)
		return d
	}
	bobDir, carolDir := clone(bob, "bob"), clone(carol, "carol")
	recorded := alice.rev(dir, "main")

	// alice's push dies on the server: main moved, its entry never written.
	cut := alice.commit(dir, "cut.txt", "cut\n")
	crash(srv, repo, dir, "refs/heads/main", cut)
	if r := bob.run(bobDir, "git", "fetch", "origin"); r.code == 0 || !strings.Contains(r.stderr, "git secure rsl repair origin refs/heads/main") {
		t.Fatalf("a fetch of the cut server must fail and name the repair command:\n%s", r)
	}

	if r := srv.admin.run(repo, "git", "secure", "verify"); r.code == 0 || !strings.Contains(r.stderr, "git secure rsl repair REMOTE refs/heads/main") {
		t.Fatalf("verify on the cut server must fail and name the repair command:\n%s", r)
	}

	// Others keep pushing other refs meanwhile.
	carol.git(carolDir, "checkout", "-q", "-b", "feature")
	carol.commit(carolDir, "feature.txt", "carol's work\n")
	if r := carol.pushDirect(carolDir, url, "--no-verify", url, "feature"); r.code != 0 {
		t.Fatalf("a push of another branch is refused while main is out of step:\n%s", r)
	}
	if r := carol.run(carolDir, "git", "secure", "rsl", "repair", "origin", "main"); r.code != 0 ||
		!containsAll(r.stdout, "refs/heads/main", "recorded: "+recorded[:12], "server:   "+cut[:12], "signed by alice", "--record REF", "--restore REF") {
		t.Fatalf("rsl repair does not show main's state:\n%s", r)
	}

	// carol may not move main: her record is refused, naming the rule,
	// and nothing reaches the server.
	logBefore := srv.admin.rev(repo, "refs/secure/rsl")
	r := carol.run(carolDir, "git", "secure", "rsl", "repair", "origin", "--record", "main")
	if r.code != 1 || !strings.Contains(r.stderr, "rule protect-main") {
		t.Fatalf("carol's record of main (no rule allows her) must be refused naming the rule:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/secure/rsl"); got != logBefore {
		t.Fatalf("a refused repair changed the server's log")
	}

	// bob records the server's value: he signs alice's move.
	r = bob.run(bobDir, "git", "secure", "rsl", "repair", "--record", "main")
	if r.code != 0 || !containsAll(r.stdout, "recorded entry #", "refs/heads/main "+recorded[:12]+" -> "+cut[:12]) {
		t.Fatalf("bob's record of main:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/heads/main"); got != cut {
		t.Fatalf("recording moved main on the server: %s, want %s", got, cut)
	}
	if r := srv.admin.run(repo, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("the server does not verify after the record:\n%s", r)
	}
	bob.git(bobDir, "fetch", "origin")

	// Again, for a release branch: a second person is needed, so bob's
	// record is refused with what is missing, and nothing is signed.
	rel := bob.commit(bobDir, "rel.txt", "release\n")
	crash(srv, repo, bobDir, "refs/heads/release/1", rel)
	r = bob.run(bobDir, "git", "secure", "rsl", "repair", "--record", "release/1")
	if r.code != 1 || !containsAll(r.stderr, "not authorized yet", "rule releases") {
		t.Fatalf("a record needing a second person must be refused naming the rule:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/secure/rsl"); got == logBefore || srv.admin.run(repo, "git", "secure", "verify").code == 0 {
		t.Fatalf("unexpected server state after the refused record")
	}
	// carol (who may not move either ref) puts them back: a push to what
	// the log records needs no signature.
	r = carol.run(carolDir, "git", "secure", "rsl", "repair", "origin", "--restore", "release/1")
	if r.code != 0 || !containsAll(r.stdout, "deleted refs/heads/release/1", rel) {
		t.Fatalf("carol's restore of release/1:\n%s", r)
	}
	cut2 := alice.commit(dir, "cut2.txt", "cut again\n")
	crash(srv, repo, dir, "refs/heads/main", cut2)
	r = carol.run(carolDir, "git", "secure", "rsl", "repair", "--restore", "refs/heads/main")
	if r.code != 0 || !containsAll(r.stdout, "back to "+cut, "commit "+cut2+" is not lost", "git branch rescued "+cut2) {
		t.Fatalf("carol's restore of main:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/heads/main"); got != cut {
		t.Fatalf("server main = %s after the restore, want the recorded %s", got, cut)
	}
	if got := carol.rev(carolDir, cut2); got != cut2 {
		t.Fatalf("the server's commit is not in carol's clone")
	}
	if r := srv.admin.run(repo, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("the server does not verify after the restores:\n%s", r)
	}
	dave := newUser(t, "dave")
	daveDir := dave.path("dave")
	if r := dave.run(dave.sb.Home, "git", "clone", "-q", "secure::"+url, daveDir); r.code != 0 {
		t.Fatalf("a fresh clone of the repaired server:\n%s", r)
	}
	if r := dave.run(daveDir, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("verify in a fresh clone of the repaired server:\n%s", r)
	}
}

// TestFetchOfRolledBackServerNamesWhoHasIt: the server's main put back by
// hand past a commit bob pushed, which alice never fetched. alice's fetch
// fails, as it must; its hint said "fetch the missing commits (git
// fetch)", the step that just failed, and rsl repair fails in her clone
// for the same missing commit (stranger run, session 14). It now says the
// server lost a recorded commit and that whoever has it (bob) restores
// it; bob's repair works and alice's fetch then does too.
func TestFetchOfRolledBackServerNamesWhoHasIt(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("rolledback.git", true)
	alice, bob := newUser(t, "alice"), newUser(t, "bob")
	dir := alice.sb.InitRepo("alice", 2)
	alice.configure(dir)
	alice.git(dir, "remote", "add", "origin", url)
	alice.secure(dir, "init")
	for _, u := range []*user{alice, bob} {
		alice.secure(dir, "policy", "add-person", u.name, "--key", u.key.Public)
	}
	alice.secure(dir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob")
	alice.secure(dir, "policy", "add-rule", "docs", "--path", "docs/**", "--allow", "alice", "--allow", "bob")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "-u", "origin", "main")
	before := alice.rev(dir, "main")
	bobDir := bob.path("bob")
	bob.git(bob.sb.Home, "clone", "-q", "secure::"+url, bobDir)
	bob.configure(bobDir)
	bob.commit(bobDir, "a.txt", "bob's change\n")
	if r := bob.run(bobDir, "git", "push", "-q", "origin", "main"); r.code != 0 {
		t.Fatalf("bob's push:\n%s", r)
	}
	// The admin puts main back past bob's commit, and it is pruned.
	srv.admin.git(repo, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/heads/main", before)
	srv.admin.git(repo, "reflog", "expire", "--expire=now", "--all")
	srv.admin.git(repo, "gc", "-q", "--prune=now")

	r := alice.run(dir, "git", "fetch", "origin")
	if r.code == 0 {
		t.Fatalf("alice's fetch of the rolled-back server passed:\n%s", r)
	}
	if !containsAll(r.stderr, "origin does not serve a commit its log records (entry #", "Whoever has that commit (the signer of entry #", "git secure rsl repair origin --restore refs/heads/main") || strings.Contains(r.stderr, "fetch the missing commits (git fetch)") {
		t.Fatalf("the refusal must say the server lost a recorded commit and who restores it, not to fetch:\n%s", r)
	}
	if r := bob.run(bobDir, "git", "secure", "rsl", "repair", "origin", "--restore", "main"); r.code != 0 {
		t.Fatalf("bob's repair:\n%s", r)
	}
	if r := alice.run(dir, "git", "fetch", "origin"); r.code != 0 {
		t.Fatalf("alice's fetch after bob's repair:\n%s", r)
	}
}
