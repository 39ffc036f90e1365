package fastpath

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// RefUpdate is one compare-and-swap of a loose ref (UpdateLooseRef).
type RefUpdate struct {
	Name     string
	Old, New ID
	// Committer is "Name <email>" for the reflog entry, as git would write
	// it (gitrepo.Repo.Committer); When its time.
	Committer string
	When      time.Time
	// Msg is the reflog message; it is copied as git copies it (runs of
	// white space become one space, none at either end).
	Msg string
	// LockTimeout is how long a lock another process holds is waited for
	// (git's core.filesRefLockTimeout).
	LockTimeout time.Duration
}

// RefMovedError is UpdateLooseRef's error when the ref is not at the
// expected old value: the compare-and-swap lost, nothing was changed.
type RefMovedError struct {
	Name    string
	Current ID
}

func (e *RefMovedError) Error() string {
	return fmt.Sprintf("%s is at %s", e.Name, hex.EncodeToString(e.Current[:]))
}

// RefLockedError is UpdateLooseRef's error when the ref's lock file
// existed for all of LockTimeout: another git process holds it, or one
// that crashed left it.
type RefLockedError struct {
	Lock string
}

func (e *RefLockedError) Error() string {
	return fmt.Sprintf("Unable to create '%s': File exists", e.Lock)
}

// UpdateLooseRef moves the loose ref u.Name from u.Old to u.New with a
// reflog entry, as "git update-ref --create-reflog --stdin" does it in a
// files ref store for one update of a ref that is a loose file, so that
// recording an entry starts no process: it creates NAME.lock exclusively
// (git's lock: a git process holding it makes this wait up to
// LockTimeout, then fail with RefLockedError), reads the loose file under
// the lock and fails with RefMovedError unless it holds u.Old, writes
// u.New to the lock, appends the reflog entry (logs/NAME, created if
// missing) and renames the lock over the ref.
//
// Whether git would do more is the caller's to check first (a
// reference-transaction hook, core.fsync, core.sharedRepository: see
// gitrepo.Repo.StartUpdateRefs). done is false, and nothing is changed,
// for anything else, which git update-ref then does: the switch off, not
// the repository's own files ref store, objects redirected (a quarantine,
// where git refuses ref updates), a branch (git checks that the object is
// a commit), the ref HEAD names (git also writes HEAD's reflog), a new
// value that is not a loose object here, a zero old or
// new value, a ref that is not a loose file holding an object id (packed
// only, symbolic, a symbolic link, anything unusual), a reflog that is not
// a regular file, an unexpected error before the reflog is written.
func (f *Repo) UpdateLooseRef(u RefUpdate) (done bool, err error) {
	if f == nil || !f.filesRefs || f.objectsDir == "" || u.Old == (ID{}) || u.New == (ID{}) ||
		strings.HasPrefix(u.Name, "refs/heads/") || !strings.HasPrefix(u.Name, "refs/") ||
		f.validName == nil || f.validName(u.Name) != nil {
		return false, nil
	}
	if _, ok := LookupEnv(f.env, "GIT_QUARANTINE_PATH"); ok {
		return false, nil
	}
	if st, err := os.Lstat(loosePath(f.objectsDir, u.New)); err != nil || !st.Mode().IsRegular() {
		return false, nil
	}
	// git logs an update of the ref HEAD names in HEAD's reflog too.
	head, err := readBounded(filepath.Join(f.gitDir, "HEAD"), maxLooseRef)
	if err != nil {
		return false, nil
	}
	if target, sym := strings.CutPrefix(string(head), "ref:"); sym && strings.TrimSpace(target) == u.Name {
		return false, nil
	}
	path := filepath.Join(f.gitDir, filepath.FromSlash(u.Name))
	logPath := filepath.Join(f.gitDir, "logs", filepath.FromSlash(u.Name))
	if st, err := os.Lstat(logPath); err == nil && !st.Mode().IsRegular() || err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	lockPath := path + ".lock"
	lock, err := createLock(lockPath, u.LockTimeout)
	if err != nil {
		var locked *RefLockedError
		if errors.As(err, &locked) {
			return true, err
		}
		return false, nil
	}
	committed := false
	defer func() {
		if !committed {
			lock.Close()
			_ = os.Remove(lockPath)
		}
	}()
	// The value under the lock: git reads it there too.
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return false, nil
	}
	data, err := readBounded(path, maxLooseRef)
	if err != nil {
		return false, nil
	}
	line, ok := strings.CutSuffix(string(data), "\n")
	cur, idOK := parseID([]byte(line))
	if !ok || !idOK || cur == (ID{}) {
		return false, nil
	}
	if cur != u.Old {
		return true, &RefMovedError{Name: u.Name, Current: cur}
	}
	if _, err := lock.WriteString(hex.EncodeToString(u.New[:]) + "\n"); err != nil {
		return false, nil
	}
	if err := lock.Close(); err != nil {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o777); err != nil {
		return false, nil
	}
	// From here on git would fail the same way: report, do not retry
	// with git (a second reflog line).
	entry := reflogLine(u)
	lf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return true, fmt.Errorf("unable to append to %s: %w", logPath, err)
	}
	_, werr := lf.WriteString(entry)
	if err := errors.Join(werr, lf.Close()); err != nil {
		return true, fmt.Errorf("unable to append to %s: %w", logPath, err)
	}
	if err := os.Rename(lockPath, path); err != nil {
		return true, fmt.Errorf("unable to commit %s: %w", u.Name, err)
	}
	committed = true
	return true, nil
}

// createLock creates lockPath exclusively, waiting for a lock another
// process holds as git's lock_file_timeout does: back off about 1, 4, 9,
// ... ms (up to 1 s a wait, each between 0.75 and 1.25 of that) until
// timeout has passed.
func createLock(lockPath string, timeout time.Duration) (*os.File, error) {
	remaining := timeout
	n, multiplier := 1, 1
	for {
		fh, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			return fh, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if remaining <= 0 {
			return nil, &RefLockedError{Lock: lockPath}
		}
		wait := time.Duration(750+rand.IntN(500)) * time.Duration(multiplier) * time.Microsecond
		time.Sleep(wait)
		remaining -= wait
		multiplier += 2*n + 1
		if multiplier > 1000 {
			multiplier = 1000
		} else {
			n++
		}
	}
}

// reflogLine is the reflog entry git writes for u: "OLD NEW COMMITTER
// SECONDS ZONE", then a tab and the message copied as git copies it
// (copy_reflog_msg), if it is not empty.
func reflogLine(u RefUpdate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s %d %s", hex.EncodeToString(u.Old[:]), hex.EncodeToString(u.New[:]), u.Committer, u.When.Unix(), u.When.Format("-0700"))
	if msg := copyReflogMsg(u.Msg); msg != "" {
		b.WriteByte('\t')
		b.WriteString(msg)
	}
	b.WriteByte('\n')
	return b.String()
}

// copyReflogMsg is git's copy_reflog_msg: leading white space dropped, each
// run of white space one space, trailing white space dropped (git's own
// isspace: space, \t, \n and \r, not \v or \f).
func copyReflogMsg(msg string) string {
	var b strings.Builder
	wasSpace := true
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		space := c == ' ' || c == '\t' || c == '\n' || c == '\r'
		if wasSpace && space {
			continue
		}
		wasSpace = space
		if space {
			c = ' '
		}
		b.WriteByte(c)
	}
	return strings.TrimRight(b.String(), " ")
}
