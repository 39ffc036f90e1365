package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCLIVerifyRemote: which state git secure verify judges, and how
// --remote picks it.
func TestCLIVerifyRemote(t *testing.T) {
	h := NewCLIHarness(t)
	h.Setup()
	judged := func(r CLIResult) string {
		t.Helper()
		var v struct {
			Judged string `json:"judged"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
			t.Fatalf("verify --json: %v\n%s", err, r)
		}
		return v.Judged
	}
	if got := judged(h.Want(0, "verify", "--json")); got != "local refs (no remote)" {
		t.Errorf("judged without a remote = %q", got)
	}
	if r := h.Want(2, "verify", "--remote", "nope"); !strings.Contains(r.Stderr, `no remote "nope"`) {
		t.Errorf("verify --remote nope:\n%s", r)
	}
	h.Git("remote", "add", "a", h.Dir)
	h.Git("remote", "add", "b", h.Dir)
	if r := h.Want(2, "verify"); !strings.Contains(r.Stderr, "several remotes (a, b)") || !strings.Contains(r.Stderr, "--remote") {
		t.Errorf("verify with two remotes and no origin:\n%s", r)
	}
	// Not fetched yet: the remote's main is not known, which fails.
	if r := h.Want(1, "verify", "--remote", "a"); !strings.Contains(r.Stderr, "a does not serve it") {
		t.Errorf("verify --remote a before a fetch:\n%s", r)
	}
	h.Git("fetch", "-q", "a")
	if got := judged(h.Want(0, "verify", "--remote", "a", "--json")); got != "remote a" {
		t.Errorf("judged with --remote a = %q", got)
	}
	// The checked-out branch's upstream is the default.
	h.Git("config", "branch.main.remote", "a")
	if got := judged(h.Want(0, "verify", "--json")); got != "remote a" {
		t.Errorf("judged with main's upstream a = %q", got)
	}
	// A bare repository is judged by its own refs.
	bare := t.TempDir() + "/bare.git"
	h.Git("clone", "-q", "--mirror", h.Dir, bare)
	h.Dir = bare
	if r := h.Want(2, "verify", "--remote", "a"); !strings.Contains(r.Stderr, "bare repository") {
		t.Errorf("verify --remote in a bare repository:\n%s", r)
	}
	if got := judged(h.Want(0, "verify", "--json")); got != "bare repository refs" {
		t.Errorf("judged in a bare repository = %q", got)
	}
}
