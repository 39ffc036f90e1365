package pushcert

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// Ref is the store of push certificates: a chain of commits that only
// the enforcing server writes (its pre-receive hook, for each signed push
// that adds log entries).
const Ref = "refs/secure/pushcerts"

// MaxPerEntry bounds the certificates read for one entry (a push retried
// after its certificate was stored, but its refs not moved, leaves two).
const MaxPerEntry = 8

// Reader is what Lookup reads. *gitrepo.Repo satisfies it.
type Reader interface {
	ReadCommit(h gitrepo.Hash) (*gitrepo.Commit, error)
	ReadTree(h gitrepo.Hash) ([]gitrepo.TreeEntry, error)
	ReadObject(h gitrepo.Hash, maxSize int64) (typ string, data []byte, err error)
}

// Writer is what Append needs. *gitrepo.Repo satisfies it.
type Writer interface {
	Reader
	WriteObject(typ string, data []byte) (gitrepo.Hash, error)
	WriteTree(entries []gitrepo.TreeEntry) (gitrepo.Hash, error)
}

var _ Writer = (*gitrepo.Repo)(nil)

// Dir is the directory of the certificates of log entry id:
// "<2 hex>/<38 hex>" of the entry's object name. Each certificate in it
// is a regular file named by its blob's object name.
func Dir(entry gitrepo.Hash) string {
	s := entry.String()
	return s[:2] + "/" + s[2:]
}

// Lookup returns the certificates stored for log entry id in the store
// commit tip (none when tip is zero or holds none), at most MaxPerEntry,
// in name order. Files whose name is not their blob's object name or that
// are not regular files are skipped; a blob over MaxSize fails the read.
// Nothing returned is checked: callers Parse and verify each.
func Lookup(r Reader, tip, entry gitrepo.Hash) ([][]byte, error) {
	if tip.IsZero() {
		return nil, nil
	}
	c, err := r.ReadCommit(tip)
	if err != nil {
		return nil, fmt.Errorf("pushcert: read %s commit %s: %w", Ref, tip, err)
	}
	tree := c.Tree
	for _, name := range strings.Split(Dir(entry), "/") {
		sub, ok, err := child(r, tree, name, gitrepo.ModeTree)
		if err != nil || !ok {
			return nil, err
		}
		tree = sub
	}
	entries, err := r.ReadTree(tree)
	if err != nil {
		return nil, fmt.Errorf("pushcert: read %s tree %s: %w", Ref, tree, err)
	}
	var out [][]byte
	for _, e := range entries {
		if len(out) == MaxPerEntry {
			break
		}
		if e.Mode != gitrepo.ModeFile || e.Name != e.Hash.String() {
			continue
		}
		typ, data, err := r.ReadObject(e.Hash, MaxSize)
		if err != nil {
			return nil, fmt.Errorf("pushcert: read certificate %s of entry %s: %w", e.Hash, entry, err)
		}
		if typ != "blob" {
			continue
		}
		out = append(out, data)
	}
	return out, nil
}

// child finds name with mode in tree.
func child(r Reader, tree gitrepo.Hash, name string, mode uint32) (gitrepo.Hash, bool, error) {
	entries, err := r.ReadTree(tree)
	if err != nil {
		return gitrepo.ZeroHash, false, fmt.Errorf("pushcert: read %s tree %s: %w", Ref, tree, err)
	}
	for _, e := range entries {
		if e.Name == name {
			return e.Hash, e.Mode == mode, nil
		}
	}
	return gitrepo.ZeroHash, false, nil
}

// Append writes a store commit on top of tip (zero: the first) whose tree
// is tip's with certificate raw added for each of entries, and returns
// it; the ref is not moved. Every file of tip's tree is kept (the store
// only grows). when dates the commit.
func Append(w Writer, tip gitrepo.Hash, raw []byte, entries []gitrepo.Hash, when time.Time) (gitrepo.Hash, error) {
	if len(raw) > MaxSize {
		return gitrepo.ZeroHash, fmt.Errorf("pushcert: certificate of %d bytes, more than %d", len(raw), MaxSize)
	}
	if len(entries) == 0 {
		return gitrepo.ZeroHash, errors.New("pushcert: no entry to store a certificate for")
	}
	blob, err := w.WriteObject("blob", raw)
	if err != nil {
		return gitrepo.ZeroHash, fmt.Errorf("pushcert: write certificate: %w", err)
	}
	var root gitrepo.Hash
	if !tip.IsZero() {
		c, err := w.ReadCommit(tip)
		if err != nil {
			return gitrepo.ZeroHash, fmt.Errorf("pushcert: read %s commit %s: %w", Ref, tip, err)
		}
		root = c.Tree
	}
	for _, e := range entries {
		path := append(strings.Split(Dir(e), "/"), blob.String())
		if root, err = insert(w, root, path, blob); err != nil {
			return gitrepo.ZeroHash, err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", root)
	if !tip.IsZero() {
		fmt.Fprintf(&b, "parent %s\n", tip)
	}
	who := fmt.Sprintf("git-secure <git-secure@localhost> %d +0000", when.Unix())
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\n", who, who)
	fmt.Fprintf(&b, "git-secure: push certificate %s for %d log entries (%s", blob.String()[:12], len(entries), entries[0].String()[:12])
	if len(entries) > 1 {
		fmt.Fprintf(&b, "..%s", entries[len(entries)-1].String()[:12])
	}
	b.WriteString(")\n")
	h, err := w.WriteObject("commit", []byte(b.String()))
	if err != nil {
		return gitrepo.ZeroHash, fmt.Errorf("pushcert: write %s commit: %w", Ref, err)
	}
	return h, nil
}

// insert adds blob at path under tree (zero: empty) and returns the new
// tree. An existing file at path is kept as it is (its name is its
// content's hash: it is the same certificate).
func insert(w Writer, tree gitrepo.Hash, path []string, blob gitrepo.Hash) (gitrepo.Hash, error) {
	entries, err := w.ReadTree(tree)
	if err != nil {
		return gitrepo.ZeroHash, fmt.Errorf("pushcert: read %s tree %s: %w", Ref, tree, err)
	}
	entries = slices.Clone(entries)
	i := slices.IndexFunc(entries, func(e gitrepo.TreeEntry) bool { return e.Name == path[0] })
	if len(path) == 1 {
		if i >= 0 {
			return tree, nil
		}
		entries = append(entries, gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: path[0], Hash: blob})
	} else {
		var sub gitrepo.Hash
		if i >= 0 {
			if entries[i].Mode != gitrepo.ModeTree {
				return gitrepo.ZeroHash, fmt.Errorf("pushcert: %s holds a file where the directory %s belongs: fix the store by hand", Ref, path[0])
			}
			sub = entries[i].Hash
		}
		nsub, err := insert(w, sub, path[1:], blob)
		if err != nil {
			return gitrepo.ZeroHash, err
		}
		if i >= 0 {
			entries[i].Hash = nsub
		} else {
			entries = append(entries, gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: path[0], Hash: nsub})
		}
	}
	return w.WriteTree(entries)
}
