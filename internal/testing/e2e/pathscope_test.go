package e2e

import (
	"strings"
	"testing"
)

// TestPathRuleScope: a path rule without --ref protects its files on the
// refs the ref rules name (here main), not on every ref. carol, with plain
// git and no git-secure, pushes a review branch that changes the protected
// doc/ to an enforcing server: accepted, it is not a branch that ships. The
// server also carries a forge's own ref (refs/pull/1/head, written by the
// forge past any hook): pushes, clones through git-secure and verify on
// the server still work. What the rule protects still holds: bob, allowed
// on main but not on doc/**, is refused both when he changes doc/ on main
// and when he merges carol's branch into main (the files a merge brings),
// through his helper and with an entry he signs himself that only the
// server judges; alice, allowed on both, merges it.
func TestPathRuleScope(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("scope.git", true)
	alice, bob, carol := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "carol")

	aliceDir := alice.sb.InitRepo("alice", 1)
	alice.configure(aliceDir)
	alice.git(aliceDir, "remote", "add", "origin", url)
	alice.secure(aliceDir, "init")
	alice.secure(aliceDir, "policy", "add-person", "alice", "--key", alice.key.Public)
	alice.secure(aliceDir, "policy", "add-person", "bob", "--key", bob.key.Public)
	alice.secure(aliceDir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob")
	alice.secure(aliceDir, "policy", "add-rule", "docs", "--path", "doc/**", "--allow", "alice")
	alice.secure(aliceDir, "policy", "apply")
	commitFile(t, alice, aliceDir, "doc/guide.md", "reviewed\n")
	alice.git(aliceDir, "push", "-q", "-u", "origin", "main")

	// carol: plain git, no git-secure, a review branch touching doc/.
	carolDir := carol.path("carol")
	carol.git(carol.sb.Home, "clone", "-q", url, carolDir)
	carol.git(carolDir, "checkout", "-q", "-b", "review/carol-doc")
	review := commitFile(t, carol, carolDir, "doc/guide.md", "proposed by carol\n")
	if r := carol.run(carolDir, "git", "push", "origin", "review/carol-doc"); r.code != 0 {
		t.Fatalf("plain git push of a review branch touching doc/ (no rule names it) was refused:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/heads/review/carol-doc"); got != review {
		t.Fatalf("server review/carol-doc = %s, want %s", got, review)
	}

	// The forge opens a pull request: it writes refs/pull/1/head itself,
	// past any hook.
	srv.admin.git(repo, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/pull/1/head", review)

	// Ordinary work goes on: a push through the helper, a clone through
	// git-secure, verify on the server.
	alice.git(aliceDir, "pull", "-q", "--ff-only")
	commitFile(t, alice, aliceDir, "src/main.c", "int main;\n")
	if r := alice.run(aliceDir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("alice's push of main with refs/pull/1/head on the server:\n%s", r)
	}
	daveDir := carol.path("dave")
	if r := carol.run(carol.sb.Home, "git", "clone", "-q", "secure::"+url, daveDir); r.code != 0 {
		t.Fatalf("clone through git-secure of a server with refs/pull/1/head:\n%s", r)
	}
	if r := carol.run(daveDir, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("verify in a clone of a server with a review branch and refs/pull/1/head:\n%s", r)
	}
	if r := srv.admin.run(repo, "git", "secure", "verify"); r.code != 0 || strings.Contains(r.stderr, "refs/pull/1/head") {
		t.Fatalf("verify on the server: want exit 0, refs/pull/1/head not judged:\n%s", r)
	}

	// bob has two clones: one through git-secure (his helper signs and
	// sends the entries), one with plain git where he signs his own entries
	// (what a modified client does), so that only the server judges.
	bobDir, ownDir := bob.path("bob"), bob.path("bob-own")
	bob.git(bob.sb.Home, "clone", "-q", "secure::"+url, bobDir)
	bob.git(bob.sb.Home, "clone", "-q", url, ownDir)
	bob.configure(bobDir)
	bob.configure(ownDir)
	refused := func(what string, r result) {
		t.Helper()
		if r.code == 0 {
			t.Fatalf("%s: accepted, but bob is not allowed on doc/**:\n%s", what, r)
		}
		if !containsAll(r.stderr, "rule docs", "doc/guide.md") {
			t.Errorf("%s: the refusal does not name the rule docs and doc/guide.md:\n%s", what, r)
		}
		if got := srv.admin.rev(repo, "refs/heads/main"); got != alice.rev(aliceDir, "main") {
			t.Fatalf("%s: server main moved to %s", what, got)
		}
	}

	// bob changes doc/ on main: through his helper, and with his own entry.
	commitFile(t, bob, bobDir, "doc/guide.md", "bob's unreviewed change\n")
	refused("bob's push of doc/ on main", bob.run(bobDir, "git", "push", "origin", "main"))
	refused("bob's own entry for doc/ on main", pushWithOwnEntry(t, bob, ownDir, url, "doc/guide.md"))

	// bob merges carol's review branch into main: the merge brings doc/.
	for _, own := range []bool{false, true} {
		dir := bobDir
		if own {
			dir = ownDir
			bob.git(dir, "fetch", "-q", url, "+refs/heads/main:refs/remotes/origin/main", "+refs/secure/*:refs/secure/*")
		} else {
			bob.git(dir, "fetch", "-q", "origin")
		}
		bob.git(dir, "checkout", "-q", "-B", "main", "refs/remotes/origin/main")
		bob.git(dir, "merge", "-q", "--no-ff", "--no-edit", "refs/remotes/origin/review/carol-doc")
		if own {
			refused("bob's own entry for a merge of the review branch into main", pushMainWithOwnEntry(t, bob, dir, url))
		} else {
			refused("bob's push of a merge of the review branch into main", bob.run(bobDir, "git", "push", "origin", "main"))
		}
	}

	// alice, allowed on doc/**, merges it.
	alice.git(aliceDir, "fetch", "-q", "origin", "review/carol-doc")
	alice.git(aliceDir, "merge", "-q", "--no-ff", "--no-edit", "FETCH_HEAD")
	if r := alice.run(aliceDir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("alice's merge of the review branch into main:\n%s", r)
	}
	srv.admin.git(repo, "secure", "verify")
}

// TestForgeRefsOnEnforcingServer: a server that gains a forge's own refs
// (refs/pull/N/head, refs/merge-requests/N/head, written by the forge past
// any hook) under a policy with a path rule: the refs are never judged as
// unrecorded pushes, so pushes, clones through git-secure and verify on
// the server and in the clone go on working.
func TestForgeRefsOnEnforcingServer(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("forge.git", true)
	alice, dave := newUser(t, "alice"), newUser(t, "dave")
	aliceDir := benchRepo(t, alice, "alice", url, true) // protected main
	alice.secure(aliceDir, "policy", "add-rule", "docs", "--path", "doc/**", "--allow", "alice")
	alice.secure(aliceDir, "policy", "apply")
	commitFile(t, alice, aliceDir, "doc/guide.md", "reviewed\n")
	alice.git(aliceDir, "push", "-q", "origin", "main")

	// The forge writes its refs: a proposed change to doc/ for review.
	proposed := strings.TrimSpace(srv.admin.git(repo, "commit-tree", "main^{tree}", "-p", "main", "-m", "proposed"))
	for _, ref := range []string{"refs/pull/1/head", "refs/pull/1/merge", "refs/merge-requests/2/head", "refs/keep-around/" + proposed} {
		srv.admin.git(repo, "-c", "core.hooksPath=/dev/null", "update-ref", ref, proposed)
	}

	commitFile(t, alice, aliceDir, "src/main.c", "int main;\n")
	if r := alice.run(aliceDir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("push of main to a server with a forge's refs:\n%s", r)
	}
	if r := srv.admin.run(repo, "git", "secure", "verify"); r.code != 0 || containsAny(r.stdout+r.stderr, "refs/pull/") {
		t.Fatalf("verify on the server: want exit 0, the forge's refs not judged:\n%s", r)
	}
	daveDir := dave.path("dave")
	if r := dave.run(dave.sb.Home, "git", "clone", "-q", "secure::"+url, daveDir); r.code != 0 {
		t.Fatalf("clone through git-secure of a server with a forge's refs:\n%s", r)
	}
	if r := dave.run(daveDir, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("verify in the clone:\n%s", r)
	}
}

// commitFile writes path (creating its directories) in dir, commits it as
// u and returns the commit.
func commitFile(t *testing.T, u *user, dir, path, content string) string {
	t.Helper()
	writeFile(t, dir, path, content)
	u.git(dir, "add", "--", path)
	u.git(dir, "commit", "-q", "-m", u.name+": "+path)
	return u.rev(dir, "HEAD")
}
