package gitrepo

import (
	"path/filepath"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// LocalConfig reads the repository's own file only: a key the user's
// global configuration sets (git secure hooks install --global) is not
// the repository's.
func TestLocalConfig(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 1)
	s.Git(dir, "config", "--global", "remote.origin.vcs", "secure")
	s.Git(dir, "config", "--global", "secure.hooksInstalled", "true")
	s.Git(dir, "config", "secure.hooksInstalled", "local")
	g, err := OpenGitDir(filepath.Join(dir, ".git"), dir, inProcessEnv(s))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		key, want string
		ok        bool
	}{
		{"remote.origin.vcs", "", false},
		{"secure.hooksInstalled", "local", true},
		{"no.such", "", false},
	}
	for _, c := range cases {
		got, ok, err := g.LocalConfig(c.key)
		if err != nil || got != c.want || ok != c.ok {
			t.Errorf("LocalConfig(%q) = %q, %v, %v; want %q, %v", c.key, got, ok, err, c.want, c.ok)
		}
	}
	if v, ok, _ := g.Config("remote.origin.vcs"); !ok || v != "secure" {
		t.Errorf("Config(remote.origin.vcs) = %q, %v: the global value should be seen there", v, ok)
	}
	if _, _, err := g.LocalConfig("-x"); err == nil {
		t.Error("LocalConfig accepted an invalid key")
	}
}
