package porcelain

import (
	"errors"
	"fmt"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

// ErrNotReplayable is wrapped when the local entries a remote's log lacks
// cannot be replayed on top of it: one of them is not a policy change, or
// the remote's policy moved since the first of them was made.
var ErrNotReplayable = errors.New("local entries cannot be replayed on the remote's log")

// Replayed is the local log rebuilt on top of a remote's log.
type Replayed struct {
	Tip     gitrepo.Hash // the last replayed entry
	Entries []*rsl.Entry
}

// ReplayPolicyEntries writes the policy entries of the local log after
// base (the last entry it shares with the remote's log, remoteTip) again
// on top of remoteTip, numbered after it and signed by s: what a policy
// apply that raced a push (someone recorded an entry on the remote between
// the fetch and the apply) needs before its push. The policy commits are
// the same; only their entries move. Nothing moves: the caller verifies
// and adopts Tip with compare-and-swap. It refuses (ErrNotReplayable)
// local entries of ref updates or annotations, and a remote whose policy
// in force is not the one the first local change started from.
func (r *Repo) ReplayPolicyEntries(base, localTip, remoteTip gitrepo.Hash, s sign.Signer) (*Replayed, error) {
	var own []*rsl.Entry
	err := rsl.WalkBack(r.Git, localTip, func(rec *rsl.Record) (bool, error) {
		if rec.ID == base {
			return false, nil
		}
		if !rec.Entry.IsPolicy() {
			return false, fmt.Errorf("%w: entry #%d (%s) records %s, not a policy change", ErrNotReplayable, rec.Entry.Number, rec.ID.String()[:12], rec.Entry.Title())
		}
		own = append([]*rsl.Entry{rec.Entry}, own...)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if len(own) == 0 {
		return nil, fmt.Errorf("%w: no local entry after %s", ErrNotReplayable, base.String()[:12])
	}
	last, err := r.latestFor(remoteTip, rsl.PolicyRef)
	if err != nil {
		return nil, err
	}
	if last == nil || last.Entry.New != own[0].Old {
		return nil, fmt.Errorf("%w: someone else changed the policy meanwhile (the remote's entry #%d); your change was made on the policy before it", ErrNotReplayable, entryNumber(last))
	}
	number, err := r.nextNumber(remoteTip)
	if err != nil {
		return nil, err
	}
	who, err := r.Ident()
	if err != nil {
		return nil, err
	}
	out := &Replayed{Tip: remoteTip}
	for i, e := range own {
		ne := &rsl.Entry{Number: number + uint64(i), Type: rsl.TypeRef, Ref: rsl.PolicyRef, Old: e.Old, New: e.New}
		if out.Tip, err = rsl.Write(r.Git, ne, out.Tip, who, signEntry(s)); err != nil {
			return nil, fmt.Errorf("replay policy entry #%d: %w", e.Number, err)
		}
		out.Entries = append(out.Entries, ne)
	}
	return out, nil
}

func entryNumber(rec *rsl.Record) uint64 {
	if rec == nil {
		return 0
	}
	return rec.Entry.Number
}
