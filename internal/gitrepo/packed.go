package gitrepo

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// maxPackedRefsLine bounds one line of packed-refs (a hash, a space and a
// ref name of at most maxRefNameLen bytes).
const maxPackedRefsLine = 2 * maxRefNameLen

// PrunesPackedRef reports whether a reference transaction deleting ref from
// old is git removing a loose ref that packed-refs already holds at old
// ("git pack-refs", and the gc that runs it): the ref keeps its value. git
// 2.39 runs the reference-transaction hook on each such pruning with the
// line "old 0{40} ref". A real deletion cannot pass for one: git locks
// packed-refs before it prepares any deletion (to drop the ref from it, or
// to keep it from changing under the deletion) and holds the lock through
// the prepared state, so packed-refs.lock exists then. Anything this
// strict reader does not understand answers false: the line is then judged
// as the deletion it reads as.
func (r *Repo) PrunesPackedRef(ref string, old Hash) (bool, error) {
	if old.IsZero() {
		return false, nil
	}
	dir := r.commonDir
	if dir == "" {
		dir = r.gitDir
	}
	if _, err := os.Lstat(filepath.Join(dir, "packed-refs.lock")); !errors.Is(err, fs.ErrNotExist) {
		return false, nil // locked (a deletion in progress), or unreadable
	}
	f, err := os.Open(filepath.Join(dir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, wrapf(err, "read packed-refs")
	}
	defer f.Close()
	want := []byte(ref)
	found := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), maxPackedRefsLine)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' || line[0] == '^' {
			continue
		}
		hs, name, ok := bytes.Cut(line, []byte{' '})
		if !ok || !bytes.Equal(name, want) {
			continue
		}
		h, err := ParseHash(string(hs))
		if err != nil || h != old {
			return false, nil
		}
		found++
	}
	// Held once, at old, and every line read (a line over the bound or a
	// read error stops the scan: not understood). A ref listed twice is
	// one git resolves by its own choice: not understood either.
	return sc.Err() == nil && found == 1, nil
}
