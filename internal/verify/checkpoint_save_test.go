package verify

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// Save streams the used digests, and writes exactly what json.Marshal
// writes for the whole checkpoint, with or without digests, whatever the
// refs and revocations are named (a ref named "used" included).
func TestCheckpointSaveLikeMarshal(t *testing.T) {
	id := gitrepo.Hash{1, 2, 3}
	for _, used := range [][]string{nil, {}, {usedKey("refs/heads/main", id, id)}, {usedKey("a", id, id), usedKey("b", id, id), usedKey("c", id, id)}} {
		cp := &Checkpoint{Version: CheckpointVersion, Entry: 7, EntryID: id, PolicyEntry: 1, PolicyCommit: id,
			Refs:    map[string]CheckpointRef{"used": {Entry: 3, EntryID: id, Target: id}, `"used":null`: {}},
			Used:    used,
			Revoked: map[string]uint64{"used": 2},
			Index:   &CheckpointIndex{Records: 4, SHA256: "x", State: "y"}}
		path := filepath.Join(t.TempDir(), "checkpoint.json")
		if err := cp.Save(path); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(cp)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("saved:\n%s\njson.Marshal:\n%s", got, want)
		}
		back, err := LoadCheckpoint(path)
		if err != nil || len(back.Used) != len(used) {
			t.Fatalf("loaded %v, %v", back, err)
		}
	}
}
