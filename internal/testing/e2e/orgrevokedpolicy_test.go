package e2e

import (
	"strconv"
	"strings"
	"testing"
)

// TestOrgRevokedKeySignsNoRepoPolicy: a key the organisation policy
// revokes signs no policy change of a repository that inherits it, as it
// signs no entry there. bob holds one of app1's two rules keys (threshold
// 1) when the organisation revokes his key: a change he applied alone
// before the revocation and pushes after it past git-remote-secure is
// refused by the server, and one he makes after it is refused by
// policy apply, both naming the organisation's revocation and what to do;
// it was accepted into the log and put in force. rita's change, signed
// by the other rules key, still applies and is accepted.
func TestOrgRevokedKeySignsNoRepoPolicy(t *testing.T) {
	f := newOrgFixture(t, true, nil, "app1")
	url := f.members["app1"]
	rd := f.clone(f.rita, "app1", "rita")
	f.rita.secure(rd, "trust", "add-rules-key", f.bob.key.Public)
	f.rita.secure(rd, "policy", "apply")
	f.rita.git(rd, "push", "-q", "origin", "main")

	// bob's change, applied alone with his rules key before the
	// revocation, kept in his clone.
	early := f.clone(f.bob, "app1", "bob-early")
	f.bob.secure(early, "policy", "add-person", "carol", "--key", f.olga.key.Public)
	f.bob.secure(early, "policy", "apply")

	n, _ := strconv.Atoi(strings.TrimSpace(f.olga.git(f.orgDir, "rev-list", "--count", "refs/secure/rsl")))
	f.olga.secure(f.orgDir, "trust", "revoke-key", f.bob.key.Public, "--from-entry", strconv.Itoa(n+1))
	f.olga.secure(f.orgDir, "policy", "apply")
	f.olga.git(f.orgDir, "push", "-q", "origin", "main")
	revokes := "the organisation policy version " + strconv.Itoa(n+1) + " revokes " + f.bob.fingerprint() + ", which signed it"
	what := "a key the organisation revoked signs no policy change of a repository that inherits its policy"

	r := f.bob.pushDirect(early, url, "--no-verify", "--atomic", url, "refs/secure/policy:refs/secure/policy", "refs/secure/rsl:refs/secure/rsl")
	if r.code == 0 || !hasAll(r.stderr, "rules: 0 of 1 signatures (threshold 1); not yet signed by: ", f.bob.fingerprint()+" (revoked)", revokes, what, "git secure trust remove-rules-key") {
		t.Fatalf("the server took bob's policy change signed only by his revoked key:\n%s", r)
	}

	late := f.clone(f.bob, "app1", "bob-late")
	f.bob.secure(late, "policy", "add-person", "carol", "--key", f.olga.key.Public)
	r = f.bob.run(late, "git", "secure", "policy", "apply")
	if r.code == 0 || !hasAll(r.stderr, revokes, what) {
		t.Fatalf("policy apply of bob's change signed only by his revoked key:\n%s", r)
	}

	f.rita.git(rd, "pull", "-q")
	f.rita.secure(rd, "policy", "add-person", "dave", "--key", f.olga.key.Public)
	if r := f.rita.run(rd, "git", "secure", "policy", "apply"); r.code != 0 {
		t.Fatalf("rita's change, signed by the other rules key:\n%s", r)
	}
	if r := f.rita.run(rd, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("rita's push of her change:\n%s", r)
	}
	if r := f.alice.run(f.clone(f.alice, "app1", "alice"), "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("verify after rita's change:\n%s", r)
	}
}
