package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// snapshot is what hooks install must leave intact and uninstall restore.
type snapshot struct {
	config string            // git config --local --list
	files  map[string]string // hook file -> content
}

func takeSnapshot(t *testing.T, u *user, dir string, files ...string) snapshot {
	t.Helper()
	s := snapshot{config: u.git(dir, "config", "--local", "--list"), files: map[string]string{}}
	for _, f := range append([]string{".git/config"}, files...) {
		s.files[f] = readFile(t, filepath.Join(dir, f))
	}
	return s
}

func (s snapshot) compare(t *testing.T, after snapshot, what string) {
	t.Helper()
	if s.config != after.config {
		t.Errorf("%s: config differs after uninstall\nbefore:\n%s\nafter:\n%s", what, s.config, after.config)
	}
	for f, c := range s.files {
		if after.files[f] != c {
			t.Errorf("%s: %s differs after uninstall\nbefore:\n%s\nafter:\n%s", what, f, c, after.files[f])
		}
	}
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// i. A repository's own hooks keep running with git-secure's installed,
// and uninstall restores exactly what was there: hooks in .git/hooks, and
// hooks in core.hooksPath (husky style).
func hooksChaining(t *testing.T, srv *server) {
	dev := newUser(t, "dev")
	_, url := srv.newRepo("chain.git", false)

	t.Run("git_hooks_dir", func(t *testing.T) {
		dev.t, dev.sb.T, srv.admin.t, srv.admin.sb.T = t, t, t, t
		dir := dev.sb.InitRepo("hooks1", 1)
		dev.configure(dir)
		dev.git(dir, "remote", "add", "origin", url)
		pushLog, commitLog := dev.path("pre-push.log"), dev.path("post-commit.log")
		writeScript(t, filepath.Join(dir, ".git/hooks/pre-push"), "cat >/dev/null\necho \"pre-push $1\" >> '"+pushLog+"'\n")
		writeScript(t, filepath.Join(dir, ".git/hooks/post-commit"), "echo post-commit >> '"+commitLog+"'\n")
		before := takeSnapshot(t, dev, dir, ".git/hooks/pre-push", ".git/hooks/post-commit")
		if strings.Contains(before.config, "hookspath") {
			t.Fatalf("core.hooksPath set before install:\n%s", before.config)
		}

		dev.secure(dir, "hooks", "install")
		if hp := dev.git(dir, "config", "core.hooksPath"); filepath.Clean(hp) != filepath.Join(dir, ".git", "secure", "hooks") {
			t.Errorf("core.hooksPath = %q after install", hp)
		}
		if v := dev.git(dir, "config", "remote.origin.vcs"); v != "secure" {
			t.Errorf("remote.origin.vcs = %q after install", v)
		}
		c := dev.commit(dir, "a.txt", "a\n")
		if got := lines(t, commitLog); len(got) != 1 {
			t.Errorf("post-commit ran %d times with git-secure's hooks installed, want 1", len(got))
		}
		if r := dev.run(dir, "git", "push", "origin", "main"); r.code != 0 {
			t.Fatalf("push with hooks installed:\n%s", r)
		}
		if got := lines(t, pushLog); len(got) != 1 || got[0] != "pre-push origin" {
			t.Errorf("pre-push log = %q, want one line \"pre-push origin\"", got)
		}
		if got := srv.admin.refs(filepath.Join(srv.root, "chain.git"))["refs/heads/main"]; got != c {
			t.Errorf("server main = %q, want %s", got, c)
		}

		dev.secure(dir, "hooks", "uninstall")
		before.compare(t, takeSnapshot(t, dev, dir, ".git/hooks/pre-push", ".git/hooks/post-commit"), ".git/hooks repository")
		if _, err := os.Stat(filepath.Join(dir, ".git", "secure", "hooks")); !os.IsNotExist(err) {
			t.Errorf("git-secure's hook directory is still there (%v)", err)
		}
		// The hooks run as before, directly.
		dev.commit(dir, "b.txt", "b\n")
		if r := dev.run(dir, "git", "push", "origin", "main"); r.code != 0 {
			t.Fatalf("push after uninstall:\n%s", r)
		}
		if got := lines(t, commitLog); len(got) != 2 {
			t.Errorf("post-commit ran %d times in all, want 2", len(got))
		}
		if got := lines(t, pushLog); len(got) != 2 {
			t.Errorf("pre-push ran %d times in all, want 2", len(got))
		}
	})

	t.Run("core_hooksPath_husky", func(t *testing.T) {
		dev.t, dev.sb.T, srv.admin.t, srv.admin.sb.T = t, t, t, t
		dir := dev.sb.InitRepo("hooks2", 1)
		dev.configure(dir)
		huskyLog, gitHooksLog := dev.path("husky.log"), dev.path("git-hooks.log")
		writeScript(t, filepath.Join(dir, ".husky/pre-commit"), "echo husky-pre-commit >> '"+huskyLog+"'\n[ -e BLOCK ] && { echo 'husky: blocked' >&2; exit 1; }\nexit 0\n")
		// Not run while core.hooksPath points elsewhere; must stay so.
		writeScript(t, filepath.Join(dir, ".git/hooks/pre-commit"), "echo git-hooks-pre-commit >> '"+gitHooksLog+"'\n")
		dev.git(dir, "config", "core.hooksPath", ".husky")
		dev.git(dir, "add", ".husky")
		dev.git(dir, "commit", "-q", "-m", "husky")
		os.Remove(huskyLog)
		if got := lines(t, gitHooksLog); len(got) != 0 {
			t.Fatalf(".git/hooks/pre-commit ran although core.hooksPath is .husky")
		}
		files := []string{".husky/pre-commit", ".git/hooks/pre-commit"}
		before := takeSnapshot(t, dev, dir, files...)

		dev.secure(dir, "hooks", "install")
		if hp := dev.git(dir, "config", "core.hooksPath"); hp == ".husky" {
			t.Fatalf("core.hooksPath still .husky after install")
		}
		dev.commit(dir, "a.txt", "a\n")
		if got := lines(t, huskyLog); len(got) != 1 {
			t.Errorf("husky's pre-commit ran %d times, want 1", len(got))
		}
		if got := lines(t, gitHooksLog); len(got) != 0 {
			t.Errorf(".git/hooks/pre-commit ran although core.hooksPath was .husky")
		}
		// A chained hook's refusal still stops the commit.
		if err := os.WriteFile(filepath.Join(dir, "BLOCK"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		dev.git(dir, "add", "BLOCK")
		if r := dev.run(dir, "git", "commit", "-q", "-m", "blocked"); r.code == 0 || !strings.Contains(r.stderr, "husky: blocked") {
			t.Errorf("husky's failing pre-commit did not stop the commit:\n%s", r)
		}
		dev.git(dir, "rm", "-q", "--cached", "BLOCK")
		os.Remove(filepath.Join(dir, "BLOCK"))

		dev.secure(dir, "hooks", "uninstall")
		if hp := dev.git(dir, "config", "core.hooksPath"); hp != ".husky" {
			t.Errorf("core.hooksPath = %q after uninstall, want .husky", hp)
		}
		before.compare(t, takeSnapshot(t, dev, dir, files...), "husky repository")
		dev.commit(dir, "b.txt", "b\n")
		if got := lines(t, huskyLog); len(got) != 3 {
			t.Errorf("husky's pre-commit ran %d times in all, want 3 (two commits and the blocked one)", len(got))
		}
	})
}
