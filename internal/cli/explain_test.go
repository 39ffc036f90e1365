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
