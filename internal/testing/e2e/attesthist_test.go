package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// storeFixture is an enforcing server whose main needs alice and bob:
// alice pushed main and one update of it bob approved (the server's store
// then stood at approved); mallory, who has push access and no key, has a
// clone (mdir) with the store.
type storeFixture struct {
	srv       *server
	repo      string
	a, b, m   *user
	dir, mdir string
	approved  string
}

func newStoreFixture(t *testing.T, name string) *storeFixture {
	t.Helper()
	srv := startServer(t, trFile)
	repo, url := srv.newRepo(name, true)
	a, b, m := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "mallory")
	dir := a.sb.InitRepo("alice", 2)
	a.configure(dir)
	a.git(dir, "remote", "add", "origin", url)
	a.secure(dir, "init")
	for _, u := range []*user{a, b} {
		a.secure(dir, "policy", "add-person", u.name, "--key", u.key.Public)
	}
	a.secure(dir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob", "--threshold", "2")
	a.secure(dir, "policy", "apply")
	a.git(dir, "push", "-q", "-u", "origin", "main")
	next := a.commit(dir, "f.txt", "approved\n")
	a.secure(dir, "attest", "approve", "main", "--to", next, "--key", b.key.Private)
	if r := a.run(dir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("approved push refused:\n%s", r)
	}
	approved := srv.admin.rev(repo, "refs/secure/attestations")

	mdir := filepath.Join(m.sb.Home, "m")
	m.git(m.sb.Home, "clone", "-q", url, mdir)
	m.git(mdir, "fetch", "-q", "origin", "refs/secure/attestations:refs/secure/attestations")
	return &storeFixture{srv: srv, repo: repo, a: a, b: b, m: m, dir: dir, mdir: mdir, approved: approved}
}

// approvalPushTaken: alice's push of a new update bob approves is
// accepted, and the server's store takes the approval.
func (fx *storeFixture) approvalPushTaken(t *testing.T) {
	t.Helper()
	next := fx.a.commit(fx.dir, "g.txt", "approved again\n")
	fx.a.secure(fx.dir, "attest", "approve", "main", "--to", next, "--key", fx.b.key.Private)
	if r := fx.a.run(fx.dir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("a normal approval push refused:\n%s", r)
	}
	if got := fx.srv.admin.rev(fx.repo, "refs/secure/attestations"); got == fx.approved {
		t.Fatalf("the server's store did not take bob's new approval")
	}
}

// TestApprovalsStoreEveryCommitKept: the server judges each new commit of
// refs/secure/attestations against its parents, not only the pushed tip
// against the old one: a wipe followed by a commit that puts the envelopes
// back (same tip tree) or by one that adds others is refused, naming the
// envelope and the commit; a push of more new store commits than
// secure.maxPushStoreCommits is refused with the setting named; a normal
// approval push is accepted.
func TestApprovalsStoreEveryCommitKept(t *testing.T) {
	t.Parallel()
	fx := newStoreFixture(t, "storehist.git")
	srv, repo, m, mdir, approved := fx.srv, fx.repo, fx.m, fx.mdir, fx.approved
	envelope := strings.TrimSpace(m.git(mdir, "ls-tree", "-r", "--name-only", "refs/secure/attestations"))
	if envelope == "" || strings.Contains(envelope, "\n") {
		t.Fatalf("want bob's one envelope in the store, got %q", envelope)
	}
	tree := m.git(mdir, "rev-parse", "refs/secure/attestations^{tree}")
	const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	wipe := m.git(mdir, "commit-tree", emptyTree, "-p", "refs/secure/attestations", "-m", "wipe")
	// The tip's tree is the old one: comparing tips alone sees nothing.
	restored := m.git(mdir, "commit-tree", tree, "-p", wipe, "-m", "put back")
	refused := func(what, commit string, want ...string) {
		t.Helper()
		r := m.run(mdir, "git", "push", "origin", commit+":refs/secure/attestations")
		if r.code == 0 {
			t.Fatalf("%s: the server accepted it:\n%s", what, r)
		}
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: the refusal does not say %q:\n%s", what, w, r)
			}
		}
		if got := srv.admin.rev(repo, "refs/secure/attestations"); got != approved {
			t.Fatalf("%s: the server's store moved to %s", what, got)
		}
	}
	refused("a wipe put back in the next commit", restored,
		"refs/secure/attestations only grows: its commit "+wipe[:12]+" removes or changes 1 stored approval(s)", envelope+" (approval of refs/heads/main", "removed)")

	// Too many new commits: each one is compared with its parents.
	srv.admin.git(repo, "config", "secure.maxPushStoreCommits", "3")
	tip := approved
	for i := 0; i < 4; i++ {
		tip = m.git(mdir, "commit-tree", tree, "-p", tip, "-m", "filler")
	}
	refused("four new store commits", tip, "adds more than 3 commits", "refs/secure/attestations", "secure.maxPushStoreCommits")

	// A normal approval push is accepted under the same setting.
	fx.approvalPushTaken(t)
}

// TestApprovalsStoreEntryBudget: the server's comparison of each new store
// commit with its parents reads trees, and a pusher without any key once
// kept the hook busy for over twenty minutes (and 380 MB) with 1000 store
// commits flipping between two trees of a million entries. Every tree
// entry read is now charged to one budget for the whole push
// (secure.maxPushStoreEntries): mallory's commits, each with another
// version of a directory of 3000 entries, are refused naming the setting
// and the server's store stays; a normal approval push passes under the
// same setting.
func TestApprovalsStoreEntryBudget(t *testing.T) {
	t.Parallel()
	fx := newStoreFixture(t, "storebudget.git")
	srv, repo, m, mdir, approved := fx.srv, fx.repo, fx.m, fx.mdir, fx.approved
	mktree := func(lines string) string {
		t.Helper()
		r := m.runStdin(mdir, []byte(lines), "git", "mktree")
		if r.code != 0 {
			t.Fatalf("git mktree:\n%s", r)
		}
		return strings.TrimSpace(r.stdout)
	}
	blob := strings.TrimSpace(m.runStdin(mdir, []byte("filler\n"), "git", "hash-object", "-w", "--stdin").stdout)
	leaf := mktree("100644 blob " + blob + "\tfiller.json\n")
	var big strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&big, "040000 tree %s\td%04d\n", leaf, i)
	}
	root := m.git(mdir, "ls-tree", "refs/secure/attestations") + "\n"
	// Nothing stored is dropped: each commit only adds another version of
	// the bulk directory, which the server has to read in full twice.
	tip := approved
	for i := 0; i < 8; i++ {
		bulk := mktree(big.String() + fmt.Sprintf("040000 tree %s\tz%d\n", leaf, i))
		tree := mktree(root + "040000 tree " + bulk + "\tbulk\n")
		tip = m.git(mdir, "commit-tree", tree, "-p", tip, "-m", "bulk")
	}
	srv.admin.git(repo, "config", "secure.maxPushStoreEntries", "20000")
	r := m.run(mdir, "git", "push", "origin", tip+":refs/secure/attestations")
	if r.code == 0 || !containsAll(r.stderr, "comparing the new commits of refs/secure/attestations with their parents reads more than 20000 tree entries", "raise git config secure.maxPushStoreEntries") {
		t.Fatalf("eight store commits of 3000-entry trees under a budget of 20000 entries: want a refusal naming the setting:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/secure/attestations"); got != approved {
		t.Fatalf("the server's store moved to %s", got)
	}

	// A normal approval push is accepted under the same setting.
	fx.approvalPushTaken(t)
}
