package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addForgeRefs gives bare repository path n pull requests the way a
// forge's mirror has them: refs/pull/N/head and refs/pull/N/merge, at
// commits no branch reaches. It returns the value of refs/pull/1/head.
func addForgeRefs(t *testing.T, admin *user, path string, n int) string {
	t.Helper()
	var stdin strings.Builder
	first := ""
	for i := 1; i <= n; i++ {
		c := admin.git(path, "commit-tree", "-p", "main", "-m", fmt.Sprintf("pull request %d", i), "main^{tree}")
		if first == "" {
			first = c
		}
		fmt.Fprintf(&stdin, "update refs/pull/%d/head %s\nupdate refs/pull/%d/merge %s\n", i, c, i, c)
	}
	if r := admin.runStdin(path, []byte(stdin.String()), "git", "update-ref", "--stdin"); r.code != 0 {
		t.Fatalf("update-ref:\n%s", r)
	}
	return first
}

// breakForgeRef adds refs/pull/broken/head, which the server advertises
// but cannot serve (its object is gone), as a forge's stale ref can be;
// it returns a function that removes it (git receive-pack refuses every
// push while it is there).
func breakForgeRef(t *testing.T, admin *user, path string) func() {
	t.Helper()
	broken := admin.git(path, "commit-tree", "-p", "main", "-m", "gone", "main^{tree}")
	admin.git(path, "update-ref", "refs/pull/broken/head", broken)
	if err := os.Remove(filepath.Join(path, "objects", broken[:2], broken[2:])); err != nil {
		t.Fatal(err)
	}
	return func() { admin.git(path, "update-ref", "-d", "refs/pull/broken/head") }
}

// Issue 15 item 6: a fetch through git-remote-secure of a remote that
// carries a forge's refs brings what verification judges and what git
// asks for, not the whole remote: a refs/pull/* ref the server cannot
// serve no longer fails the fetch (it did: the helper fetched +refs/*,
// and git upload-pack died with "not our ref", exit 128), none of those
// refs lands in the clone unasked, and one asked for by name arrives.
func TestFetchSkipsForgeRefs(t *testing.T) {
	srv := startServer(t, trFile)
	path, url := srv.newRepo("mirror.git", true)
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "work", url, true)
	pr1 := addForgeRefs(t, srv.admin, path, 150)

	c := u.commit(dir, "f.txt", "1\n")
	u.git(dir, "push", "-q", "origin", "main")
	breakForgeRef(t, srv.admin, path)
	r := u.run(dir, "git", "fetch", "origin")
	if r.code != 0 {
		t.Fatalf("git fetch of a remote with refs/pull/*:\n%s", r)
	}
	for ref := range u.refs(filepath.Join(dir, ".git")) {
		if strings.HasPrefix(ref, "refs/pull/") || strings.HasPrefix(ref, "refs/secure-incoming/") {
			t.Errorf("the fetch left %s in the clone", ref)
		}
	}
	if got := u.refValue(dir, "refs/remotes/origin/main"); got != c {
		t.Errorf("origin/main = %s, want %s", got, c)
	}
	r = u.run(dir, "git", "fetch", "origin", "refs/pull/1/head:refs/remotes/origin/pr/1")
	if r.code != 0 {
		t.Fatalf("git fetch of one pull request:\n%s", r)
	}
	if got := u.refValue(dir, "refs/remotes/origin/pr/1"); got != pr1 {
		t.Errorf("refs/remotes/origin/pr/1 = %s, want %s", got, pr1)
	}
	u.secure(dir, "verify")

	// A clone through the helper, as a second person makes it.
	bob := newUser(t, "bob")
	bdir := bob.path("clone")
	if r := bob.run(bob.sb.Home, "git", "secure", "clone", url, bdir); r.code != 0 {
		t.Fatalf("git secure clone of a remote with refs/pull/*:\n%s", r)
	}
	if got := bob.refValue(bdir, "refs/remotes/origin/main"); got != c {
		t.Errorf("bob's origin/main = %s, want %s", got, c)
	}
}

