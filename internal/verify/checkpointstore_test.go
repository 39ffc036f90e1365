package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
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
