package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// replacement makes, in dir, a commit like rev (same parents, same message)
// whose src/crypto/aes.c says content, and returns it; no ref moves.
func replacement(u *user, dir, rev, content string) string {
	u.t.Helper()
	u.git(dir, "checkout", "-q", "--detach", rev)
	if err := os.WriteFile(filepath.Join(dir, "src", "crypto", "aes.c"), []byte(content), 0o644); err != nil {
		u.t.Fatal(err)
	}
	u.git(dir, "commit", "-q", "-a", "--amend", "--no-edit")
	c := u.rev(dir, "HEAD")
	u.git(dir, "checkout", "-q", "-")
	return c
}

// protectedWithCrypto: alice's protected repository, pushed to a new
// enforcing server repository, with src/crypto/aes.c on main.
func protectedWithCrypto(t *testing.T, srv *server, name string) (a *user, dir, repo, url string) {
	t.Helper()
	repo, url = srv.newRepo(name, true)
	a = newUser(t, "alice")
	dir = benchRepo(t, a, "alice", url, true)
	if err := os.MkdirAll(filepath.Join(dir, "src", "crypto"), 0o755); err != nil {
		t.Fatal(err)
	}
	a.commit(dir, "src/crypto/aes.c", "constant-time aes\n")
	if r := a.run(dir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("alice's push:\n%s", r)
	}
	return a, dir, repo, url
}

// TestReplaceRefAttack is issue 13's third hole, end to end: a person with
// no key and no git-secure pushes refs/replace/<main's tip> pointing at a
// commit with a changed src/crypto. The server's hook refuses it, and main
// is served unchanged (git show, git archive, a mirror clone).
func TestReplaceRefAttack(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	_, _, repo, url := protectedWithCrypto(t, srv, "replace.git")
	tip := srv.admin.rev(repo, "refs/heads/main")

	m := newUser(t, "mallory")
	mdir := m.path("mallory")
	m.git(m.sb.Home, "clone", "-q", url, mdir) // plain git: no helper, no hooks
	evil := replacement(m, mdir, "main", "leaky aes\n")
	ref := "refs/replace/" + tip
	r := m.run(mdir, "git", "push", "origin", evil+":"+ref)
	if r.code == 0 {
		t.Fatalf("the server accepted a replace ref of main's tip:\n%s", r)
	}
	for _, want := range []string{ref, "git replace", "no rule names refs/replace/ explicitly", "hint: delete it", "--ref 'refs/replace/*'"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal does not mention %q:\n%s", want, r)
		}
	}
	if got := srv.admin.refs(repo)[ref]; got != "" {
		t.Fatalf("the server holds %s = %s after a refused push", ref, got)
	}
	// What the server serves is main's real content.
	if got := srv.admin.git(repo, "show", "main:src/crypto/aes.c"); got != "constant-time aes" {
		t.Errorf("server: git show main:src/crypto/aes.c = %q", got)
	}
	archive := srv.admin.git(repo, "archive", "main", "src/crypto/aes.c")
	if !strings.Contains(archive, "constant-time aes") || strings.Contains(archive, "leaky") {
		t.Errorf("server: git archive main serves another aes.c")
	}
	mirror := filepath.Join(t.TempDir(), "mirror.git")
	m.git(m.sb.Home, "clone", "-q", "--mirror", url, mirror)
	if got := m.git(mirror, "show", "main:src/crypto/aes.c"); got != "constant-time aes" {
		t.Errorf("mirror clone: git show main:src/crypto/aes.c = %q", got)
	}
	if r := m.run(mirror, "git", "secure", "verify"); r.code != 0 {
		t.Errorf("verify in a mirror of the server:\n%s", r)
	}
}

