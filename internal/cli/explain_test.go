package cli

import (
	"strings"
	"testing"
)

// TestExplainJudgesRecordedEntryUnderItsPolicy: right after init and a
// threshold-2 rule on main, main's latest entry (recorded by init, before
// the rule) satisfied the policy of its time; explain must say so, as
// verify does, instead of asking for an approval of the first commit.
func TestExplainJudgesRecordedEntryUnderItsPolicy(t *testing.T) {
	h := NewCLIHarness(t)
	h.Want(0, "init", "--no-hooks", "--key", h.Priv("alice"))
	for _, name := range []string{"alice", "bob"} {
		h.Want(0, "policy", "add-person", name, "--key", h.Pub(name))
	}
	h.Want(0, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob", "--threshold", "2")
	h.Want(0, "policy", "apply", "--key", h.Priv("alice"))
	h.Want(0, "verify")
	r := h.Want(0, "explain", "main")
	if !strings.Contains(r.Stdout, "under the policy in force when it was recorded") {
		t.Fatalf("explain does not say which policy judged the entry:\n%s", r.Stdout)
	}
	if strings.Contains(r.Stdout+r.Stderr, "attest approve") {
		t.Fatalf("explain asks for an approval of an entry verify accepts:\n%s%s", r.Stdout, r.Stderr)
	}
}

// Found as a stranger: explain of a tag that existed only in someone
// else's clone explained an update from nothing to nothing, said
// "signer: (no person: pass --key, or set user.signingkey)" to a user whose
// user.signingkey was set, and offered "attest approve ... --to 0000...".
// It now lists the rules that would apply and says there is no update to
// judge (exit 0); and a pending update whose key is no person in the
// policy names that key.
func TestExplainMissingRefAndUnknownKey(t *testing.T) {
	h := NewCLIHarness(t)
	h.Want(0, "init", "--no-hooks", "--key", h.Priv("alice"))
	h.Want(0, "policy", "add-person", "alice", "--key", h.Pub("alice"))
	h.Want(0, "policy", "add-rule", "releases", "--ref", "refs/tags/v*", "--allow", "alice")
	h.Want(0, "policy", "apply", "--key", h.Priv("alice"))
	r := h.Want(0, "explain", "refs/tags/v9.0")
	for _, want := range []string{"refs/tags/v9.0: not here and not in the log: fetch it (git fetch)", "rule releases ref refs/tags/v*: 1 of alice"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("explain of a missing ref does not say %q:\n%s", want, r)
		}
	}
	if strings.Contains(r.Stdout+r.Stderr, "attest approve") || strings.Contains(r.Stdout, "signer:") {
		t.Errorf("explain of a missing ref judges an update:\n%s", r)
	}
	r = h.Want(0, "explain", "refs/tags/v9.0", "--json")
	if !strings.Contains(r.Stdout, `"missing": true`) || !strings.Contains(r.Stdout, `"name": "releases"`) {
		t.Errorf("explain --json of a missing ref:\n%s", r)
	}
	h.Git("tag", "v9.0")
	r = h.Want(1, "explain", "refs/tags/v9.0", "--key", h.Priv("bob"))
	if !strings.Contains(r.Stdout, "signer: (your key "+h.FP("bob")+" is no person in the policy") {
		t.Errorf("explain does not name the key that is no person:\n%s", r)
	}
	r = h.Want(0, "explain", "refs/tags/v9.0", "--key", h.Priv("alice"), "--json")
	if !strings.Contains(r.Stdout, `"signer": "alice"`) || strings.Contains(r.Stdout, "signerKey") {
		t.Errorf("explain --json of alice's pending tag:\n%s", r)
	}
}
