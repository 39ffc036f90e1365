package verify

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
)

func TestCheckpointStore(t *testing.T) {
	gitDir := t.TempDir()
	store := Checkpoints(gitDir)
	if cp, err := store.Load(); cp != nil || err != nil {
		t.Fatalf("Load without a file = %v, %v; want nil, nil", cp, err)
	}
	h := func(c byte) gitrepo.Hash {
		v, err := gitrepo.ParseHash(strings.Repeat(string(c), 40))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	pin := []string{"SHA256:root"}
	cp := &Checkpoint{Version: CheckpointVersion, Entry: 7, EntryID: h('a'), PolicyEntry: 1, PolicyCommit: h('b'),
		Refs: map[string]CheckpointRef{"refs/heads/main": {Entry: 6, EntryID: h('c'), Target: h('d')}},
		Used: []string{usedKey("refs/heads/main", h('e'), h('d'))}, RootPin: RootPin(pin, 1)}
	if err := store.Save(cp); err != nil {
		t.Fatal(err)
	}
	got, err := store.Load()
	if err != nil || got == nil {
		t.Fatalf("Load after Save = %v, %v", got, err)
	}
	var none *Checkpoint
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"IsEntry of its entry", got.IsEntry(7, h('a')), true},
		{"IsEntry of another commit", got.IsEntry(7, h('c')), false},
		{"IsEntry without a checkpoint", none.IsEntry(7, h('a')), false},
		{"Counted transition", got.Counted("refs/heads/main", h('e'), h('d')), true},
		{"Counted other transition", got.Counted("refs/heads/main", h('d'), h('e')), false},
		{"Covers its state", got.Covers(h('a'), h('b'), pin, 1), true},
		{"Covers another policy", got.Covers(h('a'), h('c'), pin, 1), false},
		{"Covers another pin", got.Covers(h('a'), h('b'), nil, 0), false},
		{"Covers without a checkpoint", none.Covers(h('a'), h('b'), pin, 1), false},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v; want %v", c.name, c.got, c.want)
		}
	}
	if r, ok := got.Latest("refs/heads/main"); !ok || r.Target != h('d') || r.Entry != 6 {
		t.Errorf("Latest(main) = %+v, %v", r, ok)
	}
	if _, ok := got.Latest("refs/heads/other"); ok {
		t.Errorf("Latest(other) found an entry")
	}
	if tg := got.Targets(); len(tg) != 1 || tg["refs/heads/main"] != h('d') {
		t.Errorf("Targets = %v", tg)
	}
	// A file that is not a checkpoint is an error, never a checkpoint.
	if err := os.WriteFile(filepath.Join(gitDir, "secure", "checkpoint.json"), []byte(`{"version":1,"bogus":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if cp, err := store.Load(); err == nil || cp != nil || !strings.Contains(err.Error(), "checkpoint") {
		t.Errorf("Load of a bad file = %v, %v; want an error naming the checkpoint", cp, err)
	}
}

// TestCheckpointFileIndex: the checkpoint file's store keeps the index
// beside it: an append continues only an index that holds the records
// the checkpoint vouches for, dropping a stale tail, and gives the digest
// of a whole rewrite. (A tampered index: TestVerifyAtFromIndex.)
func TestCheckpointFileIndex(t *testing.T) {
	gitDir := t.TempDir()
	store := Checkpoints(gitDir)
	if _, err := store.ReadIndex(1); !errors.Is(err, ErrNoIndex) {
		t.Fatalf("ReadIndex without an index = %v; want ErrNoIndex", err)
	}
	if _, err := store.AppendIndex(indexRecordSize); !errors.Is(err, ErrNoIndex) {
		t.Fatalf("AppendIndex(1 record) without an index = %v; want ErrNoIndex", err)
	}
	write := func(prev *Checkpoint, base uint64, recs ...*rsl.Record) *CheckpointIndex {
		t.Helper()
		x := newIndexWriter(store, prev)
		x.begin(base)
		for _, r := range recs {
			x.add(r)
		}
		return x.finish()
	}
	h := func(c byte) gitrepo.Hash {
		v, err := gitrepo.ParseHash(strings.Repeat(string(c), 40))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ref := func(n uint64, id, target byte) *rsl.Record {
		return &rsl.Record{ID: h(id), Entry: &rsl.Entry{Type: rsl.TypeRef, Number: n, Ref: "refs/heads/main", New: h(target)}}
	}
	first := write(nil, 0, ref(1, 'a', 'b'), ref(2, 'c', 'd'))
	if first == nil || first.Records != 2 {
		t.Fatalf("first index = %+v; want 2 records", first)
	}
	// A stale tail (an append whose checkpoint was not saved) is dropped.
	f, err := os.OpenFile(IndexPath(gitDir), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, indexRecordSize)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	prev := &Checkpoint{Entry: 2, Index: first}
	second := write(prev, 2, ref(3, 'e', 'f'))
	if second == nil || second.Records != 3 {
		t.Fatalf("appended index = %+v; want 3 records", second)
	}
	data, err := store.ReadIndex(second.Records)
	if err != nil || len(data) != 3*indexRecordSize {
		t.Fatalf("ReadIndex = %d bytes, %v; want 3 records", len(data), err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != second.SHA256 {
		t.Errorf("the index read is not the one the checkpoint vouches for")
	}
	// A whole rewrite gives the same digest as the appends.
	if again := write(nil, 0, ref(1, 'a', 'b'), ref(2, 'c', 'd'), ref(3, 'e', 'f')); again == nil || again.SHA256 != second.SHA256 {
		t.Errorf("rewritten index %+v; want the digest of the appended one %s", again, second.SHA256)
	}
	// Another checkpoint's entry: no append.
	if got := write(prev, 3, ref(4, '1', '2')); got != nil {
		t.Errorf("append after a checkpoint at another entry = %+v; want none", got)
	}
	if _, err := store.ReadIndex(4); !errors.Is(err, ErrNoIndex) {
		t.Errorf("ReadIndex of more records than the file holds = %v; want ErrNoIndex", err)
	}
}
