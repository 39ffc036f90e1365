package porcelain

import (
	"fmt"
	"sort"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/verify"
)

// SkipResult says what Skip recorded.
type SkipResult struct {
	Entry uint64            `json:"entry"`
	ID    gitrepo.Hash      `json:"id"`
	Refs  map[string]string `json:"refs"` // ref -> value it is recorded at again
	// Pending lists what the skip still needs to verify (approvals of
	// moving a ref back), as for a recorded update.
	Pending []string `json:"pending,omitempty"`
}

// Skip appends an annotation that marks entries as mistaken: they stop
// counting and each ref goes back to its latest entry before them. The
// skipped entries must be the newest of their refs; verification checks
// that the signer may move each ref back, exactly as if the ref were
// moved there (ref and path rules on the diff between the current and
// the restored state, thresholds, approvals of that move, global rules),
// and so does Skip before it signs: it refuses (ErrRefused) a skip its
// signer may not make.
func (r *Repo) Skip(numbers []uint64, reason, keyFile string) (*SkipResult, error) {
	if len(numbers) == 0 {
		return nil, usage("name at least one entry number to skip (see git secure rsl log)")
	}
	if reason == "" {
		return nil, usage("say why with --reason (it is recorded in the log)")
	}
	s, who, err := r.signingAs(keyFile)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	tip, policyTip, err := r.tips()
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		return nil, usage("this repository has no git-secure log")
	}
	records, err := rsl.ReadLog(r.Git, tip)
	if err != nil {
		return nil, err
	}
	e, res, moves, err := planSkip(records, numbers, reason)
	if err != nil {
		return nil, err
	}
	if err := r.precheckSkip(e, policyTip, tip, moves, sign.Fingerprint(s.PublicKey()), res); err != nil {
		return nil, err
	}
	id, err := rsl.Write(r.Git, e, tip, who, signEntry(s))
	if err != nil {
		return nil, err
	}
	if err := r.Commit(&Prepared{Base: tip, Tip: id, Entries: []*rsl.Entry{e}}, "git-secure: skip entries"); err != nil {
		if isRefChanged(err) {
			return nil, fmt.Errorf("%w: the log changed meanwhile; run the command again", ErrRefused)
		}
		return nil, err
	}
	res.Entry, res.ID = e.Number, id
	return res, nil
}

// planSkip builds the annotation that skips the entries numbers of the
// log records, with what each ref goes back to (in the result, and as the
// moves the signer must be allowed to make).
func planSkip(records []*rsl.Record, numbers []uint64, reason string) (*rsl.Entry, *SkipResult, []verify.Transition, error) {
	want := map[uint64]bool{}
	for _, n := range numbers {
		if n < 1 || n > uint64(len(records)) {
			return nil, nil, nil, usage("there is no entry #%d (the log has %d)", n, len(records))
		}
		want[n] = true
	}
	e := &rsl.Entry{Number: uint64(len(records)) + 1, Type: rsl.TypeAnnotation, Reason: reason}
	for n := uint64(1); n <= uint64(len(records)); n++ {
		if !want[n] {
			continue
		}
		target := records[n-1]
		if target.Entry.Type != rsl.TypeRef || target.Entry.IsPolicy() {
			return nil, nil, nil, usage("entry #%d is not a ref update; only ref updates can be skipped", n)
		}
		e.Skips = append(e.Skips, rsl.Skip{Number: n, ID: target.ID})
	}
	res := &SkipResult{Refs: map[string]string{}}
	var moves []verify.Transition
	for ref, st := range refEntries(records) {
		n := 0
		for _, rec := range st {
			if want[rec.Entry.Number] {
				n++
			}
		}
		if n == 0 {
			continue
		}
		// The skipped entries of ref must be its newest ones.
		for _, rec := range st[len(st)-n:] {
			if !want[rec.Entry.Number] {
				return nil, nil, nil, usage("entry #%d of %s builds on the entries you skip: skip it too, or skip only the newest entries", rec.Entry.Number, ref)
			}
		}
		var back gitrepo.Hash
		if rest := st[:len(st)-n]; len(rest) > 0 {
			back = rest[len(rest)-1].Entry.New
		}
		res.Refs[ref] = "deleted"
		if !back.IsZero() {
			res.Refs[ref] = back.String()
		}
		moves = append(moves, verify.Transition{Ref: ref, Old: st[len(st)-1].Entry.New, New: back, CheckPaths: true})
	}
	return e, res, moves, nil
}

// refEntries replays the log's skips: each ref's entries that count.
func refEntries(records []*rsl.Record) map[string][]*rsl.Record {
	state := map[string][]*rsl.Record{}
	for _, rec := range records {
		e := rec.Entry
		if e.Type == rsl.TypeAnnotation {
			for _, sk := range e.Skips {
				ref := records[sk.Number-1].Entry.Ref
				st := state[ref]
				for i := len(st) - 1; i >= 0; i-- {
					if st[i].Entry.Number == sk.Number {
						state[ref] = append(st[:i:i], st[i+1:]...)
						break
					}
				}
			}
			continue
		}
		state[e.Ref] = append(state[e.Ref], rec)
	}
	return state
}

// precheckSkip refuses, before anything is signed, a skip whose signer may
// not move each ref back, and notes in res what an allowed skip still
// needs. When the current or the restored state is not here the diff is
// unknown, and every path rule applies (as verification does).
func (r *Repo) precheckSkip(e *rsl.Entry, policyTip, rslTip gitrepo.Hash, moves []verify.Transition, fp string, res *SkipResult) error {
	pol, err := policy.LoadSigned(r.Git, policyTip, nil)
	if err != nil {
		return err
	}
	if pol, e.Org, err = r.withOrg(pol); err != nil {
		return err
	}
	sort.Slice(moves, func(i, j int) bool { return moves[i].Ref < moves[j].Ref })
	for _, t := range moves {
		for _, h := range []gitrepo.Hash{t.Old, t.New} {
			if ok, err := r.Git.HasObject(h); !h.IsZero() && (err != nil || !ok) {
				t.AllPaths = true
			}
		}
		pending, err := r.precheckMove(pol, rslTip, t, fp)
		if err != nil {
			return fmt.Errorf("skip moves %s back from %s to %s, which needs the same authorization as that update: %w", t.Ref, shortOrNone(t.Old), shortOrDeleted(t.New), err)
		}
		res.Pending = append(res.Pending, pending...)
	}
	return nil
}

func shortOrDeleted(h gitrepo.Hash) string {
	if h.IsZero() {
		return "deleted"
	}
	return shortOrNone(h)
}
