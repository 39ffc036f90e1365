package verify

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"

	"path/filepath"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
)

// The index answers "was COMMIT ever a recorded state of REF?" (verify
// --at) without reading the log: one fixed-size record per ref entry and
// per skip, in log order, written by the verification that saves the
// checkpoint, in secure/index beside it. The checkpoint holds the index's
// length and SHA-256 (and the hash state, so that an incremental
// verification appends without reading the file again): the index is as
// tamper-evident as the checkpoint, and a reader checks the digest before
// using a byte of it. Bytes after the recorded length (an append whose
// checkpoint was not saved) are ignored and overwritten.

// indexRecordSize is the size of one index record: the entry number (8
// bytes), the kind (1), the first 7 bytes of the SHA-256 of the ref name,
// the entry's id (20) and the ref's new value (20). A skip record holds
// the skipped entry's number and the annotation's id.
const indexRecordSize = 56

const (
	indexRef  = 1
	indexSkip = 2
)

// CheckpointIndex locates the index a checkpoint vouches for.
type CheckpointIndex struct {
	// Records is how many records of the file the checkpoint covers.
	Records uint64 `json:"records"`
	// SHA256 is the hex digest of those records.
	SHA256 string `json:"sha256"`
	// State is the SHA-256 state after them (base64), to append.
	State string `json:"state"`
}

// IndexPath is where a repository's index is kept.
func IndexPath(gitDir string) string {
	return filepath.Join(gitDir, "secure", "index")
}

// indexWriter appends the records of a verification to the index the
// checkpoint store keeps.
type indexWriter struct {
	store   CheckpointStore
	prev    *Checkpoint // the checkpoint the verification started from
	f       IndexAppender
	w       *bufio.Writer
	h       hash.Hash
	records uint64
	err     error
	off     bool
}

func newIndexWriter(store CheckpointStore, prev *Checkpoint) *indexWriter {
	return &indexWriter{store: store, prev: prev}
}

// begin starts the records after entry base: a new index for base 0, an
// append to the checkpoint's index otherwise (none when it has none).
func (x *indexWriter) begin(base uint64) {
	if x == nil {
		return
	}
	x.close()
	x.err, x.off, x.records = nil, false, 0
	x.h = sha256.New()
	var size int64
	if base > 0 {
		ci := x.prev.indexFor(base)
		if ci == nil {
			x.off = true
			return
		}
		if err := x.h.(encoding.BinaryUnmarshaler).UnmarshalBinary(ci.state()); err != nil {
			x.off = true
			return
		}
		x.records, size = ci.Records, int64(ci.Records)*indexRecordSize
	}
	f, err := x.store.AppendIndex(size)
	if errors.Is(err, ErrNoIndex) {
		// Append only to the index the checkpoint describes, never to
		// a file that lost it (the digest would not match anyway).
		x.off = true
		return
	}
	if err != nil {
		x.err = err
		return
	}
	x.f, x.w = f, bufio.NewWriterSize(f, 64<<10)
}

func (ci *CheckpointIndex) state() []byte {
	b, _ := base64.StdEncoding.DecodeString(ci.State)
	return b
}

// indexFor returns cp's index when cp is the checkpoint at entry base.
func (cp *Checkpoint) indexFor(base uint64) *CheckpointIndex {
	if cp == nil || cp.Entry != base || cp.Index == nil {
		return nil
	}
	return cp.Index
}

// add appends the records of one entry.
func (x *indexWriter) add(rec *rsl.Record) {
	if x == nil || x.off || x.err != nil || x.w == nil {
		return
	}
	e := rec.Entry
	if e.Type == rsl.TypeAnnotation {
		for _, s := range e.Skips {
			x.put(s.Number, indexSkip, "", rec.ID, gitrepo.ZeroHash)
		}
		return
	}
	x.put(e.Number, indexRef, e.Ref, rec.ID, e.New)
}

func (x *indexWriter) put(n uint64, kind byte, ref string, id, target gitrepo.Hash) {
	var b [indexRecordSize]byte
	encodeIndexRecord(b[:], n, kind, ref, id, target)
	x.h.Write(b[:])
	if _, err := x.w.Write(b[:]); err != nil {
		x.err = err
	}
	x.records++
}

func encodeIndexRecord(b []byte, n uint64, kind byte, ref string, id, target gitrepo.Hash) {
	binary.BigEndian.PutUint64(b[0:8], n)
	b[8] = kind
	if ref != "" {
		sum := sha256.Sum256([]byte(ref))
		copy(b[9:16], sum[:7])
	}
	copy(b[16:36], id[:])
	copy(b[36:56], target[:])
}

// finish flushes the records and returns what the checkpoint records of
// them (nil when no index is kept).
func (x *indexWriter) finish() *CheckpointIndex {
	if x == nil || x.off || x.w == nil {
		x.close()
		return nil
	}
	if x.err == nil {
		x.err = x.w.Flush()
	}
	if x.err == nil {
		x.err = x.f.Sync()
	}
	x.close()
	if x.err != nil {
		return nil
	}
	state, err := x.h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return nil
	}
	return &CheckpointIndex{Records: x.records, SHA256: hex.EncodeToString(x.h.Sum(nil)), State: base64.StdEncoding.EncodeToString(state)}
}

func (x *indexWriter) close() {
	if x != nil && x.f != nil {
		x.f.Close()
		x.f, x.w = nil, nil
	}
}

