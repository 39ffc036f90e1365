package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// Found as a stranger on a mirror of spf13/cobra: every verify printed one
// warning per branch no rule protects that had no entry (dependabot and
// contributors' branches, pushed with plain git as the README allows),
// eight lines there, hundreds on a busy project. The first few are named;
// the rest are counted in one line, and --json still names each.
func TestVerifySumsUpFreeRefsWithoutEntries(t *testing.T) {
	h := NewCLIHarness(t)
	h.Want(0, "init", "--no-hooks", "--key", h.Priv("alice"))
	h.Want(0, "policy", "add-person", "alice", "--key", h.Pub("alice"))
	h.Want(0, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice")
	h.Want(0, "policy", "apply", "--key", h.Priv("alice"))
	bare := filepath.Join(h.S.Home, "server.git")
	h.Git("clone", "-q", "--mirror", h.Dir, bare)
	h.Dir = bare
	for _, b := range []string{"f1", "f2", "f3", "f4", "f5", "f6"} {
		h.Git("branch", b, "main")
	}
	r := h.Want(0, "verify")
	if got := strings.Count(r.Stderr, "but the log has no entry for it"); got != 3 {
		t.Errorf("verify names %d free refs one by one, want 3:\n%s", got, r)
	}
	if !strings.Contains(r.Stderr, "warning: and 3 more refs that no rule protects have no entry in the log") {
		t.Errorf("verify does not count the other free refs:\n%s", r)
	}
	r = h.Want(0, "verify", "--json")
	for _, b := range []string{"f1", "f6"} {
		if !strings.Contains(r.Stdout, "refs/heads/"+b+": ") {
			t.Errorf("verify --json does not name refs/heads/%s:\n%s", b, r)
		}
	}
	// A protected ref without an entry still fails, named.
	h.Git("update-ref", "refs/heads/main", "main~1")
	r = h.Want(1, "verify")
	if !strings.Contains(r.Stderr, "refs/heads/main") {
		t.Errorf("verify does not name protected main:\n%s", r)
	}
}
