package fastpath

import (
	"bytes"
	"io"
)

// A full verification lists the log's chain (tip, its first parent, and
// so on to the first entry) before it reads it oldest first. git rev-list
// did the listing in a process of its own, which maps the pack's whole
// index (117 MB for a pack of 4 million objects) and touches most of it
// over a million lookups. FirstParent lists in-process with reads of a
// few bytes of the index and of each commit's start, so that nothing of
// the size of the history is resident in any process.

// firstParentPeek is how many inflated bytes of a packed commit
// FirstParent reads: its "tree" line (46 bytes) and first "parent" line
// (48 bytes) with room to spare.
const firstParentPeek = 128

// maxListedCommit bounds a commit FirstParent reads whole (a deltified or
// loose one): gitrepo reads no larger commit.
const maxListedCommit = 1 << 20

// FirstParent returns the first parent of commit h as its headers name
// it (has is false for a root commit), the way git rev-list
// --first-parent follows it. ok is false when h is not a commit found
// here whose headers start like git writes them ("tree" then "parent"
// lines of 40 lowercase hex digits): the caller asks git.
//
// A packed commit stored whole is read only as far as its first parent:
// the answer is a listing, not an object, and its reader must check it,
// as it checks git rev-list's (gitrepo.Repo.FirstParentsFunc: the chain
// is read whole and linked again afterwards). A deltified or loose commit
// is read whole and checked against its name.
func (f *Repo) FirstParent(h ID) (parent ID, has bool, ok bool) {
	if f == nil {
		return parent, false, false
	}
	if p, off, found := f.findPacked(h); found {
		var head [32]byte
		n, _ := p.data.ReadAt(head[:], off)
		typ, size, used, err := parsePackHeader(head[:n])
		if err == nil && typ == packCommit && size <= maxListedCommit {
			return f.peekFirstParent(p, off+int64(used), size)
		}
	}
	typ, data, found := f.ReadObject(h, maxListedCommit)
	if !found || typ != "commit" {
		return parent, false, false
	}
	return parseFirstParent(data, true)
}

// peekFirstParent inflates the start of the commit whose zlib stream is
// at pos and whose size is size, and parses its first parent.
func (f *Repo) peekFirstParent(p *pack, pos, size int64) (parent ID, has bool, ok bool) {
	in := f.inflater()
	defer f.inflaters.Put(in)
	zr, err := in.reset(in.section(p.data, pos, p.dataSize-20))
	if err != nil {
		return parent, false, false
	}
	want := min(size, int64(len(in.peek)))
	if _, err := io.ReadFull(zr, in.peek[:want]); err != nil {
		return parent, false, false
	}
	return parseFirstParent(in.peek[:want], want == size)
}

// ParseFirstParent is FirstParent's reading of a whole commit, raw (for
// the differential fuzz test against gitrepo.ParseCommit).
func ParseFirstParent(raw []byte) (parent ID, has bool, ok bool) {
	return parseFirstParent(raw, true)
}

// parseFirstParent parses the "tree" line and the first "parent" line of
// a commit's start b (the whole commit when complete). It accepts only
// what git writes: 40 lowercase hex digits, one space, one newline.
func parseFirstParent(b []byte, complete bool) (parent ID, has bool, ok bool) {
	const treeLine = len("tree ") + 40 + 1
	const parentLine = len("parent ") + 40 + 1
	if len(b) < treeLine || !bytes.HasPrefix(b, []byte("tree ")) || b[treeLine-1] != '\n' {
		return parent, false, false
	}
	if _, ok := parseID(b[len("tree ") : treeLine-1]); !ok {
		return parent, false, false
	}
	rest := b[treeLine:]
	if !bytes.HasPrefix(rest, []byte("parent ")) {
		// A root commit, if what follows cannot be the start of a
		// parent line cut short.
		if !complete && len(rest) < len("parent ") {
			return parent, false, false
		}
		return parent, false, true
	}
	if len(rest) < parentLine || rest[parentLine-1] != '\n' {
		return parent, false, false
	}
	parent, ok = parseID(rest[len("parent ") : parentLine-1])
	return parent, ok, ok
}

// ParseFirstParentPrefix is FirstParent's reading of the start of a
// commit cut short (for the fuzz test).
func ParseFirstParentPrefix(b []byte) (parent ID, has bool, ok bool) {
	return parseFirstParent(b, false)
}
