package hooks

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	hookscripts "github.com/git-secure/git-secure/hooks"
)

// Every rendered script is valid sh with no placeholder left, and only the
// hooks git-secure handles start the binary.
func TestScripts(t *testing.T) {
	placeholder := regexp.MustCompile(`@[A-Z]+@`)
	dir := t.TempDir()
	for _, tc := range []struct {
		name             string
		gitDir, chainDir string
		guard            bool
	}{
		{"repository", "/repo/.git", "/repo/.git/hooks", false},
		{"repository, quoted paths", "/it's here/.git", "/it's here/.husky", false},
		{"repository with guard", "/repo/.git", "/repo/.git/hooks", true},
		{"user", "", "", false},
		{"user with guard", "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, name := range Names {
				s := Script(name, "/usr/local/bin/git-secure", tc.gitDir, tc.chainDir, tc.guard)
				if m := placeholder.FindString(s); m != "" {
					t.Fatalf("%s: placeholder %s left:\n%s", name, m, s)
				}
				if !strings.HasPrefix(s, "#!/bin/sh\n"+marker) {
					t.Fatalf("%s: no marker line:\n%s", name, s)
				}
				runsBinary := strings.Contains(s, `"$b" hook `)
				wantBinary := Handled(name) || (tc.guard && name == hookscripts.Guard)
				if runsBinary != wantBinary {
					t.Errorf("%s: starts git-secure = %v, want %v", name, runsBinary, wantBinary)
				}
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command("sh", "-n", p).CombinedOutput(); err != nil {
					t.Errorf("%s: sh -n: %v\n%s\n%s", name, err, out, s)
				}
			}
		})
	}
	for _, name := range hookscripts.ServerHooks {
		server := hookscripts.Render(hookscripts.ServerTemplate(name), map[string]string{"BINARY": shellQuote("/x/git-secure")})
		if !strings.Contains(server, "hook "+name) || !strings.Contains(server, marker) || placeholder.MatchString(server) {
			t.Errorf("server hook %s:\n%s", name, server)
		}
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(server), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("sh", "-n", p).CombinedOutput(); err != nil {
			t.Errorf("server %s: sh -n: %v\n%s", name, err, out)
		}
	}
}
