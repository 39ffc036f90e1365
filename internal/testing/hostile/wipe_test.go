package hostile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/verify"
)

// storeCommit puts a commit with tree on top of the attestation store, as
// anyone with write access to a clone or an unguarded server can.
func (f *fixture) storeCommit(tree gitrepo.Hash) {
	f.t.Helper()
	cur := f.ref(attest.Ref)
	who, _ := f.r.Ident()
	c, err := f.g.WriteObject("commit", gitrepo.EncodeCommit(tree, []gitrepo.Hash{cur}, who, who, "git-secure: hostile\n"))
	if err != nil {
		f.t.Fatal(err)
	}
	f.setRef(attest.Ref, cur, c)
}

// TestApprovalsWipe reproduces issue 14 item 2 on the verification side: a
// commit that empties the attestation store (or drops one approval and
// alters another) must not turn a verified history into a failing one;
// approvals count as the union over the store's history. And that union
// lets no forgery through: an envelope counts only on its own signature,
// whenever it was stored, dropped or stored again.
func TestApprovalsWipe(t *testing.T) {
	f := newFixture(t, 2)
	old := f.ref("refs/heads/main")
	f.s.Commit(f.dir, "approved.txt", "x\n", "needs bob")
	new := f.ref("refs/heads/main")
	if _, err := f.r.Record("main", f.keys["alice"].Private); err != nil {
		t.Fatalf("alice records main: %v", err)
	}
	if _, err := f.r.Approve("main", new.String(), "", f.keys["bob"].Private); err != nil {
		t.Fatalf("bob approves: %v", err)
	}
	if _, err := f.verify(); err != nil {
		t.Fatalf("approved update: %v", err)
	}
	approved := f.ref(attest.Ref)

	t.Run("wipe", func(t *testing.T) {
		empty, _ := gitrepo.ParseHash(gitrepo.EmptyTreeHash)
		f.storeCommit(empty)
		defer f.setRef(attest.Ref, f.ref(attest.Ref), approved)
		res, err := f.verify()
		if err != nil {
			t.Fatalf("the store emptied by a later commit: verify = %v; want success (bob's approval is in the store's history)", clip(err.Error()))
		}
		if !strings.Contains(strings.Join(res.Warnings, "\n"), attest.Ref+": a commit of its history removed or changed stored approvals") {
			t.Errorf("verify must warn that the store was rewritten; warnings %q", res.Warnings)
		}
	})
	t.Run("partial wipe", func(t *testing.T) {
		// carol approves too; then one commit drops bob's envelope and
		// alters carol's.
		bobFile := attest.SignerFile(f.pub("bob"))
		junk, err := f.g.WriteObject("blob", []byte("{}"))
		if err != nil {
			t.Fatal(err)
		}
		dir := strings.Split(attest.ApprovalDir("refs/heads/main", old, new), "/")[1]
		inner, _ := f.g.WriteTree([]gitrepo.TreeEntry{{Mode: gitrepo.ModeFile, Name: strings.Replace(bobFile, "a", "b", 1), Hash: junk}})
		mid, _ := f.g.WriteTree([]gitrepo.TreeEntry{{Mode: gitrepo.ModeTree, Name: dir, Hash: inner}})
		top, _ := f.g.WriteTree([]gitrepo.TreeEntry{{Mode: gitrepo.ModeTree, Name: "approvals", Hash: mid}})
		f.storeCommit(top)
		defer f.setRef(attest.Ref, f.ref(attest.Ref), approved)
		if _, err := f.verify(); err != nil {
			t.Fatalf("bob's envelope dropped by a later commit: verify = %v; want success", clip(err.Error()))
		}
	})

	// A second update, which no valid approval was ever stored for: bob's
	// approval of the first update replayed into its directory under bob's
	// name, dropped, then mallory's envelope stored under bob's name.
	f.s.Commit(f.dir, "second.txt", "y\n", "needs bob again")
	second := f.ref("refs/heads/main")
	res, err := f.r.Record("main", f.keys["alice"].Private)
	if err != nil {
		t.Fatalf("alice records main again: %v", err)
	}
	entry := fmt.Sprintf("entry #%d", res.Entry)
	bobFile := attest.SignerFile(f.pub("bob"))
	f.storeWith(new, second, map[string][]byte{bobFile: f.envelope("bob", old, new)})
	f.storeWith(new, second, map[string][]byte{"README": []byte("nothing here")})
	f.storeWith(new, second, map[string][]byte{bobFile: f.envelope("mallory", new, second)})
	failed := f.mustFail("forgeries dropped and stored again", 64*mib, verify.ErrThreshold, entry)
	if failed != nil && !strings.Contains(failed.Error(), "ignored") {
		t.Errorf("the forgeries should be noted as ignored: %v", clip(failed.Error()))
	}
	// The first update, whose approval the stores above dropped, is not
	// among the problems.
	for _, p := range failedProblems(failed) {
		if !strings.Contains(p.Error(), entry) {
			t.Errorf("a problem outside %s: %v", entry, p)
		}
	}
}

// TestApprovalSquatting: garbage planted at a signer's path before they
// approve (the store keeps envelopes forever) must not keep them from
// storing their approval: Add replaces what cannot count, and keeps what
// can.
func TestApprovalSquatting(t *testing.T) {
	f := newFixture(t, 2)
	old := f.ref("refs/heads/main")
	f.s.Commit(f.dir, "approved.txt", "x\n", "needs bob")
	new := f.ref("refs/heads/main")
	if _, err := f.r.Record("main", f.keys["alice"].Private); err != nil {
		t.Fatalf("alice records main: %v", err)
	}
	bobFile := attest.SignerFile(f.pub("bob"))
	path := attest.ApprovalDir("refs/heads/main", old, new) + "/" + bobFile
	f.storeWith(old, new, map[string][]byte{bobFile: f.envelope("mallory", old, new)})
	if _, err := f.r.Approve("main", new.String(), "", f.keys["bob"].Private); err != nil {
		t.Fatalf("bob approves over mallory's planted file: %v", err)
	}
	if _, err := f.verify(); err != nil {
		t.Fatalf("bob's approval stored over a planted file: %v", err)
	}
	s, err := attest.OpenStore(f.g)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Approvals("refs/heads/main", old, new)
	if err != nil || !attest.Protected(path, got[bobFile]) {
		t.Fatalf("bob's file after approving: %q (%v); want his envelope", got[bobFile], err)
	}
}

func failedProblems(f *verify.Failed) []*verify.Problem {
	if f == nil {
		return nil
	}
	return f.Problems
}
