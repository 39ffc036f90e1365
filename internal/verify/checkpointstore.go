package verify

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// CheckpointStore keeps a clone's verification checkpoint and the index
// of recorded states beside it (index.go; verify --at reads it through
// RecordedAt). It is the one owner of the checkpoint's form: recording,
// the hooks and the remote helper ask a Checkpoint it returns (IsEntry,
// Latest, Counted, Covers), never the file.
type CheckpointStore interface {
	// Load returns the saved checkpoint: nil without one, an error when
	// it cannot be read (callers then verify everything).
	Load() (*Checkpoint, error)
	// Save replaces the saved checkpoint atomically.
	Save(*Checkpoint) error
	// AppendIndex opens the index kept beside the checkpoint (index.go)
	// for writing after its first size bytes, dropping any bytes after
	// them: a new index when size is 0, ErrNoIndex when the index holds
	// fewer bytes (an append never continues a file that lost some).
	AppendIndex(size int64) (IndexAppender, error)
	// ReadIndex returns the first records of the index (ErrNoIndex when
	// it is missing or holds fewer). RecordedAt checks their digest
	// against the checkpoint's before using any.
	ReadIndex(records uint64) ([]byte, error)
}

// IndexAppender receives the records appended to an index.
type IndexAppender interface {
	io.Writer
	Sync() error
	Close() error
}

// CheckpointFile is the checkpoint file of one git directory
// (CheckpointPath); each Load reads it as it is then.
type CheckpointFile struct{ path string }

// Checkpoints returns the checkpoint store of the repository whose git
// directory is gitDir.
func Checkpoints(gitDir string) CheckpointFile {
	return CheckpointFile{path: CheckpointPath(gitDir)}
}

// Load reads the checkpoint file.
func (f CheckpointFile) Load() (*Checkpoint, error) { return LoadCheckpoint(f.path) }

// Save writes cp to the file atomically.
func (f CheckpointFile) Save(cp *Checkpoint) error { return cp.Save(f.path) }

// indexPath is the index beside the checkpoint file (IndexPath).
func (f CheckpointFile) indexPath() string {
	return filepath.Join(filepath.Dir(f.path), "index")
}

// AppendIndex opens the index file after its first size bytes.
func (f CheckpointFile) AppendIndex(size int64) (IndexAppender, error) {
	path := f.indexPath()
	flag := os.O_RDWR
	if size == 0 {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		flag |= os.O_CREATE
	} else if st, err := os.Stat(path); err != nil || st.Size() < size {
		return nil, ErrNoIndex
	}
	file, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, err
	}
	if err = file.Truncate(size); err == nil {
		_, err = file.Seek(size, io.SeekStart)
	}
	if err != nil {
		file.Close()
		return nil, err
	}
	return file, nil
}

// ReadIndex reads the first records of the index file.
func (f CheckpointFile) ReadIndex(records uint64) ([]byte, error) {
	path := f.indexPath()
	file, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoIndex
	}
	if err != nil {
		return nil, fmt.Errorf("verify: read %s: %w", path, err)
	}
	defer file.Close()
	// The size is checked before the records are allocated.
	if st, err := file.Stat(); err != nil || records > uint64(st.Size())/indexRecordSize {
		return nil, ErrNoIndex
	}
	data := make([]byte, records*indexRecordSize)
	if _, err := io.ReadFull(file, data); err != nil {
		return nil, ErrNoIndex
	}
	return data, nil
}

// IndexName names the index file in messages.
func (f CheckpointFile) IndexName() string { return f.indexPath() }

// IsEntry reports whether the checkpoint was made at entry number with
// commit id (a walk of the log that reaches it may stop there).
func (cp *Checkpoint) IsEntry(number uint64, id gitrepo.Hash) bool {
	return cp != nil && cp.Entry == number && cp.EntryID == id
}

// Latest returns ref's latest entry as of the checkpoint (ok false when
// the log had none for it there).
func (cp *Checkpoint) Latest(ref string) (CheckpointRef, bool) {
	if cp == nil {
		return CheckpointRef{}, false
	}
	r, ok := cp.Refs[ref]
	return r, ok
}

// Targets returns what the log records for each ref as of the checkpoint.
func (cp *Checkpoint) Targets() map[string]gitrepo.Hash {
	out := make(map[string]gitrepo.Hash, len(cp.Refs))
	for ref, r := range cp.Refs {
		out[ref] = r.Target
	}
	return out
}

// Counted reports whether the approvals of ref moving from old to new
// were counted by an entry up to the checkpoint (they count once).
func (cp *Checkpoint) Counted(ref string, old, new gitrepo.Hash) bool {
	return cp != nil && slices.Contains(cp.Used, usedKey(ref, old, new))
}

// Covers reports whether the checkpoint is the completely verified state
// of the log at logTip with the policy at policyCommit, under the root key
// pin (keys, threshold).
func (cp *Checkpoint) Covers(logTip, policyCommit gitrepo.Hash, keys []string, threshold int) bool {
	return cp != nil && cp.EntryID == logTip && cp.PolicyCommit == policyCommit && cp.RootPin == RootPin(keys, threshold)
}
