package rsl

import (
	"fmt"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// Reader reads commits; *gitrepo.Repo satisfies it.
type Reader interface {
	ReadCommit(h gitrepo.Hash) (*gitrepo.Commit, error)
}

// Record is one entry read from the log with the commit that holds it.
type Record struct {
	ID     gitrepo.Hash
	Entry  *Entry
	Commit *gitrepo.Commit
}

// Context is err about the log with "rsl: " and ctx before it once: an
// error of this package (ErrNotEntry, ErrMalformed: "rsl: not an RSL
// entry commit X: ...") keeps its text after ctx without a second "rsl: "
// ("rsl: rsl: not an RSL entry commit" before), and an error of another
// package ("gitrepo: ...") gets the prefix. An empty ctx adds only the
// prefix. errors.Is and errors.As see err. Readers of the log outside the
// package (verify's stream) use it too.
func Context(ctx string, err error) error { return &contextError{ctx: ctx, err: err} }

type contextError struct {
	ctx string
	err error
}

func (e *contextError) Error() string {
	inner := strings.TrimPrefix(e.err.Error(), "rsl: ")
	if e.ctx == "" {
		return "rsl: " + inner
	}
	return "rsl: " + e.ctx + ": " + inner
}

func (e *contextError) Unwrap() error { return e.err }

// ReadEntryError is a failed read of entry h: the reader's error names h
// already (gitrepo's "read commit X: object not found") or is given h.
func ReadEntryError(h gitrepo.Hash, err error) error {
	if strings.Contains(err.Error(), h.String()) {
		return Context("read entry", err)
	}
	return Context("read entry "+h.String(), err)
}

// MaxEntries bounds how long a log this version reads.
const MaxEntries = 10_000_000

// WalkBack visits the log from tip towards the first entry, newest first,
// until fn returns false. Every visited entry is decoded strictly and the
// numbering is checked: each entry's number is one more than its parent's.
func WalkBack(r Reader, tip gitrepo.Hash, fn func(*Record) (bool, error)) error {
	var want uint64
	for h := tip; !h.IsZero(); {
		c, err := r.ReadCommit(h)
		if err != nil {
			return ReadEntryError(h, err)
		}
		e, err := FromCommit(c)
		if err != nil {
			return Context("", err)
		}
		if e.Number > MaxEntries {
			return fmt.Errorf("%w %s: entry #%d: this version reads logs of at most %d entries", ErrNotEntry, h, e.Number, MaxEntries)
		}
		if want != 0 && e.Number != want {
			return fmt.Errorf("%w %s: number %d where %d was expected (entries removed or reordered)", ErrNotEntry, h, e.Number, want)
		}
		want = e.Number - 1
		more, err := fn(&Record{ID: h, Entry: e, Commit: c})
		if err != nil || !more {
			return err
		}
		if len(c.Parents) == 0 {
			break
		}
		h = c.Parents[0]
	}
	return nil
}

// bulkReader reads a whole chain fast (*gitrepo.Repo implements it).
type bulkReader interface {
	FirstParents(tip gitrepo.Hash, max int) ([]gitrepo.Hash, error)
	ReadCommitsPipelined(hashes []gitrepo.Hash, fn func(*gitrepo.Commit) error) error
}

// PipelineMin is the log length from which ReadLog lists the chain first
// and reads it in one pipelined stream.
const PipelineMin = 64

// ReadLog returns every entry from the first to tip, in order.
func ReadLog(r Reader, tip gitrepo.Hash) ([]*Record, error) {
	if br, ok := r.(bulkReader); ok && !tip.IsZero() {
		c, err := r.ReadCommit(tip)
		if err != nil {
			return nil, ReadEntryError(tip, err)
		}
		if e, err := FromCommit(c); err == nil && e.Number >= PipelineMin && e.Number <= MaxEntries {
			return readBulk(br, tip, e.Number)
		}
	}
	return readLog(r, tip)
}

// readBulk lists the chain with one rev-list and reads it pipelined, then
// checks exactly what WalkBack checks: every commit an entry, numbers
// descending by one to 1, each entry's parent the next one listed.
func readBulk(br bulkReader, tip gitrepo.Hash, n uint64) ([]*Record, error) {
	hashes, err := br.FirstParents(tip, int(n)+1)
	if err != nil {
		return nil, Context("list entries", err)
	}
	out := make([]*Record, len(hashes))
	i := 0
	err = br.ReadCommitsPipelined(hashes, func(c *gitrepo.Commit) error {
		e, err := FromCommit(c)
		if err != nil {
			return err
		}
		want := n - uint64(i)
		if e.Number != want {
			return fmt.Errorf("%w %s: number %d where %d was expected (entries removed or reordered)", ErrNotEntry, c.Hash, e.Number, want)
		}
		if i+1 < len(hashes) && (len(c.Parents) != 1 || c.Parents[0] != hashes[i+1]) {
			return fmt.Errorf("%w %s: its parent is not the entry before it", ErrNotEntry, c.Hash)
		}
		out[len(hashes)-1-i] = &Record{ID: c.Hash, Entry: e, Commit: c}
		i++
		return nil
	})
	if err != nil {
		return nil, Context("read entries", err)
	}
	if i != len(hashes) || len(out) == 0 || out[0].Entry.Number != 1 || len(out[0].Commit.Parents) != 0 {
		return nil, fmt.Errorf("%w: the log does not go back to entry 1", ErrNotEntry)
	}
	return out, nil
}

func readLog(r Reader, tip gitrepo.Hash) ([]*Record, error) {
	var out []*Record
	err := WalkBack(r, tip, func(rec *Record) (bool, error) {
		if out == nil {
			// The number is the tip's claim, not yet checked: bound the
			// allocation it can cause.
			out = make([]*Record, 0, min(rec.Entry.Number, 1<<16))
		}
		out = append(out, rec)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	if len(out) > 0 && out[0].Entry.Number != 1 {
		return nil, fmt.Errorf("%w: log starts at entry %d", ErrNotEntry, out[0].Entry.Number)
	}
	return out, nil
}

// LatestFor returns the newest entry for ref that no later annotation
// skips, or nil when the log has none. It does not verify anything.
func LatestFor(r Reader, tip gitrepo.Hash, ref string) (*Record, error) {
	found, _, _, err := LatestForUntil(r, tip, ref, nil)
	return found, err
}

// LatestForUntil is LatestFor with an end: the walk stops before the first
// entry for which stop reports true (stopped is then true), so a caller
// that knows the state at that entry (a verification checkpoint) need not
// read older ones. skipped holds the entries that annotations seen on the
// way skip, which that older state does not know about.
func LatestForUntil(r Reader, tip gitrepo.Hash, ref string, stop func(*Record) bool) (found *Record, skipped map[uint64]bool, stopped bool, err error) {
	skipped = map[uint64]bool{}
	err = WalkBack(r, tip, func(rec *Record) (bool, error) {
		if stop != nil && stop(rec) {
			stopped = true
			return false, nil
		}
		e := rec.Entry
		switch {
		case e.Type == TypeAnnotation:
			for _, s := range e.Skips {
				skipped[s.Number] = true
			}
		case e.Ref == ref && !skipped[e.Number]:
			found = rec
			return false, nil
		}
		return true, nil
	})
	return found, skipped, stopped, err
}

// LatestForEach is LatestFor for every ref of refs from one walk: the
// latest entry of each (absent: none). The walk stops once every ref is
// found, or before the first entry for which stop reports true (stopped
// is then true, and the refs not found are undecided). Asking LatestFor
// per ref read the log once per ref.
func LatestForEach(r Reader, tip gitrepo.Hash, refs map[string]bool, stop func(*Record) bool) (found map[string]*Record, stopped bool, err error) {
	found = map[string]*Record{}
	if len(refs) == 0 || tip.IsZero() {
		return found, false, nil
	}
	skipped := map[uint64]bool{}
	err = WalkBack(r, tip, func(rec *Record) (bool, error) {
		if stop != nil && stop(rec) {
			stopped = true
			return false, nil
		}
		e := rec.Entry
		switch {
		case e.Type == TypeAnnotation:
			for _, s := range e.Skips {
				skipped[s.Number] = true
			}
		case refs[e.Ref] && !skipped[e.Number]:
			if _, seen := found[e.Ref]; !seen {
				found[e.Ref] = rec
			}
		}
		return len(found) < len(refs), nil
	})
	return found, stopped, err
}

// Writer stores objects; *gitrepo.Repo satisfies it.
type Writer interface {
	WriteObject(typ string, data []byte) (gitrepo.Hash, error)
}

// SignFunc signs an entry commit's payload and returns the armored SSH
// signature.
type SignFunc func(payload []byte) ([]byte, error)

// Write makes the signed commit for entry e on top of parent and stores it.
// It does not move the log's ref: the caller does, with compare-and-swap,
// together with any ref the entry records.
func Write(w Writer, e *Entry, parent gitrepo.Hash, who gitrepo.Ident, sign SignFunc) (gitrepo.Hash, error) {
	payload, err := Payload(e, parent, who)
	if err != nil {
		return gitrepo.ZeroHash, err
	}
	sig, err := sign(payload)
	if err != nil {
		return gitrepo.ZeroHash, fmt.Errorf("rsl: sign entry #%d: %w", e.Number, err)
	}
	raw, err := gitrepo.AddSignature(payload, sig)
	if err != nil {
		return gitrepo.ZeroHash, fmt.Errorf("rsl: sign entry #%d: %w", e.Number, err)
	}
	// Entries point at the empty tree, which git knows without storing
	// it; stored, git fsck finds every object an entry names.
	if _, err := w.WriteObject("tree", nil); err != nil {
		return gitrepo.ZeroHash, fmt.Errorf("rsl: write entry #%d: empty tree: %w", e.Number, err)
	}
	h, err := w.WriteObject("commit", raw)
	if err != nil {
		return gitrepo.ZeroHash, fmt.Errorf("rsl: write entry #%d: %w", e.Number, err)
	}
	return h, nil
}

// KeepLookup bounds how many of the newest entries a server reads to
// accept a keep ref (KeepRefPrefix): git-secure creates one right after
// the entry that moved its ref away from the state it keeps.
const KeepLookup = 10_000

// FindRecorded returns those of want that a ref entry among the newest
// max entries of the log at tip (every entry when max is 0) records as
// the old or new state of a ref: the states keep refs may hold. It stops
// as soon as all are found.
func FindRecorded(r Reader, tip gitrepo.Hash, want map[gitrepo.Hash]bool, max int) (map[gitrepo.Hash]bool, error) {
	return findRecorded(r, tip, want, max, gitrepo.ZeroHash, nil)
}

// FindRecordedAfter is FindRecorded over the whole log for a caller that
// remembers which states an earlier search of the log up to the entry
// knownTip found recorded nowhere (known): the log only grows, so those can
// only be recorded by an entry after knownTip, and the walk stops there
// once every other state wanted is found. A fetch that checks the keep
// refs a remote serves so reads only the entries new since the last fetch,
// not the whole log every time, when the remote serves keep refs the log
// does not record. A knownTip the walk never meets (a log that does not
// extend it) costs the whole walk, which answers exactly.
func FindRecordedAfter(r Reader, tip gitrepo.Hash, want map[gitrepo.Hash]bool, knownTip gitrepo.Hash, known map[gitrepo.Hash]bool) (map[gitrepo.Hash]bool, error) {
	return findRecorded(r, tip, want, 0, knownTip, known)
}

func findRecorded(r Reader, tip gitrepo.Hash, want map[gitrepo.Hash]bool, max int, knownTip gitrepo.Hash, known map[gitrepo.Hash]bool) (map[gitrepo.Hash]bool, error) {
	found := map[gitrepo.Hash]bool{}
	if len(want) == 0 || tip.IsZero() {
		return found, nil
	}
	unknown := 0 // states wanted that no earlier search ruled out
	for h := range want {
		if !known[h] {
			unknown++
		}
	}
	unknownFound, passed, seen := 0, false, 0
	err := WalkBack(r, tip, func(rec *Record) (bool, error) {
		if e := rec.Entry; e.Type == TypeRef {
			for _, h := range []gitrepo.Hash{e.Old, e.New} {
				if want[h] && !found[h] {
					found[h] = true
					if !known[h] {
						unknownFound++
					}
				}
			}
		}
		seen++
		if rec.ID == knownTip {
			passed = true
		}
		done := len(found) == len(want) || (passed && unknownFound == unknown)
		return !done && (max == 0 || seen < max), nil
	})
	return found, err
}
