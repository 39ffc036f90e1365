package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The shape of the project a team adopts git-secure on (issue 15: a GitHub
// mirror with 3 400 commits, 8 branches, 29 tags, 1 459 refs/pull/*).
const (
	dayCommits   = 3000 // on main
	dayBranches  = 7    // besides main
	dayTags      = 29   // release tags on main, v0.1 ...
	dayPullRefs  = 300  // refs/pull/N/head the forge writes on the server
	dayBranchLen = 20   // commits of each other branch
)

// genProject writes, with git fast-import, a repository of the shape above
// into dir: main with dayCommits commits touching src/, doc/ and
// security/, dayBranches branches forked from main, dayTags tags (odd ones
// annotated). It takes about a second, so every transport gets a copy.
func genProject(t *testing.T, u *user, dir string) {
	t.Helper()
	u.git(u.sb.Home, "init", "-q", "-b", "main", dir)
	var s bytes.Buffer
	when := int64(1700000000)
	commit := func(ref string, mark int, from int, file, content string) {
		when += 60
		fmt.Fprintf(&s, "commit %s\nmark :%d\ncommitter Dev <dev@example.com> %d +0000\ndata <<EOM\nchange %d\nEOM\n", ref, mark, when, mark)
		if from > 0 {
			fmt.Fprintf(&s, "from :%d\n", from)
		}
		fmt.Fprintf(&s, "M 100644 inline %s\ndata %d\n%s\n", file, len(content), content)
	}
	dirs := []string{"src", "doc", "security", "src/net", "tests"}
	for i := 1; i <= dayCommits; i++ {
		file := fmt.Sprintf("%s/f%d.txt", dirs[i%len(dirs)], i%40)
		commit("refs/heads/main", i, 0, file, fmt.Sprintf("line %d", i))
	}
	mark := dayCommits
	for b := 1; b <= dayBranches; b++ {
		from := dayCommits - b*100
		for j := 0; j < dayBranchLen; j++ {
			mark++
			commit(fmt.Sprintf("refs/heads/topic/%d", b), mark, from, fmt.Sprintf("src/topic%d.txt", b), fmt.Sprintf("%d.%d", b, j))
			from = mark
		}
	}
	for i := 1; i <= dayTags; i++ {
		at := i * dayCommits / (dayTags + 1)
		if i%2 == 1 {
			fmt.Fprintf(&s, "tag v0.%d\nfrom :%d\ntagger Dev <dev@example.com> %d +0000\ndata 7\nrelease\n", i, at, when)
		} else {
			fmt.Fprintf(&s, "reset refs/tags/v0.%d\nfrom :%d\n\n", i, at)
		}
	}
	if _, err := u.sb.RunErr(dir, s.Bytes(), "git", "fast-import", "--quiet"); err != nil {
		t.Fatalf("fast-import: %v", err)
	}
	u.git(dir, "checkout", "-q", "-f", "main")
}

// copyTree copies a directory with cp -a (a repository, objects included).
func copyTree(t *testing.T, u *user, from, to string) {
	t.Helper()
	u.must(u.sb.Home, "cp", "-a", from, to)
}

// refused checks that r failed and says each of wants (what to do).
func refused(t *testing.T, what string, r result, wants ...string) {
	t.Helper()
	if r.code == 0 {
		t.Errorf("%s was accepted:\n%s", what, r)
		return
	}
	t.Logf("%s, refused:\n%s", what, r.stderr)
	for _, w := range wants {
		if !strings.Contains(r.stderr+r.stdout, w) {
			t.Errorf("%s: the refusal does not say %q:\n%s", what, w, r)
		}
	}
}

// ok checks that r succeeded.
func ok(t *testing.T, what string, r result) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("%s failed:\n%s", what, r)
	}
}

