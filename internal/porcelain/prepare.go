package porcelain

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/verify"
)

// This file is git-secure's one recording path. Every ref update that
// gets a log entry (git secure rsl record, rsl repair, and every push of
// git-remote-secure) goes through it in three steps:
//
//   - Prepare (or prepareMoves) checks each move against the policy and
//     writes its signed entry as an object on top of a log tip, moving
//     nothing;
//   - the caller publishes the entries: Commit moves the local log with
//     compare-and-swap from that tip, or a push sends them;
//   - when the log moved meanwhile, the caller starts again on top of the
//     new tip, at most MaxRecordAttempts times in all (Retry).
//
// Skip uses Commit for its annotation.

// RefChange is one ref about to move (New zero: deletion).
type RefChange struct {
	Ref string
	New gitrepo.Hash
}

// Prepared is a chain of signed entries written as objects on top of Base
// but not yet on any ref.
type Prepared struct {
	Base    gitrepo.Hash // log tip the entries build on
	Tip     gitrepo.Hash // last new entry (== Base when nothing was needed)
	Entries []*rsl.Entry
	Pending []string // approvals still needed
}

// ErrNotAllowed is wrapped when the signer may not make a change at all.
var ErrNotAllowed = errors.New("not allowed by the policy")

// MaxRecordAttempts bounds how often recording starts again on top of a
// log that moved meanwhile (someone else recorded or pushed first): the
// one retry policy of rsl record and of git-remote-secure's push.
const MaxRecordAttempts = 8

// Prepare writes, on top of log tip base under the policy pol, one signed
// entry for every change whose value differs from its latest recorded one.
// It refuses (ErrRefused wrapping ErrNotAllowed) when the signer may not
// make one of them. Nothing moves: the caller pushes, or calls Commit,
// which updates the log ref with compare-and-swap from base to Tip.
func (r *Repo) Prepare(base gitrepo.Hash, pol *policy.Policy, s sign.Signer, changes []RefChange) (*Prepared, error) {
	who, err := r.Ident()
	if err != nil {
		return nil, err
	}
	if base.IsZero() {
		return nil, usage("no log to record in: run git secure init first")
	}
	var moves []verify.Transition
	// Many changes (git push --tags, a mirror push) read every ref's
	// latest entry in one walk (latestTargets): a walk per ref read the
	// log once per tag, 3 000 tags pushed at once to a fresh remote:
	// 100 s in "record: previous entry".
	var targets map[string]gitrepo.Hash
	if len(changes) > 1 {
		var err error
		if targets, err = r.latestTargets(base); err != nil {
			return nil, err
		}
		r.Trace.Mark("record: previous entries")
	}
	for _, c := range changes {
		if err := rsl.ValidateRecordedRef(c.Ref); err != nil || c.Ref == rsl.PolicyRef {
			continue
		}
		var old gitrepo.Hash
		recorded := false
		if targets != nil {
			old, recorded = targets[c.Ref]
		} else {
			last, o, err := r.recordedFor(base, c.Ref)
			if err != nil {
				return nil, err
			}
			old, recorded = o, last != nil
			r.Trace.Mark("record: previous entry")
		}
		if !recorded && (unrecordedForgeRef(pol, c.Ref) || unrecordedReviewRef(pol, c.Ref, c.New)) {
			continue
		}
		if old != c.New {
			moves = append(moves, verify.Transition{Ref: c.Ref, Old: old, New: c.New, CheckPaths: true, EveryRule: true})
		}
	}
	p, err := r.prepareMoves(base, pol, s, who, moves, false)
	if err != nil && errors.Is(err, errPrecheck) {
		return nil, fmt.Errorf("%w: %w", ErrNotAllowed, refusedMove{err: errors.Unwrap(err), ref: RefusedRef(err)})
	}
	return p, err
}

// errPrecheck marks (wrapping it) the refusal of a move by the policy.
var errPrecheck = errors.New("precheck")

type precheckError struct {
	err error
	ref string // the ref whose move was refused
}

// refusedMove is Prepare's refusal of one ref's move (the text is the
// policy's reason).
type refusedMove struct {
	err error
	ref string
}

func (e refusedMove) Error() string { return e.err.Error() }
func (e refusedMove) Unwrap() error { return e.err }

// RefusedRef names the ref whose move the policy refused, when err is
// such a refusal (Prepare's ErrNotAllowed); "" otherwise.
func RefusedRef(err error) string {
	var rm refusedMove
	if errors.As(err, &rm) {
		return rm.ref
	}
	var pe precheckError
	if errors.As(err, &pe) {
		return pe.ref
	}
	return ""
}

func (e precheckError) Error() string        { return e.err.Error() }
func (e precheckError) Unwrap() error        { return e.err }
func (e precheckError) Is(target error) bool { return target == errPrecheck }

