package verify_test

import (
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// The replay answers which of FindStates a ref entry records as its old
// or new state (what a fetch asks about the keep refs a remote serves),
// and says whether it read the whole log: not when it started from a
// checkpoint, whose entries it did not read.
func TestFindStates(t *testing.T) {
	f := NewScenarioTemplate(t).Clone(t)
	old := f.Ref("refs/heads/main")
	f.SetRef("refs/heads/feature", f.NewCommit(old, "feature"))
	f.Record("alice", "refs/heads/feature")
	feature := f.Ref("refs/heads/feature")
	junk := gitrepo.Hash{0xee}
	want := map[gitrepo.Hash]bool{feature: true, junk: true}

	res := f.MustVerify(verify.Options{FindStates: want})
	if !res.StatesComplete || len(res.FoundStates) != 1 || !res.FoundStates[feature] {
		t.Fatalf("whole log: found %v complete %v, want only %s and complete", res.FoundStates, res.StatesComplete, feature)
	}
	if res := f.MustVerify(verify.Options{}); res.StatesComplete || res.FoundStates != nil {
		t.Fatalf("nothing asked: found %v complete %v", res.FoundStates, res.StatesComplete)
	}

	store := verify.Checkpoints(f.G.GitDir())
	if _, err := verify.WithStore(f.G, store, verify.Options{Now: ScenarioNow}, false); err != nil {
		t.Fatal(err)
	}
	f.SetRef("refs/heads/feature", f.NewCommit(feature, "more"))
	f.Record("alice", "refs/heads/feature")
	res, err := verify.WithStore(f.G, store, verify.Options{Now: ScenarioNow, FindStates: want}, false)
	if err != nil {
		t.Fatal(err)
	}
	// The new entry records feature's old state; the checkpoint's entries
	// were not read, so junk is not known to be unrecorded.
	if res.StatesComplete || !res.FoundStates[feature] || res.FoundStates[junk] {
		t.Fatalf("from a checkpoint: found %v complete %v, want %s found, not complete", res.FoundStates, res.StatesComplete, feature)
	}
	if tip, _ := f.Tip(); res.Tip != tip || f.Ref(rsl.Ref) != tip {
		t.Fatalf("tip %s, want %s", res.Tip, tip)
	}
}
