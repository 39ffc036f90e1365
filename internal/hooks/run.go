package hooks

import (
	"bytes"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/display"
	"github.com/git-secure/git-secure/internal/freshness"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/pushcert"
	"github.com/git-secure/git-secure/internal/report"
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
	// logReader, when set, reads the log's entries for judgePush in
	// place of Repo.Git (tests count what it reads).
	logReader rsl.Reader
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
	case "post-receive":
		ours = c.postReceive(input)
	}
	if ours != nil && !errors.Is(ours, ErrRejected) {
		// Fail closed where security needs it: a server that cannot verify
		// refuses the push.
		if c.server() {
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

// server reports whether this hook guards a server: pre-receive, or the
// reference-transaction hook of a bare repository.
func (c *Context) server() bool {
	return c.Name == "pre-receive" || ((c.Name == "reference-transaction" || c.Name == "post-receive") && c.Repo.Git.WorkTree() == "")
}

// syncForwarders picks up hooks added to the chained directory since the
// install, so that they run from now on.
func (c *Context) syncForwarders() { SyncInstalled(c.Repo, c.say) }

// SyncInstalled picks up the hooks added to the chained directory of
// repository r since git secure hooks install put its forwarders there
// (nothing when they were installed for the user), and tells say about
// each. The pre-push hook and git-remote-secure both run it.
func SyncInstalled(r *porcelain.Repo, say func(format string, args ...any)) {
	gitDir := r.Git.GitDir()
	dir := filepath.Join(gitDir, "secure", "hooks")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return // installed for the user, not in this repository
	}
	chainDir, err := chainDirOf(r)
	if err != nil {
		return
	}
	added, err := SyncForwarders(dir, Binary(), gitDir, chainDir, Guarded(dir))
	if err != nil {
		say("warning: %v", err)
	}
	for _, name := range added {
		say("note: your %s hook (%s) was added after git secure hooks install; it runs from now on", name, filepath.Join(chainDir, name))
	}
}

func (c *Context) chainDir() (string, error) { return chainDirOf(c.Repo) }

// chainDirOf is the directory of the hooks r had before git-secure's.
func chainDirOf(r *porcelain.Repo) (string, error) {
	dir, ok, err := r.ConfigValue(keyPrevHooksPath)
	if err != nil {
		return "", err
	}
	if !ok {
		return filepath.Join(r.Git.GitDir(), "hooks"), nil
	}
	if !filepath.IsAbs(dir) && r.Git.WorkTree() != "" {
		dir = filepath.Join(r.Git.WorkTree(), dir)
	}
	return dir, nil
}

// chain runs the hook that was in place before git-secure, if any.
func (c *Context) chain(input []byte) error {
	var path string
	if c.server() {
		path = filepath.Join(c.Repo.Git.GitDir(), "hooks", c.Name+".git-secure-chained")
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

// InstallHelp is what a pusher without git-secure is told.
const InstallHelp = `this repository is protected by git-secure: changes to protected refs need a
signed entry in its log, by a person its policy allows. If you are one of them,
install git-secure, the project git-secure/git-secure on GitHub (Go 1.26+):
git clone https://github.com/git-secure/git-secure && make -C git-secure install
then in your clone run: git secure hooks install; git config gpg.format ssh;
git config user.signingkey ~/.ssh/id_ed25519.pub; and push again.`

// sayWhoMayMove tells a pusher whose push moved ref (to target) without
// an entry who may move it, by the rules of the policy in force, and, for
// a branch, how to propose the commit instead: a plain-git contributor is
// no person of the policy, and installing git-secure would not let them
// push it.
func (c *Context) sayWhoMayMove(ref string, target gitrepo.Hash) {
	pol, _, err := c.Repo.CurrentPolicy()
	if err != nil {
		return // the refusal above stands; this is only advice
	}
	for _, r := range pol.RulesFor(ref) {
		c.say("hint: %s is protected by rule %s: %s", ref, r.Name, ruleNeeds(r))
	}
	branch, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok || target.IsZero() {
		c.say("hint: ask one of them to make this change")
		return
	}
	short := target.String()[:12]
	review := "refs/heads/review/" + branch + "-" + short
	if pol.Protected(review) {
		c.say("hint: push your commits to a branch no rule protects and ask one of them to take them")
		return
	}
	c.say("hint: to propose your commits, push them to a branch no rule protects and ask one of them to take them: git push origin %s:%s", short, review)
}

// ruleNeeds says what rule r needs, in one line ("2 of alice, bob").
func ruleNeeds(r *policy.Rule) string {
	var needs []string
	if len(r.Allow) > 0 {
		needs = append(needs, fmt.Sprintf("%d of %s", r.Threshold, strings.Join(r.Allow, ", ")))
	}
	for _, q := range r.Require {
		needs = append(needs, q.String())
	}
	s := strings.Join(needs, " and ")
	if r.IsPathRule() {
		s += " for changes to " + strings.Join(r.Paths, ", ")
	}
	return s
}

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
	// The organisation policy is fetched once per push (the cache
	// remembers it, or why it failed), for every ask below: so it is
	// judged as the verification judges it, without its freshness
	// statement (opts below), from the first ask on.
	c.Repo.OrgCache().SkipFreshness = true
	marker, verified := unprotectedMarker(g.GitDir()), verifiedMarker(g.GitDir())
	for _, m := range []string{marker, verified} { // a previous receive-pack with this pid
		if err := removeMarker(m); err != nil {
			return err
		}
	}
	sweepMarkers(filepath.Dir(marker))
	c.notePostReceive(g.GitDir(), lines)
	if judged, err := c.judgeUnprotected(lines); err != nil {
		return err
	} else if judged != nil {
		c.Trace.Mark("unprotected refs only")
		c.markJudged(marker, input, judged)
		return nil
	}
	// Verification follows (a push of metadata gets here at once): set up
	// the signature code while the refs, the checkpoint and the policy are
	// read. The fast path above needs none; the server never signs here.
	go sign.WarmVerify()
	st, err := c.proposedState(lines)
	if err != nil || st == nil {
		return err // nil, nil: not a git-secure repository
	}
	if err := c.checkMetadataLines(lines, st.proposed); err != nil {
		return err
	}
	c.Trace.Mark("log only grows")
	polTip := st.proposed[policy.Ref]
	loaded, err := c.fastForwardsOnly(lines, polTip)
	if err != nil {
		return err
	}
	cert, err := c.prepareCert(lines, st)
	if err != nil {
		return err
	}
	c.Trace.Mark("push certificate")
	budget, err := c.pushBudget(st.oldLog, st.proposed[rsl.Ref])
	if err != nil {
		return err
	}
	// Freshness is the clients' check: a push is judged on its content,
	// and a stopped timestamp job must not jam the server.
	opts := verify.Options{Budget: budget, SkipFreshness: true}
	if loaded != nil {
		opts.Loaded, opts.LoadedCommit = loaded, polTip // read and checked once
	}
	// A push's new entries name the organisation's latest policy, so
	// that whom the organisation removed loses access at once.
	if opts.OrgCurrentFrom, err = c.firstNewEntry(st.oldLog); err != nil {
		return err
	}
	c.Trace.Mark("read config")
	if c.Trace != nil {
		opts.Trace = func(phase string, _ time.Duration) { c.Trace.Mark("verify: " + phase) }
	}
	_, err = c.Repo.VerifyProposed(st.proposed, opts)
	c.Trace.Mark("verify")
	if err == nil {
		if err := c.storeCert(cert); err != nil {
			return err
		}
		if selfContained(g, lines) {
			c.markJudged(verified, input, judgedTips(lines, st.proposed))
		}
		return nil
	}
	var failed *verify.Failed
	if !errors.As(err, &failed) {
		return err
	}
	if err := c.judgePush(failed, st, budget.Deadline); err != nil {
		return err
	}
	return c.storeCert(cert)
}

// judgedTips returns the log and policy tips a verified push was judged
// from: the server's, before the push's lines move them.
func judgedTips(lines []RefLine, proposed map[string]gitrepo.Hash) map[string]gitrepo.Hash {
	judged := map[string]gitrepo.Hash{rsl.Ref: proposed[rsl.Ref], policy.Ref: proposed[policy.Ref]}
	for _, l := range lines {
		if _, ok := judged[l.Ref]; ok {
			judged[l.Ref] = l.Old
		}
	}
	return judged
}

// pushState is the server's state before a push and the one it proposes.
type pushState struct {
	proposed map[string]gitrepo.Hash // every ref as the push would leave it
	onServer map[string]bool         // the refs the server had before it
	pushed   map[string]bool         // the refs the push changes
	oldLog   gitrepo.Hash            // the server's log tip before it
}

// proposedState lists the server's refs and applies the push's lines to
// them; nil (no error) when the repository is not a git-secure one before
// nor after the push. A line whose ref moved meanwhile is refused.
func (c *Context) proposedState(lines []RefLine) (*pushState, error) {
	refs, err := c.Repo.Git.ListRefs("refs/")
	if err != nil {
		return nil, err
	}
	c.Trace.Mark("list refs")
	st := &pushState{proposed: map[string]gitrepo.Hash{}, onServer: make(map[string]bool, len(refs)), pushed: map[string]bool{}}
	protectedNow := false
	for _, r := range refs {
		st.onServer[r.Name] = true
		st.proposed[r.Name] = r.Hash
		protectedNow = protectedNow || r.Name == rsl.Ref || r.Name == policy.Ref
	}
	st.oldLog = st.proposed[rsl.Ref]
	for _, l := range lines {
		if cur := st.proposed[l.Ref]; cur != l.Old {
			c.say("rejected: %s moved during the push (someone else pushed first); fetch and push again", l.Ref)
			return nil, ErrRejected
		}
		if l.New.IsZero() {
			delete(st.proposed, l.Ref)
		} else {
			st.proposed[l.Ref] = l.New
		}
		st.pushed[l.Ref] = true
	}
	// Not a git-secure repository before nor after this push. Deciding on
	// the proposed state alone would let one push delete the log and the
	// policy together and pass as unprotected.
	if !protectedNow && st.proposed[rsl.Ref].IsZero() && st.proposed[policy.Ref].IsZero() {
		return nil, nil
	}
	return st, nil
}

// checkMetadataLines refuses a push that deletes git-secure's metadata,
// rewrites the history of what may only grow, or puts anything else
// under refs/secure/.
func (c *Context) checkMetadataLines(lines []RefLine, proposed map[string]gitrepo.Hash) error {
	var keeps []RefLine
	for _, l := range lines {
		switch l.Ref {
		case rsl.Ref:
			if l.New.IsZero() {
				return c.onlyGrows(l, proposed[policy.Ref])
			}
			if err := c.logExtends(l); err != nil {
				return err
			}
		case policy.StagingRef:
			// The staged policy collects co-signers' signatures: nobody
			// may delete it or put another change in its place (the
			// helper never does either).
			if err := c.onlyGrows(l, proposed[policy.Ref]); err != nil {
				return err
			}
		case attest.Ref:
			if err := c.attestationsGrow(l); err != nil {
				return err
			}
			if err := c.attestationsKept(l); err != nil {
				return err
			}
		case freshness.Ref:
			if err := c.checkStatementPush(l, proposed); err != nil {
				return err
			}
		case pushcert.Ref:
			c.say("error: %s is written by the server alone (the certificates of signed pushes, stored as they arrive): a push cannot change it", l.Ref)
			c.say("hint: push without it; to sign a push, use git push --signed")
			return ErrRejected
		case policy.Ref:
			if l.New.IsZero() {
				c.say("error: %s cannot be deleted", l.Ref)
				return ErrRejected
			}
		default:
			if strings.HasPrefix(l.Ref, rsl.KeepRefPrefix) {
				if err := c.checkKeepRef(l); err != nil {
					return err
				}
				keeps = append(keeps, l)
				continue
			}
			if strings.HasPrefix(l.Ref, "refs/secure/") {
				c.say("error: %s is not a git-secure ref (refs/secure/ holds only %s, %s, %s, %s and %s): clients would take it for metadata", l.Ref, rsl.Ref, policy.Ref, attest.Ref, policy.StagingRef, freshness.Ref)
				return ErrRejected
			}
		}
	}
	return c.keepsRecorded(keeps, proposed[rsl.Ref])
}

// maxKeepRefsPerPush bounds the keep refs one push may create: git-secure's
// push creates one per ref it force-pushes or deletes.
const maxKeepRefsPerPush = 1000

// keepsRecorded accepts the keep refs of a push only for states the log
// (logTip: the log the push leaves) records as a ref's old or new state
// among its newest rsl.KeepLookup entries: a keep ref keeps what a
// force-push or deletion left behind, and must not let anyone store any
// commit on the server (and in every clone) for good.
func (c *Context) keepsRecorded(keeps []RefLine, logTip gitrepo.Hash) error {
	if len(keeps) == 0 {
		return nil
	}
	if len(keeps) > maxKeepRefsPerPush {
		c.say("error: the push creates %d keep refs (%s*), more than the %d one push may create", len(keeps), rsl.KeepRefPrefix, maxKeepRefsPerPush)
		c.say("hint: git-secure's push creates one per recorded state a force-push or deletion leaves behind; push fewer at a time")
		return ErrRejected
	}
	want := make(map[gitrepo.Hash]bool, len(keeps))
	for _, l := range keeps {
		want[l.New] = true
	}
	found, err := rsl.FindRecorded(c.Repo.Git, logTip, want, rsl.KeepLookup)
	if err != nil {
		c.say("error: cannot read the log to check %s: %v", keeps[0].Ref, err)
		return ErrRejected
	}
	for _, l := range keeps {
		if !found[l.New] {
			c.say("error: %s: %s is not a state the log records (the old or new state of a ref in its newest %d entries): a keep ref only keeps a recorded state that a force-push or deletion left behind", l.Ref, l.New, rsl.KeepLookup)
			c.say("hint: drop it from the push (git-secure's push creates the keep refs it needs, and the server creates them for force-pushes it records)")
			return ErrRejected
		}
	}
	return nil
}

// checkKeepRef accepts only the creation of refs/secure/keep/<full hash>
// pointing at that commit (rsl.KeepRefPrefix): such a ref keeps a state a
// force-push left behind reachable and says nothing else, so any other
// name, a move or a deletion is refused (keepsRecorded then checks that
// the log records the state).
func (c *Context) checkKeepRef(l RefLine) error {
	name := strings.TrimPrefix(l.Ref, rsl.KeepRefPrefix)
	switch {
	case l.Old.IsZero() && l.New.IsZero():
		// git sends the deletion of a ref the server lacks when the
		// client's listing was stale (or came through a helper that hides
		// refs/secure/*): say that, not that it must point at its commit.
		c.say("error: %s does not exist on this server: there is nothing to delete", l.Ref)
		c.say("hint: drop it from the push; git ls-remote URL '%s*' lists the keep refs the server has (they are only ever created, never deleted)", rsl.KeepRefPrefix)
	case !l.Old.IsZero() && l.New.IsZero():
		c.say("error: %s keeps a recorded state reachable for fresh clones: it cannot be deleted", l.Ref)
	case !l.Old.IsZero():
		c.say("error: %s keeps a recorded state reachable for fresh clones: it is only ever created, never moved", l.Ref)
	case l.New.IsZero() || name != l.New.String():
		c.say("error: %s must point at the commit it names, %s, but the push sets it to %s", l.Ref, name, shortOrNone(l.New))
	default:
		if _, err := c.Repo.Git.ReadCommit(l.New); err != nil {
			c.say("error: %s must point at a commit: %v", l.Ref, err)
			return ErrRejected
		}
		return nil
	}
	return ErrRejected
}

// onlyGrows refuses the deletion of l.Ref, or a new value that does not
// extend the old one. The staged policy may also be replaced when no
// signature is lost (polTip: the policy the push leaves in force): a
// co-signer's version never descends from the one they signed (its
// parent is the policy).
func (c *Context) onlyGrows(l RefLine, polTip gitrepo.Hash) error {
	if l.New.IsZero() {
		c.say("error: %s cannot be deleted", l.Ref)
		return ErrRejected
	}
	if l.Ref == policy.StagingRef {
		return c.stagingMoved(l, polTip)
	}
	if !l.Old.IsZero() {
		if ok, err := c.Repo.Git.IsAncestor(l.Old, l.New); err != nil || !ok {
			c.say("error: %s can only grow: %s does not extend %s", l.Ref, short(l.New), short(l.Old))
			c.say("hint: fetch the remote's %s and build on it (git fetch)", l.Ref)
			return ErrRejected
		}
	}
	return nil
}

// stagingMoved judges a new value of the staged policy slot without
// walking its history: first the cheap check that it is a staged change
// of the policy in force (porcelain.StagedOnPolicy: its only parent is
// polTip, its files pass policy.CheckStaged), which whatever was pushed
// must pass; then, unless it leaves the slot as it was (created, the same
// commit, or the policy in force itself before), the replacement rule
// (stagingReplaced). A staged change's only parent is polTip, so the old
// value is its ancestor only when it is polTip or polTip's ancestor, no
// staged change of polTip, which the replacement rule lets go anyway: the
// ancestry walk the slot had (git merge-base over whatever history was
// pushed, 200 000 junk commits and more) decided nothing this does not.
func (c *Context) stagingMoved(l RefLine, polTip gitrepo.Hash) error {
	if err := c.stagingGrown(l, polTip); err != nil {
		return err
	}
	if l.Old.IsZero() || l.Old == l.New || l.Old == polTip {
		return nil
	}
	return c.stagingReplaced(l, polTip)
}

// stagingGrown refuses a staged policy slot created, grown or replaced
// with anything but a staged change of the policy in force, naming why.
func (c *Context) stagingGrown(l RefLine, polTip gitrepo.Hash) error {
	why, err := porcelain.StagedOnPolicy(c.Repo.Git, l.New, polTip)
	if err != nil || why == "" {
		return err
	}
	if !l.Old.IsZero() && l.Old != polTip && !c.hasParent(l.New, l.Old) {
		// Not grown on the slot's commit: worded as a replacement.
		c.say("error: %s can only grow, or be replaced by a staged change of the policy in force that keeps every signature of the one it replaces: %s", l.Ref, why)
		c.say("hint: fetch (git fetch), then make the change again on the policy in force (git secure policy discard; git secure policy ...) and push it")
		return ErrRejected
	}
	c.say("error: %s only takes a staged change of the policy in force (a commit whose only parent is %s and that holds a policy): %s", l.Ref, policy.Ref, why)
	c.say("hint: fetch (git fetch), then make the change again on the policy in force (git secure policy discard; git secure policy ...) and push it")
	return ErrRejected
}

// hasParent reports whether commit h names p as a parent (false when h
// cannot be read): one step, not a walk.
func (c *Context) hasParent(h, p gitrepo.Hash) bool {
	commit, err := c.Repo.Git.ReadCommit(h)
	return err == nil && slices.Contains(commit.Parents, p)
}

// stagingReplaced accepts a staged policy change that replaces another
// without losing a signature, and refuses any other replacement, naming
// why.
func (c *Context) stagingReplaced(l RefLine, polTip gitrepo.Hash) error {
	why, err := porcelain.StagingReplaceable(c.Repo.Git, l.Old, l.New, polTip)
	if err != nil {
		return err
	}
	if why == "" {
		return nil
	}
	c.say("error: %s can only grow, or be replaced by a staged change of the policy in force that keeps every signature of the one it replaces: %s", l.Ref, why)
	c.say("hint: fetch, review and sign the staged change (git secure policy list --staged; git secure policy sign --staged COMMIT), or wait until it is applied")
	return ErrRejected
}

// maxPrinted bounds the problems one refused push prints: the pusher
// chooses how many there are (one push of 10 000 entries each creating a
// tag it does not send), and the words of the first ones say what is
// wrong with the rest.
const maxPrinted = 50

// judgePush reports the problems of a proposed state that does not
// verify and refuses the push unless every one was there before it and
// the push leaves it alone. What it reads of the logs counts against the
// push's time (deadline, secure.maxPushSeconds): the pusher chooses how
// many problems there are.
func (c *Context) judgePush(failed *verify.Failed, st *pushState, deadline time.Time) error {
	lk, err := c.lookUpProblems(failed, st, deadline)
	if err != nil {
		return err
	}
	unrecorded, rejected, shown := false, false, 0
	for _, p := range failed.Problems {
		if lk.outOfStepBefore(p, st) {
			if shown++; shown <= maxPrinted {
				c.say("warning: %s", p.Error())
				c.say("hint: this push leaves %s alone, so it is accepted; %s", p.Ref, verify.RepairHint("origin", p.Ref, p.Recorded))
			}
			continue
		}
		rejected = true
		if shown++; shown > maxPrinted {
			continue
		}
		if lk.neverPublished(p, st) {
			// Still refused: a log that records a ref the server does not
			// have fails everyone's verification. Only the words differ
			// from a deletion.
			c.say("rejected: %s: the log this push brings records it, but the push does not send it and this server never had it", p.Ref)
			c.say("hint: send it in the same push as the log (git push origin %s); git-remote-secure (git secure hooks install) adds every recorded ref the server lacks by itself", p.Ref)
			continue
		}
		hint := p.Hint
		if errors.Is(p, verify.ErrUnrecorded) && st.pushed[p.Ref] {
			// verify's hint (record it, or restore the ref) is for a
			// clone; here the push itself is what lacks an entry, and
			// the pusher may not have git-secure at all.
			unrecorded = true
			hint = fmt.Sprintf("this push changes %s without a signed entry in the log; a push through git-secure records and signs one (see below)", p.Ref)
		}
		report.Printer{W: c.Stderr}.Problem("rejected", p, hint)
		if errors.Is(p, verify.ErrUnrecorded) && st.pushed[p.Ref] {
			c.sayWhoMayMove(p.Ref, st.proposed[p.Ref])
		}
	}
	if shown > maxPrinted {
		c.say("... and %d more problem(s) of this push (the first %d are shown)", shown-maxPrinted, maxPrinted)
	}
	if unrecorded {
		for _, l := range strings.Split(InstallHelp, "\n") {
			c.say("%s", l)
		}
	}
	if !rejected {
		return nil
	}
	return ErrRejected
}

// problemLookup is what judgePush needs of the logs about its problems'
// refs: each one's latest entry in the server's log (before) and in the
// one the push proposes (after), each log read once for all of them.
type problemLookup struct {
	before, after map[string]*rsl.Record
}

// stateProblem reports whether p is about a ref's current state (no
// entry), what outOfStepBefore and neverPublished judge.
func stateProblem(p *verify.Problem) bool {
	return p.Entry == 0 && p.Ref != ""
}

// stepCandidate: p may be a ref that was out of step before this push
// (outOfStepBefore decides once the logs are read).
func stepCandidate(p *verify.Problem, st *pushState) bool {
	// A ref a no-force-push global rule covers that went back past the
	// hooks (ErrPolicyRule without an entry) is out of step the same way.
	outOfStep := errors.Is(p, verify.ErrUnrecorded) || (errors.Is(p, verify.ErrPolicyRule) && p.Rule != "")
	return stateProblem(p) && outOfStep && p.Ref != rsl.PolicyRef && !st.pushed[p.Ref] && !st.pushed[policy.Ref] && !st.oldLog.IsZero()
}

// publishCandidate: p may be a ref the proposed log records that was
// never on this server (neverPublished decides).
func publishCandidate(p *verify.Problem, st *pushState) bool {
	return stateProblem(p) && errors.Is(p, verify.ErrUnrecorded) && st.proposed[p.Ref].IsZero() && !st.onServer[p.Ref]
}

// lookUpProblems reads, in one walk of each log, the latest entries of
// the refs judgePush asks about. Before, each problem walked the server's
// whole log (a ref never recorded is never found): one push of 600
// entries signed by a key the policy does not know, each creating a tag
// the push does not send, kept the hook busy for 45 s past a
// secure.maxPushSeconds of 3 (attack session 15, 01). Past the deadline
// the push is refused.
func (c *Context) lookUpProblems(failed *verify.Failed, st *pushState, deadline time.Time) (*problemLookup, error) {
	newLog := st.proposed[rsl.Ref]
	before, after := map[string]bool{}, map[string]bool{}
	for _, p := range failed.Problems {
		if stepCandidate(p, st) && st.oldLog != newLog {
			before[p.Ref], after[p.Ref] = true, true
		}
		if publishCandidate(p, st) && !st.oldLog.IsZero() {
			before[p.Ref] = true
		}
	}
	var r rsl.Reader = c.Repo.Git
	if c.logReader != nil {
		r = c.logReader
	}
	lk := &problemLookup{}
	n := 0
	late := func(*rsl.Record) bool {
		n++ // the clock is read at the first entry, then every 256
		return n%256 == 1 && !deadline.IsZero() && time.Now().After(deadline)
	}
	var stopped, stopped2 bool
	var err error
	if lk.before, stopped, err = rsl.LatestForEach(r, st.oldLog, before, late); err != nil {
		return nil, fmt.Errorf("hooks: read the server's log: %w", err)
	}
	if lk.after, stopped2, err = rsl.LatestForEach(r, newLog, after, late); err != nil {
		return nil, fmt.Errorf("hooks: read the pushed log: %w", err)
	}
	if stopped || stopped2 {
		c.say("rejected: this push does not verify (%d problem(s), the first: %s), and judging them ran past the time the server gives one push", len(failed.Problems), failed.Problems[0].Error())
		c.say("hint: fix the first problem and push again; or ask the administrator to raise git config secure.maxPushSeconds")
		return nil, ErrRejected
	}
	return lk, nil
}

// neverPublished reports whether problem p is a ref the proposed log
// records that is missing from the proposed state and was never on this
// server: not among its refs before the push, and not recorded by the log
// it had (any ref the server's log recorded was there, so its absence is
// a deletion).
func (lk *problemLookup) neverPublished(p *verify.Problem, st *pushState) bool {
	if !publishCandidate(p, st) {
		return false
	}
	return st.oldLog.IsZero() || lk.before[p.Ref] == nil
}

// Default bounds on what one push may make the server verify; an
// administrator can raise them (git config secure.maxPushEntries,
// secure.maxPushPaths, secure.maxPushSeconds; for the approvals store,
// secure.maxPushStoreCommits).
const (
	defaultMaxPushEntries = 10_000
	defaultMaxPushPaths   = 2_000_000
	defaultMaxPushSeconds = 120
)

// pushBudget bounds the work of verifying the entries a push adds to the
// log (from oldLog to newLog): their number, the changed paths their tree
// diffs compute, and the time. Without it, one push of a few megabytes (a
// branch flipped 60 times between two trees, one with a million-entry
// directory) kept the hook busy for minutes. Entries already in the log
// are never charged, so the server keeps verifying its own history.
func (c *Context) pushBudget(oldLog, newLog gitrepo.Hash) (*verify.Budget, error) {
	maxEntries, err := c.configInt("secure.maxPushEntries", defaultMaxPushEntries)
	if err != nil {
		return nil, err
	}
	maxPaths, err := c.configInt("secure.maxPushPaths", defaultMaxPushPaths)
	if err != nil {
		return nil, err
	}
	seconds, err := c.configInt("secure.maxPushSeconds", defaultMaxPushSeconds)
	if err != nil {
		return nil, err
	}
	b := &verify.Budget{MaxPaths: maxPaths, Deadline: time.Now().Add(time.Duration(seconds) * time.Second)}
	if !oldLog.IsZero() {
		oc, err := c.Repo.Git.ReadCommit(oldLog)
		if err != nil {
			return nil, fmt.Errorf("hooks: read the log's tip: %w", err)
		}
		oe, err := rsl.FromCommit(oc)
		if err != nil {
			return nil, fmt.Errorf("hooks: the log's tip: %w", err)
		}
		b.After = oe.Number
	}
	if newLog.IsZero() || newLog == oldLog {
		return b, nil
	}
	nc, err := c.Repo.Git.ReadCommit(newLog)
	if err != nil {
		return nil, fmt.Errorf("hooks: read the pushed log: %w", err)
	}
	ne, err := rsl.FromCommit(nc)
	if err != nil {
		return b, nil // verification names what is wrong with it
	}
	if ne.Number > b.After && ne.Number-b.After > uint64(maxEntries) {
		c.say("rejected: this push adds %d log entries; the server verifies at most %d per push", ne.Number-b.After, maxEntries)
		c.say("hint: push in smaller steps, or ask the administrator to raise git config secure.maxPushEntries")
		return nil, ErrRejected
	}
	return b, nil
}

// configInt reads a positive integer setting of the server, def when unset.
func (c *Context) configInt(key string, def int) (int, error) {
	v, ok, err := c.Repo.ConfigValue(key)
	if err != nil || !ok {
		return def, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("hooks: git config %s = %q: want a positive whole number", key, v)
	}
	return n, nil
}

// outOfStepBefore reports whether problem p is a ref that was already out
// of step with the log before this push, and that the push changes nothing
// about: not the ref, not what the log records for it, not the policy. A
// branch left ahead of its entry by a server killed in the middle of a push
// must not stop everyone else from pushing other refs; the push does not
// make that state any worse, and clones keep refusing it until it is
// repaired.
func (lk *problemLookup) outOfStepBefore(p *verify.Problem, st *pushState) bool {
	if !stepCandidate(p, st) {
		return false
	}
	if st.oldLog == st.proposed[rsl.Ref] {
		return true
	}
	before, after := lk.before[p.Ref], lk.after[p.Ref]
	return (before == nil && after == nil) || (before != nil && after != nil && before.ID == after.ID)
}

// judgeUnprotected reports whether a push to a git-secure repository
// changes nothing the policy in force protects: no metadata ref, no replace
// ref, no graft or shallow file on the server, and only
// refs no rule and no global rule covers (a path rule covers every ref),
// while the server's metadata is exactly what it last verified. Such a
// push cannot change a verified state, so it is accepted without listing
// every ref and replaying the log: people without git-secure keep pushing
// feature branches at little cost. It returns the log and policy tips it
// judged the push under (for markJudged); nil when the push is not one.
func (c *Context) judgeUnprotected(lines []RefLine) (map[string]gitrepo.Hash, error) {
	for _, l := range lines {
		// A replace ref changes what every other ref reads as: never
		// unprotected, whatever the rules cover.
		if strings.HasPrefix(l.Ref, "refs/secure/") || verify.RewritesReads(l.Ref) {
			return nil, nil
		}
		// refs/Secure/rsl is the log on a case-insensitive file system:
		// the full check refuses it.
		if _, reserved := policy.ReservedVariant(l.Ref); reserved {
			return nil, nil
		}
	}
	g := c.Repo.Git
	// Grafts or a shallow file change what the server serves: the full
	// check reports them.
	if files, err := g.HistoryFiles(); err != nil || len(files) > 0 {
		return nil, nil
	}
	// The server's replace refs come in the same listing: one that got
	// here without a push (an admin, a restored backup) sends every push to
	// the full check, which reports it.
	names := []string{rsl.Ref, policy.Ref, policy.ReplaceRefPrefix}
	for _, l := range lines {
		names = append(names, l.Ref)
	}
	list, err := g.ListRefs(names...)
	if err != nil {
		return nil, err
	}
	cur := map[string]gitrepo.Hash{}
	for _, r := range list {
		if verify.RewritesReads(r.Name) {
			return nil, nil
		}
		cur[r.Name] = r.Hash
	}
	if cur[rsl.Ref].IsZero() || cur[policy.Ref].IsZero() {
		return nil, nil // not set up (or half set up): the full check decides
	}
	for _, l := range lines {
		if cur[l.Ref] != l.Old {
			return nil, nil // the full check says it moved during the push
		}
	}
	// Only from the state the server last verified completely: its log
	// tip and policy exactly as the checkpoint has them, under the same
	// root key pin. Metadata that changed any other way (an admin's
	// restore, a half-finished push) goes to the full check.
	pin, pinThreshold, err := c.Repo.PinnedRoot()
	if err != nil {
		return nil, nil // the full check reports it
	}
	if !c.Repo.LoadCheckpoint().Covers(cur[rsl.Ref], cur[policy.Ref], pin, pinThreshold) {
		return nil, nil
	}
	pol, err := c.Repo.PolicyAt(cur[policy.Ref])
	if err != nil {
		return nil, nil // the full check says what is wrong
	}
	for _, l := range lines {
		if pol.Protected(l.Ref) {
			return nil, nil
		}
		// A second name for a covered ref on a case-insensitive file
		// system: the full check refuses it.
		if _, variant := pol.CaseVariantOf(l.Ref); variant {
			return nil, nil
		}
		for _, gr := range pol.GlobalRules() {
			if gr.CoversRef(l.Ref) {
				return nil, nil
			}
		}
	}
	return map[string]gitrepo.Hash{rsl.Ref: cur[rsl.Ref], policy.Ref: cur[policy.Ref]}, nil
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
	// A remote routed by url.secure::.insteadOf (RouteAllKey): git gives
	// the hook the rewritten URL.
	if len(c.Args) > 1 && strings.HasPrefix(c.Args[1], "secure::") {
		return nil
	}
	polTip, ok, err := g.ResolveRef(policy.Ref)
	if err != nil || !ok {
		return err
	}
	pol, err := c.Repo.PolicyAt(polTip)
	if err != nil {
		return err
	}
	lines, err := readOrRefuse(c, input, parsePushLines, "what git says it pushes")
	if err != nil {
		return err
	}
	for _, l := range lines {
		if pol.Protected(l.RemoteRef) {
			c.say("error: %s is protected by git-secure, but remote %q does not carry its log entries", l.RemoteRef, remote)
			c.say("hint: run git secure hooks install (it sets remote.%s.vcs = secure, and routes remotes added later), then push again", remote)
			return ErrRejected
		}
	}
	return nil
}

// touchesSecure reports whether a symbolic ref update names git-secure's
// refs, as the ref or as a target.
func touchesSecure(l RefLine) bool {
	for _, name := range []string{l.Ref, l.OldTarget, l.NewTarget} {
		if strings.HasPrefix(name, "refs/secure/") {
			return true
		}
	}
	return false
}

// referenceTransaction refuses, before git commits it, a change to
// git-secure's own refs (refs/secure/*) made by anything but git-secure:
// the local log and policy are what later fetches are checked against, so
// a plain "git update-ref", or a fetch refspec that copies a remote's
// metadata unverified, must not move them. git-secure's own git processes
// carry GIT_SECURE_INTERNAL. A bare repository is a server: see
// serverTransaction.
func (c *Context) referenceTransaction(input []byte) error {
	if c.server() {
		return c.serverTransaction(input)
	}
	if len(c.Args) < 1 || c.Args[0] != "prepared" || c.Getenv(EnvInternal) != "" {
		return nil
	}
	// HEAD and other names outside refs/ appear here too, and symbolic
	// values (git 2.46 and later).
	lines, err := readOrRefuse(c, input, parseClientTransaction, "the ref updates")
	if err != nil {
		return err
	}
	for _, l := range lines {
		if l.OldTarget != "" || l.NewTarget != "" {
			if touchesSecure(l) {
				c.say("error: refusing to make %s a symbolic ref outside git-secure", l.Ref)
				c.sayMetadataHints()
				return ErrRejected
			}
			continue
		}
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
		c.sayMetadataHints()
		return ErrRejected
	}
	return nil
}

// sayMetadataHints tells how git-secure's refs may change.
func (c *Context) sayMetadataHints() {
	c.say("hint: git-secure's metadata changes only through git secure commands and plain git fetch/push of a remote with remote.<name>.vcs = secure (git secure hooks install sets it)")
	c.say("hint: to restore it from a backup on purpose, run the command with GIT_SECURE_INTERNAL=1")
}

// fastForwardsOnly refuses a push that force-pushes or deletes a ref that
// a no-force-push global rule covers and no rule protects, judged on the
// push itself (polTip: the policy the push leaves in force). Such a ref
// may move without an entry, so the log does not know every value it
// held: verification catches a move away from the recorded value, but
// only the push shows that a move from an unrecorded value drops commits.
// Protected refs never move without an entry, whose check covers it. It
// returns the policy at polTip when it read it (nil if it did not need
// it, or could not read it), for the verification to start from.
//
// Whether each old value is in its new value's history is found by a walk
// that reads at most secure.maxPushFastForwardCommits commits over the
// whole push, newest first: git merge-base, asked once a ref, walked one
// chain of 200 000 cheap commits pushed to 20 such refs for a minute (3 s
// a ref), and the chain need not even be new (a ref pushed before may
// hold it). A push beyond the bound is refused.
func (c *Context) fastForwardsOnly(lines []RefLine, polTip gitrepo.Hash) (pol *policy.Policy, err error) {
	if polTip.IsZero() {
		return nil, nil
	}
	charge := walkCharge{max: -1} // read when first needed
	for _, l := range lines {
		if l.Old.IsZero() || strings.HasPrefix(l.Ref, "refs/secure/") {
			continue
		}
		if pol == nil {
			if pol, err = policy.LoadSigned(c.Repo.Git, polTip, nil); err != nil {
				return nil, nil // verification names what is wrong with it
			}
		}
		if pol.Protected(l.Ref) {
			continue
		}
		for _, g := range pol.GlobalRules() {
			if g.Type != policy.GlobalNoForcePush || !g.CoversRef(l.Ref) {
				continue
			}
			if !l.New.IsZero() {
				ok, err := c.fastForward(l, &charge)
				if errors.Is(err, errWalkBudget) {
					c.say("rejected: checking that this push only fast-forwards %s (%s -> %s), as global rule %s requires, reads more than the %d commits of history the server reads in one push (git config secure.maxPushFastForwardCommits)", l.Ref, short(l.Old), short(l.New), g.Name, charge.max)
					c.say("hint: push it in smaller steps (fewer commits, or fewer refs at a time), or ask the administrator to raise git config secure.maxPushFastForwardCommits; global rule %s refuses a force-push in any case", g.Name)
					return nil, ErrRejected
				}
				if err != nil {
					return nil, err
				}
				if ok {
					break
				}
			}
			verb := "force-pushes"
			if l.New.IsZero() {
				verb = "deletes"
			}
			c.say("rejected: this push %s %s (%s -> %s), but global rule %s lets it only fast-forward", verb, l.Ref, short(l.Old), shortOrNone(l.New), g.Name)
			c.say("hint: merge or rebase onto %s instead of rewriting it, and push again", short(l.Old))
			return nil, ErrRejected
		}
	}
	return pol, nil
}

// defaultMaxPushFastForwardCommits bounds the commits fastForwardsOnly
// reads in one push (git config secure.maxPushFastForwardCommits raises
// it): some 2 s at a load of 15. A fast-forward reads about the commits
// made since the old value, on every branch merged in.
const defaultMaxPushFastForwardCommits = 100_000

// errWalkBudget is returned by fastForward once the push's reads are
// spent.
var errWalkBudget = errors.New("commit walk budget spent")

// walkCharge is what the fast-forward checks of one push may read: max
// commits in all (-1: not read from the configuration yet), spent so far.
type walkCharge struct {
	max, spent int
}

// fastForward reports whether l moves its ref forward: l.Old is in
// l.New's history. It walks back from l.New newest first by committer
// date (as git does), so that a fast-forward reads about the commits made
// since l.Old, whatever the merges, charging each commit read to charge;
// errWalkBudget when that runs out first. Dates only order the walk: a
// wrong clock costs reads, never a wrong answer. A commit it cannot read
// (a shallow repository) leaves the question to git merge-base.
func (c *Context) fastForward(l RefLine, charge *walkCharge) (bool, error) {
	g := c.Repo.Git
	if l.New == l.Old {
		return true, nil
	}
	if charge.max < 0 {
		max, err := c.configInt("secure.maxPushFastForwardCommits", defaultMaxPushFastForwardCommits)
		if err != nil {
			return false, err
		}
		charge.max = max
	}
	var queue byDate
	seen := map[gitrepo.Hash]bool{}
	read := func(h gitrepo.Hash) error {
		if charge.spent >= charge.max {
			return errWalkBudget
		}
		charge.spent++
		commit, err := g.ReadCommit(h)
		if err != nil {
			return err
		}
		seen[h] = true
		heap.Push(&queue, commit)
		return nil
	}
	walk := func() (bool, error) {
		if err := read(l.New); err != nil {
			return false, err
		}
		for queue.Len() > 0 {
			commit := heap.Pop(&queue).(*gitrepo.Commit)
			for _, p := range commit.Parents {
				if p == l.Old {
					return true, nil
				}
				if !seen[p] {
					if err := read(p); err != nil {
						return false, err
					}
				}
			}
		}
		return false, nil // all of l.New's history, without l.Old
	}
	ok, err := walk()
	if err != nil && !errors.Is(err, errWalkBudget) {
		ok, err = g.IsAncestor(l.Old, l.New)
		return err == nil && ok, nil
	}
	return ok, err
}

// byDate is a heap of commits, the newest by committer date first.
type byDate []*gitrepo.Commit

func (q byDate) Len() int           { return len(q) }
func (q byDate) Less(i, j int) bool { return q[i].Committer.When.After(q[j].Committer.When) }
func (q byDate) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *byDate) Push(x any)        { *q = append(*q, x.(*gitrepo.Commit)) }
func (q *byDate) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

// firstNewEntry is the number a push's first new entry has: one more
// than the server's log tip's (1 without a log).
func (c *Context) firstNewEntry(oldLog gitrepo.Hash) (uint64, error) {
	if oldLog.IsZero() {
		return 1, nil
	}
	commit, err := c.Repo.Git.ReadCommit(oldLog)
	if err != nil {
		return 0, fmt.Errorf("hook: read the log tip %s: %w", oldLog, err)
	}
	e, err := rsl.FromCommit(commit)
	if err != nil {
		return 0, fmt.Errorf("hook: %w", err)
	}
	return e.Number + 1, nil
}
