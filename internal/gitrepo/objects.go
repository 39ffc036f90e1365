package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

const (
	// maxCommitSize bounds commit and tag objects read by this package.
	maxCommitSize = 1 << 20
	// maxTreeSize bounds tree objects read by this package.
	maxTreeSize = 64 << 20
	// maxPeelDepth bounds chains of annotated tags.
	maxPeelDepth = 10
)

// ReadObject returns the type and contents of object h. It returns an error
// wrapping ErrNotFound if the object is missing and ErrTooLarge if its size
// exceeds maxSize bytes.
func (r *Repo) ReadObject(h Hash, maxSize int64) (typ string, data []byte, err error) {
	typ, data, err = r.readObject(h, maxSize)
	if err == errObjectNotFound {
		err = ErrNotFound // "read object X: not found"
	}
	if err != nil {
		return "", nil, wrapf(err, "read object %s", h)
	}
	return typ, data, nil
}

// readObject is ReadObject whose error leaves the object to the caller to
// name: "object not found", "size N exceeds limit M: object too large".
func (r *Repo) readObject(h Hash, maxSize int64) (typ string, data []byte, err error) {
	if h.IsZero() {
		return "", nil, errObjectNotFound
	}
	if r.isClosed() {
		return "", nil, errClosed
	}
	if typ, data, ok := r.fast.ReadObject(h, maxSize); ok {
		return typ, data, nil
	}
	info, data, err := r.batch.read(h, maxSize)
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return "", nil, fmt.Errorf("size %d exceeds limit %d: %w", info.size, maxSize, err)
		}
		return "", nil, err
	}
	if info.missing {
		return "", nil, errObjectNotFound
	}
	return info.typ, data, nil
}

// HasObject reports whether object h exists. An object found loose or in
// a pack exists; only an answer of "missing" needs git (alternates and
// storage the in-process readers do not know).
func (r *Repo) HasObject(h Hash) (bool, error) {
	if h.IsZero() {
		return false, nil
	}
	if r.fast.HasObject(h) {
		return true, nil
	}
	info, err := r.batchCheck.info(h)
	if err != nil {
		return false, wrapf(err, "check object %s", h)
	}
	return !info.missing, nil
}

// maxPeekSize bounds objects read whole just to learn their type.
const maxPeekSize = 1 << 20

// objectType returns the type of h; its error leaves the object to the
// caller to name (errObjectNotFound if missing).
func (r *Repo) objectType(h Hash) (string, error) {
	if h.IsZero() {
		return "", errObjectNotFound
	}
	// Tags and commits, what this is asked about, are small: read them.
	if typ, _, ok := r.fast.ReadObject(h, maxPeekSize); ok {
		return typ, nil
	}
	info, err := r.batchCheck.info(h)
	if err != nil {
		return "", err
	}
	if info.missing {
		return "", errObjectNotFound
	}
	return info.typ, nil
}

// readTyped reads h and checks its type: "gitrepo: read tree X: object
// not found", "gitrepo: read commit X: it is a blob".
func (r *Repo) readTyped(h Hash, want string, maxSize int64) ([]byte, error) {
	data, err := r.readTypedBare(h, want, maxSize)
	if err != nil {
		return nil, wrapf(err, "read %s %s", want, h)
	}
	return data, nil
}

// readTypedBare is readTyped whose error leaves the object to the caller
// to name.
func (r *Repo) readTypedBare(h Hash, want string, maxSize int64) ([]byte, error) {
	typ, data, err := r.readObject(h, maxSize)
	if err != nil {
		return nil, err
	}
	if typ != want {
		return nil, fmt.Errorf("it is a %s, not a %s", typ, want)
	}
	return data, nil
}

// ReadCommit reads and strictly parses commit h (at most 1 MiB).
func (r *Repo) ReadCommit(h Hash) (*Commit, error) {
	c, err := readParsed(r, h, "commit", maxCommitSize, ParseCommit)
	if err != nil {
		return nil, err
	}
	c.Hash = h
	return c, nil
}

// readParsed reads h, checks that it is an object of type typ, and
// parses it with parse; a parse error names the object.
func readParsed[T any](r *Repo, h Hash, typ string, maxSize int64, parse func([]byte) (T, error)) (T, error) {
	var none T
	data, err := r.readTyped(h, typ, maxSize)
	if err != nil {
		return none, err
	}
	v, err := parse(data)
	if err != nil {
		return none, wrapf(err, "%s %s", typ, h)
	}
	return v, nil
}

// PeelToCommit follows annotated tags (at most 10) from h to a commit.
// An error names h and, past h, the tag target at fault: "gitrepo: peel
// X: object not found", "gitrepo: peel X: tag target Y: object not
// found".
func (r *Repo) PeelToCommit(h Hash) (Hash, error) {
	start := h
	fail := func(err error, what string) error {
		if h != start {
			return wrapf(err, "peel %s: tag target %s%s", start, h, what)
		}
		return wrapf(err, "peel %s%s", start, what)
	}
	for depth := 0; depth <= maxPeelDepth; depth++ {
		typ, err := r.objectType(h)
		if err != nil {
			return ZeroHash, fail(err, "")
		}
		switch typ {
		case "commit":
			return h, nil
		case "tag":
			data, err := r.readTypedBare(h, "tag", maxCommitSize)
			if err != nil {
				return ZeroHash, fail(err, ": tag")
			}
			target, _, err := parseTagTarget(data)
			if err != nil {
				return ZeroHash, wrapf(err, "peel %s: tag %s", start, h)
			}
			h = target
		default:
			return ZeroHash, fmt.Errorf("gitrepo: peel %s: ends at %s %s, not a commit", start, typ, h)
		}
	}
	return ZeroHash, fmt.Errorf("gitrepo: peel %s: more than %d nested tags", start, maxPeelDepth)
}

