package e2e

import (
	"strings"
	"testing"
)

// TestPlainPushRefusalSaysWhatToDo: a pusher with plain git only (no
// git-secure) who moves a protected branch or creates a protected tag is
// refused with a hint for them: the push lacks a signed entry and a push
// through git-secure records one. Before, the server repeated verify's
// hint for a clone ("git secure rsl record ...; otherwise restore the ref"),
// which a plain-git pusher cannot follow and need not (nothing was kept).
// A contributor who is no person of the policy is told who may move the
// ref and, for a branch, how to propose the commit instead.
func TestPlainPushRefusalSaysWhatToDo(t *testing.T) {
	srv := startServer(t, trFile)
	_, url := srv.newRepo("plain.git", true)
	alice := newUser(t, "alice")
	dir := benchRepo(t, alice, "one", url, false)
	alice.secure(dir, "init")
	alice.secure(dir, "policy", "add-person", "alice", "--key", alice.key.Public)
	alice.secure(dir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice")
	alice.secure(dir, "policy", "add-rule", "releases", "--ref", "refs/tags/*", "--allow", "alice")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "-u", "origin", "main")

	bob := newUser(t, "bob")
	bdir := bob.path("b")
	bob.git(bob.sb.Home, "clone", "-q", url, bdir)
	fix := bob.commit(bdir, "fix.txt", "fix\n")
	bob.git(bdir, "tag", "v9")
	// bob is no person of the policy: installing git-secure would not let
	// him push main. The refusal names who may, and how to propose his
	// commit instead.
	next := map[string][]string{
		"main": {"hint: refs/heads/main is protected by rule protect-main: 1 of alice",
			"hint: to propose your commits, push them to a branch no rule protects and ask one of them to take them: git push origin " + fix[:12] + ":refs/heads/review/main-" + fix[:12]},
		"v9": {"hint: refs/tags/v9 is protected by rule releases: 1 of alice", "hint: ask one of them to make this change"},
	}
	for _, ref := range []string{"main", "v9"} {
		full := map[string]string{"main": "refs/heads/main", "v9": "refs/tags/v9"}[ref]
		r := bob.run(bdir, "git", "push", "origin", ref)
		if r.code == 0 {
			t.Fatalf("a plain push of %s was accepted:\n%s", full, r)
		}
		for _, w := range append([]string{
			"rejected: " + full + ": ref does not match the log",
			"hint: this push changes " + full + " without a signed entry in the log; a push through git-secure records and signs one (see below)",
			"If you are one of them,",
			// Where to get it and how (a stranger read "make install
			// from its source" and had to search for the source).
			"install git-secure, the project git-secure/git-secure on GitHub (Go 1.26+):",
			"git clone https://github.com/git-secure/git-secure && make -C git-secure install",
		}, next[ref]...) {
			if !containsAll(r.stderr, w) {
				t.Errorf("the refusal of %s does not say %q:\n%s", full, w, r)
			}
		}
		for _, w := range []string{"git secure rsl record", "restore the ref", "otherwise delete it"} {
			if containsAny(r.stderr, w) {
				t.Errorf("the refusal of %s tells a plain-git pusher %q:\n%s", full, w, r)
			}
		}
	}
}

// TestPushCatchesUpTracking: a push whose metadata sync brings the log
// with entries for branches fetched earlier (bob moved dev, made feat)
// also moves their remote-tracking refs to the values the verified log
// records, as a fetch would. Before, alice's verify right after her push
// warned that origin's dev was "behind the recorded ... back to an older
// commit" and feat "not fetched yet", and failed where a rule protected
// them. A refspec that leaves a branch out is respected.
func TestPushCatchesUpTracking(t *testing.T) {
	srv, repo, _, alice, bob, _, adir, bdir := handOffWorld(t)
	alice.git(adir, "push", "-q", "origin", "main:refs/heads/dev")
	bob.git(bdir, "fetch", "-q")
	alice.git(adir, "fetch", "-q")
	bob.git(bdir, "checkout", "-q", "-b", "dev", "origin/dev")
	dev := bob.commit(bdir, "dev.txt", "dev\n")
	bob.git(bdir, "push", "-q", "origin", "dev")
	bob.git(bdir, "checkout", "-q", "-b", "feat")
	feat := bob.commit(bdir, "feat.txt", "feat\n")
	bob.git(bdir, "push", "-q", "origin", "feat")
	// alice leaves feat out of what she fetches.
	alice.git(adir, "config", "--add", "remote.origin.fetch", "^refs/heads/feat")

	alice.git(adir, "checkout", "-q", "-b", "topic")
	alice.commit(adir, "topic.txt", "topic\n")
	if r := alice.run(adir, "git", "push", "-q", "origin", "topic"); r.code != 0 {
		t.Fatalf("alice's push of topic:\n%s", r)
	}
	if got := alice.rev(adir, "refs/remotes/origin/dev"); got != dev || got != srv.admin.rev(repo, "refs/heads/dev") {
		t.Errorf("alice's origin/dev after her push is %s, want bob's recorded %s", got, dev)
	}
	if r := alice.run(adir, "git", "rev-parse", "-q", "--verify", "refs/remotes/origin/feat"); r.code == 0 {
		t.Errorf("a branch her refspec leaves out got a remote-tracking ref (%s, feat %s)", r.stdout, feat)
	}
	r := alice.run(adir, "git", "secure", "verify")
	if r.code != 0 {
		t.Fatalf("alice's verify right after her push:\n%s", r)
	}
	for _, w := range []string{"behind the recorded", "back to an older commit", "refs/heads/dev: on origin"} {
		if strings.Contains(r.stderr, w) {
			t.Errorf("alice's verify right after her push says %q:\n%s", w, r)
		}
	}
}
