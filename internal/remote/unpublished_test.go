package remote

import (
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// countingReader counts the log entries read.
type countingReader struct {
	r     rsl.Reader
	reads int
}

func (c *countingReader) ReadCommit(h gitrepo.Hash) (*gitrepo.Commit, error) {
	c.reads++
	return c.r.ReadCommit(h)
}

// TestUnpublishedEntriesOneWalk: the first push of a repository whose
// init recorded many refs the remote lacks finds every ref's latest entry
// in one walk of the log (reads at most one commit per entry; a walk per
// ref, as before, read 400 refs x ~400 entries = 80 000+), and finds the
// same entries rsl.LatestFor does: the newest that no annotation skips, a
// deletion left out, refs the remote has or the push names left out, and
// nothing the remote's log already had.
func TestUnpublishedEntriesOneWalk(t *testing.T) {
	sb := testutil.NewSandbox(t)
	dir := sb.InitRepo("repo", 3)
	g, err := gitrepo.OpenWithEnv(dir, sb.Environ())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	head, err := g.ResolveRevision("refs/heads/main")
	if err != nil {
		t.Fatal(err)
	}
	seed := sha256.Sum256([]byte("unpublished test key"))
	signer, err := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(seed[:]))
	if err != nil {
		t.Fatal(err)
	}
	who := gitrepo.Ident{Name: "T", Email: "t@example.com", When: time.Unix(1_700_000_000, 0).UTC()}
	var tip, remoteTip gitrepo.Hash
	n := uint64(0)
	put := func(e rsl.Entry) gitrepo.Hash {
		t.Helper()
		n++
		e.Number = n
		h, err := rsl.Write(g, &e, tip, who, func(p []byte) ([]byte, error) { return sign.SignSSHSig(signer, p, sign.NamespaceGit) })
		if err != nil {
			t.Fatal(err)
		}
		tip = h
		return h
	}
	put(rsl.Entry{Type: rsl.TypeRef, Ref: rsl.PolicyRef, New: head})
	put(rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/old", New: head}) // only in the remote's log, which lost it
	remoteTip = tip                                                     // the remote's log ends here
	const refs = 400
	for i := 0; i < refs; i++ {
		put(rsl.Entry{Type: rsl.TypeRef, Ref: fmt.Sprintf("refs/tags/t%03d", i), New: head})
	}
	// t000 moved, then that entry skipped: its latest is the first one.
	skippedID := put(rsl.Entry{Type: rsl.TypeRef, Ref: "refs/tags/t000", Old: head, New: gitrepo.ZeroHash})
	put(rsl.Entry{Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{Number: n, ID: skippedID}}, Reason: "test"})
	put(rsl.Entry{Type: rsl.TypeRef, Ref: "refs/tags/t001", Old: head, New: gitrepo.ZeroHash}) // deleted
	put(rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/main", New: head})                       // pushed now
	put(rsl.Entry{Type: rsl.TypeRef, Ref: "refs/tags/t002", New: head})                        // on the remote

	remote := map[string]gitrepo.Hash{rsl.Ref: remoteTip, "refs/tags/t002": head}
	cr := &countingReader{r: g}
	got, err := unpublishedEntries(cr, tip, remoteTip, remote, map[string]bool{"refs/heads/main": true})
	if err != nil {
		t.Fatal(err)
	}
	if cr.reads > int(n) {
		t.Errorf("read %d log entries for a log of %d: not one walk", cr.reads, n)
	}
	if len(got) != refs-2 {
		t.Fatalf("%d refs to publish, want %d (all tags but t001, deleted, and t002, on the remote)", len(got), refs-2)
	}
	for _, rec := range got {
		want, err := rsl.LatestFor(g, tip, rec.Entry.Ref)
		if err != nil {
			t.Fatal(err)
		}
		if want.ID != rec.ID {
			t.Errorf("%s: entry #%d, rsl.LatestFor finds #%d", rec.Entry.Ref, rec.Entry.Number, want.Entry.Number)
		}
		switch rec.Entry.Ref {
		case "refs/tags/t001", "refs/tags/t002", "refs/heads/main", "refs/heads/old":
			t.Errorf("%s listed to publish", rec.Entry.Ref)
		}
	}
	if got[0].Entry.Ref != "refs/tags/t000" || got[0].Entry.Number != 3 {
		t.Errorf("first: %s entry #%d, want refs/tags/t000 entry #3 (its later entry is skipped)", got[0].Entry.Ref, got[0].Entry.Number)
	}
}
