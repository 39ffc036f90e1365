package e2e

import (
	"strconv"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/rsl"
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
	if r.code == 0 || !containsAll(r.stderr, "rules: 0 of 1 signatures (threshold 1); not yet signed by: ", f.bob.fingerprint()+" (revoked)", revokes, what, "git secure trust remove-rules-key") {
		t.Fatalf("the server took bob's policy change signed only by his revoked key:\n%s", r)
	}

	late := f.clone(f.bob, "app1", "bob-late")
	f.bob.secure(late, "policy", "add-person", "carol", "--key", f.olga.key.Public)
	r = f.bob.run(late, "git", "secure", "policy", "apply")
	if r.code == 0 || !containsAll(r.stderr, revokes, what) {
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

// TestOrgRevokedKeyPushHint: the server's refusal of an entry signed by a
// key the organisation revoked says so and what to do. It said "an entry
// must be signed by a key the policy knows; an authorized person can
// skip a bad entry with git secure rsl skip": the key is known (revoked,
// not unknown), and the refused entry is not in the log. It names the
// key and whose it is, that the organisation revoked it and from which of
// its entries, what to do (sign with a current key, or have the
// organisation add one) and how to read the organisation policy, whose
// policy list then shows the revocation.
func TestOrgRevokedKeyPushHint(t *testing.T) {
	f := newOrgFixture(t, true, nil, "app1")
	url := f.members["app1"]
	d := f.clone(f.bob, "app1", "bob")
	n, _ := strconv.Atoi(strings.TrimSpace(f.olga.git(f.orgDir, "rev-list", "--count", "refs/secure/rsl")))
	f.olga.secure(f.orgDir, "trust", "revoke-key", f.bob.key.Public, "--from-entry", strconv.Itoa(n+1))
	f.olga.secure(f.orgDir, "policy", "apply")
	f.olga.git(f.orgDir, "push", "-q", "origin", "main")
	latest := rsl.OrgVersion{Number: uint64(n + 1), ID: hash(t, f.srv.admin.rev(f.orgPath, "refs/secure/rsl"))}

	old := f.bob.rev(d, "HEAD")
	c := f.bob.commit(d, "bob.txt", "1\n")
	tip := forge(t, f.bob, d, &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/main", Old: hash(t, old), New: hash(t, c), Org: &latest})
	r := f.bob.pushDirect(d, url, "--no-verify", "--atomic", url, "main", tip+":refs/secure/rsl")
	if r.code == 0 {
		t.Fatalf("the server took bob's entry signed with the key the organisation revoked:\n%s", r)
	}
	fp := f.bob.fingerprint()
	for _, want := range []string{
		"signed by " + fp + " (bob's key), a key the organisation policy version " + strconv.Itoa(n+1) + " revokes",
		"the organisation revoked it from its entry #" + strconv.Itoa(n+1) + " on",
		"hint: sign with a key of yours the policy still trusts (git config user.signingKey PATH.pub of that key) and push again through git-remote-secure",
		"the organisation adds one in its policy repository: git secure policy add-key bob --key NEW.pub",
		"the organisation policy and its revoked keys: git secure clone " + f.orgURL + " org-policy --root-key " + f.olga.fingerprint() + " && git -C org-policy secure policy list",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, r)
		}
	}
	if strings.Contains(r.stderr, "a key the policy knows") {
		t.Errorf("the refusal gives the unknown key's hint for a revoked key:\n%s", r)
	}
	// The command the hint gives shows the revocation.
	org := f.bob.path("org-policy")
	f.bob.secure(f.bob.sb.Home, "clone", "-q", f.orgURL, org, "--root-key", f.olga.fingerprint())
	if out := f.bob.secure(org, "policy", "list"); !strings.Contains(out, fp) {
		t.Errorf("policy list of the organisation policy does not show the revoked key %s:\n%s", fp, out)
	}
}
