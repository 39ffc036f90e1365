package fastpath

import (
	"bytes"
	"errors"
	"fmt"
)

// TreeEntries reads a raw tree object, the in-process tree reader: it
// calls fn for each entry in order, with its mode read as git's tree
// walker reads it (ParseMode), its name and its id. checkName checks each
// name as soon as it is read (the caller checks names, and fn the order,
// the same way for git ls-tree's output). An error from either stops the
// reading.
func TreeEntries(raw []byte, checkName func(string) error, fn func(mode uint32, name string, id ID) error) error {
	for len(raw) > 0 {
		sp := bytes.IndexByte(raw, ' ')
		if sp < 0 {
			return errors.New("tree entry: malformed mode")
		}
		mode, ok := ParseMode(raw[:sp])
		if !ok {
			return fmt.Errorf("tree entry: invalid mode %q", clip(string(raw[:sp]), 20))
		}
		raw = raw[sp+1:]
		nul := bytes.IndexByte(raw, 0)
		if nul < 0 {
			return errors.New("tree entry: unterminated name")
		}
		name := string(raw[:nul])
		if err := checkName(name); err != nil {
			return fmt.Errorf("tree entry: %w", err)
		}
		raw = raw[nul+1:]
		if len(raw) < 20 {
			return fmt.Errorf("tree entry %q: truncated hash", name)
		}
		var id ID
		copy(id[:], raw[:20])
		raw = raw[20:]
		if err := fn(mode, name, id); err != nil {
			return err
		}
	}
	return nil
}

// ParseMode reads a tree entry's mode as git's tree walker does (get_mode
// and canon_mode in git's tree-walk.c and cache.h): any non-empty run of
// octal digits, accumulated in 32 bits, then normalized by file type. So
// git reads 100664 (written by old versions of git) as 100644, 040000 as a
// tree and 1 as a gitlink; git-secure must see the same tree git checks
// out, or a change hidden behind an odd mode escapes the path rules.
func ParseMode(b []byte) (uint32, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var m uint32
	for _, c := range b {
		if c < '0' || c > '7' {
			return 0, false
		}
		m = m<<3 + uint32(c-'0')
	}
	return canonMode(m), true
}

// canonMode is git's canon_mode: regular files keep only the owner's
// execute bit, symlinks and directories lose their permission bits, and
// every other type is read as a gitlink.
func canonMode(m uint32) uint32 {
	const typeMask, regular, symlink, dir, gitlink = 0o170000, 0o100000, 0o120000, 0o040000, 0o160000
	switch m & typeMask {
	case regular:
		return regular | 0o644 | m&0o100 | (m&0o100)>>3 | (m&0o100)>>6 // 100644 or 100755
	case symlink, dir:
		return m & typeMask
	}
	return gitlink
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
