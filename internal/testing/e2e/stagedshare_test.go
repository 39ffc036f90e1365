package e2e

import (
	"strings"
	"testing"
)

// TestStagedChangeShared: a staged policy change travels through an
// enforcing server between co-signers, and a pusher without a key cannot
// block that. Every staged commit's parent is the policy it changes, so a
// co-signer's signed version never descends from the one they signed; the
// server used to let refs/secure/policy-staging only grow, so the first
// staged change pushed stayed for ever: bob's signature, and every later
// change, never left the clone ("Everything up-to-date"), and a staged
// change planted by anyone blocked the workflow for good. Now the server
// takes a replacement that loses no signature (an obsolete change, an
// unsigned one, the same change with more signatures) and refuses one
// that would drop co-signatures, naming them.
func TestStagedChangeShared(t *testing.T) {
	srv := startServer(t, trHTTP)
	repo, url := srv.newRepo("share.git", true)
	alice, bob, mallory := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "mallory")
	dir := benchRepo(t, alice, "one", url, true)

	// A planted, unsigned staged change on the current policy does not
	// block anyone: alice's signed change replaces it.
	mdir := mallory.path("m")
	mallory.git(mallory.sb.Home, "clone", "-q", url, mdir)
	mallory.configure(mdir)
	mallory.git(mdir, "fetch", "-q", "origin", "refs/secure/*:refs/secure/*")
	mallory.secure(mdir, "policy", "add-person", "mallory", "--key", mallory.key.Public)
	if r := mallory.run(mdir, "git", "push", url, "refs/secure/policy-staging:refs/secure/policy-staging"); r.code != 0 {
		t.Fatalf("mallory plants a staged change:\n%s", r)
	}
	alice.git(dir, "fetch", "-q")
	alice.secure(dir, "policy", "discard")
	alice.secure(dir, "trust", "add-rules-key", bob.key.Public)
	alice.secure(dir, "trust", "set-rules-threshold", "2")
	if r := alice.run(dir, "git", "secure", "policy", "apply"); r.code != 1 || !strings.Contains(r.stderr, "does not have enough signatures yet") {
		t.Fatalf("apply with bob's signature missing: want it pending:\n%s", r)
	}
	r := alice.run(dir, "git", "push")
	if r.code != 0 || !strings.Contains(r.stderr, "sent the staged policy") {
		t.Fatalf("alice's push of her staged change over mallory's unsigned one:\n%s", r)
	}
	proposal := alice.rev(dir, "refs/secure/policy-staging")
	if got := srv.admin.rev(repo, "refs/secure/policy-staging"); got != proposal {
		t.Fatalf("the server's staged change is %s, want alice's %s", got, proposal)
	}

	// Now it carries alice's signature: mallory cannot put another change
	// in its place.
	mallory.git(mdir, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
	mallory.secure(mdir, "policy", "discard")
	mallory.secure(mdir, "policy", "add-person", "mallory", "--key", mallory.key.Public)
	r = mallory.run(mdir, "git", "push", url, "+refs/secure/policy-staging:refs/secure/policy-staging")
	if r.code == 0 || !containsAll(r.stderr, "refs/secure/policy-staging can only grow, or be replaced", "is signed by SHA256:", "the new one is not signed by them") {
		t.Errorf("mallory replacing alice's signed staged change: want a refusal naming the signatures:\n%s", r)
	}

	// bob reviews and signs it; his version replaces alice's on the
	// server, alice's fetch takes it, and her apply puts it in force.
	bdir := bob.path("b")
	bob.secure(bob.sb.Home, "clone", url, bdir)
	bob.configure(bdir)
	bob.secure(bdir, "policy", "sign", "--staged", proposal[:12])
	// (bob is a rules key, not a person: a plain git push stops at main,
	// which he may not move; he sends the staged change by name.)
	if r := bob.run(bdir, "git", "push", "origin", "+refs/secure/policy-staging:refs/secure/policy-staging"); r.code != 0 {
		t.Fatalf("bob's push of his signature:\n%s", r)
	}
	alice.git(dir, "fetch", "-q")
	if got, want := alice.rev(dir, "refs/secure/policy-staging"), srv.admin.rev(repo, "refs/secure/policy-staging"); got != want {
		t.Fatalf("alice's fetch did not take bob's signed version (%s, server %s)", got, want)
	}
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q")
	srv.admin.secure(repo, "verify")

	// The applied change stays on the server (it is never deleted); the
	// next change replaces it, as it is obsolete.
	carol := newUser(t, "carol")
	alice.secure(dir, "policy", "add-person", "carol", "--key", carol.key.Public)
	if r := alice.run(dir, "git", "push"); r.code != 0 || !strings.Contains(r.stderr, "sent the staged policy") {
		t.Fatalf("alice's push of a second staged change:\n%s", r)
	}
	if got, want := srv.admin.rev(repo, "refs/secure/policy-staging"), alice.rev(dir, "refs/secure/policy-staging"); got != want {
		t.Fatalf("the server's staged change is %s, want alice's second one %s", got, want)
	}

	// Signed by alice alone, it gives way to her own next signed change.
	alice.secure(dir, "policy", "sign")
	alice.git(dir, "push", "-q")
	alice.secure(dir, "policy", "discard")
	dave := newUser(t, "dave")
	alice.secure(dir, "policy", "add-person", "dave", "--key", dave.key.Public)
	alice.secure(dir, "policy", "sign")
	if r := alice.run(dir, "git", "push"); r.code != 0 || !strings.Contains(r.stderr, "sent the staged policy") {
		t.Fatalf("alice's push of a new signed change over her own signed one:\n%s", r)
	}
	if got, want := srv.admin.rev(repo, "refs/secure/policy-staging"), alice.rev(dir, "refs/secure/policy-staging"); got != want {
		t.Fatalf("the server's staged change is %s, want alice's third one %s", got, want)
	}
}

