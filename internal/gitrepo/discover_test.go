package gitrepo

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// Open finds a repository in-process (discover) only where git rev-parse
// finds the same git directory and work tree, and leaves every other
// layout to git: the answers compared with the fast path off.
func TestDiscoverMatchesRevParse(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 1)
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(s.Home, "link")
	if err := os.Symlink(sub, link); err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(dir, "inner")
	s.Git(dir, "init", "-q", inner)
	bare := filepath.Join(s.Home, "bare.git")
	s.Git(s.Home, "init", "-q", "--bare", bare)
	s.Git(dir, "worktree", "add", "-q", filepath.Join(s.Home, "wt"))
	moved := s.InitRepo("moved", 1)
	s.Git(moved, "config", "core.worktree", moved)
	none := filepath.Join(s.Home, "none")
	if err := os.MkdirAll(none, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, dir string
		inProcess bool
	}{
		{"work tree", dir, true},
		{"below the work tree", sub, true},
		{"through a symbolic link", link, true},
		{"a repository inside another", inner, true},
		{"inside .git", filepath.Join(dir, ".git", "refs"), false},
		{"bare", bare, false},
		{"linked work tree", filepath.Join(s.Home, "wt"), false},
		{"core.worktree", moved, false},
		{"no repository", none, false},
	}
	env := inProcessEnv(s)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			abs, _ := filepath.Abs(c.dir)
			if _, _, ok := discover(abs, filterEnv(env)); ok != c.inProcess {
				t.Fatalf("found in-process = %v, want %v", ok, c.inProcess)
			}
			got, gerr := OpenWithEnv(c.dir, env)
			want, werr := OpenWithEnv(c.dir, append(env, EnvNoFastPath+"=1"))
			if (gerr == nil) != (werr == nil) || errors.Is(gerr, ErrNotRepository) != errors.Is(werr, ErrNotRepository) {
				t.Fatalf("Open: %v; through git: %v", gerr, werr)
			}
			if werr != nil {
				return
			}
			defer got.Close()
			defer want.Close()
			if got.GitDir() != want.GitDir() || got.WorkTree() != want.WorkTree() {
				t.Errorf("Open: git dir %s, work tree %q; rev-parse: %s, %q", got.GitDir(), got.WorkTree(), want.GitDir(), want.WorkTree())
			}
		})
	}
	// Another owner: git's safe.directory rules decide, not discover.
	if os.Geteuid() == 0 {
		if err := os.Chown(filepath.Join(dir, ".git"), 12345, 12345); err != nil {
			t.Fatal(err)
		}
		if _, _, ok := discover(dir, filterEnv(env)); ok {
			t.Error("a .git directory owned by another user was opened in-process")
		}
	}
}
