package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// errWriteFallback means the in-process ref update cannot be sure to do
// exactly what git update-ref would; git does it instead.
var errWriteFallback = errors.New("gitrepo: ref update needs git")

// updateRefFile moves one loose ref from u.Old to u.New without starting
// git, by git's files-backend protocol: take <ref>.lock (O_EXCL, so a
// concurrent git or git-secure holding it makes this fall back to git,
// which waits for it and reports it), check the current value under the
// lock, write the new value into the lock, append the reflog line, and
// rename the lock over the ref, which is atomic.
//
// It only does the common case of every push: an existing ref moved to
// another commit, in a repository whose refs are plain files, not in a
// push quarantine, with no reference-transaction hook to run, no shared
// repository permissions to honour, and a committer identity git would
// write as it is. Anything else, and any surprise on the way (a symbolic
// ref, a ref that moved, a directory in the way), returns errWriteFallback
// before anything changed, and git update-ref decides.
func (r *Repo) updateRefFile(u RefUpdate, reflogMsg string) error {
	if !r.filesRefs || r.objectsDir == "" || u.Old.IsZero() || u.New.IsZero() || !strings.HasPrefix(u.Name, "refs/") {
		return errWriteFallback
	}
	if err := ValidRefName(u.Name); err != nil {
		return errWriteFallback
	}
	cfg, err := r.ConfigList()
	if err != nil {
		return errWriteFallback
	}
	if configString(cfg, "core.sharedRepository") != "" || r.hasHook(cfg, "reference-transaction") {
		return errWriteFallback
	}
	ident, ok := r.reflogIdent(cfg, time.Now())
	if !ok {
		return errWriteFallback
	}

	path := filepath.Join(r.gitDir, filepath.FromSlash(u.Name))
	lockPath := path + ".lock"
	lock, err := os.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return errWriteFallback // held by someone else, or no directory: git waits or reports
	}
	committed := false
	defer func() {
		if !committed {
			_ = lock.Close()
			_ = os.Remove(lockPath)
		}
	}()
	cur, err := r.currentLooseOrPacked(u.Name, path)
	if err != nil || cur != u.Old {
		return errWriteFallback // git checks again and names what changed
	}
	if _, err := fmt.Fprintf(lock, "%s\n", u.New); err != nil {
		return errWriteFallback
	}
	if err := lock.Close(); err != nil {
		return errWriteFallback
	}
	// The reflog line goes first, as git writes it, so that a ref never
	// moves without its reflog entry.
	line := fmt.Sprintf("%s %s %s", u.Old, u.New, ident)
	if msg := reflogMessage(reflogMsg); msg != "" {
		line += "\t" + msg
	}
	if err := appendReflog(filepath.Join(r.gitDir, "logs", filepath.FromSlash(u.Name)), line+"\n"); err != nil {
		return errWriteFallback
	}
	if err := os.Rename(lockPath, path); err != nil {
		return fmt.Errorf("gitrepo: update %s: %w", u.Name, err)
	}
	committed = true
	return nil
}

// currentLooseOrPacked reads a ref's value under its lock: the loose file,
// else packed-refs. Symbolic refs and anything unusual are errors.
func (r *Repo) currentLooseOrPacked(name, path string) (Hash, error) {
	data, err := readBounded(path, 256)
	switch {
	case err == nil:
		h, ok := bytes.CutSuffix(data, []byte{'\n'})
		if !ok {
			return ZeroHash, errWriteFallback
		}
		return parseHashBytes(h)
	case errors.Is(err, fs.ErrNotExist):
		packed, err := readPackedRefs(filepath.Join(r.gitDir, "packed-refs"))
		if err != nil {
			return ZeroHash, err
		}
		if h, ok := packed[name]; ok {
			return h, nil
		}
		return ZeroHash, nil
	default:
		return ZeroHash, err // a directory, a permission problem: git decides
	}
}

func appendReflog(path, line string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// reflogMessage is git's copy_reflog_msg over sanitizeMsg: runs of blanks
// become one space, none at either end.
func reflogMessage(msg string) string {
	return strings.Join(strings.Fields(sanitizeMsg(msg)), " ")
}

// hasHook reports whether the repository has a hook named name (in
// core.hooksPath, else the git directory's hooks/), executable or not.
func (r *Repo) hasHook(cfg []ConfigEntry, name string) bool {
	dir := filepath.Join(r.gitDir, "hooks")
	if p := configString(cfg, "core.hooksPath"); p != "" {
		if !filepath.IsAbs(p) {
			return true // relative to where git runs hooks: let git decide
		}
		dir = p
	}
	_, err := os.Lstat(filepath.Join(dir, name))
	return !errors.Is(err, fs.ErrNotExist)
}

// reflogIdent is the committer identity git writes in a reflog line
// ("Name <email> 1700000000 +0100"). ok is false when Committer's is, and
// when git would format the time in another zone than this process's.
func (r *Repo) reflogIdent(cfg []ConfigEntry, now time.Time) (string, bool) {
	tz, set := lookupEnv(r.env, "TZ")
	if ptz, pset := os.LookupEnv("TZ"); tz != ptz || set != pset {
		return "", false
	}
	name, email, ok := r.committer(cfg)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%s <%s> %d %s", name, email, now.Unix(), now.Format("-0700")), true
}

// Committer returns the committer's name and e-mail as git would write
// them, from the same sources git uses: GIT_COMMITTER_NAME/EMAIL, then
// committer.name/email, then user.name/email. ok is false when git would
// have to work them out itself (a missing part, a date given in the
// environment) or would rewrite them (characters git strips): then ask
// git (git var GIT_COMMITTER_IDENT).
func (r *Repo) Committer() (name, email string, ok bool) {
	cfg, err := r.ConfigList()
	if err != nil {
		return "", "", false
	}
	return r.committer(cfg)
}

func (r *Repo) committer(cfg []ConfigEntry) (name, email string, ok bool) {
	if _, set := lookupEnv(r.env, "GIT_COMMITTER_DATE"); set {
		return "", "", false
	}
	pick := func(env string, keys ...string) string {
		if v, set := lookupEnv(r.env, env); set {
			return v // even empty: then plainIdentPart refuses it
		}
		for _, k := range keys {
			if v := configString(cfg, k); v != "" {
				return v
			}
		}
		return ""
	}
	name = pick("GIT_COMMITTER_NAME", "committer.name", "user.name")
	email = pick("GIT_COMMITTER_EMAIL", "committer.email", "user.email")
	if !plainIdentPart(name) || !plainIdentPart(email) {
		return "", "", false
	}
	return name, email, true
}

// plainIdentPart reports whether git would write s unchanged in an
// identity: not empty, no '<', '>' or control characters, and none of
// the characters git trims ("crud") at either end.
func plainIdentPart(s string) bool {
	if s == "" || strings.ContainsAny(s, "<>") || strings.ContainsFunc(s, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		return false
	}
	crud := func(c byte) bool { return c <= ' ' || strings.IndexByte(".,:;<>\"\\'", c) >= 0 }
	return !crud(s[0]) && !crud(s[len(s)-1])
}

// configString is key's value in cfg, "" when unset.
func configString(cfg []ConfigEntry, key string) string {
	v, _ := lookupConfig(cfg, key)
	return v
}
