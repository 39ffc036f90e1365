package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// Issue 15.7: opening no repository, or a SHA-256 one, is one clear
// sentence: no git command line, no "gitrepo:" internals, and a SHA-256
// repository is not called "not a git repository".
func TestOpenErrorsSayWhat(t *testing.T) {
	h := NewCLIHarness(t)
	sha256 := filepath.Join(h.S.Home, "sha256")
	h.S.Git(h.S.Home, "init", "-q", "--object-format=sha256", sha256)
	plain := filepath.Join(h.S.Home, "plain")
	h.S.Run(h.S.Home, "mkdir", plain)
	tests := []struct {
		name, dir string
		want      string
	}{
		{"no repository", plain, "not in a git repository: " + plain + " is not inside one"},
		{"sha256", sha256, "SHA-256 repositories are not supported yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.Dir = tt.dir
			r := h.Want(2, "verify")
			if !strings.Contains(r.Stderr, tt.want) {
				t.Errorf("want %q:\n%s", tt.want, r)
			}
			for _, leak := range []string{"gitrepo", "rev-parse", "exit status"} {
				if strings.Contains(r.Stderr, leak) {
					t.Errorf("the error leaks %q:\n%s", leak, r)
				}
			}
			if tt.name == "sha256" && strings.Contains(r.Stderr, "not in a git repository") {
				t.Errorf("a SHA-256 repository is called no repository:\n%s", r)
			}
		})
	}
}
