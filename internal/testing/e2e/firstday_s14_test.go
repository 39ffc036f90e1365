package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/clitest"
)

// Found as a stranger on a mirror of spf13/cobra: git push --tags with a
// release tag bob may not make and an unprotected tag refused both with
// the release rule's reason, so bob-note-1 read as refused by a rule
// about v1.1. The unprotected one now says it was not pushed because the
// other was refused, that the push is all or nothing, and how to push it
// alone; doing so lands it.
func TestAtomicRefusalNamesTheRefusedRef(t *testing.T) {
	srv, repo, _, bob, _, bdir := tagDay(t, "refs/tags/v*")
	bob.git(bdir, "tag", "v1.1")
	bob.git(bdir, "tag", "bob-note-1")
	r := bob.run(bdir, "git", "push", "origin", "--tags")
	if r.code == 0 {
		t.Fatalf("bob's push of a release tag landed:\n%s", r)
	}
	var note, rel string
	for _, line := range strings.Split(r.stderr, "\n") {
		switch {
		case strings.Contains(line, "bob-note-1 -> bob-note-1"):
			note = line
		case strings.Contains(line, "v1.1 -> v1.1"):
			rel = line
		}
	}
	if !strings.Contains(rel, "rule releases") {
		t.Errorf("v1.1's line does not give the rule:\n%s", r.stderr)
	}
	want := "not pushed: refs/tags/v1.1 in the same push was refused, and a push through git-secure is all or nothing; to push this one alone: git push origin refs/tags/bob-note-1"
	if !strings.Contains(note, want) || strings.Contains(note, "rule releases") {
		t.Errorf("bob-note-1's line: %q, want it to contain %q and not the other tag's rule\n%s", note, want, r.stderr)
	}
	bob.git(bdir, "push", "origin", "refs/tags/bob-note-1")
	if got := srv.admin.rev(repo, "refs/tags/bob-note-1"); got == "" {
		t.Errorf("bob-note-1 pushed alone did not land")
	}
}

// Found as a stranger on a mirror of spf13/cobra: bob pushing main while
// alice had pushed first made the helper record on top of her entry and
// retry a push that could not succeed (his main is not a descendant of
// hers), and print "error: atomic push failed ... status: 2" and "fatal:
// the remote end hung up unexpectedly" above git's hint. Now it is one
// attempt and git's own refusal: "! [rejected] main -> main (fetch
// first)" with its advice to pull first, as plain git says.
func TestBehindPushSaysPullFirst(t *testing.T) {
	srv, repo, alice, bob, adir, bdir := tagDay(t, "refs/tags/v*")
	alice.sb.Commit(adir, "a.txt", "alice\n", "alice change")
	alice.git(adir, "push", "-q", "origin", "main")
	serverMain := srv.admin.rev(repo, "refs/heads/main")
	bob.sb.Commit(bdir, "b.txt", "bob\n", "bob change")
	r := bob.run(bdir, "git", "push", "origin", "main")
	if r.code == 0 {
		t.Fatalf("bob's push while behind landed:\n%s", r)
	}
	clitest.Contains(t, "bob's push", r.stderr, "! [rejected]", "main -> main (fetch first)", "git pull")
	for _, noise := range []string{"retrying", "attempt 2", "atomic push failed", "fatal:", "hung up"} {
		if strings.Contains(r.stderr, noise) {
			t.Errorf("bob's push says %q:\n%s", noise, r.stderr)
		}
	}
	if got := srv.admin.rev(repo, "refs/heads/main"); got != serverMain {
		t.Errorf("server main moved to %s", got)
	}
	bob.git(bdir, "pull", "-q", "--no-rebase", "--no-edit")
	bob.git(bdir, "push", "-q", "origin", "main")
}

// Found as a stranger: git push -q printed "git-secure: recorded
// refs/heads/main as entry #N". A quiet push that lands says nothing, as
// plain git; without -q the line stays.
func TestQuietPushIsQuiet(t *testing.T) {
	_, _, _, bob, _, bdir := tagDay(t, "refs/tags/v*")
	bob.sb.Commit(bdir, "b.txt", "bob\n", "bob change")
	r := bob.run(bdir, "git", "push", "-q", "origin", "main")
	if r.code != 0 || r.stderr != "" {
		t.Errorf("git push -q: exit %d, stderr %q, want 0 and nothing", r.code, r.stderr)
	}
	bob.sb.Commit(bdir, "b.txt", "bob 2\n", "bob change 2")
	r = bob.run(bdir, "git", "push", "origin", "main")
	clitest.Contains(t, "git push", r.stderr, "git-secure: recorded refs/heads/main as entry #")
}

