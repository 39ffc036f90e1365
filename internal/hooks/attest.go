package hooks

import (
	"fmt"

	"github.com/git-secure/git-secure/internal/attest"
)

// maxDroppedNamed bounds the envelopes a refusal names.
const maxDroppedNamed = 5

// attestationsKept refuses a push of refs/secure/attestations from old to
// new (old not zero, new extending it) whose tree drops or changes an
// envelope old's tree holds: the store is append-only, or anyone with push
// access could wipe everyone's approvals. Only the trees are compared
// (equal subtrees skipped); the blobs of what changed are read to tell a
// stored envelope from garbage planted at a signer's path, which may be
// replaced (attest.Protected).
func (c *Context) attestationsKept(l RefLine) error {
	g := c.Repo.Git
	oldC, err := g.ReadCommit(l.Old)
	if err != nil {
		return fmt.Errorf("hooks: read %s commit %s: %w", l.Ref, l.Old, err)
	}
	newC, err := g.ReadCommit(l.New)
	if err != nil {
		return fmt.Errorf("hooks: read %s commit %s: %w", l.Ref, l.New, err)
	}
	dropped, err := attest.Dropped(g, oldC.Tree, newC.Tree)
	if err != nil {
		return err
	}
	var named []string
	kept := 0
	for _, f := range dropped {
		_, data, err := g.ReadObject(f.Blob, attest.MaxEnvelopeSize)
		if err != nil || !attest.Protected(f.Path, data) {
			continue // cannot count for anyone: may go
		}
		kept++
		if len(named) < maxDroppedNamed {
			named = append(named, fmt.Sprintf("%s (%s, %s)", f.Path, attest.Describe(data), removedOrChanged(f)))
		}
	}
	if kept == 0 {
		return nil
	}
	c.say("error: %s only grows: this push removes or changes %d stored approval(s) or test run(s):", l.Ref, kept)
	for _, n := range named {
		c.say("error:   %s", n)
	}
	if kept > len(named) {
		c.say("error:   and %d more", kept-len(named))
	}
	c.say("hint: fetch the remote's %s and add to it (git fetch; git secure attest approve ...); stored envelopes are never removed", l.Ref)
	return ErrRejected
}

func removedOrChanged(f attest.StoredFile) string {
	if f.Changed {
		return "changed"
	}
	return "removed"
}