// TestReplaceRefPlanted: a replace ref that reached the server without a
// push (an administrator, a restored backup): the server's verification
// fails, every later push is refused until it is deleted, and a clone's
// fetch through git-remote-secure refuses the server's state instead of
// copying the ref.
func TestReplaceRefPlanted(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	a, dir, repo, url := protectedWithCrypto(t, srv, "planted.git")
	tip := srv.admin.rev(repo, "refs/heads/main")
	evil := replacement(a, dir, "main", "leaky aes\n")
	a.git(dir, append(direct(repo), "push", "-q", "--no-verify", repo, evil+":refs/heads/evil")...) // the objects only
	srv.admin.git(repo, "update-ref", "-d", "refs/heads/evil")
	ref := "refs/replace/" + tip
	srv.admin.git(repo, "update-ref", ref, evil)

	r := srv.admin.run(repo, "git", "secure", "verify")
	if r.code != 1 || !containsAll(r.stderr, ref) || !strings.Contains(r.stderr, "git update-ref -d "+ref) {
		t.Fatalf("verify on the server with a planted replace ref: want exit 1 naming it and how to delete it:\n%s", r)
	}

	b := newUser(t, "bob")
	bdir := b.path("bob")
	b.git(b.sb.Home, "clone", "-q", "--no-checkout", url, bdir)
	b.secure(bdir, "hooks", "install")
	r = b.run(bdir, "git", "fetch", "origin", "+refs/replace/*:refs/replace/*")
	if r.code == 0 || !strings.Contains(r.stderr, ref) || !strings.Contains(r.stderr, "does not verify") {
		t.Errorf("a fetch of the planted replace ref through the helper: want a refusal naming it:\n%s", r)
	}
	if got := b.refValue(bdir, ref); got != "" {
		t.Errorf("bob's clone holds %s after the refused fetch", ref)
	}

	a.git(dir, "checkout", "-q", "-b", "feature")
	a.commit(dir, "feature.txt", "x\n")
	r = a.pushDirect(dir, url, "--no-verify", url, "feature") // plain git, unprotected branch
	if r.code == 0 || !strings.Contains(r.stderr, ref) {
		t.Errorf("a push to a server holding a replace ref: want a refusal naming it:\n%s", r)
	}
	srv.admin.git(repo, "update-ref", "-d", ref)
	if r := a.pushDirect(dir, url, "--no-verify", url, "feature"); r.code != 0 {
		t.Errorf("push once the replace ref is deleted:\n%s", r)
	}
}

// TestReplaceRefInClone: verification in a clone fails while it holds a
// replace ref (git show there serves the replacement) and passes once it
// is deleted as the hint says.
func TestReplaceRefInClone(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	a, dir, _, _ := protectedWithCrypto(t, srv, "clone.git")
	tip := a.rev(dir, "main")
	evil := replacement(a, dir, "main", "leaky aes\n")
	a.git(dir, "replace", tip, evil)
	if got := a.git(dir, "show", "main:src/crypto/aes.c"); got != "leaky aes" {
		t.Fatalf("git replace did not take effect: %q", got)
	}
	ref := "refs/replace/" + tip
	r := a.run(dir, "git", "secure", "verify")
	if r.code != 1 || !strings.Contains(r.stderr, ref) || !strings.Contains(r.stderr, "hint: delete it: git update-ref -d "+ref) {
		t.Fatalf("verify in a clone holding a replace ref: want exit 1 naming it, with the hint:\n%s", r)
	}
	a.git(dir, "update-ref", "-d", ref)
	if r := a.run(dir, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("verify once the replace ref is deleted:\n%s", r)
	}
}

