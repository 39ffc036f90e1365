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
