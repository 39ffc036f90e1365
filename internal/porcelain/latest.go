package porcelain

import (
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// Checkpoints returns this clone's verification checkpoint store.
func (r *Repo) Checkpoints() verify.CheckpointStore { return verify.Checkpoints(r.Git.GitDir()) }

// LoadCheckpoint returns the verification checkpoint of this clone as it
// is now (nil when there is none or it cannot be read).
func (r *Repo) LoadCheckpoint() *verify.Checkpoint {
	cp, _ := r.Checkpoints().Load()
	return cp
}

// checkpoint is LoadCheckpoint read once: recording asks it for every ref
// it records.
func (r *Repo) checkpoint() *verify.Checkpoint {
	if !r.cpLoaded {
		r.cp, r.cpLoaded = r.LoadCheckpoint(), true
	}
	return r.cp
}

// recordedFor is latestFor with the value that entry records for ref
// (zero when the log has no entry for ref).
func (r *Repo) recordedFor(tip gitrepo.Hash, ref string) (*rsl.Record, gitrepo.Hash, error) {
	last, err := r.latestFor(tip, ref)
	if err != nil || last == nil {
		return nil, gitrepo.Hash{}, err
	}
	return last, last.Entry.New, nil
}

// latestFor returns the latest entry for ref in the log at tip (nil if it
// has none), as rsl.LatestFor does, but stops at the verification
// checkpoint when the walk reaches it: the checkpoint names each ref's
// latest entry there. Without it, the first push of a new branch or tag
// would read every entry of the log (1.4 s at 10 000 entries). The answer
// only decides what recording proposes: the verifier checks every entry's
// old value against the log itself.
func (r *Repo) latestFor(tip gitrepo.Hash, ref string) (*rsl.Record, error) {
	cp := r.checkpoint()
	if cp == nil {
		return rsl.LatestFor(r.Git, tip, ref)
	}
	found, skipped, atCheckpoint, err := rsl.LatestForUntil(r.Git, tip, ref, func(rec *rsl.Record) bool {
		return cp.IsEntry(rec.Entry.Number, rec.ID)
	})
	if err != nil || found != nil || !atCheckpoint {
		// Found above the checkpoint, or the checkpoint is not in this log
		// (the walk then went to the first entry): the walk's answer.
		return found, err
	}
	last, ok := cp.Latest(ref)
	if !ok {
		return nil, nil // no entry for ref up to the checkpoint
	}
	if skipped[last.Entry] {
		// A later annotation skipped the checkpoint's latest entry: the one
		// before it is not in the checkpoint.
		return rsl.LatestFor(r.Git, tip, ref)
	}
	c, err := r.Git.ReadCommit(last.EntryID)
	if err != nil {
		return nil, err
	}
	e, err := rsl.FromCommit(c)
	if err != nil {
		return nil, err
	}
	if e.Number != last.Entry || e.Ref != ref {
		return rsl.LatestFor(r.Git, tip, ref) // a checkpoint that does not match its log
	}
	return &rsl.Record{ID: last.EntryID, Entry: e, Commit: c}, nil
}

// latestMemo is latestTargets' last answer.
type latestMemo struct {
	tip     gitrepo.Hash
	targets map[string]gitrepo.Hash
}

// latestTargets returns every ref's target as its latest entry in the log
// at tip records it (zero for a deletion), as latestFor would answer ref
// by ref, from one walk: back to the verification checkpoint, whose refs
// answer for the older entries, or to the log tip it answered last time,
// whose answer holds for the older entries when no newer annotation skips
// any. Asking latestFor for each of thousands of tags read the log once
// per tag.
func (r *Repo) latestTargets(tip gitrepo.Hash) (map[string]gitrepo.Hash, error) {
	if r.latest.targets != nil && r.latest.tip == tip {
		return r.latest.targets, nil
	}
	cp := r.checkpoint()
	out := map[string]gitrepo.Hash{}
	skipped := map[uint64]bool{}
	var stop *rsl.Record
	var memo map[string]gitrepo.Hash
	err := rsl.WalkBack(r.Git, tip, func(rec *rsl.Record) (bool, error) {
		if r.latest.targets != nil && rec.ID == r.latest.tip && len(skipped) == 0 {
			memo = r.latest.targets
			return false, nil
		}
		if cp != nil && cp.IsEntry(rec.Entry.Number, rec.ID) {
			stop = rec
			return false, nil
		}
		e := rec.Entry
		switch {
		case e.Type == rsl.TypeAnnotation:
			for _, s := range e.Skips {
				skipped[s.Number] = true
			}
		case e.Type == rsl.TypeRef && !skipped[e.Number]:
			if _, seen := out[e.Ref]; !seen {
				out[e.Ref] = e.New
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	switch {
	case memo != nil:
		for ref, h := range memo {
			if _, seen := out[ref]; !seen {
				out[ref] = h
			}
		}
	case stop != nil:
		for ref, last := range cp.Refs {
			if _, seen := out[ref]; seen {
				continue
			}
			if !skipped[last.Entry] {
				out[ref] = last.Target
				continue
			}
			// A later annotation skipped the checkpoint's latest entry:
			// the one before it is not in the checkpoint.
			rec, err := rsl.LatestFor(r.Git, tip, ref)
			if err != nil {
				return nil, err
			}
			if rec != nil {
				out[ref] = rec.Entry.New
			}
		}
	}
	r.latest = latestMemo{tip: tip, targets: out}
	return out, nil
}
