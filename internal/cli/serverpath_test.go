package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Found following the README as a stranger: "git secure server install
// /srv/git/my-project.git" on a path that does not exist yet printed
// gitrepo internals (a git command line, "exit status -1", "chdir") and
// no way forward. It names the path and the command that creates it; a
// directory that is not a repository says the same.
func TestServerInstallPathErrors(t *testing.T) {
	h := NewCLIHarness(t)
	missing := filepath.Join(h.S.Home, "srv", "project.git")
	empty := filepath.Join(h.S.Home, "empty.git")
	h.S.Run(h.S.Home, "mkdir", empty)
	for _, tc := range []struct{ name, path string }{
		{"missing", missing},
		{"empty directory", empty},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Want(2, "server", "install", tc.path)
			if !strings.Contains(r.Stderr, "git init --bare "+tc.path) {
				t.Errorf("the error does not say how to create the repository:\n%s", r)
			}
			for _, leak := range []string{"gitrepo", "rev-parse", "exit status", "chdir"} {
				if strings.Contains(r.Stderr, leak) {
					t.Errorf("the error leaks %q:\n%s", leak, r)
				}
			}
		})
	}
}

// Found adopting git-secure on a real project whose branch is master:
// init's "Next:" lines told to protect refs/heads/main, a branch the
// project does not have; copied as printed, the rule protects nothing.
// They name the checked-out branch.
func TestInitNextNamesTheBranch(t *testing.T) {
	h := NewCLIHarness(t)
	h.S.Git(h.Dir, "branch", "-m", "main", "master")
	r := h.Want(0, "init", "--key", h.Priv("alice"), "--no-hooks")
	if !strings.Contains(r.Stdout, "git secure policy add-rule protect-master --ref refs/heads/master --allow NAME") {
		t.Errorf("init's next steps do not name the project's branch:\n%s", r)
	}
	if strings.Contains(r.Stdout, "refs/heads/main") {
		t.Errorf("init's next steps name refs/heads/main, which this repository lacks:\n%s", r)
	}
}

// Found adopting git-secure: in a copy of a clone (cp -a, or a clone
// moved to another directory), core.hooksPath still names the original's
// .git/secure/hooks, and git secure hooks uninstall said "hooks removed"
// while leaving it: the copy went on running the other clone's hooks.
func TestHooksUninstallInACopy(t *testing.T) {
	h := NewCLIHarness(t)
	h.Want(0, "init", "--key", h.Priv("alice"))
	orig := h.Dir
	cp := filepath.Join(h.S.Home, "copy")
	h.S.Run(h.S.Home, "cp", "-a", orig, cp)
	h.Dir = cp
	h.Want(0, "hooks", "uninstall")
	if out := h.S.Run(cp, "sh", "-c", "git config core.hooksPath || true"); strings.TrimSpace(out) != "" {
		t.Errorf("after hooks uninstall in the copy, core.hooksPath is still %q", strings.TrimSpace(out))
	}
	if out := h.S.Run(orig, "git", "config", "core.hooksPath"); !strings.Contains(out, filepath.Join(orig, ".git", "secure", "hooks")) {
		t.Errorf("the original lost its hooks: core.hooksPath = %q", out)
	}
}

// Session 14's finding 05: git init --bare keeps HEAD on master, unborn
// while the project pushes main, and whoever pushes master first (no rule
// covers it) chooses what plain clones check out. server install says so,
// and, when the policy the server holds protects exactly one branch, the
// exact command that points HEAD at it; a HEAD that names a branch the
// repository has gets no note.
func TestServerInstallNotesUnbornHead(t *testing.T) {
	h := NewCLIHarness(t)
	srv := filepath.Join(h.S.Home, "srv.git")
	h.S.Git(h.S.Home, "init", "-q", "--bare", srv)
	h.S.Git(srv, "symbolic-ref", "HEAD", "refs/heads/master")
	r := h.Want(0, "server", "install", srv)
	if !strings.Contains(r.Stderr, "HEAD names refs/heads/master, which this repository does not have yet") || !strings.Contains(r.Stderr, "git secure server install --head main "+srv) {
		t.Errorf("server install does not say HEAD names a missing branch, and how to fix it:\n%s", r)
	}
	if out := strings.TrimSpace(h.S.Git(srv, "symbolic-ref", "HEAD")); out != "refs/heads/master" {
		t.Errorf("server install without --head moved HEAD to %s", out)
	}
	born := filepath.Join(h.S.Home, "born.git")
	h.S.Git(h.S.Home, "init", "-q", "--bare", born)
	h.S.Git(born, "symbolic-ref", "HEAD", "refs/heads/master")
	h.S.Git(h.Dir, "push", "-q", born, "HEAD:refs/heads/master")
	if r := h.Want(0, "server", "install", born); strings.Contains(r.Stderr, "HEAD names") {
		t.Errorf("server install notes a HEAD whose branch exists:\n%s", r)
	}
}