// prepareMoves checks every move (its Old the value the log at base
// records) against pol for the signer, then writes one signed entry per
// move on top of base. A move the signer may not make refuses them all
// (an error that Is errPrecheck), before anything is signed. With strict,
// moves that are allowed but still need approvals are not signed either:
// the result then has Pending and no entries.
func (r *Repo) prepareMoves(base gitrepo.Hash, pol *policy.Policy, s sign.Signer, who gitrepo.Ident, moves []verify.Transition, strict bool) (*Prepared, error) {
	p := &Prepared{Base: base, Tip: base}
	fp := sign.Fingerprint(s.PublicKey())
	var orgV *rsl.OrgVersion
	if len(moves) > 0 {
		var err error
		if pol, orgV, err = r.withOrg(pol); err != nil {
			return nil, err
		}
	}
	for _, t := range moves {
		pending, err := r.precheckMove(pol, base, t, fp)
		if err != nil {
			return nil, precheckError{err: err, ref: t.Ref}
		}
		p.Pending = append(p.Pending, pending...)
		r.Trace.Mark("record: rules")
	}
	if len(moves) == 0 || (strict && len(p.Pending) > 0) {
		return p, nil
	}
	number, err := r.nextNumber(base)
	if err != nil {
		return nil, err
	}
	for i, t := range moves {
		e := &rsl.Entry{Number: number + uint64(i), Type: rsl.TypeRef, Ref: t.Ref, Old: t.Old, New: t.New, Org: orgV}
		if p.Tip, err = rsl.Write(r.Git, e, p.Tip, who, signEntry(s)); err != nil {
			return nil, err
		}
		r.Trace.Mark("record: sign and write")
		p.Entries = append(p.Entries, e)
	}
	return p, nil
}

// nextNumber is the number of the entry that follows the log's tip.
func (r *Repo) nextNumber(tip gitrepo.Hash) (uint64, error) {
	c, err := r.Git.ReadCommit(tip)
	if err != nil {
		return 0, err
	}
	e, err := rsl.FromCommit(c)
	if err != nil {
		return 0, err
	}
	return e.Number + 1, nil
}

// Commit moves the local log from p.Base to p.Tip with compare-and-swap
// on the log only: the refs the entries record are never locked (a killed
// record must not leave refs/heads/*.lock behind). If one of them moves
// meanwhile, its entry is still true of the value read, and verify reports
// the newer value until it is recorded too. A log that moved meanwhile
// fails with gitrepo.ErrRefChanged: prepare again on top of it (Retry).
func (r *Repo) Commit(p *Prepared, message string) error {
	if p.Tip == p.Base {
		return nil
	}
	return r.Git.UpdateRefs(p.refUpdates(), message)
}

// CommitWith is Commit through a git update-ref started ahead
// (gitrepo.Repo.StartUpdateRefs): the same transaction, the process's
// start overlapped with preparing and signing.
func (r *Repo) CommitWith(tx *gitrepo.RefTransaction, p *Prepared) error {
	if p.Tip == p.Base {
		tx.Abort()
		return nil
	}
	return tx.Apply(p.refUpdates())
}

func (p *Prepared) refUpdates() []gitrepo.RefUpdate {
	return []gitrepo.RefUpdate{{Name: rsl.Ref, Old: p.Base, New: p.Tip}}
}

// Retry runs attempt until it does not lose a race for the log, at most
// MaxRecordAttempts times; what attempt returns tells it which: lost is
// set when the log moved meanwhile (someone else recorded or pushed
// first), or err is gitrepo.ErrRefChanged. A ref lock that another git
// process holds is waited for, for the first three attempts. It returns
// the last error, and whether the last attempt lost its race too.
func Retry(attempt func(n int) (lost bool, err error)) (bool, error) {
	for n := 1; ; n++ {
		lost, err := attempt(n)
		if err != nil && errors.Is(err, gitrepo.ErrLocked) {
			if n <= 3 {
				time.Sleep(time.Duration(50*n) * time.Millisecond)
				continue // another git process may be finishing
			}
			return false, fmt.Errorf("%w: %v", ErrRefused, err)
		}
		lost = lost || isRefChanged(err)
		if !lost || n >= MaxRecordAttempts {
			return lost, err
		}
	}
}

// unrecordedForgeRef reports whether ref, which the log never recorded,
// lies in a forge's namespace (refs/pull/*, ...) that no rule names: as
// git secure init does, it is pushed without an entry. Verification never
// judges such a ref, and a GitHub mirror holds hundreds of them: signing
// an entry for each made the first push of a mirror many times slower
// than plain git's and every clone replay them.
func unrecordedForgeRef(pol *policy.Policy, ref string) bool {
	_, forge := policy.ForgePrefix(ref)
	return forge && !pol.Protected(ref)
}

// unrecordedReviewRef reports whether ref, which the log never recorded,
// is where the hand-off of a refused update publishes its new value for
// review (refs/heads/review/NAME-HASH, or refs/review/tags/NAME-HASH for
// a tag object, HASH new's first 12 hex digits) and no rule protects it:
// it is pushed without an entry. Nothing reads one: the approval binds the
// refused update itself, not the review ref, and a review branch the
// forge deletes once the update landed would leave the log naming a
// value the ref no longer has.
func unrecordedReviewRef(pol *policy.Policy, ref string, new gitrepo.Hash) bool {
	if new.IsZero() || pol.Protected(ref) {
		return false
	}
	name, ok := strings.CutPrefix(ref, "refs/heads/review/")
	if !ok {
		name, ok = strings.CutPrefix(ref, "refs/review/tags/")
	}
	suffix := "-" + new.String()[:12]
	return ok && len(name) > len(suffix) && strings.HasSuffix(name, suffix)
}
