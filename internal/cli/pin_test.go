package cli

import (
	"strings"
	"testing"
)

// TestCLIPinnedRoot: with the root of trust pinned (flag or git config),
// a log no root version of which the pinned keys signed fails; the right
// pin passes, and a checkpoint made without the pin is not reused under it.
func TestCLIPinnedRoot(t *testing.T) {
	h := NewCLIHarness(t)
	h.Want(0, "init", "--key", h.Priv("alice"), "--no-hooks")
	h.Want(0, "verify") // a checkpoint without a pin
	h.Want(0, "verify", "--root-key", h.FP("alice"))
	r := h.Want(1, "verify", "--root-key", h.FP("bob"))
	if !strings.Contains(r.Stderr, "root of trust is not the pinned one") || !strings.Contains(r.Stderr, "its root keys were "+h.FP("alice")) {
		t.Fatalf("want the log refused as signed by no pinned root key, naming its root key:\n%s", r)
	}
	h.Git("config", "secure.rootKeys", h.FP("bob")+" "+h.FP("carol"))
	r = h.Want(1, "verify")
	if !strings.Contains(r.Stderr, "root of trust is not the pinned one") {
		t.Fatalf("git config secure.rootKeys is not applied:\n%s", r)
	}
	// alice and bob pinned, one signature enough: alice's root anchors it.
	h.Git("config", "secure.rootKeys", h.FP("alice")+" "+h.FP("bob"))
	h.Want(1, "verify")
	h.Git("config", "secure.rootThreshold", "1")
	h.Want(0, "verify")
	h.Git("config", "secure.rootThreshold", "one")
	r = h.Want(2, "verify")
	if !strings.Contains(r.Stderr, "secure.rootThreshold") {
		t.Fatalf("a threshold that is not a number must be a usage error naming the key:\n%s", r)
	}
	h.Git("config", "secure.rootThreshold", "3")
	r = h.Want(2, "verify")
	if !strings.Contains(r.Stderr, "root key threshold 3 with 2 pinned root key(s)") {
		t.Fatalf("a threshold above the pinned keys must be a usage error:\n%s", r)
	}
	h.Git("config", "--unset", "secure.rootThreshold")
	h.Git("config", "secure.rootKeys", h.FP("alice"))
	r = h.Want(0, "verify", "--json")
	if !strings.Contains(r.Stdout, `"pin": "current"`) {
		t.Fatalf("verify --json must say the pin anchors the root in force:\n%s", r)
	}
}

// TestCLICloneUsage: a pin that cannot be met, or missing arguments, are
// usage errors before anything is cloned.
func TestCLICloneUsage(t *testing.T) {
	h := NewCLIHarness(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"clone"}, "clone takes URL"},
		{[]string{"clone", h.Dir, "x", "--root-key", "notafingerprint"}, "is not an SSH fingerprint"},
		{[]string{"clone", h.Dir, "x", "--root-key", h.FP("alice"), "--root-threshold", "2"}, "threshold 2 with 1 pinned root key(s)"},
		{[]string{"clone", h.Dir, "x", "--root-threshold", "1"}, "without pinned root keys"},
	} {
		r := h.Want(2, tc.args...)
		if !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("want %q:\n%s", tc.want, r)
		}
	}
}
