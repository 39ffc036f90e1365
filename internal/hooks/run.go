package hooks

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/display"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/trace"
	"github.com/git-secure/git-secure/internal/verify"
)

// EnvInternal marks git processes git-secure started itself.
const EnvInternal = gitrepo.EnvInternal

// MaxStdin bounds what a hook reads from git.
const MaxStdin = 64 << 20

// ErrRejected is returned when a hook refuses the operation (exit 1).
var ErrRejected = errors.New("rejected by git-secure")

// Context is one hook invocation.
type Context struct {
	Repo   *porcelain.Repo
	Name   string
	Args   []string
	Stdin  io.Reader
	Stderr io.Writer
	Getenv func(string) string
	// Trace, when set, is told when each phase ends (GIT_SECURE_TRACE).
	Trace *trace.Tracer
}

// say prints one line for the person pushing: repository text in args is
// escaped for their terminal.
func (c *Context) say(format string, args ...any) {
	display.Fprintf(c.Stderr, "git-secure: "+format+"\n", args...)
}

// Run runs git-secure's part of hook Name, then the hook it chains to. The
// operation is refused when either refuses.
func Run(c *Context) error {
	input, err := io.ReadAll(io.LimitReader(c.Stdin, MaxStdin+1))
	if err != nil {
		return err
	}
	if len(input) > MaxStdin {
		return fmt.Errorf("hooks: more than %d bytes on stdin", MaxStdin)
	}
	var ours error
	switch c.Name {
	case "pre-receive":
		ours = c.preReceive(input)
	case "pre-push":
		c.syncForwarders()
		ours = c.prePush(input)
	case "reference-transaction":
		ours = c.referenceTransaction(input)
	}
	if ours != nil && !errors.Is(ours, ErrRejected) {
		// Fail closed where security needs it: a server that cannot verify
		// refuses the push.
		if c.Name == "pre-receive" {
			c.say("error: cannot verify this push: %v", ours)
			return fmt.Errorf("%w: %v", ErrRejected, ours)
		}
		c.say("warning: %v", ours)
		ours = nil
	}
	if ours != nil {
		return ours
	}
	return c.chain(input)
}

// syncForwarders picks up hooks added to the chained directory since the
// install, so that they run from now on.
func (c *Context) syncForwarders() {
	dir := filepath.Join(c.Repo.Git.GitDir(), "secure", "hooks")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return // installed for the user, not in this repository
	}
	chainDir, err := c.chainDir()
	if err != nil {
		return
	}
	added, err := SyncForwarders(dir, Binary(), c.Repo.Git.GitDir(), chainDir, Guarded(dir))
	if err != nil {
		c.say("warning: %v", err)
	}
	for _, name := range added {
		c.say("note: your %s hook (%s) was added after git secure hooks install; it runs from now on", name, filepath.Join(chainDir, name))
	}
}

func (c *Context) chainDir() (string, error) {
	dir, ok, err := c.Repo.ConfigValue(keyPrevHooksPath)
	if err != nil {
		return "", err
	}
	if !ok {
		return filepath.Join(c.Repo.Git.GitDir(), "hooks"), nil
	}
	if !filepath.IsAbs(dir) && c.Repo.Git.WorkTree() != "" {
		dir = filepath.Join(c.Repo.Git.WorkTree(), dir)
	}
	return dir, nil
}

// chain runs the hook that was in place before git-secure, if any.
func (c *Context) chain(input []byte) error {
	var path string
	if c.Name == "pre-receive" {
		path = filepath.Join(c.Repo.Git.GitDir(), "hooks", "pre-receive.git-secure-chained")
	} else {
		dir, err := c.chainDir()
		if err != nil {
			return err
		}
		path = filepath.Join(dir, c.Name)
	}
	st, err := os.Stat(path)
	if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return nil
	}
	cmd := exec.Command(path, c.Args...)
	cmd.Stdin = bytes.NewReader(input)
	cmd.Stdout = os.Stdout
	cmd.Stderr = c.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("%w: %s exited with %d", ErrRejected, path, ee.ExitCode())
		}
		return err
	}
	return nil
}

// RefLine is one "<old> <new> <ref>" line of pre-receive input.
type RefLine struct {
	Old, New gitrepo.Hash
	Ref      string
}

// ParseRefLines parses pre-receive (and reference-transaction) input
// strictly.
func ParseRefLines(input []byte) ([]RefLine, error) {
	var out []RefLine
	if len(input) == 0 {
		return nil, nil
	}
	if input[len(input)-1] != '\n' {
		return nil, errors.New("hooks: input does not end with a newline")
	}
	// Split by hand: bufio.Scanner would silently drop a trailing \r.
	for _, line := range strings.Split(string(input[:len(input)-1]), "\n") {
		if len(line) > 4096 || strings.ContainsAny(line, "\r\x00") {
			return nil, fmt.Errorf("hooks: bad input line %q", truncate(line))
		}
		f := strings.Split(line, " ")
		if len(f) != 3 {
			return nil, fmt.Errorf("hooks: bad input line %q", truncate(line))
		}
		old, err1 := gitrepo.ParseHash(f[0])
		nw, err2 := gitrepo.ParseHash(f[1])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("hooks: bad object name in %q", truncate(line))
		}
		if err := gitrepo.ValidRefName(f[2]); err != nil {
			return nil, fmt.Errorf("hooks: %v", err)
		}
		out = append(out, RefLine{Old: old, New: nw, Ref: f[2]})
	}
	return out, nil
}

