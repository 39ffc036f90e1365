package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	hookscripts "github.com/git-secure/git-secure/hooks"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
)

// maxTransactionEntries bounds how many new log entries one transaction
// may add; the pre-receive hook has verified them all already, so this only
// keeps a hostile log from making the check walk without end.
const maxTransactionEntries = 100_000

// serverTransaction makes a push land whole or not at all, on a server.
//
// The pre-receive hook judges the state the whole push would create, but
// git applies a push without --atomic one ref per transaction, and can still
// refuse one ref after the hook (a lock lost to a concurrent push, the
// deletion of the branch HEAD names, a full disk). If the log landed without
// the branch it records, or a protected branch without its entry, every
// fetch and push after it would fail for everyone. So, in the prepared
// state of each transaction (every lock held, nothing committed yet):
//
//   - a transaction that moves the log must leave every ref its new entries
//     record at the recorded value: in this transaction, or already there;
//   - a transaction that moves a protected ref (or the policy) without the
//     log must move it to the value the log already records for it.
//
// git-remote-secure pushes atomically, so its pushes pass both at once. A
// non-atomic push of a protected ref and the log is refused whole.
func (c *Context) serverTransaction(input []byte) error {
	if len(c.Args) < 1 || c.Args[0] != "prepared" {
		return nil
	}
	lines, err := parseTransaction(input)
	if err != nil {
		return err
	}
	if refStoreUpkeep(lines) {
		return nil
	}
	if prunes, err := c.prunesPackedRefs(lines); err != nil || prunes {
		return err
	}
	g := c.Repo.Git
	tx, err := readLogTransaction(g, lines)
	if err != nil {
		return err
	}
	switch {
	case tx.log == nil:
		return c.movesWithoutLog(lines)
	case tx.log.New.IsZero() || tx.log.Old.IsZero():
		return nil // set-up, or a deletion pre-receive refuses: nothing recorded to land
	case !tx.grows:
		c.say("rejected: %s can only grow: %s does not extend %s", rsl.Ref, short(tx.log.New), short(tx.log.Old))
		return ErrRejected
	}
	after, want := tx.after, tx.want
	refs := make([]string, 0, len(want))
	for ref := range want {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	var pol *policy.Policy
	for _, ref := range refs {
		want := want[ref]
		have, moved := after[ref]
		if !moved {
			if have, _, err = g.ResolveRef(ref); err != nil {
				return err
			}
		}
		if have == want {
			continue
		}
		// As verification does: only protected refs must match the log.
		if ref != rsl.PolicyRef {
			if pol == nil {
				if pol, err = c.policyAfter(after); err != nil {
					return err
				}
			}
			if pol != nil && !pol.Protected(ref) {
				continue
			}
		}
		c.say("rejected: %s would record %s at %s, but %s would be at %s after this update", rsl.Ref, ref, shortOrNone(want), ref, shortOrNone(have))
		c.say("hint: the log and the refs it records must land together: push them in one atomic push (git push --atomic; a remote routed through git-remote-secure does this), and fetch and push again if the server refused part of it")
		return ErrRejected
	}
	return nil
}

// refStoreUpkeep reports whether a transaction is git's upkeep of its ref
// store rather than a ref change: every line is zero -> zero (no old value
// given, none set): git (2.39 does) runs the hook on the packed-refs part
// of a deletion of a packed ref, prepared inside the push's transaction
// and landing only with it, whose lines (with their real old values) the
// hook judges. A push cannot make one alone: pre-receive refuses a line
// whose old value is not the ref's.
func refStoreUpkeep(lines []RefLine) bool {
	for _, l := range lines {
		if !l.Old.IsZero() || !l.New.IsZero() {
			return false
		}
	}
	return len(lines) > 0
}

// prunesPackedRefs reports whether every line of a transaction is git
// removing a loose ref that packed-refs already holds at the line's old
// value ("git pack-refs", run by every "git gc"): no ref changes value.
// Without this, a server whose hook judged such lines as deletions could
// never pack its refs (gc failed with "failed to run pack-refs").
func (c *Context) prunesPackedRefs(lines []RefLine) (bool, error) {
	for _, l := range lines {
		if !l.New.IsZero() {
			return false, nil
		}
		ok, err := c.Repo.Git.PrunesPackedRef(l.Ref, l.Old)
		if err != nil || !ok {
			return false, err
		}
	}
	return len(lines) > 0, nil
}

// logTransaction is what the prepared-state check learns from a
// transaction's lines and the (immutable) log entries they name, before it
// looks at any ref outside the lines.
type logTransaction struct {
	log   *RefLine                // the log's line; nil when the log does not move
	after map[string]gitrepo.Hash // every ref the lines move, at its new value
	grows bool                    // the log's new tip extends its old one
	// want is, for every ref the new entries record (their own, and those
	// of the entries annotations skip), the value the log at its new tip
	// records for it.
	want map[string]gitrepo.Hash
}

func readLogTransaction(g *gitrepo.Repo, lines []RefLine) (*logTransaction, error) {
	tx := &logTransaction{after: map[string]gitrepo.Hash{}}
	for i, l := range lines {
		tx.after[l.Ref] = l.New
		if l.Ref == rsl.Ref {
			tx.log = &lines[i]
		}
	}
	if tx.log == nil || tx.log.New.IsZero() || tx.log.Old.IsZero() {
		return tx, nil
	}
	if ok, err := g.IsAncestor(tx.log.Old, tx.log.New); err != nil || !ok {
		return tx, nil
	}
	tx.grows = true
	want, err := recordedAfter(g, tx.log.Old, tx.log.New)
	if err != nil {
		return nil, err
	}
	tx.want = want
	return tx, nil
}

// selfContained reports whether the prepared-state check of a transaction
// of exactly these lines reads nothing but them and the log entries they
// name: the log grows and every ref its new entries record moves in the
// lines to the recorded value (no ref outside the lines is resolved, no
// policy loaded). git applies the lines under compare-and-swap of their
// old values, so the check's verdict is known at pre-receive: it passes.
func selfContained(g *gitrepo.Repo, lines []RefLine) bool {
	tx, err := readLogTransaction(g, lines)
	if err != nil || tx.log == nil || !tx.grows {
		return false
	}
	for ref, want := range tx.want {
		if have, moved := tx.after[ref]; !moved || have != want {
			return false
		}
	}
	return true
}

// policyAfter loads the policy the transaction leaves in force; nil when
// there is none (every ref is then judged: fail closed).
func (c *Context) policyAfter(after map[string]gitrepo.Hash) (*policy.Policy, error) {
	g := c.Repo.Git
	tip, moved := after[policy.Ref]
	if !moved {
		var err error
		if tip, _, err = g.ResolveRef(policy.Ref); err != nil {
			return nil, err
		}
	}
	if tip.IsZero() {
		return nil, nil
	}
	logTip, moved := after[rsl.Ref]
	if !moved {
		var err error
		if logTip, _, err = g.ResolveRef(rsl.Ref); err != nil {
			return nil, err
		}
	}
	pol, err := c.Repo.KeptPolicyAt(tip, logTip)
	if err != nil {
		return nil, fmt.Errorf("hooks: load the policy %s: %w", short(tip), err)
	}
	return pol, nil
}

// recordedAfter returns, for every ref the entries from oldTip (exclusive)
// to newTip record or skip, the value the log at newTip records for it
// (zero: none), as rsl.LatestFor would, with one walk for all of them: the
// segment names the refs (a skipped entry is read by its ID), then the walk
// from newTip settles each at its newest entry that no newer annotation
// skips, and stops once every one is settled. (One LatestFor per ref walked
// the log once per ref: a push of a few hundred entries held the log's lock
// for minutes.)
func recordedAfter(r rsl.Reader, oldTip, newTip gitrepo.Hash) (map[string]gitrepo.Hash, error) {
	pending := map[string]bool{}
	var skippedIDs []gitrepo.Hash
	n := 0
	deadline := time.Now().Add(transactionTime)
	err := rsl.WalkBack(r, newTip, func(rec *rsl.Record) (bool, error) {
		if rec.ID == oldTip {
			return false, nil
		}
		if n++; n > maxTransactionEntries {
			return false, fmt.Errorf("hooks: more than %d new log entries in one transaction", maxTransactionEntries)
		}
		if e := rec.Entry; e.Type == rsl.TypeRef {
			pending[e.Ref] = true
		} else {
			for _, sk := range e.Skips {
				skippedIDs = append(skippedIDs, sk.ID)
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	for i, id := range skippedIDs {
		if i%256 == 255 && time.Now().After(deadline) {
			return nil, fmt.Errorf("hooks: the log's new entries take longer than %v to check", transactionTime)
		}
		c, err := r.ReadCommit(id)
		if err != nil {
			return nil, fmt.Errorf("hooks: read skipped entry %s: %w", id, err)
		}
		e, err := rsl.FromCommit(c)
		if err != nil {
			return nil, fmt.Errorf("hooks: skipped entry %s: %w", id, err)
		}
		if e.Type == rsl.TypeRef {
			pending[e.Ref] = true
		}
	}
	want := make(map[string]gitrepo.Hash, len(pending))
	skipped := map[uint64]bool{}
	n = 0
	err = rsl.WalkBack(r, newTip, func(rec *rsl.Record) (bool, error) {
		if len(pending) == 0 {
			return false, nil
		}
		if n++; n%256 == 0 && time.Now().After(deadline) {
			return false, fmt.Errorf("hooks: the log's new entries take longer than %v to check", transactionTime)
		}
		e := rec.Entry
		if e.Type == rsl.TypeAnnotation {
			for _, sk := range e.Skips {
				skipped[sk.Number] = true
			}
		} else if pending[e.Ref] && !skipped[e.Number] {
			want[e.Ref] = e.New
			delete(pending, e.Ref)
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	for ref := range pending {
		want[ref] = gitrepo.ZeroHash // no entry left for it
	}
	return want, nil
}

// transactionTime bounds the check of one transaction: git holds the
// locks of its refs meanwhile.
const transactionTime = 60 * time.Second

// movesWithoutLog refuses a transaction that moves a protected ref, or the
// policy, without the log, unless to the value the log records for it (a
// repair after a crash).
func (c *Context) movesWithoutLog(lines []RefLine) error {
	g := c.Repo.Git
	var pol *policy.Policy
	var logTip gitrepo.Hash // the log does not move: read once, with pol
	for _, l := range lines {
		if l.Ref != rsl.PolicyRef && (strings.HasPrefix(l.Ref, "refs/secure/") || rsl.ValidateRecordedRef(l.Ref) != nil) {
			continue // the log, approvals (pre-receive checks they grow), HEAD, remote-tracking refs
		}
		if pol == nil {
			tip, ok, err := g.ResolveRef(policy.Ref)
			if err != nil || !ok {
				return err // not (yet) a git-secure repository
			}
			if logTip, _, err = g.ResolveRef(rsl.Ref); err != nil {
				return err
			}
			if pol, err = c.Repo.KeptPolicyAt(tip, logTip); err != nil {
				return fmt.Errorf("hooks: load the policy in force: %w", err)
			}
		}
		if l.Ref != rsl.PolicyRef && !pol.Protected(l.Ref) {
			continue
		}
		if logTip.IsZero() {
			return nil
		}
		rec, err := c.Repo.LatestEntry(logTip, l.Ref)
		if err != nil {
			return err
		}
		if (rec != nil && rec.Entry.New == l.New) || (rec == nil && l.New.IsZero()) {
			continue // back to what the log records (a ref it never recorded: gone)
		}
		c.refuseUnrecorded(pol, l)
		return ErrRejected
	}
	return nil
}

// refuseUnrecorded says why a protected ref may not move without its log
// entry, naming the rules that protect it under the policy in force: the
// policy may have changed between pre-receive and this transaction (a
// concurrent push), which a fetch shows the pusher.
func (c *Context) refuseUnrecorded(pol *policy.Policy, l RefLine) {
	var names []string
	if l.Ref != rsl.PolicyRef {
		for _, r := range pol.RulesFor(l.Ref) {
			names = append(names, r.Name)
		}
	}
	why := ""
	if len(names) > 0 {
		why = fmt.Sprintf(" (rule %s of the policy in force)", strings.Join(names, ", "))
	}
	c.say("rejected: %s is protected and would move to %s without its entry in %s%s", l.Ref, shortOrNone(l.New), rsl.Ref, why)
	c.say("hint: push the branch and the log in one atomic push (git push --atomic; a remote routed through git-remote-secure does this)")
	c.say("hint: if the policy changed while you pushed, fetch (git fetch) and push again: the push is judged under the policy in force when it lands")
}

// verifiedMarker is where pre-receive leaves the lines of a push it
// verified whole and whose transaction is selfContained, for the
// reference-transaction hook of the same receive-pack: a transaction of
// exactly those lines is accepted by the hook script without starting
// git-secure a second time (one process of about 40 ms of CPU on every
// protected push). A part of the lines (a push without --atomic is one
// transaction per ref), another line, an empty file or no file starts
// it: the file can only save work, never forgive a check. The script
// empties it when the transaction ends (sweepMarkers removes it).
func verifiedMarker(gitDir string) string {
	return filepath.Join(gitDir, "secure", fmt.Sprintf("verified-push.%d", os.Getppid()))
}

// unprotectedMarker is where pre-receive leaves the lines of a push it
// judged to change only unprotected refs, for the reference-transaction
// hook of the same receive-pack (the parent of both): a transaction made
// only of those lines is accepted by the hook script without starting
// git-secure a second time. Anything else (no file, another line, HEAD)
// starts it, so the file can only save work, never forgive a check.
func unprotectedMarker(gitDir string) string {
	return filepath.Join(gitDir, "secure", fmt.Sprintf("unprotected-push.%d", os.Getppid()))
}

// markerLines is the folder beside a marker that holds its lines, one
// file per line, named by it (writeMarkerLines) (hookscripts.MarkerFormat 3): the script
// looks each line of a transaction up by its name instead of searching
// every marked line for it, which made a push of N refs cost N x N (400
// refs without --atomic: 158 s; 8 000 with it: 142 s).
func markerLines(marker string) string { return marker + ".d" }

// removeMarker removes a marker and its lines (a previous receive-pack
// with this pid left them): an error if the marker stays, so that no
// push is ever judged next to another push's marker.
func removeMarker(marker string) error {
	if err := os.Remove(marker); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("hooks: remove the marker of an earlier push: %w", err)
	}
	_ = os.RemoveAll(markerLines(marker)) // left over, markJudged writes none
	return nil
}

// markJudged writes a marker (unprotectedMarker, verifiedMarker): its
// lines first, one file per line in markerLines (writeMarkerLines), then
// the marker
// itself: a "tip" line for the log and for the policy, each at the value
// the push was judged under (judged) and how the server stores it, and
// the number of lines. The script accepts the marked lines only while
// both tips are stored so: a push that changed the log or the policy
// between pre-receive and this push's transaction (the policy may protect
// one of its refs now) sends the transaction to the full check, under the
// policy in force. A marker is written only when the stored values are
// the judged ones, and removed when they changed while it was written; it
// is not written when two lines cannot each have a file (names a
// case-folding file system takes for one). Failing to write one is only
// slower.
func (c *Context) markJudged(path string, input []byte, judged map[string]gitrepo.Hash) {
	gitDir := c.Repo.Git.GitDir()
	if !readsMarkerTips(gitDir) {
		return
	}
	tips, ok := storedTips(gitDir, judged)
	if !ok {
		return
	}
	n, err := writeMarkerLines(markerLines(path), input)
	if err != nil {
		_ = os.RemoveAll(markerLines(path))
		return
	}
	if writeAtomic(path, fmt.Appendf([]byte(tips), "lines %d\n", n)) != nil {
		_ = os.RemoveAll(markerLines(path))
		return
	}
	// Read again once the marker is there: a packed-refs file rewritten
	// later is newer than the marker, which the script checks.
	if again, ok := storedTips(gitDir, judged); !ok || again != tips {
		_ = os.Remove(path)
	}
}

// writeMarkerLines marks each line of a push (pre-receive's input, which
// ParseRefLines accepted), "OLD NEW REF", with a file dir/NAME~OLD~NEW
// holding "1", NAME being REF with each "/" written "^" ("~" and "^" are
// in no ref name, so no two lines share a name), in a folder dir that
// must not exist yet, and returns the number of lines. One folder: a
// folder per ref cost about ten times the file (2.4 s for 1 000 refs
// instead of 0.2 s). Every file is created new: a line whose file is
// there already (a ref twice, or names a case-folding file system takes
// for one), or whose name is too long for the file system, fails the
// marker.
func writeMarkerLines(dir string, input []byte) (int, error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return 0, err
	}
	n := 0
	for rest := input; len(rest) > 0; n++ {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		rest = after
		f := strings.Split(string(line), " ")
		if len(f) != 3 || !isHex(f[0]) || !isHex(f[1]) || !strings.HasPrefix(f[2], "refs/") || gitrepo.ValidRefName(f[2]) != nil || strings.ContainsAny(f[2], "~^") {
			return 0, fmt.Errorf("hooks: marker: no file for line %q", line)
		}
		name := strings.ReplaceAll(f[2], "/", "^") + "~" + f[0] + "~" + f[1]
		file, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return 0, err
		}
		_, err = file.Write([]byte("1\n"))
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// isHex reports whether s is a non-empty lowercase hexadecimal name, as
// git writes object names in hook input.
func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// readsMarkerTips reports whether the server's installed
// reference-transaction script, if it is git-secure's, is one that checks
// a marker's tip lines: an older one (hooks not reinstalled since the
// binary was upgraded) accepted marked lines whatever happened to the
// policy in between, so it gets no marker and starts git-secure, which
// runs the full check. A script elsewhere (core.hooksPath) reads no
// marker here at all.
func readsMarkerTips(gitDir string) bool {
	f, err := os.Open(filepath.Join(gitDir, "hooks", "reference-transaction"))
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512) // the script's first lines name it
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if !bytes.Contains(head, []byte("git-secure hook (reference-transaction)")) {
		return true
	}
	return bytes.Contains(head, []byte("\n"+hookscripts.MarkerFormat))
}

// markedTips are the refs a marker binds: the policy in force depends on
// them alone (and every change to the policy moves the log).
var markedTips = []string{rsl.Ref, policy.Ref}

// storedTips returns the marker's tip lines, "tip HASH REF loose|packed",
// or false when a ref is not stored at its judged value as a loose ref or
// in packed-refs (another ref store: no marker, the full check runs).
func storedTips(gitDir string, judged map[string]gitrepo.Hash) (string, bool) {
	var b strings.Builder
	for _, ref := range markedTips {
		hash, how, err := storedRef(gitDir, ref)
		if err != nil || hash == "" || hash != judged[ref].String() {
			return "", false
		}
		fmt.Fprintf(&b, "tip %s %s %s\n", hash, ref, how)
	}
	return b.String(), true
}

// storedRef reads ref as git's files backend stores it: the loose file
// (what the script reads back) or else its line in packed-refs.
func storedRef(gitDir, ref string) (hash, how string, err error) {
	b, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(ref)))
	if err == nil {
		return strings.TrimSuffix(string(b), "\n"), "loose", nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", "", err
	}
	packed, err := os.ReadFile(filepath.Join(gitDir, "packed-refs"))
	if err != nil {
		return "", "", err
	}
	s := string(packed)
	i := strings.Index(s, " "+ref+"\n")
	if i < 0 {
		return "", "", nil
	}
	return s[strings.LastIndexByte(s[:i], '\n')+1 : i], "packed", nil
}

// sweepMarkers removes the markers no transaction will use, with their
// lines: the transaction hook empties a verified marker once its
// transaction is done, post-receive an unprotected one once the push is
// (an empty marker counts as none); one left by a push git refused before
// any transaction (or by a server without those hooks) goes after an
// hour, and so do lines without their marker (a pre-receive killed while
// it wrote them; younger ones may be a concurrent push's, not yet
// marked). Every pre-receive sweeps, so that used markers do not pile up.
func sweepMarkers(dir string) {
	old, _ := filepath.Glob(filepath.Join(dir, "unprotected-push.*"))
	verified, _ := filepath.Glob(filepath.Join(dir, "verified-push.*"))
	for _, p := range append(old, verified...) {
		st, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if marker, isLines := strings.CutSuffix(p, ".d"); isLines {
			if _, err := os.Lstat(marker); errors.Is(err, fs.ErrNotExist) && time.Since(st.ModTime()) > time.Hour {
				_ = os.RemoveAll(p)
			}
			continue
		}
		if st.Size() == 0 || time.Since(st.ModTime()) > time.Hour {
			_ = os.RemoveAll(markerLines(p)) // before the marker: lines alone are never used
			_ = os.Remove(p)
		}
	}
}

func shortOrNone(h gitrepo.Hash) string {
	if h.IsZero() {
		return "(deleted)"
	}
	return short(h)
}
