package attest

import (
	"fmt"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/gitrepo/fastpath"
)

// Junk in the store. Anyone with push access to a server (or a forge)
// without the enforcing hook can put into the store what no git-secure
// writer makes: a tree git accepts but gitrepo.ParseTree refuses (a name
// twice, unsorted names), a blob where a directory goes, a tree where an
// envelope file goes. None of it is signed, so none of it may turn a
// verification, a fetch or an approval into an error: readers take such
// an entry as "nothing that counts" (noted), writers replace it, and the
// enforcing hook refuses a push that adds it (CheckShape). A junk tree is
// still read as git reads it (readStoreTree), so that an envelope stored
// next to junk is neither hidden from readers nor dropped unseen.

// objectReader reads raw objects; *gitrepo.Repo is one.
type objectReader interface {
	ReadObject(h gitrepo.Hash, maxSize int64) (typ string, data []byte, err error)
}

// maxJunkTree bounds a junk tree read as git reads it (git's own bound on
// the trees gitrepo parses).
const maxJunkTree = 64 << 20

// maxJunkCandidates bounds the distinct subtrees of one name a junk tree
// may send a reader into (each is read).
const maxJunkCandidates = 16

// readStoreTree reads tree h. A tree that parses strictly gives its
// entries. One that does not gives, as junk, why, with the entries git
// would read in it (in order, names as they are, duplicates included,
// up to the first malformed byte) when r can read raw objects; an object
// that is not a tree gives junk and no entries. An object that cannot be
// read at all is an error, as before: that is a broken repository, not
// something a pusher planted.
func readStoreTree(r TreeReader, h gitrepo.Hash) (entries []gitrepo.TreeEntry, junk, err error) {
	entries, err = r.ReadTree(h)
	if err == nil {
		return entries, nil, nil
	}
	or, ok := r.(objectReader)
	if !ok {
		return nil, nil, err
	}
	typ, data, rerr := or.ReadObject(h, maxJunkTree)
	if rerr != nil {
		return nil, nil, err
	}
	if typ != "tree" {
		return nil, fmt.Errorf("it is a %s, not a tree", typ), nil
	}
	strictErr := unparsable(data)
	if strictErr == nil {
		return nil, nil, err // it parses: the failure was not the tree's (a budget, I/O)
	}
	entries, _ = lenientTree(data)
	return entries, fmt.Errorf("it does not parse: %w", strictErr), nil
}

// unparsable returns why raw does not parse strictly, or nil.
func unparsable(raw []byte) error {
	_, err := gitrepo.ParseTree(raw)
	return err
}

// lenientTree reads a raw tree as git's tree walker does: every entry in
// order, any name, modes normalized; it stops at the first malformed
// entry and returns what came before it with the error.
func lenientTree(raw []byte) ([]gitrepo.TreeEntry, error) {
	var out []gitrepo.TreeEntry
	err := fastpath.TreeEntries(raw, func(string) error { return nil }, func(mode uint32, name string, id fastpath.ID) error {
		out = append(out, gitrepo.TreeEntry{Mode: mode, Name: name, Hash: gitrepo.Hash(id)})
		return nil
	})
	return out, err
}

// ShapeError says where a store tree departs from the store's layout.
type ShapeError struct {
	Path   string // slash-separated, "" for the root
	Reason string
}

func (e *ShapeError) Error() string {
	p := e.Path
	if p == "" {
		p = "the root tree"
	}
	return fmt.Sprintf("store entry %s: %s", p, e.Reason)
}

// CheckShape reads every tree of store tree new that tree old (zero: the
// store is created) does not hold with the same hash, strictly, and
// returns a *ShapeError for the first that does not parse or departs from
// the layout: the root and each <kind> directory hold directories only,
// each <kind>/<dir> holds regular files only (section 3 of
// docs/format.md). Equal subtrees are skipped, so the cost is that of
// what changed; old is only listed, never required to parse (junk an
// older server took may be replaced). Errors other than *ShapeError are
// the repository's (an object that cannot be read).
func CheckShape(r TreeReader, old, new gitrepo.Hash) error {
	return checkShape(r, old, new, "", 0)
}

func checkShape(r TreeReader, old, new gitrepo.Hash, prefix string, depth int) error {
	if old == new {
		return nil
	}
	entries, err := r.ReadTree(new)
	if err != nil {
		or, ok := r.(objectReader)
		if !ok {
			return err
		}
		typ, data, rerr := or.ReadObject(new, maxJunkTree)
		if rerr != nil {
			return err
		}
		path := strings.TrimSuffix(prefix, "/")
		if typ != "tree" {
			return &ShapeError{Path: path, Reason: fmt.Sprintf("a %s where a directory goes", typ)}
		}
		perr := unparsable(data)
		if perr == nil {
			return err // it parses: the failure was not the tree's (a budget, I/O)
		}
		return &ShapeError{Path: path, Reason: fmt.Sprintf("the tree does not parse (%v)", perr)}
	}
	oldIndex := map[string]gitrepo.TreeEntry{}
	if !old.IsZero() {
		// Only to skip what did not change: junk here is being replaced.
		olds, _, err := readStoreTree(r, old)
		if err != nil {
			return err
		}
		for _, e := range olds {
			if _, dup := oldIndex[e.Name]; !dup {
				oldIndex[e.Name] = e
			}
		}
	}
	for _, e := range entries {
		path := prefix + e.Name
		o, had := oldIndex[e.Name]
		if had && o.Mode == e.Mode && o.Hash == e.Hash {
			continue
		}
		if depth == storeDepth {
			if e.Mode != gitrepo.ModeFile {
				return &ShapeError{Path: path, Reason: fmt.Sprintf("mode %o where a regular file (100644) goes", e.Mode)}
			}
			continue
		}
		if e.Mode != gitrepo.ModeTree {
			return &ShapeError{Path: path, Reason: fmt.Sprintf("mode %o where a directory (40000) goes", e.Mode)}
		}
		sub := gitrepo.ZeroHash
		if had && o.Mode == gitrepo.ModeTree {
			sub = o.Hash
		}
		if err := checkShape(r, sub, e.Hash, path+"/", depth+1); err != nil {
			return err
		}
	}
	return nil
}
