package gitrepo

import (
	"path/filepath"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// openPlain opens a sandbox repository as hooks and the helper do
// (OpenGitDir), with the in-process readers on.
func openPlain(t *testing.T, s *testutil.Sandbox, dir string) *Repo {
	t.Helper()
	g, err := OpenGitDir(filepath.Join(dir, ".git"), dir, inProcessEnv(s))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// Committer takes the identity from git's sources in git's order, and
// leaves to git what git would work out or rewrite itself.
func TestCommitter(t *testing.T) {
	r := &Repo{}
	cfg := []ConfigEntry{{Key: "user.name", Value: "User"}, {Key: "user.email", Value: "user@example.com"}}
	cases := []struct {
		env         []string
		cfg         []ConfigEntry
		name, email string // "" for not ok
	}{
		{nil, cfg, "User", "user@example.com"},
		{nil, append(cfg, ConfigEntry{Key: "committer.name", Value: "Committer"}), "Committer", "user@example.com"},
		{[]string{"GIT_COMMITTER_NAME=Env", "GIT_COMMITTER_EMAIL=env@example.com"}, cfg, "Env", "env@example.com"},
		{[]string{"GIT_COMMITTER_NAME="}, cfg, "", ""},
		{[]string{"GIT_COMMITTER_DATE=1700000000 +0000"}, cfg, "", ""},
		{nil, []ConfigEntry{{Key: "user.name", Value: "Trailing."}, {Key: "user.email", Value: "u@example.com"}}, "", ""},
		{nil, []ConfigEntry{{Key: "user.name", Value: "No Email"}}, "", ""},
	}
	for i, c := range cases {
		r.env = c.env
		name, email, ok := r.committer(c.cfg)
		if ok != (c.name != "") || name != c.name || email != c.email {
			t.Errorf("case %d: committer() = %q, %q, %v; want %q, %q", i, name, email, ok, c.name, c.email)
		}
	}
}