// TestFirstDay replays a team's first day with git-secure (issue 15) on a
// repository of a real project's shape, over each transport: alice
// protects it (init, persons, a threshold-2 rule on main, a release-tag
// rule, a folder rule), adds the remote after init and pushes everything
// as a forge's instructions say; the server is enforcing and carries
// a forge's refs/pull/*; bob and carol (carol signs through ssh-agent)
// clone, push review branches, approve before and after a push, carol tags
// a release, a change of security/ reaches main through a merge, dave
// (plain git, no git-secure, no configuration) pushes a feature branch, and
// everyone pulls and verifies. After git secure init and git secure clone,
// everything is plain git. Every refusal is asserted on a message that
// says what to do.
func TestFirstDay(t *testing.T) {
	gen := newUser(t, "gen")
	project := gen.path("project")
	genProject(t, gen, project)
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			firstDay(t, tr, project)
		})
	}
}

func firstDay(t *testing.T, tr transport, project string) {
	srv := startServer(t, tr)
	repo, url := srv.newRepo("project.git", true)
	alice, bob, carol, dave := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "carol"), newUser(t, "dave")

	// carol signs with a key held only by ssh-agent.
	carol.sb.StartAgent()
	carol.sb.AddToAgent(carol.key)
	if err := os.Rename(carol.key.Private, carol.key.Private+".offline"); err != nil {
		t.Fatal(err)
	}
	carol.key.Private = carol.key.Public

	// dave has no git-secure set up and no git configuration at all.
	if err := os.Remove(filepath.Join(dave.sb.Home, ".gitconfig")); err != nil {
		t.Fatal(err)
	}

	// alice protects the existing project.
	aliceDir := alice.path("project")
	copyTree(t, alice, project, aliceDir)
	alice.configure(aliceDir)
	alice.secure(aliceDir, "init")
	alice.secure(aliceDir, "policy", "add-person", "alice", "--key", alice.key.Public)
	alice.secure(aliceDir, "policy", "add-person", "bob", "--key", bob.key.Public)
	alice.secure(aliceDir, "policy", "add-person", "carol", "--key", carol.key.Public)
	alice.secure(aliceDir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob", "--threshold", "2")
	alice.secure(aliceDir, "policy", "add-rule", "releases", "--ref", "refs/tags/v*", "--allow", "carol")
	alice.secure(aliceDir, "policy", "add-rule", "security", "--path", "security/**", "--allow", "carol")
	alice.secure(aliceDir, "policy", "apply")

	// The remote, added after init, and the first push as GitHub says.
	alice.git(aliceDir, "remote", "add", "origin", url)
	ok(t, "alice: git push -u origin main", alice.run(aliceDir, "git", "push", "-u", "origin", "main"))
	ok(t, "alice: git push -u origin --all", alice.run(aliceDir, "git", "push", "-u", "origin", "--all"))
	ok(t, "alice: git push origin --tags", alice.run(aliceDir, "git", "push", "origin", "--tags"))
	srvRefs := srv.admin.refs(repo)
	for ref, want := range alice.refs(filepath.Join(aliceDir, ".git")) {
		if strings.HasPrefix(ref, "refs/heads/") || strings.HasPrefix(ref, "refs/tags/") || strings.HasPrefix(ref, "refs/secure/") {
			if srvRefs[ref] != want {
				t.Errorf("after the first push, server %s = %q, want %s", ref, srvRefs[ref], want)
			}
		}
	}
	ok(t, "verify on the server after the first push", srv.admin.run(repo, "git", "secure", "verify"))

	// The forge writes its own refs past any hook, as a GitHub mirror has.
	var pulls bytes.Buffer
	for i, c := range strings.Fields(srv.admin.git(repo, "rev-list", "--max-count", fmt.Sprint(dayPullRefs), "main~1")) {
		fmt.Fprintf(&pulls, "update refs/pull/%d/head %s\n", i+1, c)
	}
	if _, err := srv.admin.sb.RunErr(repo, pulls.Bytes(), "git", "-c", "core.hooksPath=/dev/null", "update-ref", "--stdin"); err != nil {
		t.Fatalf("forge refs: %v", err)
	}

	// bob and carol clone, pinned to the project's root key.
	root := alice.fingerprint()
	bobDir, carolDir := bob.path("project"), carol.path("project")
	ok(t, "bob: git secure clone", bob.run(bob.sb.Home, "git", "secure", "clone", url, bobDir, "--root-key", root))
	ok(t, "carol: git secure clone", carol.run(carol.sb.Home, "git", "secure", "clone", url, carolDir, "--root-key", root))
	bob.configure(bobDir)
	carol.configure(carolDir)

	// bob looks at the pull requests, as on any GitHub mirror: a refspec
	// of his own, through the helper.
	ok(t, "bob: git fetch origin +refs/pull/*/head:refs/remotes/origin/pr/*",
		bob.run(bobDir, "git", "fetch", "-q", "origin", "+refs/pull/*/head:refs/remotes/origin/pr/*"))
	if prs := strings.Fields(bob.git(bobDir, "for-each-ref", "--format=%(refname)", "refs/remotes/origin/pr/")); len(prs) != dayPullRefs {
		t.Errorf("bob fetched %d pull refs, want %d", len(prs), dayPullRefs)
	}

	// A review branch: anyone may push it, it ships nothing.
	bob.git(bobDir, "checkout", "-q", "-b", "review/bob-net")
	bobNet := commitFile(t, bob, bobDir, "src/net/retry.go", "package net\n")
	ok(t, "bob: git push -u origin review/bob-net", bob.run(bobDir, "git", "push", "-u", "origin", "review/bob-net"))

	// An approval before the push: alice fetches bob's proposal and
	// approves main moving to it; bob then pushes main (his entry and her
	// approval: 2 of alice, bob).
	ok(t, "alice: git fetch", alice.run(aliceDir, "git", "fetch", "origin"))
	oldMain := alice.rev(aliceDir, "refs/remotes/origin/main")
	alice.secure(aliceDir, "attest", "approve", "main", "--from", oldMain, "--to", bobNet)
	ok(t, "alice: git push (the approval alone)", alice.run(aliceDir, "git", "push"))
	bob.git(bobDir, "checkout", "-q", "main")
	bob.git(bobDir, "merge", "-q", "--ff-only", "review/bob-net")
	ok(t, "bob: git push origin main with alice's approval", bob.run(bobDir, "git", "push", "origin", "main"))

	// Without the second person the push is refused, and says who can
	// approve and how. An approval after the push: alice publishes the
	// commit on a review branch, bob approves it, alice pushes again.
	ok(t, "alice: git pull", alice.run(aliceDir, "git", "pull", "-q", "--ff-only"))
	alone := commitFile(t, alice, aliceDir, "doc/guide.md", "alice's guide\n")
	refused(t, "alice: git push of main with one signature of 2", alice.run(aliceDir, "git", "push", "origin", "main"),
		"threshold", "git secure attest approve")
	ok(t, "alice: git push origin HEAD:review/alice-guide", alice.run(aliceDir, "git", "push", "origin", "HEAD:refs/heads/review/alice-guide"))
	ok(t, "bob: git fetch", bob.run(bobDir, "git", "fetch", "origin"))
	bob.secure(bobDir, "attest", "approve", "main", "--from", bobNet, "--to", alone)
	ok(t, "bob: git push (the approval alone)", bob.run(bobDir, "git", "push"))
	ok(t, "alice: git push origin main after bob's approval", alice.run(aliceDir, "git", "push", "origin", "main"))

	// A release tag: carol may, bob may not.
	ok(t, "carol: git pull", carol.run(carolDir, "git", "pull", "-q", "--ff-only"))
	carol.git(carolDir, "tag", "-a", "-m", "release 1.0", "v1.0", "main")
	ok(t, "carol: git push origin v1.0", carol.run(carolDir, "git", "push", "origin", "v1.0"))
	bob.git(bobDir, "tag", "v1.1", "main")
	refused(t, "bob: git push origin v1.1 (release tags are carol's)", bob.run(bobDir, "git", "push", "origin", "v1.1"),
		"releases", "carol", "git secure attest approve")
	bob.git(bobDir, "tag", "-d", "v1.1")

	// A change of security/ reaches main through a merge: bob's merge is
	// refused naming the folder rule and carol; with carol's and alice's
	// approvals it goes in.
	ok(t, "bob: git pull", bob.run(bobDir, "git", "pull", "-q", "--ff-only"))
	bob.git(bobDir, "checkout", "-q", "-b", "review/bob-sec")
	commitFile(t, bob, bobDir, "security/policy.txt", "stricter\n")
	ok(t, "bob: git push -u origin review/bob-sec", bob.run(bobDir, "git", "push", "-u", "origin", "review/bob-sec"))
	bob.git(bobDir, "checkout", "-q", "main")
	bob.git(bobDir, "merge", "-q", "--no-ff", "-m", "merge review/bob-sec", "review/bob-sec")
	merge := bob.rev(bobDir, "HEAD")
	mainBefore := bob.rev(bobDir, "refs/remotes/origin/main")
	refused(t, "bob: git push of a merge that changes security/", bob.run(bobDir, "git", "push", "origin", "main"),
		"security", "carol", "git secure attest approve")
	ok(t, "bob: git push origin main:review/bob-merge", bob.run(bobDir, "git", "push", "origin", "main:refs/heads/review/bob-merge"))
	for _, p := range []struct {
		u   *user
		dir string
	}{{carol, carolDir}, {alice, aliceDir}} {
		ok(t, p.u.name+": git fetch", p.u.run(p.dir, "git", "fetch", "origin"))
		p.u.secure(p.dir, "attest", "approve", "main", "--from", mainBefore, "--to", merge)
		ok(t, p.u.name+": git push (the approval alone)", p.u.run(p.dir, "git", "push"))
	}
	ok(t, "bob: git push origin main with the merge approved", bob.run(bobDir, "git", "push", "origin", "main"))

	// dave: plain git, no hooks, no configuration; a feature branch goes
	// in, main does not, and the refusal says what is needed.
	daveDir := dave.path("project")
	ok(t, "dave: git clone", dave.run(dave.sb.Home, "git", "clone", "-q", url, daveDir))
	dave.git(daveDir, "checkout", "-q", "-b", "feature/dave")
	commitFile(t, dave, daveDir, "src/dave.txt", "hello\n")
	ok(t, "dave: git push -u origin feature/dave", dave.run(daveDir, "git", "push", "-u", "origin", "feature/dave"))
	dave.git(daveDir, "checkout", "-q", "main")
	commitFile(t, dave, daveDir, "src/dave-main.txt", "straight to main\n")
	refused(t, "dave: git push origin main without git-secure", dave.run(daveDir, "git", "push", "origin", "main"),
		"refs/heads/main", "git secure hooks install")
	dave.git(daveDir, "reset", "-q", "--hard", "origin/main")

	// Everyone pulls and verifies; so does the server.
	for _, p := range []struct {
		u   *user
		dir string
	}{{alice, aliceDir}, {bob, bobDir}, {carol, carolDir}, {dave, daveDir}} {
		ok(t, p.u.name+": git pull", p.u.run(p.dir, "git", "pull", "-q", "--ff-only"))
		if p.u == dave {
			ok(t, "dave: fetch the metadata", dave.run(daveDir, "git", "fetch", "-q", "origin", "refs/secure/*:refs/secure/*"))
		}
		ok(t, p.u.name+": git secure verify", p.u.run(p.dir, "git", "secure", "verify", "--root-key", root))
		if got, want := p.u.rev(p.dir, "HEAD"), srv.admin.rev(repo, "refs/heads/main"); got != want {
			t.Errorf("%s's main after the pull = %s, want the server's %s", p.u.name, got, want)
		}
	}
	ok(t, "verify on the server", srv.admin.run(repo, "git", "secure", "verify"))
}