func truncate(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}

// InstallHelp is what a pusher without git-secure is told.
const InstallHelp = `this repository is protected by git-secure: changes to protected refs need a
signed entry in its log. Install git-secure (make install from its source), then
in your clone run: git secure hooks install; git config gpg.format ssh;
git config user.signingkey ~/.ssh/id_ed25519.pub; and push again.`

// preReceive verifies the state a push would create and refuses the whole
// push when it does not verify.
func (c *Context) preReceive(input []byte) error {
	lines, err := ParseRefLines(input)
	if err != nil {
		return err
	}
	g := c.Repo.Git
	// The configuration (root key pin) is read while the refs are.
	c.Repo.Preload()
	if ok, err := c.unprotectedOnly(lines); err != nil {
		return err
	} else if ok {
		c.Trace.Mark("unprotected refs only")
		return nil
	}
	// Verification follows (a push of metadata gets here at once): set up
	// the signature code while the refs, the checkpoint and the policy are
	// read. The fast path above needs none.
	go sign.Warm()
	refs, err := g.ListRefs("refs/")
	if err != nil {
		return err
	}
	c.Trace.Mark("list refs")
	proposed := map[string]gitrepo.Hash{}
	protectedNow := false
	for _, r := range refs {
		proposed[r.Name] = r.Hash
		protectedNow = protectedNow || r.Name == rsl.Ref || r.Name == policy.Ref
	}
	pushed := map[string]bool{}
	for _, l := range lines {
		if cur := proposed[l.Ref]; cur != l.Old {
			c.say("rejected: %s moved during the push (someone else pushed first); fetch and push again", l.Ref)
			return ErrRejected
		}
		if l.New.IsZero() {
			delete(proposed, l.Ref)
		} else {
			proposed[l.Ref] = l.New
		}
		pushed[l.Ref] = true
	}
	// Not a git-secure repository before nor after this push. Deciding on
	// the proposed state alone would let one push delete the log and the
	// policy together and pass as unprotected.
	if !protectedNow && proposed[rsl.Ref].IsZero() && proposed[policy.Ref].IsZero() {
		return nil // not a git-secure repository
	}
	for _, l := range lines {
		switch l.Ref {
		case rsl.Ref, attest.Ref:
			if l.New.IsZero() {
				c.say("error: %s cannot be deleted", l.Ref)
				return ErrRejected
			}
			if !l.Old.IsZero() {
				if ok, err := g.IsAncestor(l.Old, l.New); err != nil || !ok {
					c.say("error: %s can only grow: %s does not extend %s", l.Ref, short(l.New), short(l.Old))
					c.say("hint: fetch the remote's %s and build on it (git fetch)", l.Ref)
					return ErrRejected
				}
			}
			if l.Ref == attest.Ref && !l.Old.IsZero() {
				if err := c.attestationsKept(l); err != nil {
					return err
				}
			}
		case policy.Ref:
			if l.New.IsZero() {
				c.say("error: %s cannot be deleted", l.Ref)
				return ErrRejected
			}
		}
	}
	c.Trace.Mark("log only grows")
	pin, err := c.Repo.PinnedRootKeys()
	if err != nil {
		return err
	}
	opts := verify.Options{Now: c.Repo.Now(), RefValues: proposed, RootKeys: pin}
	c.Trace.Mark("read config")
	if c.Trace != nil {
		opts.Trace = func(phase string, _ time.Duration) { c.Trace.Mark("verify: " + phase) }
	}
	_, err = verify.WithCheckpoint(g, opts, false)
	c.Trace.Mark("verify")
	if err == nil {
		return nil
	}
	var failed *verify.Failed
	if !errors.As(err, &failed) {
		return err
	}
	unrecorded := false
	for _, p := range failed.Problems {
		c.say("rejected: %s", p.Error())
		if p.Hint != "" {
			c.say("hint: %s", p.Hint)
		}
		if errors.Is(p, verify.ErrUnrecorded) && pushed[p.Ref] {
			unrecorded = true
		}
	}
	if unrecorded {
		for _, l := range strings.Split(InstallHelp, "\n") {
			c.say("%s", l)
		}
	}
	return ErrRejected
}

