package e2e

import (
	"testing"
)

// TestPlainPushRefusalSaysWhatToDo: a pusher with plain git only (no
// git-secure) who moves a protected branch or creates a protected tag is
// refused with a hint for them: the push lacks a signed entry and a push
// through git-secure records one. Before, the server repeated verify's
// hint for a clone ("git secure rsl record ...; otherwise restore the ref"),
// which a plain-git pusher cannot follow and need not (nothing was kept).
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
	bob.commit(bdir, "fix.txt", "fix\n")
	bob.git(bdir, "tag", "v9")
	for _, ref := range []string{"main", "v9"} {
		full := map[string]string{"main": "refs/heads/main", "v9": "refs/tags/v9"}[ref]
		r := bob.run(bdir, "git", "push", "origin", ref)
		if r.code == 0 {
			t.Fatalf("a plain push of %s was accepted:\n%s", full, r)
		}
		for _, w := range []string{
			"rejected: " + full + ": ref does not match the log",
			"hint: this push changes " + full + " without a signed entry in the log; a push through git-secure records and signs one (see below)",
			"Install git-secure (make install from its source)",
		} {
			if !contains(r.stderr, w) {
				t.Errorf("the refusal of %s does not say %q:\n%s", full, w, r)
			}
		}
		for _, w := range []string{"git secure rsl record", "restore the ref", "otherwise delete it"} {
			if contains(r.stderr, w) {
				t.Errorf("the refusal of %s tells a plain-git pusher %q:\n%s", full, w, r)
			}
		}
	}
}