// ErrNoIndex is returned by RecordedAt when the checkpoint keeps no
// usable index: the caller walks the log instead.
var ErrNoIndex = errors.New("verify: no index beside the checkpoint")

// indexName names the index of store in messages.
func indexName(store CheckpointStore) string {
	if n, ok := store.(interface{ IndexName() string }); ok {
		return n.IndexName()
	}
	return "the index beside the checkpoint"
}

// typeLister lists object types in one round trip (*gitrepo.Repo).
type typeLister interface {
	ObjectTypes(hashes []gitrepo.Hash) ([]string, error)
}

// RecordedAt answers from the index that store keeps for cp (the saved
// checkpoint, already found in the log) whether ref was recorded at want
// (its value, or a tag peeling to it), in an entry at or before cp's that
// no later annotation skips: the newest such entry's number, or 0.
// skipped holds the entries that annotations after cp skip. The entry
// found is read from repo and must say what the index says.
func RecordedAt(repo Repository, store CheckpointStore, cp *Checkpoint, ref string, skipped map[uint64]bool, want gitrepo.Hash) (uint64, error) {
	data, err := readCheckedIndex(store, cp)
	if err != nil {
		return 0, err
	}
	if skipped == nil {
		skipped = map[uint64]bool{}
	}
	if err := indexSkips(store, data, skipped); err != nil {
		return 0, err
	}
	exact, newer := indexCandidates(data, ref, skipped, want)
	found := exact
	if len(newer) > 0 {
		p, err := peelsTo(repo, newer, want)
		if err != nil {
			return 0, err
		}
		if p != nil {
			found = p
		}
	}
	if found == nil {
		return 0, nil
	}
	c, err := repo.ReadCommit(found.id)
	if err != nil {
		return 0, fmt.Errorf("verify: index: read entry #%d %s: %w", found.n, found.id, err)
	}
	e, err := rsl.FromCommit(c)
	if err != nil || e.Number != found.n || e.Ref != ref || e.New != found.target {
		return 0, fmt.Errorf("verify: index: entry #%d %s is not what the index records", found.n, found.id)
	}
	return found.n, nil
}

// readCheckedIndex reads cp's index from store; not a byte is used before
// the records are the ones the checkpoint vouches for.
func readCheckedIndex(store CheckpointStore, cp *Checkpoint) ([]byte, error) {
	if cp == nil || cp.Index == nil {
		return nil, ErrNoIndex
	}
	data, err := store.ReadIndex(cp.Index.Records)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	if uint64(len(data)) != cp.Index.Records*indexRecordSize || hex.EncodeToString(sum[:]) != cp.Index.SHA256 {
		return nil, fmt.Errorf("verify: %s does not match the checkpoint (tampered or damaged): remove it and run git secure verify --full", indexName(store))
	}
	return data, nil
}

// indexSkips adds to skipped the entries the index's annotations skip.
// An annotation skips only earlier entries: every skip is known before
// the entries it skips are looked at, newest first.
func indexSkips(store CheckpointStore, data []byte, skipped map[uint64]bool) error {
	for off := 0; off+indexRecordSize <= len(data); off += indexRecordSize {
		b := data[off : off+indexRecordSize]
		switch b[8] {
		case indexSkip:
			skipped[binary.BigEndian.Uint64(b[0:8])] = true
		case indexRef:
		default:
			return fmt.Errorf("verify: %s: unknown record kind %d at record %d: remove it and run git secure verify --full", indexName(store), b[8], off/indexRecordSize)
		}
	}
	return nil
}

// indexCand is one recorded value of a ref in the index.
type indexCand struct {
	n          uint64
	id, target gitrepo.Hash
}

// indexCandidates lists ref's recorded values, newest first, up to the
// newest equal to want (exact); only the tags among the newer ones can
// peel to it.
func indexCandidates(data []byte, ref string, skipped map[uint64]bool, want gitrepo.Hash) (exact *indexCand, newer []indexCand) {
	refKey := sha256.Sum256([]byte(ref))
	for off := len(data) - indexRecordSize; off >= 0; off -= indexRecordSize {
		b := data[off : off+indexRecordSize]
		n := binary.BigEndian.Uint64(b[0:8])
		if b[8] != indexRef || !bytes.Equal(b[9:16], refKey[:7]) || skipped[n] {
			continue
		}
		c := indexCand{n: n}
		copy(c.id[:], b[16:36])
		copy(c.target[:], b[36:56])
		if c.target.IsZero() {
			continue
		}
		if c.target == want {
			return &c, newer
		}
		newer = append(newer, c)
	}
	return nil, newer
}

// peelsTo returns the newest candidate that is a tag peeling to want.
func peelsTo(repo Repository, newer []indexCand, want gitrepo.Hash) (*indexCand, error) {
	targets := make([]gitrepo.Hash, len(newer))
	for i, c := range newer {
		targets[i] = c.target
	}
	types := make([]string, len(targets)) // "": peel to find out
	if tl, ok := repo.(typeLister); ok {
		var err error
		if types, err = tl.ObjectTypes(targets); err != nil {
			return nil, fmt.Errorf("verify: index: %w", err)
		}
	}
	for i, c := range newer {
		if types[i] != "tag" && types[i] != "" {
			continue
		}
		if p, err := repo.PeelToCommit(c.target); err == nil && p == want {
			return &newer[i], nil
		}
	}
	return nil, nil
}
