package e2e

import (
	"strings"
	"testing"
)

// TestServerGuardsStagingAndUnknownMetadata: anyone with push access could
// delete the staged policy change (and the signatures collected on it),
// put another commit in its place, or create other refs/secure/* names
// that clients take for metadata; the server refuses all three, and the
// staged change stays.
func TestServerGuardsStagingAndUnknownMetadata(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("staging.git", true)
	alice := newUser(t, "alice")
	dir := benchRepo(t, alice, "one", url, true)
	bob := newUser(t, "bob")
	alice.secure(dir, "policy", "add-person", "bob", "--key", bob.key.Public) // staged, not applied
	staged := alice.rev(dir, "refs/secure/policy-staging")
	if r := alice.pushDirect(dir, url, "--no-verify", url, "refs/secure/policy-staging:refs/secure/policy-staging"); r.code != 0 {
		t.Fatalf("alice's push of the staged change:\n%s", r)
	}
	mallory := newUser(t, "mallory")
	mdir := mallory.path("m")
	mallory.git(mallory.sb.Home, "clone", "-q", url, mdir)
	mallory.commit(mdir, "x.txt", "not a policy\n")
	for _, tc := range []struct {
		name string
		spec string
		want string
	}{
		{"delete the staged change", ":refs/secure/policy-staging", "refs/secure/policy-staging cannot be deleted"},
		{"replace the staged change", "+HEAD:refs/secure/policy-staging", "refs/secure/policy-staging can only grow"},
		{"create another metadata name", "HEAD:refs/secure/anything", "refs/secure/anything is not a git-secure ref"},
	} {
		r := mallory.run(mdir, "git", "push", url, tc.spec)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: want a refusal saying %q:\n%s", tc.name, tc.want, r)
		}
	}
	refs := srv.admin.refs(repo)
	if refs["refs/secure/policy-staging"] != staged {
		t.Errorf("the server's staged change is %q, want alice's %s", refs["refs/secure/policy-staging"], staged)
	}
	if _, ok := refs["refs/secure/anything"]; ok {
		t.Errorf("refs/secure/anything was created on the server")
	}
}
