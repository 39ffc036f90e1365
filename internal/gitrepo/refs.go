package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo/fastpath"
)

// maxRefNameLen bounds ref names accepted by ValidRefName.
const maxRefNameLen = 1024

// Ref is a ref name and the object it points to (not peeled).
type Ref struct {
	Name string
	Hash Hash
}

// RefUpdate is one compare-and-swap ref update. A zero Old means the ref
// must not exist; a zero New deletes the ref.
type RefUpdate struct {
	Name string
	Old  Hash
	New  Hash
}

// ValidRefName checks a full ref name (starting with "refs/") against
// git's check-ref-format rules: no component starts with '.' or ends with
// ".lock"; no "..", "@{", "//", control characters, space, '~', '^', ':',
// '?', '*', '[' or '\'; it does not end with '/' or '.'. Names longer than
// 1024 bytes are rejected too.
func ValidRefName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("gitrepo: invalid ref name %s: %s", strconv.QuoteToASCII(truncate(name, 100)), why)
	}
	if !strings.HasPrefix(name, "refs/") {
		return bad(`must start with "refs/"`)
	}
	if len(name) > maxRefNameLen {
		return bad("too long")
	}
	if strings.HasSuffix(name, ".") {
		return bad("ends with '.'")
	}
	if strings.Contains(name, "..") {
		return bad(`contains ".."`)
	}
	if strings.Contains(name, "@{") {
		return bad(`contains "@{"`)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x20 || c == 0x7f {
			return bad("contains a control character")
		}
		switch c {
		case ' ', '~', '^', ':', '?', '*', '[', '\\':
			return bad(fmt.Sprintf("contains %q", c))
		}
	}
	for _, comp := range strings.Split(name, "/") {
		switch {
		case comp == "":
			return bad("empty path component")
		case comp[0] == '.':
			return bad("component starts with '.'")
		case strings.HasSuffix(comp, ".lock"):
			return bad(`component ends with ".lock"`)
		}
	}
	return nil
}

func checkRefOrHead(name string) error {
	if name == "HEAD" {
		return nil
	}
	return ValidRefName(name)
}

// ResolveRef returns the value of the exact ref name (a full name starting
// with "refs/", or "HEAD"). Symbolic refs are followed; annotated tags are
// not peeled. ok is false if the ref does not exist.
func (r *Repo) ResolveRef(name string) (Hash, bool, error) {
	if err := checkRefOrHead(name); err != nil {
		return ZeroHash, false, err
	}
	if name == "HEAD" {
		out, err := r.run(nil, "rev-parse", "-q", "--verify", "--end-of-options", "HEAD")
		if err != nil {
			if exitCode(err) == 1 {
				return ZeroHash, false, nil
			}
			return ZeroHash, false, wrapf(err, "resolve HEAD")
		}
		h, err := ParseHash(strings.TrimSuffix(string(out), "\n"))
		if err != nil {
			return ZeroHash, false, wrapf(err, "resolve HEAD")
		}
		return h, true, nil
	}
	// The directory holding name, read in-process when the fast path can
	// (the helper and hooks resolve a few refs on every push); else
	// for-each-ref, which matches exactly (or below name/, which cannot
	// coexist with name) and, unlike rev-parse, applies no DWIM rules.
	refs, ok, err := r.fastRefs(name[:strings.LastIndexByte(name, '/')+1])
	if err == nil && !ok {
		refs, err = r.forEachRef(name)
	}
	if err != nil {
		return ZeroHash, false, wrapf(err, "resolve %s", name)
	}
	for _, ref := range refs {
		if ref.Name == name {
			return ref.Hash, true, nil
		}
	}
	return ZeroHash, false, nil
}

// forEachRef runs one for-each-ref with the given patterns.
func (r *Repo) forEachRef(patterns ...string) ([]Ref, error) {
	args := append([]string{"for-each-ref", "--format=%(objectname) %(refname)", "--end-of-options"}, patterns...)
	out, err := r.run(nil, args...)
	if err != nil {
		return nil, err
	}
	var refs []Ref
	for len(out) > 0 {
		line, rest, ok := bytes.Cut(out, []byte{'\n'})
		if !ok {
			return nil, errors.New("unterminated for-each-ref output")
		}
		out = rest
		hs, name, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			return nil, fmt.Errorf("malformed for-each-ref line %q", truncate(string(line), 100))
		}
		h, err := parseHashBytes(hs)
		if err != nil {
			return nil, err
		}
		if err := ValidRefName(string(name)); err != nil {
			return nil, err
		}
		refs = append(refs, Ref{Name: string(name), Hash: h})
	}
	return refs, nil
}