// Issue 15 item 6: with hooks install --global, a repository that does
// not use git-secure fetches exactly as with plain git (the same refs,
// exit code, no git-secure output, nothing written), a forge's broken ref
// included; once its remote gains git-secure metadata it is told once
// how to start verifying, and the note does not repeat.
func TestGlobalPlainFetchPassesThrough(t *testing.T) {
	srv := startServer(t, trFile)
	path, url := srv.newRepo("plain.git", false)
	seed := newUser(t, "seed")
	benchRepo(t, seed, "seed", url, false)
	addForgeRefs(t, srv.admin, path, 50)

	u := newUser(t, "alice")
	u.git(u.sb.Home, "config", "--global", "user.name", u.name)
	u.git(u.sb.Home, "config", "--global", "user.email", u.name+"@example.com")
	u.secure(u.sb.Home, "hooks", "install", "--global")
	plain := newUser(t, "bob") // no git-secure at all: the oracle

	dir, pdir := u.path("c"), plain.path("c")
	for _, who := range []struct {
		u   *user
		dir string
	}{{u, dir}, {plain, pdir}} {
		if r := who.u.run(who.u.sb.Home, "git", "clone", "-q", url, who.dir); r.code != 0 || strings.Contains(r.stderr, "git-secure") {
			t.Fatalf("clone:\n%s", r)
		}
	}
	// The remote moves; both fetch, with the forge refs asked for too.
	seed.commit(seed.path("seed"), "g.txt", "2\n")
	seed.git(seed.path("seed"), "push", "-q", "origin", "main")
	unbreak := breakForgeRef(t, srv.admin, path)
	for _, args := range [][]string{{"fetch", "origin"}, {"fetch", "origin", "+refs/pull/*/merge:refs/remotes/origin/pr/*"}} {
		got, want := u.run(dir, "git", args...), plain.run(pdir, "git", args...)
		if got.code != want.code || got.stderr != want.stderr {
			t.Errorf("git %s with the global install:\n%s\nplain git:\n%s", strings.Join(args, " "), got, want)
		}
	}
	if got, want := u.refs(filepath.Join(dir, ".git")), plain.refs(filepath.Join(pdir, ".git")); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("refs with the global install:\n%v\nplain git:\n%v", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "secure")); !os.IsNotExist(err) {
		t.Errorf("git-secure wrote .git/secure in a repository that does not use it (stat: %v)", err)
	}

	// A shallow clone is shallow, as with plain git.
	sdir, spdir := u.path("s"), plain.path("s")
	u.git(u.sb.Home, "clone", "-q", "--depth", "1", url, sdir)
	plain.git(plain.sb.Home, "clone", "-q", "--depth", "1", url, spdir)
	if got, want := readFile(t, filepath.Join(sdir, ".git", "shallow")), readFile(t, filepath.Join(spdir, ".git", "shallow")); got != want {
		t.Errorf("git clone --depth 1 with the global install: shallow %q, plain git %q", got, want)
	}

	// The remote gains git-secure metadata: said once, nothing adopted.
	unbreak()
	sec := benchRepo(t, seed, "secured", "", true)
	if r := seed.pushDirect(sec, url, "-q", "--force", url, "refs/secure/*:refs/secure/*"); r.code != 0 {
		t.Fatalf("push metadata:\n%s", r)
	}
	r := u.run(dir, "git", "fetch", "origin")
	if r.code != 0 || !strings.Contains(r.stderr, "git fetch origin 'refs/secure/*:refs/secure/*' && git secure verify") {
		t.Fatalf("first fetch after the remote gained metadata:\n%s", r)
	}
	if r := u.run(dir, "git", "fetch", "origin"); r.code != 0 || strings.Contains(r.stderr, "git-secure") {
		t.Fatalf("second fetch repeats the note:\n%s", r)
	}
	for ref := range u.refs(filepath.Join(dir, ".git")) {
		if strings.HasPrefix(ref, "refs/secure/") {
			t.Errorf("a plain repository got %s unasked", ref)
		}
	}
}
