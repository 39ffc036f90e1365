package verify_test

import (
	"bytes"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/testing/benchrepo"
	"github.com/git-secure/git-secure/internal/verify"
)

// plainRepository is a verify.Repository and nothing more: it hides
// *gitrepo.Repo's bulk readers, so the log is read entry by entry.
type plainRepository struct{ verify.Repository }

// TestVerifyThroughRepository: a log long enough to be listed and read in
// one pipelined stream verifies the same through any verify.Repository:
// one that cannot read in bulk has its log read with rsl.ReadLog and
// streamed in the same windows. A checkpoint store that is not a file
// receives the checkpoint and its index.
func TestVerifyThroughRepository(t *testing.T) {
	info, err := benchrepo.Build(t.TempDir(), benchrepo.Options{Entries: 80, Spare: -1})
	if err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.OpenWithEnv(info.GitDir(), benchrepo.Env())
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	opts := verify.Options{Now: info.Now()}
	bulk, err := verify.Verify(repo, opts)
	if err != nil {
		t.Fatal(err)
	}
	store := &memStore{}
	plain, err := verify.WithStore(plainRepository{repo}, store, opts, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range []*verify.Result{bulk, plain} {
		if res.Entries != info.Entries || res.Checked != info.Entries || res.Tip != info.RSL {
			t.Errorf("verified %d entries (%d checked) up to %s; want %d up to %s", res.Entries, res.Checked, res.Tip, info.Entries, info.RSL)
		}
	}
	if len(bulk.Refs) != len(plain.Refs) {
		t.Fatalf("refs: bulk %+v, plain %+v", bulk.Refs, plain.Refs)
	}
	for i := range bulk.Refs {
		if bulk.Refs[i] != plain.Refs[i] {
			t.Errorf("ref %d: bulk %+v, plain %+v", i, bulk.Refs[i], plain.Refs[i])
		}
	}
	if store.cp == nil || store.cp.Entry != uint64(info.Entries) || store.cp.Index == nil || store.cp.Index.Records != uint64(info.Entries) {
		t.Fatalf("saved checkpoint %+v; want one at entry %d with an index of its %d entries", store.cp, info.Entries, info.Entries)
	}
	if got := uint64(len(store.index)); got != store.cp.Index.Records*56 {
		t.Errorf("the store holds %d index bytes; want %d records", got, store.cp.Index.Records)
	}
}

// memStore keeps a checkpoint and its index in memory.
type memStore struct {
	cp    *verify.Checkpoint
	index []byte
}

func (m *memStore) Load() (*verify.Checkpoint, error) { return m.cp, nil }
func (m *memStore) Save(cp *verify.Checkpoint) error  { m.cp = cp; return nil }

func (m *memStore) AppendIndex(size int64) (verify.IndexAppender, error) {
	if int64(len(m.index)) < size {
		return nil, verify.ErrNoIndex
	}
	m.index = m.index[:size]
	return &memAppender{m}, nil
}

func (m *memStore) ReadIndex(records uint64) ([]byte, error) {
	if uint64(len(m.index)) < records*56 {
		return nil, verify.ErrNoIndex
	}
	return bytes.Clone(m.index[:records*56]), nil
}

type memAppender struct{ m *memStore }

func (a *memAppender) Write(b []byte) (int, error) {
	a.m.index = append(a.m.index, b...)
	return len(b), nil
}
func (a *memAppender) Sync() error  { return nil }
func (a *memAppender) Close() error { return nil }
