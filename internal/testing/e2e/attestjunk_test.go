package e2e

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// signerFileOf is the store file name of a user's key (attest.SignerFile).
func signerFileOf(t *testing.T, u *user) string {
	t.Helper()
	pub, err := os.ReadFile(u.key.Public)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(pub))
	wire, err := base64.StdEncoding.DecodeString(f[1])
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wire)
	return hex.EncodeToString(sum[:]) + ".json"
}

// approvalDirOf is attest.ApprovalDir.
func approvalDirOf(ref, from, to string) string {
	sum := sha256.Sum256([]byte("git-secure-approval-v1\x00" + ref + "\x00" + from + "\x00" + to))
	return "approvals/" + hex.EncodeToString(sum[:])
}

// dupTree writes, in the repository at gitDir, a tree git accepts but
// git-secure's strict parser refuses: the given entries ("<mode> <name>
// <hash>"), then x.json twice.
func dupTree(t *testing.T, u *user, gitDir string, entries ...string) string {
	t.Helper()
	junk := strings.TrimSpace(u.must(gitDir, "sh", "-c", "echo junk | git hash-object -w --stdin"))
	var raw []byte
	add := func(mode, name, hash string) {
		b, err := hex.DecodeString(hash)
		if err != nil {
			t.Fatal(err)
		}
		raw = append(append(raw, mode+" "+name+"\x00"...), b...)
	}
	for _, e := range entries {
		f := strings.Fields(e)
		add(f[0], f[1], f[2])
	}
	add("100644", "x.json", junk)
	add("100644", "x.json", junk)
	file := filepath.Join(t.TempDir(), "tree")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return u.git(gitDir, "hash-object", "-t", "tree", "--literally", "-w", file)
}

// withDir returns the store commit, on top of tip, whose tree is tip's with
// approvals/<dir> set to tree sub (written in gitDir with plain git).
func withDir(t *testing.T, u *user, gitDir, tip, dir, sub string) string {
	t.Helper()
	name := strings.TrimPrefix(dir, "approvals/")
	list := func(treeish string) string {
		r := u.run(gitDir, "git", "ls-tree", treeish)
		if r.code != 0 {
			return ""
		}
		return r.stdout
	}
	var lines []string
	for _, l := range strings.Split(list(tip+":approvals"), "\n") {
		if l != "" && !strings.HasSuffix(l, "\t"+name) {
			lines = append(lines, l)
		}
	}
	lines = append(lines, "040000 tree "+sub+"\t"+name)
	approvals := strings.TrimSpace(u.runStdin(gitDir, []byte(strings.Join(lines, "\n")+"\n"), "git", "mktree").stdout)
	lines = nil
	for _, l := range strings.Split(list(tip+"^{tree}"), "\n") {
		if l != "" && !strings.HasSuffix(l, "\tapprovals") {
			lines = append(lines, l)
		}
	}
	lines = append(lines, "040000 tree "+approvals+"\tapprovals")
	root := strings.TrimSpace(u.runStdin(gitDir, []byte(strings.Join(lines, "\n")+"\n"), "git", "mktree").stdout)
	return u.git(gitDir, "commit-tree", root, "-p", tip, "-m", "junk")
}

// TestApprovalsStoreJunkRefused (attack s15 03): a pusher without a key
// put, in refs/secure/attestations, a tree git accepts but git-secure's
// strict parser refuses (a name twice) in a directory the store's
// previous commit did not have, or a tree where an approval file goes:
// the hook never read new directories, and every reader then failed
// (TestApprovalsStoreJunkCountsForNothing). The hook now reads every tree
// a push adds and refuses such a push, naming the path and what is wrong.
func TestApprovalsStoreJunkRefused(t *testing.T) {
	t.Parallel()
	fx := newStoreFixture(t, "storejunk.git")
	srv, repo, a, m, mdir := fx.srv, fx.repo, fx.a, fx.m, fx.mdir

	// The hook: junk in a new directory, and a blob where a directory goes.
	pending := approvalDirOf("refs/heads/main", strings.Repeat("1", 40), strings.Repeat("2", 40))
	bad := dupTree(t, m, mdir)
	m.git(mdir, "hash-object", "-t", "tree", "-w", "/dev/null")
	for _, tc := range []struct {
		what, commit, want string
	}{
		{"a name twice in a new directory", withDir(t, m, mdir, fx.approved, pending, bad),
			"store entry " + pending + ": the tree does not parse (tree entry \"x.json\": duplicate name)"},
		{"a tree at a signer file", withDir(t, m, mdir, fx.approved, pending,
			strings.TrimSpace(m.runStdin(mdir, []byte("040000 tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\t"+signerFileOf(t, a)+"\n"), "git", "mktree", "--missing").stdout)),
			"store entry " + pending + "/" + signerFileOf(t, a) + ": mode 40000 where a regular file (100644) goes"},
	} {
		r := m.run(mdir, "git", "push", "origin", tc.commit+":refs/secure/attestations")
		if r.code == 0 {
			t.Fatalf("%s: the server took it (the old hook never read new directories):\n%s", tc.what, r)
		}
		if !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: the refusal does not say %q:\n%s", tc.what, tc.want, r)
		}
		if got := srv.admin.rev(repo, "refs/secure/attestations"); got != fx.approved {
			t.Fatalf("%s: the server's store moved to %s", tc.what, got)
		}
	}

}

