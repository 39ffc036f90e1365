package e2e

import (
	"testing"
)

// TestServerGuardsStagingAndUnknownMetadata: anyone with push access could
// delete the staged policy change (and the signatures collected on it),
// put another commit in its place, or create other refs/secure/* names
// that clients take for metadata; the server refuses all three, and the
// staged change stays. Nor may anyone create or grow it with anything but
// a staged change of the policy in force (one of an older policy, a commit
// on top of one, unrelated history).
func TestServerGuardsStagingAndUnknownMetadata(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("staging.git", true)
	alice := newUser(t, "alice")
	dir := benchRepo(t, alice, "one", url, true)
	mallory := newUser(t, "mallory")
	mdir := mallory.path("m")
	mallory.git(mallory.sb.Home, "clone", "-q", url, mdir)
	mallory.git(mdir, "fetch", "-q", "origin", "refs/secure/*:refs/secure/*")
	mallory.commit(mdir, "x.txt", "not a policy\n")
	// The slot only ever takes a staged change of the policy in force: one
	// made on an older policy, or a commit of unrelated history, can never
	// be applied and would only keep a real change from being shared.
	policy := mallory.rev(mdir, "refs/secure/policy")
	stale := mallory.git(mdir, "commit-tree", policy+"^{tree}", "-p", policy+"~1", "-m", "staged on an older policy")
	const notStaged = "refs/secure/policy-staging only takes a staged change of the policy in force"
	refuse := func(name, spec string, want ...string) {
		t.Helper()
		r := mallory.run(mdir, "git", "push", url, spec)
		if r.code == 0 || !containsAll(r.stderr, want...) {
			t.Errorf("%s: want a refusal saying %q:\n%s", name, want, r)
		}
	}
	refuse("create it with a change of an older policy", stale+":refs/secure/policy-staging",
		notStaged, "the new one ("+stale[:12]+") is not a staged change of the policy in force ("+policy[:12]+")")
	refuse("create it with unrelated history", "HEAD:refs/secure/policy-staging", notStaged, "is not a staged change of the policy in force")

	bob := newUser(t, "bob")
	alice.secure(dir, "policy", "add-person", "bob", "--key", bob.key.Public) // staged, not applied
	staged := alice.rev(dir, "refs/secure/policy-staging")
	if r := alice.pushDirect(dir, url, "--no-verify", url, "refs/secure/policy-staging:refs/secure/policy-staging"); r.code != 0 {
		t.Fatalf("alice's push of the staged change:\n%s", r)
	}
	mallory.git(mdir, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
	// A commit on top of the staged change extends it, but is no staged
	// change of the policy in force.
	grown := mallory.git(mdir, "commit-tree", staged+"^{tree}", "-p", staged, "-m", "on top")
	refuse("grow the staged change", grown+":refs/secure/policy-staging", notStaged, "the new one ("+grown[:12]+") is not a staged change")
	for _, tc := range []struct {
		name string
		spec string
		want string
	}{
		{"delete the staged change", ":refs/secure/policy-staging", "refs/secure/policy-staging cannot be deleted"},
		{"replace the staged change", "+HEAD:refs/secure/policy-staging", "refs/secure/policy-staging can only grow"},
		{"create another metadata name", "HEAD:refs/secure/anything", "refs/secure/anything is not a git-secure ref"},
	} {
		refuse(tc.name, tc.spec, tc.want)
	}
	refs := srv.admin.refs(repo)
	if refs["refs/secure/policy-staging"] != staged {
		t.Errorf("the server's staged change is %q, want alice's %s", refs["refs/secure/policy-staging"], staged)
	}
	if _, ok := refs["refs/secure/anything"]; ok {
		t.Errorf("refs/secure/anything was created on the server")
	}
}
