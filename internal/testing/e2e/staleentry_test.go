package e2e

import (
	"strings"
	"testing"
)

// TestRuleAfterStaleEntry (review finding F5): mallory records an entry for
// a branch no rule covers, then moves it without an entry (allowed: not
// protected); later alice adds a rule covering it. The rule judges what
// happens after it: the unrecorded move made before it is named as such,
// and no hint tells alice to record (sign) mallory's commit unreviewed.
func TestRuleAfterStaleEntry(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("stale.git", true)
	alice, mallory := newUser(t, "alice"), newUser(t, "mallory")
	dir := alice.sb.InitRepo("alice", 2)
	alice.configure(dir)
	alice.git(dir, "remote", "add", "origin", url)
	alice.secure(dir, "init")
	alice.secure(dir, "policy", "add-person", "alice", "--key", alice.key.Public)
	alice.secure(dir, "policy", "add-person", "mallory", "--key", mallory.key.Public)
	alice.secure(dir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "-u", "origin", "main")

	mdir := mallory.path("m")
	mallory.git(mallory.sb.Home, "clone", "-q", "secure::"+url, mdir)
	mallory.configure(mdir)
	mallory.git(mdir, "checkout", "-q", "-b", "dev")
	mallory.commit(mdir, "dev.txt", "recorded\n")
	mallory.secure(mdir, "rsl", "record", "dev")
	if r := mallory.run(mdir, "git", "push", "origin", "dev"); r.code != 0 {
		t.Fatalf("mallory's recorded push of dev:\n%s", r)
	}
	bad := mallory.commit(mdir, "dev.txt", "unreviewed\n")
	if r := mallory.pushDirect(mdir, url, "--no-verify", url, "dev"); r.code != 0 {
		t.Fatalf("mallory's unrecorded push of the unprotected dev:\n%s", r)
	}
	if r := srv.admin.run(repo, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("the server with an unprotected branch out of step must verify (a warning):\n%s", r)
	}

	// alice protects dev.
	alice.git(dir, "fetch", "-q", "origin")
	alice.secure(dir, "policy", "add-rule", "protect-dev", "--ref", "refs/heads/dev", "--allow", "alice")
	alice.secure(dir, "policy", "apply")
	// The rule is not applied while dev is out of step (everyone's
	// verification would fail), and the refusal does not tell alice to
	// sign mallory's commit.
	// Through git-remote-secure, as people push metadata: the server's
	// refusal must not be reported as success.
	if r := alice.run(dir, "git", "push", "origin", "refs/secure/*:refs/secure/*"); r.code == 0 || !strings.Contains(r.stderr, "refs/heads/dev") {
		t.Fatalf("a metadata push the server refused reported success:\n%s", r)
	}
	if got, want := srv.admin.rev(repo, "refs/secure/policy"), alice.rev(dir, "refs/secure/policy"); got == want {
		t.Fatalf("the server took the rule")
	}
	r := alice.pushDirect(dir, url, "--no-verify", "--atomic", url, "refs/secure/rsl:refs/secure/rsl", "refs/secure/policy:refs/secure/policy")
	if r.code == 0 {
		t.Fatalf("a rule covering dev, out of step with its entry, was applied on the server:\n%s", r)
	}
	for _, w := range []string{"refs/heads/dev", "no rule covered refs/heads/dev at some point since entry #", "vouches for " + bad[:12] + ": do not record it unreviewed", "record the ref at a reviewed commit first"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("the refusal of the rule does not say %q:\n%s", w, r)
		}
	}
	if strings.Contains(r.stderr, "record an intended change") {
		t.Errorf("the refusal tells alice to record mallory's commit:\n%s", r)
	}

	// alice reviews dev and records it (her entry, under the new rule);
	// the rule then judges every later move.
	alice.git(dir, "branch", "dev", "origin/dev")
	alice.secure(dir, "rsl", "record", "dev")
	r = alice.pushDirect(dir, url, "--no-verify", "--atomic", url, "dev", "refs/secure/rsl:refs/secure/rsl", "refs/secure/policy:refs/secure/policy")
	if r.code != 0 {
		t.Fatalf("the rule with dev recorded at the reviewed commit:\n%s", r)
	}
	if v := srv.admin.run(repo, "git", "secure", "verify"); v.code != 0 || !strings.Contains(v.stdout, "* refs/heads/dev") {
		t.Fatalf("the server with dev under the new rule:\n%s", v)
	}
	mallory.commit(mdir, "dev.txt", "after the rule\n")
	if r := mallory.pushDirect(mdir, url, "--no-verify", url, "dev"); r.code == 0 || !strings.Contains(r.stderr, "refs/heads/dev") {
		t.Fatalf("mallory's unrecorded move of dev after the rule must be refused:\n%s", r)
	}
}
