package hooks

import (
	"errors"
	"fmt"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
)

// maxDroppedNamed bounds the envelopes a refusal names.
const maxDroppedNamed = 5

// defaultMaxPushStoreCommits bounds the new commits of
// refs/secure/attestations one push may bring (git config
// secure.maxPushStoreCommits raises it): each is compared with its parents,
// and git-secure adds one commit per approval or test run.
const defaultMaxPushStoreCommits = 1_000

// defaultMaxPushStoreEntries bounds the tree entries the comparisons of
// one push read (git config secure.maxPushStoreEntries raises it). A
// commit that adds one approval costs about twice the entries of the
// directories on its path (a store of 10 000 approvals: some 20 000), so
// the default takes a push of a hundred such commits. Without it, a pusher
// without any key kept the hook busy for over twenty minutes with 1000
// commits flipping the store between two trees of a million entries.
const defaultMaxPushStoreEntries = 4_000_000

// errStoreBudget is returned by budgetReader once a push has read its
// entries' worth of store trees.
var errStoreBudget = errors.New("tree entry budget spent")

// budgetReader reads trees and charges their entries to one push's budget.
type budgetReader struct {
	attest.TreeReader
	left int
}

func (b *budgetReader) ReadTree(h gitrepo.Hash) ([]gitrepo.TreeEntry, error) {
	if b.left < 0 {
		return nil, errStoreBudget
	}
	entries, err := b.TreeReader.ReadTree(h)
	if err != nil {
		return nil, err
	}
	if b.left -= len(entries); b.left < 0 {
		return nil, errStoreBudget
	}
	return entries, nil
}

// ReadObject reads a raw object (a junk tree of the old store, read as git
// reads it so that it can be removed); its size is bounded by the caller.
func (b *budgetReader) ReadObject(h gitrepo.Hash, maxSize int64) (string, []byte, error) {
	or, ok := b.TreeReader.(interface {
		ReadObject(gitrepo.Hash, int64) (string, []byte, error)
	})
	if !ok {
		return "", nil, errors.New("hooks: cannot read raw objects")
	}
	return or.ReadObject(h, maxSize)
}

// pairReader reads the trees of one comparison of a commit with a parent
// once: the shape check and the envelope comparison read the same trees,
// and the push's budget is charged once for them.
type pairReader struct {
	*budgetReader
	trees map[gitrepo.Hash][]gitrepo.TreeEntry
}

func newPairReader(b *budgetReader) *pairReader {
	return &pairReader{budgetReader: b, trees: map[gitrepo.Hash][]gitrepo.TreeEntry{}}
}

func (p *pairReader) ReadTree(h gitrepo.Hash) ([]gitrepo.TreeEntry, error) {
	if t, ok := p.trees[h]; ok {
		return t, nil
	}
	t, err := p.budgetReader.ReadTree(h)
	if err != nil {
		return nil, err
	}
	p.trees[h] = t
	return t, nil
}

// attestationsGrow refuses the deletion of refs/secure/attestations, or a
// new value that does not extend the old one, walking at most
// secure.maxPushStoreCommits commits back from it: the store writes one
// commit on its tip per change (attest.Store), so the old tip is on the
// new one's first-parent chain within the commits attestationsKept then
// compares. A longer chain (200 000 junk commits on the tip, or
// unrelated history) is refused as too many commits without walking it
// (git merge-base over it took seconds); a chain that ends within the
// bound without meeting the old tip (a merge made by hand) is left to
// git merge-base over that bounded history.
func (c *Context) attestationsGrow(l RefLine) error {
	if l.New.IsZero() {
		c.say("error: %s cannot be deleted", l.Ref)
		return ErrRejected
	}
	if l.Old.IsZero() {
		return nil
	}
	max, err := c.configInt("secure.maxPushStoreCommits", defaultMaxPushStoreCommits)
	if err != nil {
		return err
	}
	h := l.New
	for range max + 1 {
		if h == l.Old {
			return nil
		}
		commit, err := c.Repo.Git.ReadCommit(h)
		if err != nil {
			return fmt.Errorf("hooks: read %s commit %s: %w", l.Ref, h, err)
		}
		if len(commit.Parents) == 0 {
			if ok, err := c.Repo.Git.IsAncestor(l.Old, l.New); err == nil && ok {
				return nil
			}
			c.say("error: %s can only grow: %s does not extend %s", l.Ref, short(l.New), short(l.Old))
			c.say("hint: fetch the remote's %s and build on it (git fetch)", l.Ref)
			return ErrRejected
		}
		h = commit.Parents[0]
	}
	c.say("rejected: this push adds more than %d commits (or parents of merges) to %s; the server checks at most %d per push", max, l.Ref, max)
	c.say("hint: push in smaller steps, or ask the administrator to raise git config secure.maxPushStoreCommits")
	return ErrRejected
}