// TestHistoryFilesOnServer: info/grafts or a shallow file in the server's
// repository changes what it serves: its verification fails naming the
// file, and pushes are refused until it is removed.
func TestHistoryFilesOnServer(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	a, dir, repo, url := protectedWithCrypto(t, srv, "grafts.git")
	tip := srv.admin.rev(repo, "refs/heads/main")
	a.git(dir, "checkout", "-q", "-b", "feature")
	for _, f := range []struct{ path, says string }{
		{filepath.Join(repo, "info", "grafts"), "gives commits other parents"},
		{filepath.Join(repo, "shallow"), "this repository is shallow"},
	} {
		if err := os.WriteFile(f.path, []byte(tip+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := srv.admin.run(repo, "git", "secure", "verify")
		if r.code != 1 || !strings.Contains(r.stderr, f.path) || !strings.Contains(r.stderr, f.says) {
			t.Errorf("verify on a server with %s: want exit 1 naming it:\n%s", f.path, r)
		}
		a.commit(dir, "feature.txt", f.path+"\n")
		r = a.pushDirect(dir, url, "--no-verify", url, "feature") // unprotected branch, plain git
		if r.code == 0 || !strings.Contains(r.stderr, f.path) {
			t.Errorf("push to a server with %s: want a refusal naming it:\n%s", f.path, r)
		}
		if err := os.Remove(f.path); err != nil {
			t.Fatal(err)
		}
		if r := a.pushDirect(dir, url, "--no-verify", url, "feature"); r.code != 0 {
			t.Errorf("push once %s is removed:\n%s", f.path, r)
		}
	}
}

// TestShallowCloneVerify: the plain-git CI recipe in a shallow clone says
// that verification needs a full clone instead of passing.
func TestShallowCloneVerify(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	_, _, _, url := protectedWithCrypto(t, srv, "shallow.git")
	c := newUser(t, "ci")
	dir := c.path("ci")
	c.git(c.sb.Home, "clone", "-q", "--depth", "1", url, dir)
	c.git(dir, "fetch", "-q", "origin", "refs/secure/*:refs/secure/*")
	r := c.run(dir, "git", "secure", "verify")
	if r.code != 1 || !strings.Contains(r.stderr, "this clone is shallow") || !strings.Contains(r.stderr, "git fetch --unshallow") {
		t.Fatalf("verify in a shallow clone: want exit 1 saying it needs a full clone:\n%s", r)
	}
	c.git(dir, "fetch", "-q", "--unshallow", "origin")
	if r := c.run(dir, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("verify after git fetch --unshallow:\n%s", r)
	}
}

// TestReplaceRefAllowed: a policy rule that names refs/replace/ lets its
// persons publish a replace ref like any protected ref: recorded by the
// helper, accepted by the server, verified everywhere.
func TestReplaceRefAllowed(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	a, dir, repo, _ := protectedWithCrypto(t, srv, "allowed.git")
	a.secure(dir, "policy", "add-rule", "replacements", "--ref", "refs/replace/*", "--allow", "alice")
	a.secure(dir, "policy", "apply")
	old := a.rev(dir, "main~1")
	fixed := a.git(dir, "commit-tree", old+"^{tree}", "-p", old+"~1", "-m", "a better message")
	a.git(dir, "replace", old, fixed)
	ref := "refs/replace/" + old
	r := a.run(dir, "git", "push", "origin", "main", ref)
	if r.code != 0 {
		t.Fatalf("alice's push of an allowed replace ref:\n%s", r)
	}
	if got := srv.admin.refs(repo)[ref]; got != fixed {
		t.Fatalf("server %s = %q, want %s", ref, got, fixed)
	}
	if !strings.Contains(r.stderr, "recorded "+ref) {
		t.Errorf("the push did not record %s:\n%s", ref, r)
	}
	if r := srv.admin.run(repo, "git", "secure", "verify"); r.code != 0 {
		t.Errorf("verify on the server:\n%s", r)
	}
	if r := a.run(dir, "git", "secure", "verify"); r.code != 0 {
		t.Errorf("verify in alice's clone:\n%s", r)
	}
}

// TestShallowPush: a push from a shallow clone to a server with the
// default configuration goes through (the server has the history); with
// receive.shallowUpdate on, git would read the push's history through a
// shallow file and make the server shallow: refused, saying why.
func TestShallowPush(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	_, _, repo, url := protectedWithCrypto(t, srv, "shallowpush.git")
	c := newUser(t, "ci")
	dir := c.path("ci")
	c.git(c.sb.Home, "clone", "-q", "--depth", "1", url, dir)
	c.git(dir, "checkout", "-q", "-b", "feature")
	c.commit(dir, "feature.txt", "one\n")
	if r := c.run(dir, "git", "push", "origin", "feature"); r.code != 0 {
		t.Fatalf("push of an unprotected branch from a shallow clone:\n%s", r)
	}
	srv.admin.git(repo, "config", "receive.shallowUpdate", "true")
	c.git(dir, "checkout", "-q", "-b", "feature2")
	r := c.run(dir, "git", "push", "origin", "feature2")
	if r.code == 0 || !strings.Contains(r.stderr, "receive.shallowUpdate is on") || !strings.Contains(r.stderr, "GIT_SHALLOW_FILE") {
		t.Fatalf("push from a shallow clone with receive.shallowUpdate on: want a refusal saying why:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(repo, "shallow")); err == nil {
		t.Fatalf("the server became shallow")
	}
}