// The policy (pushed before the branch) protects one branch, main, that
// the server does not have yet: the note names it and the exact command.
func TestServerInstallNamesTheProtectedBranch(t *testing.T) {
	h := NewCLIHarness(t)
	h.Setup()
	srv := filepath.Join(h.S.Home, "srv.git")
	h.S.Git(h.S.Home, "init", "-q", "--bare", srv)
	h.S.Git(srv, "symbolic-ref", "HEAD", "refs/heads/master")
	h.S.Git(srv, "fetch", "-q", h.Dir, "refs/secure/policy:refs/secure/policy")
	r := h.Want(0, "server", "install", srv)
	want := "the policy protects one branch, refs/heads/main; point HEAD at it: git secure server install --head main " + srv
	if !strings.Contains(r.Stderr, want) {
		t.Errorf("server install does not name the one protected branch and the command:\nwant %q\n%s", want, r)
	}
}

// server install --head BRANCH points HEAD at a branch, refuses any ref
// outside refs/heads/ and invalid names before installing anything, and
// warns when no rule protects the branch chosen.
func TestServerInstallHead(t *testing.T) {
	h := NewCLIHarness(t)
	h.Setup()
	srv := filepath.Join(h.S.Home, "srv.git")
	h.S.Git(h.S.Home, "init", "-q", "--bare", srv)
	h.S.Git(srv, "symbolic-ref", "HEAD", "refs/heads/master")
	h.S.Git(srv, "fetch", "-q", h.Dir, "refs/secure/policy:refs/secure/policy")
	for _, bad := range []string{"refs/tags/v1.0", "refs/secure/rsl", "HEAD", "heads/main", "a..b", "-x", "refs/heads/x.lock"} {
		r := h.Run("server", "install", "--head", bad, srv)
		if r.Code != 2 || !strings.Contains(r.Stderr, "--head "+bad) {
			t.Errorf("--head %s: want exit 2 naming it:\n%s", bad, r)
		}
	}
	if _, err := os.Stat(filepath.Join(srv, "hooks", "pre-receive")); err == nil {
		t.Errorf("a refused --head installed the hooks")
	}
	if out := strings.TrimSpace(h.S.Git(srv, "symbolic-ref", "HEAD")); out != "refs/heads/master" {
		t.Fatalf("a refused --head moved HEAD to %s", out)
	}
	r := h.Want(0, "server", "install", "--head", "main", srv)
	if out := strings.TrimSpace(h.S.Git(srv, "symbolic-ref", "HEAD")); out != "refs/heads/main" {
		t.Errorf("after --head main HEAD is %s:\n%s", out, r)
	}
	if !strings.Contains(r.Stdout, "HEAD of "+srv+" now names refs/heads/main (it named refs/heads/master)") || strings.Contains(r.Stderr, "warning") {
		t.Errorf("--head main does not say what it changed, or warns:\n%s", r)
	}
	r = h.Want(0, "server", "install", "--head", "refs/heads/dev", srv)
	if out := strings.TrimSpace(h.S.Git(srv, "symbolic-ref", "HEAD")); out != "refs/heads/dev" {
		t.Errorf("after --head refs/heads/dev HEAD is %s", out)
	}
	if !strings.Contains(r.Stderr, "no rule of the policy protects refs/heads/dev") {
		t.Errorf("--head on an unprotected branch does not warn:\n%s", r)
	}
}