// ListRefs lists refs whose names start with any of prefixes (plain string
// prefixes, each starting with "refs/"), or all refs under refs/ if none
// are given, sorted by name. One git process is used.
func (r *Repo) ListRefs(prefixes ...string) ([]Ref, error) {
	var patterns []string
	seen := map[string]bool{}
	for _, p := range prefixes {
		if !strings.HasPrefix(p, "refs/") || strings.ContainsAny(p, "*?[\\\x00\n") || len(p) > maxRefNameLen {
			return nil, fmt.Errorf("gitrepo: list refs: invalid prefix %s", strconv.QuoteToASCII(truncate(p, 100)))
		}
		// for-each-ref matches whole path components; ask for the
		// enclosing directory (once) and filter by string prefix below.
		if dir := p[:strings.LastIndexByte(p, '/')+1]; !seen[dir] {
			seen[dir] = true
			patterns = append(patterns, dir)
		}
	}
	if len(patterns) > 0 {
		patterns = fastpath.NewPrefixes(patterns).Minimal() // a directory inside another is listed with it
	}
	refs, err := r.listRefs(patterns)
	if err != nil {
		return nil, wrapf(err, "list refs")
	}
	if len(prefixes) > 0 {
		// A push names one prefix per ref: a sorted lookup, not a scan
		// of every prefix for every ref.
		ps := fastpath.NewPrefixes(prefixes)
		kept := refs[:0]
		for _, ref := range refs {
			if ps.Match(ref.Name) {
				kept = append(kept, ref)
			}
		}
		refs = kept
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	// Overlapping prefixes cannot produce duplicates (one process, one
	// listing). A ref listed twice comes from a packed-refs file that
	// holds it twice: git for-each-ref lists both values, git rev-parse
	// resolves one, so which state is the repository's is not known.
	out := refs[:0]
	for i, ref := range refs {
		if i > 0 && ref.Name == refs[i-1].Name {
			if ref.Hash != refs[i-1].Hash {
				a, b := ref.Hash.String(), refs[i-1].Hash.String()
				if b < a {
					a, b = b, a
				}
				return nil, fmt.Errorf("gitrepo: list refs: %s is listed twice, at %s and %s (packed-refs holds it twice; git resolves one of them): repair it with git update-ref -d %s, which drops one value (until git for-each-ref lists it once), then git update-ref %s VALUE", ref.Name, a[:12], b[:12], ref.Name, ref.Name)
			}
			continue
		}
		out = append(out, ref)
	}
	return out, nil
}

// listRefs lists the refs under the directories patterns (all refs/ if
// none): in-process from the files ref store, else with for-each-ref.
func (r *Repo) listRefs(patterns []string) ([]Ref, error) {
	dirs := patterns
	if len(dirs) == 0 {
		dirs = []string{"refs/"}
	}
	refs, ok, err := r.fastRefs(dirs...)
	if err != nil || ok {
		return refs, err
	}
	return r.forEachRef(patterns...)
}

// fastRefs lists the refs under dirs (each ending in "/") in-process; ok
// is false when git must list them.
func (r *Repo) fastRefs(dirs ...string) (refs []Ref, ok bool, err error) {
	fast, ok, err := r.fast.ListRefs(dirs)
	if err != nil || !ok {
		return nil, false, err
	}
	for _, f := range fast {
		refs = append(refs, Ref{Name: f.Name, Hash: Hash(f.ID)}) // nil when there are none, as from for-each-ref
	}
	return refs, true, nil
}

// SymbolicRef returns the target of the symbolic ref name (for example
// "HEAD" -> "refs/heads/main"). It returns an error wrapping ErrNotFound if
// name is not a symbolic ref.
func (r *Repo) SymbolicRef(name string) (string, error) {
	if err := checkRefOrHead(name); err != nil {
		return "", err
	}
	out, err := r.run(nil, "symbolic-ref", "-q", "--end-of-options", name)
	if err != nil {
		if exitCode(err) == 1 {
			return "", fmt.Errorf("gitrepo: symbolic ref %s: %w", name, ErrNotFound)
		}
		return "", wrapf(err, "symbolic ref %s", name)
	}
	target := strings.TrimSuffix(string(out), "\n")
	if err := ValidRefName(target); err != nil {
		return "", wrapf(err, "symbolic ref %s: target", name)
	}
	return target, nil
}

// ResolveRevision resolves a revision expression to a commit with
// "git rev-parse --verify rev^{commit}". rev must not start with '-'. It
// returns an error wrapping ErrNotFound if rev does not name a commit.
func (r *Repo) ResolveRevision(rev string) (Hash, error) {
	return r.resolve(rev, "^{commit}")
}

// ResolveObject resolves a revision expression to the object it names,
// without peeling: an annotated tag's name or hash resolves to the tag
// object, as git push and git update-ref take it ("git rev-parse --verify
// rev^{object}"). rev must not start with '-'. It returns an error
// wrapping ErrNotFound if rev names no object.
func (r *Repo) ResolveObject(rev string) (Hash, error) {
	return r.resolve(rev, "^{object}")
}

func (r *Repo) resolve(rev, peel string) (Hash, error) {
	if rev == "" || rev[0] == '-' || strings.ContainsAny(rev, "\x00\n\r") || len(rev) > maxRefNameLen {
		return ZeroHash, fmt.Errorf("gitrepo: resolve revision %s: invalid revision", strconv.QuoteToASCII(truncate(rev, 100)))
	}
	out, err := r.run(nil, "rev-parse", "-q", "--verify", "--end-of-options", rev+peel)
	if err != nil {
		if exitCode(err) == 1 {
			return ZeroHash, fmt.Errorf("gitrepo: resolve revision %q: %w", rev, ErrNotFound)
		}
		return ZeroHash, wrapf(err, "resolve revision %q", rev)
	}
	h, err := ParseHash(strings.TrimSuffix(string(out), "\n"))
	if err != nil {
		return ZeroHash, wrapf(err, "resolve revision %q", rev)
	}
	return h, nil
}

// UpdateRefs applies updates as one atomic compare-and-swap transaction
// through "git update-ref --stdin -z" (start, update/create/delete/verify,
// prepare, commit), taking git's own <ref>.lock files. Symbolic refs are
// not dereferenced. A reflog entry with reflogMsg (control characters
// replaced by spaces) is written for every updated ref. If any ref is not at its Old value (or is locked by a
// concurrent update) nothing changes and the error wraps ErrRefChanged and
// names the ref.
func (r *Repo) UpdateRefs(updates []RefUpdate, reflogMsg string) error {
	if len(updates) == 0 {
		return nil
	}
	in, err := updateInput(updates)
	if err != nil {
		return err
	}
	if r.isClosed() {
		return errClosed
	}
	_, err = runGit(contextBackground(), append(r.Env(), "LC_ALL=C"), r.dir, in, updateArgs(reflogMsg)...)
	if err == nil {
		return nil
	}
	return r.classifyUpdateError(updates, err)
}

// updateInput is the "git update-ref --stdin -z" input of one transaction
// of updates.
func updateInput(updates []RefUpdate) ([]byte, error) {
	seen := make(map[string]bool, len(updates))
	var in bytes.Buffer
	in.WriteString("start\x00")
	for _, u := range updates {
		if err := ValidRefName(u.Name); err != nil {
			return nil, wrapf(err, "update refs")
		}
		if seen[u.Name] {
			return nil, fmt.Errorf("gitrepo: update refs: %s updated twice", u.Name)
		}
		seen[u.Name] = true
		in.WriteString("option no-deref\x00")
		switch {
		case u.New.IsZero() && u.Old.IsZero():
			fmt.Fprintf(&in, "verify %s\x00%s\x00", u.Name, ZeroHash)
		case u.New.IsZero():
			fmt.Fprintf(&in, "delete %s\x00%s\x00", u.Name, u.Old)
		case u.Old.IsZero():
			fmt.Fprintf(&in, "create %s\x00%s\x00", u.Name, u.New)
		default:
			fmt.Fprintf(&in, "update %s\x00%s\x00%s\x00", u.Name, u.New, u.Old)
		}
	}
	in.WriteString("prepare\x00commit\x00")
	return in.Bytes(), nil
}

// refLockTimeout is how long a ref's lock another process holds is
// waited for, by git update-ref (core.filesRefLockTimeout) and in-process
// (fastpath.Repo.UpdateLooseRef) alike. git waits 100 ms for a loose
// ref's lock by default: a loaded machine lets a concurrent update hold it
// longer, and the loser then reads as a crashed lock (ErrLocked, "remove
// it") instead of a lost race (ErrRefChanged, "fetch and retry"). A second
// is git's own wait for packed-refs.
const refLockTimeout = time.Second

// updateArgs are the arguments of git update-ref for one transaction.
func updateArgs(reflogMsg string) []string {
	args := []string{"-c", fmt.Sprintf("core.filesRefLockTimeout=%d", refLockTimeout.Milliseconds()), "update-ref", "--create-reflog"}
	if msg := sanitizeMsg(reflogMsg); msg != "" {
		args = append(args, "-m"+msg)
	}
	return append(args, "--stdin", "-z")
}

// RefTransaction is one ref transaction begun before its updates are
// known. Where git would do nothing but move a loose ref and append to
// its reflog (inProcessRefs), Apply moves it in-process
// (fastpath.Repo.UpdateLooseRef, with git's lock, compare-and-swap and
// reflog entry) and no process is started at all: git update-ref was the
// one process of an rsl record, 3 ms of its CPU. Otherwise it is a "git
// update-ref --stdin -z" started at once, so that git's start (about 1.5
// ms of a quiet machine's 2 ms for the whole update-ref) runs while the
// caller prepares and signs what it will write: the process waits for its
// input, holding no lock, and Apply then sends the whole transaction (what
// UpdateRefs sends); an update the in-process path turns down starts it
// then. Abort stops a process that got nothing: git never began a
// transaction, so nothing changes and no hook runs. Either of them must be
// called; Abort after Apply does nothing.
type RefTransaction struct {
	r      *Repo
	cmd    *exec.Cmd // nil until git is started
	stdin  io.WriteCloser
	stderr *limitedBuffer
	args   []string
	msg    string
	// committer is the reflog's identity when the transaction may be
	// done in-process ("" when not).
	committer string
	done      bool
}

// StartUpdateRefs begins one transaction whose reflog message is
// reflogMsg (as UpdateRefs): git update-ref is started now unless the
// transaction may be done in-process.
func (r *Repo) StartUpdateRefs(reflogMsg string) (*RefTransaction, error) {
	if r.isClosed() {
		return nil, errClosed
	}
	t := &RefTransaction{r: r, args: updateArgs(reflogMsg), msg: sanitizeMsg(reflogMsg), stderr: &limitedBuffer{max: maxStderr}}
	if committer, ok := r.inProcessRefs(); ok {
		t.committer = committer
		return t, nil
	}
	if err := t.start(); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *RefTransaction) start() error {
	t.cmd = exec.Command("git", t.args...)
	t.cmd.Dir = t.r.dir
	t.cmd.Env = append(t.r.Env(), "LC_ALL=C")
	t.cmd.Stdout, t.cmd.Stderr = io.Discard, t.stderr
	in, err := t.cmd.StdinPipe()
	if err != nil {
		return wrapf(err, "update refs")
	}
	t.stdin = in
	if err := t.cmd.Start(); err != nil {
		return fmt.Errorf("gitrepo: update refs: %w", gitError(t.args, t.stderr, err))
	}
	return nil
}

// inProcessRefs reports whether git update-ref would do nothing for a
// transaction but what fastpath.Repo.UpdateLooseRef does, and returns the
// reflog's identity ("Name <email>"). Not when: the in-process readers
// are off; a reference-transaction hook exists (in core.hooksPath, or in
// the hooks directory; any file by that name, executable or not) or the
// hook directory is not a plain path (~, %(prefix)); hooks are configured
// (hook.*); git would fsync (core.fsync*) or share the files with a group
// (core.sharedRepository); git would work out the identity or the date
// itself (Committer).
func (r *Repo) inProcessRefs() (string, bool) {
	if r.fast == nil {
		return "", false
	}
	cfg, err := r.ConfigList()
	if err != nil {
		return "", false
	}
	for _, e := range cfg {
		if strings.HasPrefix(e.Key, "core.fsync") || e.Key == "core.sharedrepository" || strings.HasPrefix(e.Key, "hook.") {
			return "", false
		}
	}
	hooks := filepath.Join(r.commonDir, "hooks")
	if v, set := lookupConfig(cfg, "core.hookspath"); set {
		switch {
		case v == "" || strings.HasPrefix(v, "~") || strings.HasPrefix(v, "%("):
			return "", false
		case filepath.IsAbs(v):
			hooks = v
		default:
			hooks = filepath.Join(r.dir, v) // git runs in the work tree's top, or the git dir
		}
	}
	if _, err := os.Lstat(filepath.Join(hooks, "reference-transaction")); !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	name, email, ok := r.committer(cfg)
	if !ok {
		return "", false
	}
	return name + " <" + email + ">", true
}

// Apply makes updates as one atomic compare-and-swap transaction:
// UpdateRefs's transaction and errors. It may be called once; no updates
// is Abort.
func (t *RefTransaction) Apply(updates []RefUpdate) error {
	if t.done {
		return errors.New("gitrepo: update refs: transaction already used")
	}
	if len(updates) == 0 {
		t.Abort()
		return nil
	}
	in, err := updateInput(updates)
	if err != nil {
		t.Abort()
		return err
	}
	t.done = true
	if t.cmd == nil && t.committer != "" && len(updates) == 1 {
		u := updates[0]
		done, err := t.r.fast.UpdateLooseRef(fastpath.RefUpdate{
			Name: u.Name, Old: fastpath.ID(u.Old), New: fastpath.ID(u.New),
			Committer: t.committer, When: time.Now(), Msg: t.msg, LockTimeout: refLockTimeout,
		})
		if done {
			return inProcessUpdateError(u, err)
		}
	}
	if t.cmd == nil {
		if err := t.start(); err != nil {
			return err
		}
	}
	_, werr := t.stdin.Write(in)
	cerr := t.stdin.Close()
	err = t.cmd.Wait()
	if err == nil && werr == nil && cerr == nil {
		return nil
	}
	if err == nil {
		err = werr
		if err == nil {
			err = cerr
		}
	}
	return t.r.classifyUpdateError(updates, gitError(t.args, t.stderr, err))
}

// inProcessUpdateError words UpdateLooseRef's errors as
// classifyUpdateError words git's.
func inProcessUpdateError(u RefUpdate, err error) error {
	var moved *fastpath.RefMovedError
	var locked *fastpath.RefLockedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &moved):
		return fmt.Errorf("gitrepo: update refs: %s is at %s, expected %s: %w", u.Name, Hash(moved.Current), u.Old, ErrRefChanged)
	case errors.As(err, &locked):
		return lockedError([]string{locked.Lock})
	}
	return wrapf(err, "update refs: %s", u.Name)
}

