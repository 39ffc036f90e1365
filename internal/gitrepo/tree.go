package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo/fastpath"
)

// Tree entry modes accepted by this package.
const (
	ModeFile    uint32 = 0o100644
	ModeExec    uint32 = 0o100755
	ModeSymlink uint32 = 0o120000
	ModeTree    uint32 = 0o040000
	ModeGitlink uint32 = 0o160000
)

// maxTreeEntries bounds the number of entries in one tree.
const maxTreeEntries = 1 << 20

// TreeEntry is one entry of a tree object.
type TreeEntry struct {
	Mode uint32
	Name string
	Hash Hash
}

func modeString(m uint32) (string, bool) {
	switch m {
	case ModeFile:
		return "100644", true
	case ModeExec:
		return "100755", true
	case ModeSymlink:
		return "120000", true
	case ModeTree:
		return "40000", true
	case ModeGitlink:
		return "160000", true
	}
	return "", false
}

// ValidEntryName checks a single path component as EncodeTree does: not
// empty, not "." or "..", without '/' or NUL.
func ValidEntryName(name string) error { return validEntryName(name) }

// validEntryName checks a single path component.
func validEntryName(name string) error {
	switch {
	case name == "":
		return errors.New("empty name")
	case name == "." || name == "..":
		return fmt.Errorf("name %q not allowed", name)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("name %s contains '/' or NUL", strconv.QuoteToASCII(truncate(name, 100)))
	}
	return nil
}

// compareEntries orders entries as git does: names compare bytewise as if
// trees had a trailing '/'.
func compareEntries(aName string, aMode uint32, bName string, bMode uint32) int {
	n := min(len(aName), len(bName))
	if c := strings.Compare(aName[:n], bName[:n]); c != 0 {
		return c
	}
	ca, cb := byte(0), byte(0)
	if len(aName) > n {
		ca = aName[n]
	} else if aMode == ModeTree {
		ca = '/'
	}
	if len(bName) > n {
		cb = bName[n]
	} else if bMode == ModeTree {
		cb = '/'
	}
	switch {
	case ca < cb:
		return -1
	case ca > cb:
		return 1
	}
	return 0
}

// ParseTree strictly parses a raw tree object. Modes are read as git reads
// them (any octal number, normalized to 100644, 100755, 120000, 40000 or
// 160000; see fastpath.ParseMode), so a tree git accepts is never misread; names
// must be non-empty, without '/' or NUL, not "." or ".."; entries in git
// order without duplicate names (git's fsck refuses the rest). A tree
// that parses re-encodes (EncodeTree) to the same bytes only when its
// modes were already canonical.
func ParseTree(raw []byte) ([]TreeEntry, error) {
	var entries []TreeEntry
	seen := make(map[string]struct{})
	err := fastpath.TreeEntries(raw, validEntryName, func(mode uint32, name string, id fastpath.ID) error {
		if len(entries) >= maxTreeEntries {
			return fmt.Errorf("tree has more than %d entries", maxTreeEntries)
		}
		return appendEntry(&entries, seen, TreeEntry{Mode: mode, Name: name, Hash: Hash(id)})
	})
	if err != nil {
		return nil, err
	}
	return entries, nil
}

// appendEntry appends e after checking it is new and in git order.
func appendEntry(entries *[]TreeEntry, seen map[string]struct{}, e TreeEntry) error {
	if _, dup := seen[e.Name]; dup {
		return fmt.Errorf("tree entry %q: duplicate name", truncate(e.Name, 100))
	}
	seen[e.Name] = struct{}{}
	if n := len(*entries); n > 0 && compareEntries((*entries)[n-1].Name, (*entries)[n-1].Mode, e.Name, e.Mode) >= 0 {
		return fmt.Errorf("tree entry %q: not sorted", truncate(e.Name, 100))
	}
	*entries = append(*entries, e)
	return nil
}

// ParseLsTree parses the output of git ls-tree -z (one tree, not
// recursive) with the same checks as ParseTree: git has already read the
// modes, so only its five canonical modes, each with its type, are valid.
func ParseLsTree(out []byte) ([]TreeEntry, error) {
	var entries []TreeEntry
	seen := make(map[string]struct{})
	for len(out) > 0 {
		if len(entries) >= maxTreeEntries {
			return nil, fmt.Errorf("tree has more than %d entries", maxTreeEntries)
		}
		nul := bytes.IndexByte(out, 0)
		if nul < 0 {
			return nil, errors.New("ls-tree: unterminated line")
		}
		e, err := parseLsTreeLine(out[:nul])
		if err != nil {
			return nil, err
		}
		out = out[nul+1:]
		if err := appendEntry(&entries, seen, e); err != nil {
			return nil, err
		}
	}
	return entries, nil
}

// lsTreeModes maps what git ls-tree prints ("<mode> <type>") to the mode.
var lsTreeModes = map[string]uint32{
	"100644 blob": ModeFile, "100755 blob": ModeExec, "120000 blob": ModeSymlink,
	"040000 tree": ModeTree, "160000 commit": ModeGitlink,
}

// parseLsTreeLine parses "<mode> SP <type> SP <hash> TAB <name>".
func parseLsTreeLine(line []byte) (TreeEntry, error) {
	meta, name, ok := bytes.Cut(line, []byte{'\t'})
	fields := strings.Split(string(meta), " ")
	if !ok || len(fields) != 3 {
		return TreeEntry{}, fmt.Errorf("ls-tree: malformed line %q", truncate(string(line), 100))
	}
	mode, ok := lsTreeModes[fields[0]+" "+fields[1]]
	if !ok {
		return TreeEntry{}, fmt.Errorf("ls-tree: unexpected mode and type %q", truncate(string(meta), 100))
	}
	h, err := ParseHash(fields[2])
	if err != nil {
		return TreeEntry{}, fmt.Errorf("ls-tree: %w", err)
	}
	if err := validEntryName(string(name)); err != nil {
		return TreeEntry{}, fmt.Errorf("tree entry: %w", err)
	}
	return TreeEntry{Mode: mode, Name: string(name), Hash: h}, nil
}

// EncodeTree validates entries and encodes them as a raw tree object in
// git order. The input slice is not modified.
func EncodeTree(entries []TreeEntry) ([]byte, error) {
	if len(entries) > maxTreeEntries {
		return nil, fmt.Errorf("gitrepo: encode tree: more than %d entries", maxTreeEntries)
	}
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b TreeEntry) int { return compareEntries(a.Name, a.Mode, b.Name, b.Mode) })
	seen := make(map[string]struct{}, len(sorted))
	size := 0
	for _, e := range sorted {
		if _, ok := modeString(e.Mode); !ok {
			return nil, fmt.Errorf("gitrepo: encode tree: entry %q: invalid mode %o", truncate(e.Name, 100), e.Mode)
		}
		if err := validEntryName(e.Name); err != nil {
			return nil, wrapf(err, "encode tree")
		}
		if _, dup := seen[e.Name]; dup {
			return nil, fmt.Errorf("gitrepo: encode tree: duplicate name %q", e.Name)
		}
		seen[e.Name] = struct{}{}
		size += len(e.Name) + 28
	}
	buf := make([]byte, 0, size)
	for _, e := range sorted {
		m, _ := modeString(e.Mode)
		buf = append(buf, m...)
		buf = append(buf, ' ')
		buf = append(buf, e.Name...)
		buf = append(buf, 0)
		buf = append(buf, e.Hash[:]...)
	}
	return buf, nil
}