// TestApprovalsStoreJunkCountsForNothing (attack s15 03): junk a server
// took without the hook (an older server, a forge) counts for nothing: a
// pinned clone, a fetch, approvals over it and the push of them work
// (before, each failed: "duplicate name", "is not a regular file"), an
// approval stored next to junk still counts, and a push that removes the
// junk is taken (before, the hook failed reading it) while one dropping
// the approval with it is not.
func TestApprovalsStoreJunkCountsForNothing(t *testing.T) {
	t.Parallel()
	fx := newStoreFixture(t, "storejunk2.git")
	srv, repo, a, b, m, mdir := fx.srv, fx.repo, fx.a, fx.b, fx.m, fx.mdir
	url := srv.base + "/storejunk2.git"

	// Junk a server took without the hook: next to bob's approval of the
	// recorded update (a directory every verification reads), and at
	// alice's file of the approval of her pending update.
	y := srv.admin.rev(repo, "refs/heads/main")
	x := srv.admin.rev(repo, "refs/heads/main~1")
	recorded := approvalDirOf("refs/heads/main", x, y)
	bobEntry := strings.Fields(srv.admin.git(repo, "ls-tree", fx.approved+":"+recorded))
	if len(bobEntry) != 4 {
		t.Fatalf("want bob's one approval in %s, got %v", recorded, bobEntry)
	}
	z := a.commit(fx.dir, "h.txt", "pending\n")
	next := approvalDirOf("refs/heads/main", y, z)
	srv.admin.git(repo, "hash-object", "-t", "tree", "-w", "/dev/null")
	aliceAsTree := strings.TrimSpace(srv.admin.runStdin(repo, []byte("040000 tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\t"+signerFileOf(t, a)+"\n"), "git", "mktree").stdout)
	c := withDir(t, srv.admin, repo, fx.approved, recorded, dupTree(t, srv.admin, repo, "100644 "+bobEntry[3]+" "+bobEntry[2]))
	c = withDir(t, srv.admin, repo, c, next, aliceAsTree)
	srv.admin.git(repo, "update-ref", "refs/secure/attestations", c, fx.approved)

	carol := newUser(t, "carol")
	dest := carol.path("clone")
	r := carol.run(carol.sb.Home, "git", "secure", "clone", url, dest, "--root-key", a.fingerprint())
	if r.code != 0 {
		t.Fatalf("a pinned clone failed over junk in the store (the old jam: \"duplicate name\"):\n%s", r)
	}
	if want := "store entry " + recorded + ": it does not parse"; !strings.Contains(r.stderr, want) {
		t.Errorf("the clone does not warn %q:\n%s", want, r)
	}
	if r := a.run(fx.dir, "git", "fetch", "origin"); r.code != 0 {
		t.Fatalf("alice's fetch failed over junk in the store:\n%s", r)
	}
	for i, key := range []string{a.key.Private, b.key.Private} {
		r := a.run(fx.dir, "git", "secure", "attest", "approve", "main", "--to", z, "--key", key)
		if r.code != 0 {
			t.Fatalf("approving over junk in the store (the old jam: \"is not a regular file\"):\n%s", r)
		}
		if want := "warning: store entry " + next + "/" + signerFileOf(t, a) + ": mode 40000 where a regular file goes; replaced"; i == 0 && !strings.Contains(r.stderr, want) {
			t.Errorf("alice's approval replaced junk without saying %q:\n%s", want, r)
		}
	}
	if r := a.run(fx.dir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("alice's approved push failed over junk in the store:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/heads/main"); got != z {
		t.Fatalf("the server's main is %s, want alice's approved %s", got, z)
	}
	if got := strings.Fields(srv.admin.git(repo, "ls-tree", "refs/secure/attestations:"+next, signerFileOf(t, a))); len(got) != 4 || got[1] != "blob" {
		t.Fatalf("alice's approval did not replace the junk at her file: %v", got)
	}

	// Removing the junk (keeping bob's approval) is taken: the hook does
	// not need the junk to parse.
	m.git(mdir, "fetch", "-q", "origin", "+refs/secure/attestations:refs/secure/attestations")
	clean := strings.TrimSpace(m.runStdin(mdir, []byte(strings.Join(bobEntry[:3], " ")+"\t"+bobEntry[3]+"\n"), "git", "mktree").stdout)
	fix := withDir(t, m, mdir, m.rev(mdir, "refs/secure/attestations"), recorded, clean)
	if r := m.run(mdir, "git", "push", "origin", fix+":refs/secure/attestations"); r.code != 0 {
		t.Fatalf("removing the junk was refused (the old hook failed reading it):\n%s", r)
	}
	// Dropping bob's approval with it is not.
	empty := strings.TrimSpace(m.runStdin(mdir, []byte{}, "git", "mktree").stdout)
	wipe := withDir(t, m, mdir, fix, recorded, empty)
	if r := m.run(mdir, "git", "push", "origin", wipe+":refs/secure/attestations"); r.code == 0 || !strings.Contains(r.stderr, "removes or changes 1 stored approval") {
		t.Fatalf("dropping bob's approval: want a refusal naming it:\n%s", r)
	}
}

// TestApprovalsStoreCreationChecked (attack s15 03, find03b): the push that
// creates refs/secure/attestations was not checked at all (nothing could
// have been dropped), so a pusher without a key could create the store
// with a tree at alice's file of a proposed update's approval, and alice
// could not approve it. The creation is now checked as growth from an
// empty tree.
func TestApprovalsStoreCreationChecked(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("storecreate.git", true)
	a, m := newUser(t, "alice"), newUser(t, "mallory")
	dir := a.sb.InitRepo("alice", 2)
	a.configure(dir)
	a.git(dir, "remote", "add", "origin", url)
	a.secure(dir, "init")
	a.secure(dir, "policy", "add-person", "alice", "--key", a.key.Public)
	a.secure(dir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice")
	a.secure(dir, "policy", "apply")
	a.git(dir, "push", "-q", "-u", "origin", "main")
	if r := srv.admin.run(repo, "git", "rev-parse", "-q", "--verify", "refs/secure/attestations"); r.code == 0 {
		t.Fatalf("the store exists before any approval: %s", r.stdout)
	}
	mdir := m.path("m")
	m.git(m.sb.Home, "clone", "-q", url, mdir)
	m.git(mdir, "hash-object", "-t", "tree", "-w", "/dev/null")
	pending := approvalDirOf("refs/heads/main", strings.Repeat("1", 40), strings.Repeat("2", 40))
	file := signerFileOf(t, a)
	d := strings.TrimSpace(m.runStdin(mdir, []byte("040000 tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\t"+file+"\n"), "git", "mktree").stdout)
	k := strings.TrimSpace(m.runStdin(mdir, []byte("040000 tree "+d+"\t"+strings.TrimPrefix(pending, "approvals/")+"\n"), "git", "mktree").stdout)
	root := strings.TrimSpace(m.runStdin(mdir, []byte("040000 tree "+k+"\tapprovals\n"), "git", "mktree").stdout)
	c := m.git(mdir, "commit-tree", root, "-m", "junk")
	r := m.run(mdir, "git", "push", "origin", c+":refs/secure/attestations")
	if r.code == 0 {
		t.Fatalf("the server took the store's creation with a tree at alice's file (the old hook never checked the creation):\n%s", r)
	}
	if !containsAll(r.stderr, "against the store's creation", "store entry "+pending+"/"+file+": mode 40000 where a regular file (100644) goes") {
		t.Errorf("the refusal does not name the creation and the path:\n%s", r)
	}
	if r := srv.admin.run(repo, "git", "rev-parse", "-q", "--verify", "refs/secure/attestations"); r.code == 0 {
		t.Fatalf("the server's store was created: %s", r.stdout)
	}
}
