package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Found timing a clone of a mirror of spf13/cobra: GIT_SECURE_TRACE=1
// git secure clone printed "helper clean up 997 ms", which was the whole
// private fetch and verification (the clean-up mark closed every phase
// since the last mark). The trace names the fetch, the verification and
// the answers to git, so that "clean up" is the clean-up alone.
func TestTraceNamesFetchPhases(t *testing.T) {
	srv := startServer(t, trFile)
	_, url := srv.newRepo("trace.git", true)
	alice, bob := newUser(t, "alice"), newUser(t, "bob")
	adir := alice.sb.InitRepo("project", 2)
	alice.configure(adir)
	alice.secure(adir, "init")
	alice.git(adir, "remote", "add", "origin", url)
	alice.git(adir, "push", "-q", "-u", "origin", "main")
	r := bob.run(bob.sb.Home, "env", "GIT_SECURE_TRACE=1", "git", "secure", "clone", url, bob.path("project"), "--root-key", alice.fingerprint())
	if r.code != 0 {
		t.Fatalf("clone:\n%s", r)
	}
	phases := []string{"helper fetch: git fetch", "helper fetch: verify and adopt", "helper answer git's commands", "helper clean up"}
	at := 0
	for _, p := range phases {
		i := strings.Index(r.stderr[at:], "trace: "+p)
		if i < 0 {
			t.Fatalf("the trace does not show %q after the phases before it:\n%s", p, r)
		}
		at += i
	}
}

// Found cloning over a broken http-backend: git secure clone said "clone
// of URL refused: what the remote serves does not verify under the pin"
// for a server that hung up in the middle of the fetch (plain git clone
// failed there too), and said "under the pin" without a pin. It now says
// the clone failed and points at the helper's error, which names the
// fetch.
func TestCloneFailureIsNotCalledAVerificationFailure(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("broken.git", true)
	alice, bob := newUser(t, "alice"), newUser(t, "bob")
	adir := alice.sb.InitRepo("project", 2)
	alice.configure(adir)
	alice.secure(adir, "init")
	alice.git(adir, "remote", "add", "origin", url)
	alice.git(adir, "push", "-q", "-u", "origin", "main")
	// The server lists its refs but can no longer send their objects.
	srv.admin.git(repo, "repack", "-q", "-a", "-d")
	packs, err := filepath.Glob(filepath.Join(repo, "objects", "pack", "*.pack"))
	if err != nil || len(packs) == 0 {
		t.Fatalf("no pack on the server: %v", err)
	}
	for _, p := range packs {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	r := bob.run(bob.sb.Home, "git", "secure", "clone", url, bob.path("project"))
	if r.code == 0 {
		t.Fatalf("a clone of a server without objects succeeded:\n%s", r)
	}
	if strings.Contains(r.stderr, "does not verify") || strings.Contains(r.stderr, "under the pin") {
		t.Errorf("a failed fetch is reported as a verification failure:\n%s", r)
	}
	if !strings.Contains(r.stderr, "git-secure: error: fetch from") || !strings.Contains(r.stderr, "clone of "+url+" failed") {
		t.Errorf("the failed clone does not name the fetch:\n%s", r)
	}
}

// Found as a stranger: git secure clone -q answered "flag provided but not
// defined: -q. Did you mean --require-freshness?" and 40 lines of help.
// -q and -b BRANCH work as for git clone.
func TestCloneQuietAndBranch(t *testing.T) {
	srv := startServer(t, trFile)
	_, url := srv.newRepo("quiet.git", true)
	alice, bob := newUser(t, "alice"), newUser(t, "bob")
	adir := alice.sb.InitRepo("project", 2)
	alice.configure(adir)
	alice.secure(adir, "init")
	alice.git(adir, "remote", "add", "origin", url)
	alice.git(adir, "push", "-q", "-u", "origin", "main")
	alice.git(adir, "checkout", "-q", "-b", "dev")
	dev := alice.commit(adir, "dev.txt", "dev\n")
	alice.git(adir, "push", "-q", "origin", "dev")
	dir := bob.path("project")
	r := bob.run(bob.sb.Home, "git", "secure", "clone", "-q", "-b", "dev", url, dir, "--root-key", alice.fingerprint())
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("a quiet clone of a pinned, verified repository printed something or failed:\n%s", r)
	}
	if got := bob.rev(dir, "HEAD"); got != dev {
		t.Errorf("-b dev checked out %s, want dev's %s", got, dev)
	}
	bob.secure(dir, "verify")
}
