package gitrepo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo/fastpath"
)

// maxHeadFile bounds the HEAD file SetHead reads: "ref: " and a ref name,
// or an object id.
const maxHeadFile = 5 + maxRefNameLen + 1

// SetHead points HEAD at the branch target (a full name under
// "refs/heads/"), if and only if HEAD is still the symbolic ref to old: a
// compare-and-swap, so an administrator who set HEAD meanwhile (or a
// forge that did) is never overwritten. git symbolic-ref has no old value
// to check (git 2.39; update-ref's symref-update came in 2.46), so SetHead
// does what git's files ref store does for it, under the same lock: it
// creates HEAD.lock exclusively (a concurrent git process waits for or
// fails on it, and SetHead fails on one of theirs), compares HEAD while
// holding it, writes "ref: target" into the lock and renames it over HEAD.
// A repository whose refs are not in its own files store (reftable, a
// linked work tree), or whose HEAD is not a plain file, is refused. The
// error wraps ErrRefChanged when HEAD no longer names old and ErrLocked
// when HEAD.lock exists.
func (r *Repo) SetHead(target, old string) error {
	if err := ValidRefName(target); err != nil {
		return wrapf(err, "set HEAD to %q", target)
	}
	if !strings.HasPrefix(target, "refs/heads/") {
		return fmt.Errorf("gitrepo: set HEAD to %s: not a branch (HEAD must name a ref under refs/heads/)", target)
	}
	if r.isClosed() {
		return errClosed
	}
	if !fastpath.FilesRefStore(r.gitDir) {
		return fmt.Errorf("gitrepo: set HEAD to %s: %s does not keep its refs in plain files (reftable, or a linked work tree): set HEAD with git symbolic-ref HEAD %s", target, r.gitDir, target)
	}
	head := filepath.Join(r.gitDir, "HEAD")
	lock := head + ".lock"
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("gitrepo: set HEAD to %s: %s exists (another git process is changing HEAD, or a crashed one left it): retry, or remove it once no git process runs: %w", target, lock, ErrLocked)
	}
	if err != nil {
		return wrapf(err, "set HEAD to %s", target)
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(lock)
		}
	}()
	cur, err := readHeadFile(head)
	if err != nil {
		return wrapf(err, "set HEAD to %s", target)
	}
	if cur != "ref: "+old {
		return fmt.Errorf("gitrepo: set HEAD to %s: HEAD is %q, not the symbolic ref to %s read before: %w", target, cur, old, ErrRefChanged)
	}
	if _, err := f.WriteString("ref: " + target + "\n"); err != nil {
		return wrapf(err, "set HEAD to %s: write %s", target, lock)
	}
	if err := f.Sync(); err != nil {
		return wrapf(err, "set HEAD to %s: write %s", target, lock)
	}
	if err := f.Close(); err != nil {
		return wrapf(err, "set HEAD to %s: write %s", target, lock)
	}
	if err := os.Rename(lock, head); err != nil {
		return wrapf(err, "set HEAD to %s", target)
	}
	done = true
	return nil
}

// readHeadFile returns the HEAD file's one line, which must be a plain
// file (not a symbolic link, as git before 1.5 wrote) of bounded size.
func readHeadFile(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxHeadFile {
		return "", fmt.Errorf("%s is not a plain HEAD file of at most %d bytes", path, maxHeadFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(data), "\n"), nil
}