// attestationsKept refuses a push of refs/secure/attestations (created, or
// extending old) in which any new commit drops or changes an envelope one
// of its parents holds: the store is append-only, or anyone with push
// access could wipe everyone's approvals, at once or one commit at a time
// (a wipe hidden between two commits that restore nothing is still a
// wipe in the history verification reads). It also bounds how many new
// commits (commit-parent comparisons) one push may bring, and the tree
// entries their comparisons read (each pair of trees compared once). Only
// trees are compared (equal subtrees skipped); the blobs of what changed
// are read to tell a stored envelope from garbage planted at a signer's
// path, which may be replaced (attest.Protected).
func (c *Context) attestationsKept(l RefLine) error {
	g := c.Repo.Git
	max, err := c.configInt("secure.maxPushStoreCommits", defaultMaxPushStoreCommits)
	if err != nil {
		return err
	}
	entries, err := c.configInt("secure.maxPushStoreEntries", defaultMaxPushStoreEntries)
	if err != nil {
		return err
	}
	budget := &budgetReader{TreeReader: g, left: entries}
	seen := map[[2]gitrepo.Hash]bool{}
	commits, err := g.NewCommits(l.New, l.Old, max+1)
	if err != nil {
		return err
	}
	compared := 0
	for _, h := range commits {
		nc, err := g.ReadCommit(h)
		if err != nil {
			return fmt.Errorf("hooks: read %s commit %s: %w", l.Ref, h, err)
		}
		compared += max1(len(nc.Parents))
		if compared > max {
			c.say("rejected: this push adds more than %d commits (or parents of merges) to %s; the server checks at most %d per push", max, l.Ref, max)
			c.say("hint: push in smaller steps, or ask the administrator to raise git config secure.maxPushStoreCommits")
			return ErrRejected
		}
		if len(nc.Parents) == 0 {
			// The store's creation (or a root commit merged in) is its
			// growth from an empty tree.
			if err := c.storeShaped(newPairReader(budget), l.Ref, h, nc.Tree, gitrepo.ZeroHash, gitrepo.ZeroHash, entries); err != nil {
				return err
			}
		}
		for _, p := range nc.Parents {
			pc, err := g.ReadCommit(p)
			if err != nil {
				return fmt.Errorf("hooks: read %s commit %s: %w", l.Ref, p, err)
			}
			pair := [2]gitrepo.Hash{pc.Tree, nc.Tree}
			if seen[pair] {
				continue // the same trees, the same answer
			}
			seen[pair] = true
			trees := newPairReader(budget)
			if err := c.storeShaped(trees, l.Ref, h, nc.Tree, p, pc.Tree, entries); err != nil {
				return err
			}
			err = c.envelopesKept(trees, l.Ref, h, nc.Tree, p, pc.Tree)
			if errors.Is(err, errStoreBudget) {
				c.say("rejected: comparing the new commits of %s with their parents reads more than %d tree entries; the server reads at most %d per push", l.Ref, entries, entries)
				c.say("hint: push in smaller steps, or ask the administrator to raise git config secure.maxPushStoreEntries")
				return ErrRejected
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// storeShaped refuses commit (tree) of ref when a tree it adds or changes
// relative to its parent's (zero: none) does not parse or departs from the
// store's layout (attest.CheckShape): readers take such junk for nothing,
// but it is never git-secure's and is refused where it can be.
func (c *Context) storeShaped(budget *pairReader, ref string, commit, tree, parent, parentTree gitrepo.Hash, entries int) error {
	err := attest.CheckShape(budget, parentTree, tree)
	if errors.Is(err, errStoreBudget) {
		c.say("rejected: comparing the new commits of %s with their parents reads more than %d tree entries; the server reads at most %d per push", ref, entries, entries)
		c.say("hint: push in smaller steps, or ask the administrator to raise git config secure.maxPushStoreEntries")
		return ErrRejected
	}
	var shape *attest.ShapeError
	if !errors.As(err, &shape) {
		return err
	}
	of := "the store's creation"
	if !parent.IsZero() {
		of = "its parent " + short(parent)
	}
	c.say("error: %s: commit %s (against %s): %v", ref, short(commit), of, shape)
	c.say("error:   the store holds <kind>/<dir>/<signer>.json: directories two levels deep, regular files in them, every tree as git writes it (docs/format.md, section 3)")
	c.say("hint: store approvals and test runs with git secure attest ...; to remove junk, push a commit on the server's tip without it")
	return ErrRejected
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

// envelopesKept refuses commit (tree) of ref when its tree drops or
// changes a stored envelope of its parent's tree.
func (c *Context) envelopesKept(trees attest.TreeReader, ref string, commit, tree, parent, parentTree gitrepo.Hash) error {
	g := c.Repo.Git
	dropped, err := attest.Dropped(trees, parentTree, tree)
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
	c.say("error: %s only grows: its commit %s removes or changes %d stored approval(s) or test run(s) of its parent %s:", ref, short(commit), kept, short(parent))
	for _, n := range named {
		c.say("error:   %s", n)
	}
	if kept > len(named) {
		c.say("error:   and %d more", kept-len(named))
	}
	c.say("hint: fetch the remote's %s and add to it (git fetch; git secure attest approve ...); stored envelopes are never removed", ref)
	return ErrRejected
}

func removedOrChanged(f attest.StoredFile) string {
	if f.Changed {
		return "changed"
	}
	return "removed"
}
