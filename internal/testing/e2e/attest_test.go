package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestApprovalsAppendOnly reproduces issue 14 item 2 end to end: anyone
// with plain push access tries to wipe the approvals store of a server
// with the enforcing hook, entirely and in part (one envelope removed, one
// changed); the hook refuses both and names what they drop, and a normal
// approval is still accepted. Where no hook guards the store (a server
// without it, a clone where someone forced the ref), verification reads
// the approvals as the union over the store's history: the wipe does not
// make a fresh clone's verification fail.
func TestApprovalsAppendOnly(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("approvals.git", true)
	a, b, c, m := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "carol"), newUser(t, "mallory")
	dir := a.sb.InitRepo("alice", 3)
	a.configure(dir)
	a.git(dir, "remote", "add", "origin", url)
	a.secure(dir, "init")
	for _, u := range []*user{a, b, c} {
		a.secure(dir, "policy", "add-person", u.name, "--key", u.key.Public)
	}
	a.secure(dir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob", "--allow", "carol", "--threshold", "2")
	a.secure(dir, "policy", "apply")
	a.git(dir, "push", "-q", "-u", "origin", "main")

	// bob and carol approve alice's next update of main; it is pushed.
	next := a.commit(dir, "f.txt", "approved\n")
	for _, u := range []*user{b, c} {
		a.secure(dir, "attest", "approve", "main", "--to", next, "--key", u.key.Private)
	}
	if r := a.run(dir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("approved push refused:\n%s", r)
	}
	approved := srv.admin.rev(repo, "refs/secure/attestations")

	// mallory, with plain git and no key, builds on the server's store.
	mdir := filepath.Join(m.sb.Home, "m")
	m.git(m.sb.Home, "clone", "-q", url, mdir)
	m.git(mdir, "fetch", "-q", "origin", "refs/secure/attestations:refs/secure/attestations")
	files := strings.Split(m.git(mdir, "ls-tree", "-r", "--name-only", "refs/secure/attestations"), "\n")
	if len(files) != 2 {
		t.Fatalf("want bob's and carol's envelopes in the store, got %q", files)
	}
	const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	wipe := m.git(mdir, "commit-tree", emptyTree, "-p", "refs/secure/attestations", "-m", "wipe")
	// One envelope removed, the other replaced by other bytes.
	junk := m.runStdin(mdir, []byte("{}\n"), "git", "hash-object", "-w", "--stdin").stdout
	dirName, fileName := filepath.Dir(files[1]), filepath.Base(files[1])
	inner := m.runStdin(mdir, []byte(fmt.Sprintf("100644 blob %s\t%s\n", junk, fileName)), "git", "mktree").stdout
	mid := m.runStdin(mdir, []byte(fmt.Sprintf("040000 tree %s\t%s\n", inner, filepath.Base(dirName))), "git", "mktree").stdout
	top := m.runStdin(mdir, []byte(fmt.Sprintf("040000 tree %s\tapprovals\n", mid)), "git", "mktree").stdout
	partial := m.git(mdir, "commit-tree", top, "-p", "refs/secure/attestations", "-m", "partial wipe")

	for _, tc := range []struct {
		name, commit string
		want         []string
	}{
		{"wipe", wipe, []string{"refs/secure/attestations only grows", "removes or changes 2 stored approval(s)", files[0] + " (approval of refs/heads/main", files[1] + " (approval of refs/heads/main", "removed)", "hint:"}},
		{"partial wipe", partial, []string{"refs/secure/attestations only grows", "removes or changes 2 stored approval(s)", files[0] + " (approval of refs/heads/main", "removed)", files[1] + " (approval of refs/heads/main", "changed)"}},
	} {
		r := m.run(mdir, "git", "push", "origin", tc.commit+":refs/secure/attestations")
		if r.code == 0 {
			t.Fatalf("%s: the server accepted it:\n%s", tc.name, r)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: the refusal does not say %q:\n%s", tc.name, w, r)
			}
		}
		if got := srv.admin.rev(repo, "refs/secure/attestations"); got != approved {
			t.Fatalf("%s: the server's store moved to %s", tc.name, got)
		}
	}

	// A normal approval is still accepted: bob approves the next update.
	next = a.commit(dir, "g.txt", "approved again\n")
	a.secure(dir, "attest", "approve", "main", "--to", next, "--key", b.key.Private)
	if r := a.run(dir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("a normal approval push refused:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/secure/attestations"); got == approved {
		t.Fatalf("the server's store did not take bob's new approval")
	}

	// A server without the hook takes the wipe; a fresh clone of it still
	// verifies (the approvals are in the store's history) ...
	open, openURL := srv.newRepo("open.git", false)
	srv.admin.git(repo, "push", "-q", "--mirror", open)
	m.git(mdir, "fetch", "-q", openURL, "+refs/secure/attestations:refs/secure/attestations")
	wipe = m.git(mdir, "commit-tree", emptyTree, "-p", "refs/secure/attestations", "-m", "wipe")
	m.git(mdir, "push", "-q", openURL, wipe+":refs/secure/attestations")
	if got := srv.admin.rev(open, "refs/secure/attestations"); got != wipe {
		t.Fatalf("the unguarded server's store is %s, want the wipe %s", got, wipe)
	}
	d := newUser(t, "dave")
	mirror := filepath.Join(d.sb.Home, "mirror.git")
	d.git(d.sb.Home, "clone", "-q", "--mirror", openURL, mirror)
	if r := d.run(mirror, "git", "secure", "verify", "--full"); r.code != 0 {
		t.Fatalf("a fresh clone of the wiped store does not verify:\n%s", r)
	}
	clone := filepath.Join(d.sb.Home, "clone")
	d.git(d.sb.Home, "clone", "-q", openURL, clone)
	d.secure(clone, "hooks", "install")
	if r := d.run(clone, "git", "fetch"); r.code != 0 {
		t.Fatalf("a verified fetch of the wiped store failed:\n%s", r)
	}
	if r := d.run(clone, "git", "secure", "verify", "--full"); r.code != 0 {
		t.Fatalf("verify --full after fetching the wiped store:\n%s", r)
	}

	// ... and so does a clone where someone forced the wipe locally.
	a.git(dir, "fetch", "-q", openURL, "refs/secure/attestations")
	if r := a.run(dir, "env", "GIT_SECURE_INTERNAL=1", "git", "update-ref", "refs/secure/attestations", wipe); r.code != 0 {
		t.Fatalf("forcing the wipe locally:\n%s", r)
	}
	if r := a.run(dir, "git", "secure", "verify", "--full"); r.code != 0 {
		t.Fatalf("verify --full after a local wipe:\n%s", r)
	}
	// explain agrees: bob's approval of main's last update still counts.
	if r := a.run(dir, "git", "secure", "explain", "main"); r.code != 0 || !strings.Contains(r.stdout, "approved by: bob") {
		t.Fatalf("explain after a local wipe should count bob's approval:\n%s", r)
	}
}
