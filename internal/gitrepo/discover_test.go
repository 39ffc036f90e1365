package gitrepo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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
	// Bare repositories: found in-process only entered at their top, with
	// core.bare true and nothing in the protected configuration about
	// them; the odd ones go to git, which decides as it always did.
	bareLink := filepath.Join(s.Home, "bare-link")
	if err := os.Symlink(bare, bareLink); err != nil {
		t.Fatal(err)
	}
	odd := func(name string, edit func(dir string)) string {
		d := filepath.Join(s.Home, name)
		s.Git(s.Home, "init", "-q", "--bare", d)
		edit(d)
		return d
	}
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	notBare := odd("not-bare.git", func(d string) { s.Git(d, "config", "core.bare", "false") })
	unsetBare := odd("unset-bare.git", func(d string) { s.Git(d, "config", "--unset", "core.bare") })
	badHead := odd("bad-head.git", func(d string) { write(filepath.Join(d, "HEAD"), "garbage\n") })
	detached := odd("detached.git", func(d string) { write(filepath.Join(d, "HEAD"), strings.Repeat("ab", 20)+"\n") })
	dotGit := odd("dotgit.git", func(d string) { write(filepath.Join(d, ".git"), "gitdir: "+filepath.Join(dir, ".git")+"\n") })
	ext := odd("ext.git", func(d string) {
		s.Git(d, "config", "core.repositoryformatversion", "1")
		s.Git(d, "config", "extensions.noop", "true")
	})
	future := odd("future.git", func(d string) { s.Git(d, "config", "core.repositoryformatversion", "2") })
	explicit := filepath.Join(s.Home, "explicit.gitconfig")
	write(explicit, "[safe]\n\tbareRepository = explicit\n")
	none := filepath.Join(s.Home, "none")
	if err := os.MkdirAll(none, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, dir string
		inProcess bool
		env       []string
	}{
		{"work tree", dir, true, nil},
		{"below the work tree", sub, true, nil},
		{"through a symbolic link", link, true, nil},
		{"a repository inside another", inner, true, nil},
		{"inside .git", filepath.Join(dir, ".git", "refs"), false, nil},
		{"bare", bare, true, nil},
		{"bare through a symbolic link", bareLink, true, nil},
		{"bare, HEAD an object id", detached, true, nil},
		{"below a bare repository's top", filepath.Join(bare, "refs"), false, nil},
		{"bare, safe.bareRepository explicit", bare, false, []string{"GIT_CONFIG_GLOBAL=" + explicit}},
		{"bare, git -c", bare, false, []string{"GIT_CONFIG_PARAMETERS='safe.barerepository'='explicit'"}},
		{"core.bare false", notBare, false, nil},
		{"core.bare unset", unsetBare, false, nil},
		{"bare, HEAD not a ref", badHead, false, nil},
		{"bare holding a .git file", dotGit, false, nil},
		{"bare with an extension", ext, false, nil},
		{"bare, repository format 2", future, false, nil},
		{"linked work tree", filepath.Join(s.Home, "wt"), false, nil},
		{"core.worktree", moved, false, nil},
		{"no repository", none, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := append(inProcessEnv(s), c.env...)
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
	env := inProcessEnv(s)
	if os.Geteuid() == 0 {
		if err := os.Chown(bare, 12345, 12345); err != nil {
			t.Fatal(err)
		}
		if _, _, ok := discover(bare, filterEnv(env)); ok {
			t.Error("a bare repository owned by another user was opened in-process")
		}
		if err := os.Chown(filepath.Join(dir, ".git"), 12345, 12345); err != nil {
			t.Fatal(err)
		}
		if _, _, ok := discover(dir, filterEnv(env)); ok {
			t.Error("a .git directory owned by another user was opened in-process")
		}
	}
}