// unprotectedOnly reports whether a push to a git-secure repository
// changes nothing the policy in force protects: no metadata ref, and only
// refs no rule and no global rule covers (a path rule covers every ref),
// while the server's metadata is exactly what it last verified. Such a
// push cannot change a verified state, so it is accepted without listing
// every ref and replaying the log: people without git-secure keep pushing
// feature branches at little cost.
func (c *Context) unprotectedOnly(lines []RefLine) (bool, error) {
	for _, l := range lines {
		if strings.HasPrefix(l.Ref, "refs/secure/") {
			return false, nil
		}
	}
	g := c.Repo.Git
	names := []string{rsl.Ref, policy.Ref}
	for _, l := range lines {
		names = append(names, l.Ref)
	}
	list, err := g.ListRefs(names...)
	if err != nil {
		return false, err
	}
	cur := map[string]gitrepo.Hash{}
	for _, r := range list {
		cur[r.Name] = r.Hash
	}
	if cur[rsl.Ref].IsZero() || cur[policy.Ref].IsZero() {
		return false, nil // not set up (or half set up): the full check decides
	}
	for _, l := range lines {
		if cur[l.Ref] != l.Old {
			return false, nil // the full check says it moved during the push
		}
	}
	// Only from the state the server last verified completely: its log
	// tip and policy exactly as the checkpoint has them, under the same
	// root key pin. Metadata that changed any other way (an admin's
	// restore, a half-finished push) goes to the full check.
	pin, err := c.Repo.PinnedRootKeys()
	if err != nil {
		return false, nil // the full check reports it
	}
	cp, err := verify.LoadCheckpoint(verify.CheckpointPath(g.GitDir()))
	if err != nil || cp == nil || cp.EntryID != cur[rsl.Ref] || cp.PolicyCommit != cur[policy.Ref] || cp.RootPin != verify.RootPin(pin) {
		return false, nil
	}
	pol, err := policy.Load(g, cp.PolicyCommit)
	if err != nil {
		return false, nil // the full check says what is wrong
	}
	for _, l := range lines {
		if pol.Protected(l.Ref) {
			return false, nil
		}
		for _, gr := range pol.GlobalRules() {
			if gr.CoversRef(l.Ref) {
				return false, nil
			}
		}
	}
	return true, nil
}

func short(h gitrepo.Hash) string { return h.String()[:12] }

// prePush refuses pushing protected refs of a git-secure repository to a
// remote that does not go through git-remote-secure, which would send the
// branch without its log entry.
func (c *Context) prePush(input []byte) error {
	if c.Getenv(EnvInternal) != "" || len(c.Args) < 1 {
		return nil
	}
	g := c.Repo.Git
	remote := c.Args[0]
	// The common case first and cheapest: the remote goes through
	// git-remote-secure, which records and sends the entries itself.
	if v, _, _ := c.Repo.ConfigValue("remote." + remote + ".vcs"); v == "secure" {
		return nil
	}
	polTip, ok, err := g.ResolveRef(policy.Ref)
	if err != nil || !ok {
		return err
	}
	pol, err := policy.Load(g, polTip)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(input))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 {
			continue
		}
		if pol.Protected(f[2]) {
			c.say("error: %s is protected by git-secure, but remote %q does not carry its log entries", f[2], remote)
			c.say("hint: run git secure hooks install (it routes %s through git-remote-secure), then push again", remote)
			return ErrRejected
		}
	}
	return nil
}

// referenceTransaction refuses, before git commits it, a change to
// git-secure's own refs (refs/secure/*) made by anything but git-secure:
// the local log and policy are what later fetches are checked against, so
// a plain "git update-ref", or a fetch refspec that copies a remote's
// metadata unverified, must not move them. git-secure's own git processes
// carry GIT_SECURE_INTERNAL. A bare repository is a server: its pushes are
// judged by pre-receive.
func (c *Context) referenceTransaction(input []byte) error {
	if len(c.Args) < 1 || c.Args[0] != "prepared" || c.Getenv(EnvInternal) != "" || c.Repo.Git.WorkTree() == "" {
		return nil
	}
	// HEAD and other names outside refs/ appear here too: parse only what
	// matters, and refuse what cannot be read where it names our refs.
	for _, line := range strings.Split(strings.TrimSuffix(string(input), "\n"), "\n") {
		if !strings.Contains(line, "refs/secure/") {
			continue
		}
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 {
			c.say("error: cannot read the ref update %q", truncate(line))
			return ErrRejected
		}
		old, err1 := gitrepo.ParseHash(f[0])
		nw, err2 := gitrepo.ParseHash(f[1])
		if err1 != nil || err2 != nil {
			c.say("error: cannot read the ref update %q", truncate(line))
			return ErrRejected
		}
		l := RefLine{Old: old, New: nw, Ref: f[2]}
		// git reports the old value the caller expected, zero when it gave
		// none, so zero -> zero is a deletion; only a verification (same
		// non-zero value on both sides) changes nothing.
		if !strings.HasPrefix(l.Ref, "refs/secure/") || (l.Old == l.New && !l.New.IsZero()) {
			continue
		}
		what := "change"
		if l.New.IsZero() {
			what = "delete"
		}
		c.say("error: refusing to %s %s outside git-secure", what, l.Ref)
		c.say("hint: git-secure's metadata changes only through git secure commands and plain git fetch/push of a remote with remote.<name>.vcs = secure (git secure hooks install sets it)")
		c.say("hint: to restore it from a backup on purpose, run the command with GIT_SECURE_INTERNAL=1")
		return ErrRejected
	}
	return nil
}
