package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
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

func parseMode(b []byte) (uint32, bool) {
	switch string(b) {
	case "100644":
		return ModeFile, true
	case "100755":
		return ModeExec, true
	case "120000":
		return ModeSymlink, true
	case "40000":
		return ModeTree, true
	case "160000":
		return ModeGitlink, true
	}
	return 0, false
}

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

// ParseTree strictly parses a raw tree object: only the modes 100644,
// 100755, 120000, 40000 and 160000; names non-empty, without '/' or NUL,
// not "." or ".."; entries in git order without duplicate names.
func ParseTree(raw []byte) ([]TreeEntry, error) {
	var entries []TreeEntry
	seen := make(map[string]struct{})
	for len(raw) > 0 {
		if len(entries) >= maxTreeEntries {
			return nil, fmt.Errorf("tree has more than %d entries", maxTreeEntries)
		}
		sp := bytes.IndexByte(raw, ' ')
		if sp < 0 || sp > 6 {
			return nil, errors.New("tree entry: malformed mode")
		}
		mode, ok := parseMode(raw[:sp])
		if !ok {
			return nil, fmt.Errorf("tree entry: invalid mode %q", raw[:sp])
		}
		raw = raw[sp+1:]
		nul := bytes.IndexByte(raw, 0)
		if nul < 0 {
			return nil, errors.New("tree entry: unterminated name")
		}
		name := string(raw[:nul])
		if err := validEntryName(name); err != nil {
			return nil, fmt.Errorf("tree entry: %w", err)
		}
		raw = raw[nul+1:]
		if len(raw) < 20 {
			return nil, fmt.Errorf("tree entry %q: truncated hash", name)
		}
		var h Hash
		copy(h[:], raw[:20])
		raw = raw[20:]
		if _, dup := seen[name]; dup {
			return nil, fmt.Errorf("tree entry %q: duplicate name", name)
		}
		seen[name] = struct{}{}
		if n := len(entries); n > 0 && compareEntries(entries[n-1].Name, entries[n-1].Mode, name, mode) >= 0 {
			return nil, fmt.Errorf("tree entry %q: not sorted", name)
		}
		entries = append(entries, TreeEntry{Mode: mode, Name: name, Hash: h})
	}
	return entries, nil
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
			return nil, fmt.Errorf("gitrepo: encode tree: %w", err)
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