// parseTagTarget parses the "object" and "type" headers of a tag.
func parseTagTarget(data []byte) (Hash, string, error) {
	rest, ok := bytes.CutPrefix(data, []byte("object "))
	if !ok || len(rest) < 41 || rest[40] != '\n' {
		return ZeroHash, "", errors.New("malformed object header")
	}
	h, err := parseHashBytes(rest[:40])
	if err != nil {
		return ZeroHash, "", err
	}
	rest, ok = bytes.CutPrefix(rest[41:], []byte("type "))
	if !ok {
		return ZeroHash, "", errors.New("missing type header")
	}
	typ, _, ok := bytes.Cut(rest, []byte{'\n'})
	if !ok {
		return ZeroHash, "", errors.New("malformed type header")
	}
	switch string(typ) {
	case "blob", "tree", "commit", "tag":
	default:
		return ZeroHash, "", fmt.Errorf("bad type %q", truncate(string(typ), 20))
	}
	return h, string(typ), nil
}

// WriteObject stores data as an object of type typ (blob, tree, commit or
// tag) and returns its id. git validates trees, commits and tags. If the
// object already exists nothing is written.
func (r *Repo) WriteObject(typ string, data []byte) (Hash, error) {
	switch typ {
	case "blob", "tree", "commit", "tag":
	default:
		return ZeroHash, fmt.Errorf("gitrepo: write object: invalid type %q", truncate(typ, 20))
	}
	want := hashObject(typ, data)
	if r.fast.WriteLoose(want, typ, data) {
		return want, nil
	}
	// git answers for the empty tree even when it is not stored (a
	// built-in object), so it is always written: fsck and other
	// implementations need it.
	if want != emptyTree {
		if ok, err := r.HasObject(want); err == nil && ok {
			return want, nil
		}
	}
	if data == nil {
		data = []byte{}
	}
	out, err := r.run(data, "hash-object", "-t", typ, "-w", "--stdin")
	if err != nil {
		return ZeroHash, wrapf(err, "write %s object", typ)
	}
	got, err := ParseHash(strings.TrimSuffix(string(out), "\n"))
	if err != nil {
		return ZeroHash, wrapf(err, "write %s object", typ)
	}
	if got != want {
		return ZeroHash, fmt.Errorf("gitrepo: write %s object: git returned %s, expected %s", typ, got, want)
	}
	return got, nil
}

// WriteTree encodes entries as a tree (sorting them in git order) and
// writes it.
func (r *Repo) WriteTree(entries []TreeEntry) (Hash, error) {
	raw, err := EncodeTree(entries)
	if err != nil {
		return ZeroHash, err
	}
	return r.WriteObject("tree", raw)
}

// ReadTree reads and strictly parses tree h. The empty tree (and ZeroHash)
// give no entries.
func (r *Repo) ReadTree(h Hash) ([]TreeEntry, error) {
	entries, err := r.readTree(h)
	if err != nil {
		return nil, wrapf(err, "read tree %s", h)
	}
	return entries, nil
}

// readTree is ReadTree whose error leaves the tree to the caller to name.
func (r *Repo) readTree(h Hash) ([]TreeEntry, error) {
	if h.IsZero() || h == emptyTree {
		return nil, nil
	}
	if r.fast == nil {
		return r.readTreeWithGit(h)
	}
	data, err := r.readTypedBare(h, "tree", maxTreeSize)
	if err != nil {
		return nil, err
	}
	return ParseTree(data)
}

// ReadBlobAt reads the regular file (mode 100644 or 100755) at the
// slash-separated path inside tree. It returns an error wrapping
// ErrNotFound if the path does not exist.
func (r *Repo) ReadBlobAt(tree Hash, path string, maxSize int64) ([]byte, error) {
	parts := strings.Split(path, "/")
	for _, p := range parts {
		if err := validEntryName(p); err != nil {
			return nil, wrapf(err, "read %q: invalid path", truncate(path, 200))
		}
	}
	cur := tree
	for i, p := range parts {
		entries, err := r.readTree(cur)
		if err != nil {
			if cur == tree {
				return nil, wrapf(err, "read %q in tree %s", path, tree)
			}
			return nil, wrapf(err, "read %q in tree %s: tree %s", path, tree, cur)
		}
		var found *TreeEntry
		for j := range entries {
			if entries[j].Name == p {
				found = &entries[j]
				break
			}
		}
		last := i == len(parts)-1
		if found == nil || (!last && found.Mode != ModeTree) {
			return nil, fmt.Errorf("gitrepo: read %q in tree %s: %w", path, tree, ErrNotFound)
		}
		if last {
			if found.Mode != ModeFile && found.Mode != ModeExec {
				return nil, fmt.Errorf("gitrepo: read %q in tree %s: not a regular file (mode %o)", path, tree, found.Mode)
			}
			data, err := r.readTypedBare(found.Hash, "blob", maxSize)
			if err != nil {
				return nil, wrapf(err, "read %q in tree %s: blob %s", path, tree, found.Hash)
			}
			return data, nil
		}
		cur = found.Hash
	}
	panic("unreachable")
}

// readTreeWithGit is readTree through git ls-tree (EnvNoInProcess): git
// parses the tree, ParseLsTree checks what it printed.
func (r *Repo) readTreeWithGit(h Hash) ([]TreeEntry, error) {
	typ, err := r.objectType(h)
	if err != nil {
		return nil, err
	}
	if typ != "tree" {
		return nil, fmt.Errorf("it is a %s, not a tree", typ)
	}
	out, err := r.run(nil, "ls-tree", "-z", "--end-of-options", h.String())
	if err != nil {
		return nil, err
	}
	return ParseLsTree(out)
}
