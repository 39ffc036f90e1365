package cli

import (
	"strings"
	"testing"
)

// TestCLIPinnedRoot: with the root of trust pinned (flag or git config),
// a log whose first policy has other root keys fails; the right pin passes,
// and a checkpoint made without the pin is not reused under it.
func TestCLIPinnedRoot(t *testing.T) {
	h := NewCLIHarness(t)
	h.Want(0, "init", "--key", h.Priv("alice"), "--no-hooks")
	h.Want(0, "verify") // a checkpoint without a pin
	h.Want(0, "verify", "--root-key", h.FP("alice"))
	r := h.Want(1, "verify", "--root-key", h.FP("bob"))
	if !strings.Contains(r.Stderr, "not pinned") || !strings.Contains(r.Stderr, "entry #1") {
		t.Fatalf("want the first entry's root refused as not pinned:\n%s", r)
	}
	h.Git("config", "secure.rootKeys", h.FP("bob")+" "+h.FP("carol"))
	r = h.Want(1, "verify")
	if !strings.Contains(r.Stderr, "not pinned") {
		t.Fatalf("git config secure.rootKeys is not applied:\n%s", r)
	}
	h.Git("config", "secure.rootKeys", h.FP("alice"))
	h.Want(0, "verify")
}