// TestStagedChangeSelfTrustedPlant: only signatures by keys the policy in
// force trusts with its metadata are signatures a replacement of the staged
// change must keep. mallory (push access, no key in the policy) stages a
// change that makes her key a rules key and signs it with that key: her
// own change is the only thing that trusts it. The server (and alice's
// helper) counted that signature, so every real change was refused as
// dropping it, and alice's push said nothing had gone wrong. Now alice's
// signed change replaces the plant, bob's co-signature on it travels and
// applies, and mallory cannot plant hers again over alice's signed change;
// carol, whose own change the helper does not send over alice's, is told
// so by a failed push, not "ok".
func TestStagedChangeSelfTrustedPlant(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("plant.git", true)
	alice, bob, mallory := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "mallory")
	dir := benchRepo(t, alice, "one", url, true)

	mdir := mallory.path("m")
	mallory.git(mallory.sb.Home, "clone", "-q", url, mdir)
	mallory.configure(mdir)
	mallory.git(mdir, "fetch", "-q", "origin", "refs/secure/*:refs/secure/*")
	plant := func(force string) result {
		mallory.secure(mdir, "trust", "add-rules-key", mallory.key.Public)
		mallory.secure(mdir, "policy", "sign")
		return mallory.run(mdir, "git", "push", url, force+"refs/secure/policy-staging:refs/secure/policy-staging")
	}
	if r := plant(""); r.code != 0 {
		t.Fatalf("mallory plants a self-signed staged change:\n%s", r)
	}
	planted := srv.admin.rev(repo, "refs/secure/policy-staging")

	alice.git(dir, "fetch", "-q")
	alice.secure(dir, "policy", "discard")
	alice.secure(dir, "trust", "add-rules-key", bob.key.Public)
	alice.secure(dir, "trust", "set-rules-threshold", "2")
	if r := alice.run(dir, "git", "secure", "policy", "apply"); r.code != 1 || !strings.Contains(r.stderr, "does not have enough signatures yet") {
		t.Fatalf("apply with bob's signature missing: want it pending:\n%s", r)
	}
	proposal := alice.rev(dir, "refs/secure/policy-staging")
	r := alice.run(dir, "git", "push")
	if r.code != 0 || !strings.Contains(r.stderr, "sent the staged policy") {
		t.Fatalf("alice's push of her signed staged change over mallory's self-signed plant:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/secure/policy-staging"); got != proposal || got == planted {
		t.Fatalf("the server's staged change is %s, want alice's %s (mallory's was %s)", got, proposal, planted)
	}

	// alice's signature is one the policy in force trusts: mallory's
	// self-signed plant cannot take its place.
	mallory.git(mdir, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
	mallory.secure(mdir, "policy", "discard")
	if r := plant("+"); r.code == 0 || !containsAll(r.stderr, "refs/secure/policy-staging can only grow, or be replaced", "is signed by "+alice.fingerprint(), "the new one is not signed by them") {
		t.Fatalf("mallory replacing alice's signed staged change with her self-signed one: want a refusal naming alice's signature:\n%s", r)
	}

	// carol's own change cannot replace it either: her push of the staged
	// change by name fails and says why, instead of "ok" for a change the
	// helper left in her clone.
	carol := newUser(t, "carol")
	cdir := carol.path("c")
	carol.secure(carol.sb.Home, "clone", url, cdir)
	carol.configure(cdir)
	carol.secure(cdir, "policy", "discard")
	carol.secure(cdir, "policy", "add-person", "carol", "--key", carol.key.Public)
	r = carol.run(cdir, "git", "push", "origin", "+refs/secure/policy-staging:refs/secure/policy-staging")
	if r.code == 0 || !containsAll(r.stderr, "refs/secure/policy-staging", "not sent: origin keeps its staged change", "is signed by "+alice.fingerprint(), "git secure policy sign --staged") {
		t.Fatalf("carol's push of her staged change by name over alice's signed one: want a failure saying why:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/secure/policy-staging"); got != proposal {
		t.Fatalf("the server's staged change is %s, want alice's %s", got, proposal)
	}

	bdir := bob.path("b")
	bob.secure(bob.sb.Home, "clone", url, bdir)
	bob.configure(bdir)
	bob.secure(bdir, "policy", "sign", "--staged", proposal[:12])
	if r := bob.run(bdir, "git", "push", "origin", "+refs/secure/policy-staging:refs/secure/policy-staging"); r.code != 0 {
		t.Fatalf("bob's push of his signature:\n%s", r)
	}
	alice.git(dir, "fetch", "-q")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q")
	srv.admin.secure(repo, "verify")
}
