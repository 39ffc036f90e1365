package e2e

import (
	"testing"
)

// TestNoForcePushWithoutRule: a no-force-push global rule on refs that no
// rule protects (release branches anyone may push) must still stop a
// force push and a deletion. Before the fix the server only warned that
// the ref moved without an entry, so a pusher without any key rewrote a
// release branch, and verify (server and clones) exited 0. Now the server
// refuses the force push and the deletion on the push itself (also from a
// value the log never recorded: a fast-forward pushed without an entry,
// then rewritten), while fast-forwards and new branches stay free; and a
// state where such a ref went back anyway (moved past the hooks) fails
// verification, on the server and in a fresh clone, naming the rule.
func TestNoForcePushWithoutRule(t *testing.T) {
	srv := startServer(t, trDaemon)
	repo, url := srv.newRepo("rel.git", true)
	alice := newUser(t, "alice")
	dir := benchRepo(t, alice, "one", url, false)
	alice.secure(dir, "init")
	alice.secure(dir, "policy", "add-person", "alice", "--key", alice.key.Public)
	alice.secure(dir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice")
	alice.secure(dir, "policy", "add-global-rule", "linear", "--ref", "refs/heads/rel/*", "--no-force-push")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "-u", "origin", "main")
	alice.git(dir, "checkout", "-q", "-b", "rel/1")
	recorded := alice.commit(dir, "rel.txt", "release 1\n")
	alice.git(dir, "push", "-q", "origin", "rel/1")

	mallory := newUser(t, "mallory")
	mdir := mallory.path("m")
	mallory.git(mallory.sb.Home, "clone", "-q", url, mdir)
	mallory.git(mdir, "checkout", "-q", "rel/1")
	mallory.git(mdir, "reset", "-q", "--hard", "HEAD~1")
	rewritten := mallory.commit(mdir, "rel.txt", "not the release\n")
	for _, tc := range []struct{ name, spec, want string }{
		{"force push", "+rel/1:rel/1", "force-pushes refs/heads/rel/1 (" + recorded[:12] + " -> " + rewritten[:12] + "), but global rule linear lets it only fast-forward"},
		{"deletion", ":rel/1", "deletes refs/heads/rel/1 (" + recorded[:12] + " -> (deleted)), but global rule linear lets it only fast-forward"},
	} {
		r := mallory.run(mdir, "git", "push", "origin", tc.spec)
		if r.code == 0 || !containsAll(r.stderr, tc.want) {
			t.Errorf("%s of a no-force-push branch: want a refusal saying %q:\n%s", tc.name, tc.want, r)
		}
	}
	if got := srv.admin.rev(repo, "refs/heads/rel/1"); got != recorded {
		t.Fatalf("the server's rel/1 is %s, want the recorded %s", got, recorded)
	}

	// A fast-forward without an entry is free (no rule protects the
	// branch); rewriting it afterwards is not, although the rewrite
	// contains the recorded value.
	mallory.git(mdir, "reset", "-q", "--hard", recorded)
	ahead := mallory.commit(mdir, "rel.txt", "release 1.1\n")
	if r := mallory.run(mdir, "git", "push", "origin", "rel/1"); r.code != 0 {
		t.Fatalf("a fast-forward of rel/1 without an entry:\n%s", r)
	}
	mallory.git(mdir, "reset", "-q", "--hard", recorded)
	sideways := mallory.commit(mdir, "rel.txt", "release 1.1, rewritten\n")
	if r := mallory.run(mdir, "git", "push", "origin", "+rel/1:rel/1"); r.code == 0 || !containsAll(r.stderr, "force-pushes refs/heads/rel/1 ("+ahead[:12]+" -> "+sideways[:12]+")") {
		t.Errorf("a force push from an unrecorded value: want a refusal:\n%s", r)
	}
	if r := mallory.run(mdir, "git", "push", "origin", "rel/1:rel/2"); r.code != 0 {
		t.Errorf("a new branch under the rule is free:\n%s", r)
	}

	// Past the hooks (a server without them, a mirror): verification
	// fails, naming the rule.
	if r := mallory.run(mdir, "git", "push", "origin", rewritten+":refs/heads/scratch"); r.code != 0 {
		t.Fatalf("pushing the rewritten commit to a free branch:\n%s", r)
	}
	srv.admin.git(repo, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/heads/rel/1", rewritten)
	r := srv.admin.run(repo, "git", "secure", "verify")
	if r.code != 1 || !containsAll(r.stderr, "refs/heads/rel/1", "global rule linear lets refs/heads/rel/1 only fast-forward") {
		t.Errorf("verify of a server whose no-force-push branch was rewritten: want exit 1 naming the rule:\n%s", r)
	}
	carol := newUser(t, "carol")
	r = carol.run(carol.sb.Home, "git", "secure", "clone", url, carol.path("c"))
	if r.code == 0 || !containsAll(r.stderr, "global rule linear lets refs/heads/rel/1 only fast-forward") {
		t.Errorf("a fresh clone of that state: want a refusal naming the rule:\n%s", r)
	}
	// As with a protected branch out of step, a push that leaves it
	// alone is accepted with a warning: the state gets no worse.
	alice.git(dir, "checkout", "-q", "main")
	alice.commit(dir, "main.txt", "more\n")
	if r := alice.run(dir, "git", "push", "origin", "main"); r.code != 0 || !containsAll(r.stderr, "warning:", "global rule linear lets refs/heads/rel/1 only fast-forward") {
		t.Errorf("a push of main beside the rewritten rel/1: want it accepted with a warning naming rel/1:\n%s", r)
	}
	srv.admin.git(repo, "-c", "core.hooksPath=/dev/null", "update-ref", "-d", "refs/heads/rel/1")
	r = srv.admin.run(repo, "git", "secure", "verify")
	if r.code != 1 || !containsAll(r.stderr, "global rule linear lets refs/heads/rel/1 only fast-forward, never be deleted") {
		t.Errorf("verify of a server whose no-force-push branch was deleted: want exit 1 naming the rule:\n%s", r)
	}
}
