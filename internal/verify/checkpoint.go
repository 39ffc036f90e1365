package verify

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/strictjson"
)

// CheckpointVersion is the format version of checkpoint files.
const CheckpointVersion = 1

// MaxCheckpointSize bounds a checkpoint file.
const MaxCheckpointSize = 64 << 20

// Checkpoint is the state of a fully verified log at one entry: enough to
// verify only the entries after it. It lives in the clone's git directory,
// never in a shared ref, and is re-checked against the log before use: a
// checkpoint whose entry is not in the log is ignored and everything is
// verified again.
type Checkpoint struct {
	Version      int                      `json:"version"`
	Entry        uint64                   `json:"entry"`
	EntryID      gitrepo.Hash             `json:"entryId"`
	PolicyEntry  uint64                   `json:"policyEntry"`
	PolicyCommit gitrepo.Hash             `json:"policyCommit"`
	Refs         map[string]CheckpointRef `json:"refs"`
	// Used holds SHA-256 digests of the approval transitions already
	// counted, so that approvals are never counted twice across runs.
	Used []string `json:"used"`
	// RootPin is the root key pin the log was verified against, in
	// RootPin's form ("" for none): a checkpoint made under another pin is
	// not used.
	RootPin string `json:"rootPin,omitempty"`
	// Index, when set, is the index of the entries up to Entry kept
	// beside the checkpoint (index.go).
	Index *CheckpointIndex `json:"index,omitempty"`
	// Revoked maps each key revoked by a policy of the log up to Entry to
	// the first entry it is revoked from: verification applies the union
	// of every policy's revocations, and a later policy that drops one
	// does not bring the key back (the policy in force at the checkpoint
	// may no longer list it). Always written ({} for none): a checkpoint
	// saved without it is not used.
	Revoked map[string]uint64 `json:"revoked"`
	// Org, present when the policy in force at Entry inherits an
	// organisation policy, is the newest organisation policy version an
	// entry up to Entry named (Number 0: none yet): the entries after
	// the checkpoint may not name an older one, and the refs are judged
	// with it even when no entry follows (a rolled-back organisation log
	// that no longer holds it is then detected). A checkpoint without it
	// for such a policy is not used.
	Org *CheckpointOrg `json:"org,omitempty"`
}

// CheckpointOrg is the organisation policy version a checkpoint names.
type CheckpointOrg struct {
	URL    string       `json:"url"`
	Number uint64       `json:"number"`
	ID     gitrepo.Hash `json:"id"`
}

// CheckpointRef is a ref's latest recorded entry.
type CheckpointRef struct {
	Entry   uint64       `json:"entry"`
	EntryID gitrepo.Hash `json:"entryId"`
	Target  gitrepo.Hash `json:"target"`
}

// CheckpointPath is where a repository's checkpoint is kept.
func CheckpointPath(gitDir string) string {
	return filepath.Join(gitDir, "secure", "checkpoint.json")
}