// Found as a stranger: sh git-secure-ci.sh fetch (the script is bash)
// died on Debian with dash's "set: Illegal option -o pipefail". Run with
// sh, it now says it needs bash and how to run it, exit 2 (usage).
func TestCIScriptUnderShSaysBash(t *testing.T) {
	script := ciScript(t)
	if v, _ := exec.Command("sh", "-c", "echo ${BASH_VERSION:-}").Output(); strings.TrimSpace(string(v)) != "" {
		t.Skip("sh is bash here: the script runs under it")
	}
	cmd := exec.Command("sh", script, "fetch")
	cmd.Env = append(os.Environ(), "BASH_VERSION=")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("sh %s fetch: %v, want exit 2\n%s", script, err, out)
	}
	clitest.Contains(t, "sh git-secure-ci.sh", string(out), "git-secure-ci.sh: this script needs bash: run it as bash "+script)
	if strings.Contains(string(out), "pipefail") {
		t.Errorf("still dies on pipefail:\n%s", out)
	}
}

// Found as a stranger on a mirror of spf13/cobra: in a clone fetching
// pull requests with GitHub's +refs/pull/*/head:refs/remotes/origin/pr/*,
// git secure init recorded each origin/pr/N as the branch refs/heads/pr/N
// and the first push created those branches on the server. Now init
// records the server's real branch and no pr/N, and the first push
// creates nothing but what the log records.
func TestInitIgnoresPullRequestTracking(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("prs.git", true)
	alice := newUser(t, "alice")
	seed := alice.sb.InitRepo("seed", 3)
	alice.configure(seed)
	alice.git(seed, "push", "-q", "--receive-pack=git -c core.hooksPath=/dev/null receive-pack", repo,
		"main", "main~1:refs/pull/1/head", "main~2:refs/pull/2/head", "main~1:refs/heads/dev")
	dir := alice.path("project")
	alice.git(alice.sb.Home, "clone", "-q", url, dir)
	alice.configure(dir)
	alice.git(dir, "config", "--add", "remote.origin.fetch", "+refs/pull/*/head:refs/remotes/origin/pr/*")
	alice.git(dir, "fetch", "-q", "origin")
	out := alice.secure(dir, "init")
	if !strings.Contains(out, "recorded at origin's tips: dev.") {
		t.Errorf("init output:\n%s", out)
	}
	alice.secure(dir, "policy", "add-person", "alice", "--key", alice.key.Public)
	alice.secure(dir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "-u", "origin", "main")
	for ref := range alice.refs(repo) {
		if strings.HasPrefix(ref, "refs/heads/pr/") {
			t.Errorf("the first push created %s on the server", ref)
		}
	}
	for _, e := range alice.rslLog(dir) {
		if strings.Contains(e.Ref, "pr/") || strings.HasPrefix(e.Ref, "refs/pull/") {
			t.Errorf("entry #%d records %s", e.Number, e.Ref)
		}
	}
}

// Found measuring the stranger's finding 0: git push --tags of 3 000 tags
// read the log once per tag to find its latest entry ("record: previous
// entry" traced once per tag; 100 s). Recording now reads every pushed
// ref's latest entry in one walk: one "record: previous entries" for 60
// tags, no walk per tag.
func TestManyTagsPushOneWalk(t *testing.T) {
	srv, repo, alice, _, adir, _ := tagDay(t, "refs/tags/v*")
	for i := 0; i < 60; i++ {
		alice.git(adir, "tag", fmt.Sprintf("v0.%d", i))
	}
	r := alice.run(adir, "env", "GIT_SECURE_TRACE=1", "git", "push", "-q", "origin", "--tags")
	if r.code != 0 {
		t.Fatalf("alice's push of 60 tags:\n%s", r)
	}
	if n := strings.Count(r.stderr, "record: previous entry "); n != 0 {
		t.Errorf("the log was walked once per tag (%d walks)", n)
	}
	if n := strings.Count(r.stderr, "record: previous entries"); n != 1 {
		t.Errorf("%d walks for the pushed refs' latest entries, want 1:\n%s", n, r.stderr)
	}
	if got := srv.admin.rev(repo, "refs/tags/v0.59"); got == "" {
		t.Errorf("v0.59 not on the server")
	}
}