// Abort stops the started git update-ref if Apply has not run: it has
// read no command, so it changes nothing.
func (t *RefTransaction) Abort() {
	if t == nil || t.done {
		return
	}
	t.done = true
	if t.cmd == nil {
		return
	}
	_ = t.cmd.Process.Kill()
	_ = t.stdin.Close()
	_ = t.cmd.Wait()
}

func sanitizeMsg(s string) string {
	s = strings.Map(func(c rune) rune {
		if c < 0x20 || c == 0x7f {
			return ' '
		}
		return c
	}, s)
	return truncate(strings.TrimSpace(s), 1000)
}

// lockedError is ErrLocked for the lock files left in locks.
func lockedError(locks []string) error {
	list := truncate(strings.Join(locks, " "), 600)
	return fmt.Errorf("gitrepo: update refs: %w: %s exists; another git process is using it, or one that crashed left it behind: if no git command is running in this repository, remove it (rm %s) and run the command again", ErrLocked, list, list)
}

// classifyUpdateError decides whether a failed transaction lost a
// compare-and-swap: a ref is now not at its expected old value, or git
// reports a lock held by a concurrent update.
func (r *Repo) classifyUpdateError(updates []RefUpdate, err error) error {
	for _, u := range updates {
		cur, ok, rerr := r.ResolveRef(u.Name)
		if rerr != nil {
			break
		}
		if !ok {
			cur = ZeroHash
		}
		if cur != u.Old {
			return fmt.Errorf("gitrepo: update refs: %s is at %s, expected %s: %w (%v)", u.Name, cur, u.Old, ErrRefChanged, err)
		}
	}
	var ge *GitError
	if errors.As(err, &ge) {
		s := ge.Stderr
		if i := strings.Index(s, "Unable to create '"); i >= 0 && strings.Contains(s, ".lock': File exists") {
			lock := s[i+len("Unable to create '"):]
			locks := []string{lock[:strings.Index(lock, "'")]}
			// A process killed while committing a transaction leaves a lock
			// for each ref it held: name them all, so one repair suffices.
			candidates := []string{filepath.Join(r.gitDir, "packed-refs.lock")} // deletions lock it too
			for _, u := range updates {
				candidates = append(candidates, filepath.Join(r.gitDir, filepath.FromSlash(u.Name)+".lock"))
			}
			for _, p := range candidates {
				if _, err := os.Stat(p); err == nil && p != locks[0] {
					locks = append(locks, p)
				}
			}
			return lockedError(locks)
		}
		if (strings.Contains(s, ".lock': File exists") || strings.Contains(s, "but expected") ||
			strings.Contains(s, "reference already exists") || strings.Contains(s, "unable to resolve reference")) &&
			strings.Contains(s, "cannot lock ref '") {
			name := s[strings.Index(s, "cannot lock ref '")+len("cannot lock ref '"):]
			if i := strings.IndexByte(name, '\''); i >= 0 {
				name = name[:i]
			}
			return fmt.Errorf("gitrepo: update refs: %s: %w (%v)", truncate(name, 200), ErrRefChanged, err)
		}
	}
	return wrapf(err, "update refs")
}