// LoadCheckpoint reads a checkpoint file. A missing file is (nil, nil);
// a malformed one is an error (callers then verify everything).
func LoadCheckpoint(path string) (*Checkpoint, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := strictjson.Check(data, MaxCheckpointSize); err != nil {
		return nil, fmt.Errorf("verify: checkpoint %s: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var cp Checkpoint
	if err := dec.Decode(&cp); err != nil {
		return nil, fmt.Errorf("verify: checkpoint %s: %w", path, err)
	}
	if cp.Version != CheckpointVersion || cp.Entry == 0 || cp.EntryID.IsZero() || cp.PolicyCommit.IsZero() {
		return nil, fmt.Errorf("verify: checkpoint %s: unsupported or incomplete", path)
	}
	return &cp, nil
}

// Save writes the checkpoint atomically (temporary file and rename).
//
// The used digests, most of a long log's checkpoint (100 000 at a million
// entries: 6.7 MB of JSON), are written one by one after the rest is
// encoded: json.Marshal of the whole built it in a buffer grown by
// doubling and then copied, 25-30 MB more than the verification's own
// peak, at its very end.
func (cp *Checkpoint) Save(path string) error {
	rest := *cp
	rest.Used = nil
	head, err := json.Marshal(&rest)
	if err != nil {
		return err
	}
	// The one "used" field of the struct, encoded as null: the only
	// place its key is followed by null (map keys named "used" have
	// objects or numbers; quotes inside strings are escaped).
	field := []byte(`"used":null`)
	at := bytes.Index(head, field)
	if at < 0 {
		return fmt.Errorf("verify: encode checkpoint: no used field")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	w.Write(head[:at])
	if cp.Used == nil {
		w.WriteString(`"used":null`)
	} else {
		w.WriteString(`"used":[`)
		for i, k := range cp.Used {
			if i > 0 {
				w.WriteByte(',')
			}
			q, err := json.Marshal(k)
			if err != nil {
				f.Close()
				os.Remove(tmp)
				return err
			}
			w.Write(q)
		}
		w.WriteByte(']')
	}
	w.Write(head[at+len(field):])
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// UsedKey is the digest under which a checkpoint remembers that the
// approvals of ref moving from old to new were counted.
func UsedKey(ref string, old, new gitrepo.Hash) string { return usedKey(ref, old, new) }

func usedKey(ref string, old, new gitrepo.Hash) string {
	sum := usedDigestOf(ref, old, new)
	return hex.EncodeToString(sum[:])
}

// usedDigest is a usedKey as the verifier keeps it: 32 bytes, not 64
// bytes of hex and a string header (one per approved update: a tenth of
// the entries of a busy log).
type usedDigest [sha256.Size]byte

func usedDigestOf(ref string, old, new gitrepo.Hash) usedDigest {
	return sha256.Sum256([]byte(ref + "\x00" + old.String() + "\x00" + new.String()))
}

// errStale means the checkpoint cannot serve this log; verify everything.
var errStale = errors.New("checkpoint does not match the log")

// readSince reads the entries after the checkpoint, checking that the
// checkpoint's entry is in the log.
func readSince(repo Repository, tip gitrepo.Hash, cp *Checkpoint) ([]*rsl.Record, error) {
	var out []*rsl.Record
	found := false
	err := rsl.WalkBack(repo, tip, func(rec *rsl.Record) (bool, error) {
		if rec.Entry.Number == cp.Entry {
			found = rec.ID == cp.EntryID
			return false, nil
		}
		if rec.Entry.Number < cp.Entry {
			return false, nil
		}
		out = append(out, rec)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errStale
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// startFrom seeds the verifier with the checkpoint's state.
func (v *verifier) startFrom(cp *Checkpoint) error {
	if cp.RootPin != RootPin(v.opts.RootKeys, v.opts.RootThreshold) {
		return errStale // made under another pin: it proves nothing about this one
	}
	if cp.Revoked == nil {
		return errStale // saved before it kept the revocations: they may be missing
	}
	pol := v.opts.Loaded
	if pol == nil || v.opts.LoadedCommit != cp.PolicyCommit {
		var err error
		if pol, err = policy.LoadSigned(v.repo, cp.PolicyCommit, nil); err != nil {
			return errStale
		}
	}
	if err := v.orgs.startFrom(pol, cp.Org); err != nil {
		return err
	}
	if v.pin != nil {
		// A checkpoint is only made when everything verified, the pin's
		// anchor included: the anchor is at or before its policy.
		v.pin.anchored = true
	}
	v.base = cp.Entry
	v.startPolicy, v.startPolicyCommit, v.startPolicyEntry = pol, cp.PolicyCommit, cp.PolicyEntry
	v.state = map[string]*refStates{}
	for ref, r := range cp.Refs {
		st := &refStates{}
		if err := v.stateLog().push(st, recorded{number: r.Entry, id: r.EntryID, target: r.Target}); err != nil {
			return err
		}
		v.state[ref] = st
	}
	v.used = make(map[usedDigest]uint64, len(cp.Used))
	for _, k := range cp.Used {
		var d usedDigest
		if len(k) != 2*len(d) {
			return errStale // not a key this verifier wrote
		}
		if _, err := hex.Decode(d[:], []byte(k)); err != nil {
			return errStale
		}
		v.used[d] = cp.Entry
	}
	// The revocations of the policies before the checkpoint's, with those
	// a repeated pass already knows (a new map: one in use is never
	// modified).
	seed := make(map[string]uint64, len(cp.Revoked)+len(v.seedRevoked))
	for fp, n := range cp.Revoked {
		seed[fp] = n
	}
	for fp, n := range v.seedRevoked {
		if from, ok := seed[fp]; !ok || n < from {
			seed[fp] = n
		}
	}
	v.seedRevoked = seed
	return nil
}

// checkpoint returns the state after a complete, successful verification.
func (v *verifier) checkpoint() *Checkpoint {
	cp := &Checkpoint{Version: CheckpointVersion, Entry: v.lastNum, EntryID: v.lastID, RootPin: RootPin(v.opts.RootKeys, v.opts.RootThreshold),
		PolicyEntry: v.res.PolicyEntry, PolicyCommit: v.policyCommit, Refs: map[string]CheckpointRef{}, Revoked: map[string]uint64{}}
	for fp, n := range v.revokedFrom {
		cp.Revoked[fp] = n
	}
	cp.Org = v.orgs.checkpoint(v.curPolicy)
	for ref, st := range v.state {
		r, ok := st.last()
		if !ok {
			continue
		}
		cp.Refs[ref] = CheckpointRef{Entry: r.number, EntryID: r.id, Target: r.target}
	}
	// Sorted as digests, then encoded into one string the keys share:
	// a string each was 100 000 allocations at a million entries.
	keys := make([]usedDigest, 0, len(v.used))
	for k := range v.used {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b usedDigest) int { return bytes.Compare(a[:], b[:]) })
	const keyLen = 2 * len(usedDigest{})
	var all strings.Builder
	all.Grow(keyLen * len(keys))
	var buf [keyLen]byte
	for _, k := range keys {
		hex.Encode(buf[:], k[:])
		all.Write(buf[:])
	}
	joined := all.String()
	if len(keys) > 0 {
		cp.Used = make([]string, len(keys))
	}
	for i := range keys {
		cp.Used[i] = joined[i*keyLen : (i+1)*keyLen]
	}
	return cp
}

// WithCheckpoint runs Verify starting from the checkpoint saved in gitDir
// (unless full), and saves the new checkpoint when everything verified.
// A checkpoint that cannot be read is ignored.
func WithCheckpoint(repo *gitrepo.Repo, opts Options, full bool) (*Result, error) {
	return WithStore(repo, Checkpoints(repo.GitDir()), opts, full)
}

// WithStore is WithCheckpoint with the objects and refs read from repo
// and the checkpoint kept in store.
func WithStore(repo Repository, store CheckpointStore, opts Options, full bool) (*Result, error) {
	t0 := time.Now()
	defer func() {
		if opts.Trace != nil {
			opts.Trace("total", time.Since(t0))
		}
	}()
	if !full {
		if cp, err := store.Load(); err == nil && cp != nil && cp.RootPin == RootPin(opts.RootKeys, opts.RootThreshold) {
			opts.Checkpoint = cp
		}
	}
	if opts.Trace != nil {
		opts.Trace("load checkpoint", time.Since(t0))
	}
	opts.index = newIndexWriter(store, opts.Checkpoint)
	opts.memory = &memoryLimit{}
	defer opts.memory.restore()
	res, err := Verify(repo, opts)
	if err == nil && res != nil && res.Checkpoint != nil && res.Checkpoint != opts.Checkpoint {
		res.Checkpoint.Index = opts.index.finish()
		_ = store.Save(res.Checkpoint) // a cache: failing to save only costs time next run
	}
	opts.index.close()
	return res, err
}
