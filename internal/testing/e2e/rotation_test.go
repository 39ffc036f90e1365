package e2e

import (
	"strings"
	"testing"
)

// TestRotatedKeyPushesBeforeFetch: bob rotates his key. alice adds the new
// key to his person and pushes the policy; bob switches user.signingkey to
// it and pushes at once, without fetching first (as the rotation's own
// steps read). His clone's helper answers git's listing from what it saw
// at its last contact, which predates the new policy: the push must bring
// that policy in before judging his key, not refuse his protected push
// with "your key is not in the policy" (it is, on the remote), nor push
// his review branch without an entry and without a word.
func TestRotatedKeyPushesBeforeFetch(t *testing.T) {
	d := newPendingDay(t)
	a, b := d.alice, d.bob
	newKey := b.sb.NewKey("bob-new", "ed25519")
	a.secure(d.aliceDir, "policy", "add-key", "bob", "--key", newKey.Public)
	a.secure(d.aliceDir, "policy", "apply")
	a.git(d.aliceDir, "push", "-q")
	b.git(d.bobD, "config", "user.signingkey", newKey.Private)

	b.git(d.bobD, "checkout", "-q", "-b", "review/y")
	b.commit(d.bobD, "y.txt", "y\n")
	r := b.run(d.bobD, "git", "push", "origin", "review/y")
	if r.code != 0 || !strings.Contains(r.stderr, "recorded refs/heads/review/y") {
		t.Errorf("bob's push of a review branch with his new key, before any fetch, records no entry:\n%s", r)
	}

	b.git(d.bobD, "checkout", "-q", "main")
	b.git(d.bobD, "merge", "-q", "--ff-only", "review/y")
	r = b.run(d.bobD, "git", "push", "origin", "main")
	if r.code == 0 {
		t.Fatalf("bob's push of main with 1 of 2 was accepted:\n%s", r)
	}
	if strings.Contains(r.stderr, "is not in the policy") || !strings.Contains(r.stderr, "1 more needed") {
		t.Errorf("bob's push of main with his new key is refused for his key, not for the missing approval:\n%s", r)
	}
	if strings.Contains(r.stderr, "([remote rejected]") || !strings.Contains(r.stderr, "main -> main (pre-receive hook declined)") {
		t.Errorf("the refusal of main does not read as git's own ([remote rejected] twice):\n%s", r)
	}
}

// TestKeyNotInPolicySays: a person whose key the policy does not list
// (never added, or a rotation not applied yet) pushes. A protected ref is
// refused with what to do next; an unprotected one goes without an entry,
// and the push says so instead of leaving no trace of why no entry was
// recorded.
func TestKeyNotInPolicySays(t *testing.T) {
	d := newPendingDay(t)
	b := d.bob
	stray := b.sb.NewKey("bob-stray", "ed25519")
	b.git(d.bobD, "config", "user.signingkey", stray.Private)

	b.git(d.bobD, "checkout", "-q", "-b", "review/z")
	b.commit(d.bobD, "z.txt", "z\n")
	r := b.run(d.bobD, "git", "push", "origin", "review/z")
	if r.code != 0 || !strings.Contains(r.stderr, "not in the policy") || !strings.Contains(r.stderr, "without a log entry") {
		t.Errorf("a push of an unprotected branch with a key outside the policy does not say it records no entry:\n%s", r)
	}

	b.git(d.bobD, "checkout", "-q", "main")
	b.git(d.bobD, "merge", "-q", "--ff-only", "review/z")
	r = b.run(d.bobD, "git", "push", "origin", "main")
	if r.code == 0 || !strings.Contains(r.stderr, "is not in the policy") || !strings.Contains(r.stderr, "git secure policy add-key") {
		t.Errorf("a push of main with a key outside the policy does not say how to get it added:\n%s", r)
	}
}
