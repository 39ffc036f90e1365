package verify_test

import (
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/verify"
)

// countingRepo counts the reads of one commit.
type countingRepo struct {
	*gitrepo.Repo
	commit gitrepo.Hash
	reads  int
}

func (c *countingRepo) ReadCommit(h gitrepo.Hash) (*gitrepo.Commit, error) {
	if h == c.commit {
		c.reads++
	}
	return c.Repo.ReadCommit(h)
}

// Options.Loaded (the server's hook passes the policy it read for the
// push) replaces the checkpoint's own read of its policy commit, and only
// for that commit: the result is the same as without it.
func TestLoadedPolicyStartsTheCheckpoint(t *testing.T) {
	f := NewScenarioTemplate(t).Clone(t)
	if _, err := verify.WithCheckpoint(f.G, verify.Options{Now: ScenarioNow}, false); err != nil {
		t.Fatal(err)
	}
	f.SetRef("refs/heads/x", f.NewCommit(f.Ref("refs/heads/main"), "x1"))
	f.Record("alice", "x")
	cp, err := verify.Checkpoints(f.G.GitDir()).Load()
	if err != nil || cp == nil {
		t.Fatalf("checkpoint: %v, %v", cp, err)
	}
	pol, err := policy.LoadSigned(f.G, cp.PolicyCommit, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := func(opts verify.Options) (*verify.Result, int) {
		t.Helper()
		opts.Now = ScenarioNow
		repo := &countingRepo{Repo: f.G, commit: cp.PolicyCommit}
		// A store that keeps the checkpoint as it is: every run starts
		// from it.
		res, err := verify.WithStore(repo, fixedStore{cp}, opts, false)
		if err != nil {
			t.Fatal(err)
		}
		return res, repo.reads
	}
	plain, plainReads := run(verify.Options{})
	with, withReads := run(verify.Options{Loaded: pol, LoadedCommit: cp.PolicyCommit})
	other, otherReads := run(verify.Options{Loaded: pol, LoadedCommit: f.Ref("refs/heads/main")})
	if withReads >= plainReads || otherReads != plainReads {
		t.Errorf("reads of the policy commit: %d without Loaded, %d with it, %d with it for another commit", plainReads, withReads, otherReads)
	}
	for _, r := range []*verify.Result{with, other} {
		if r.Entries != plain.Entries || r.PolicyEntry != plain.PolicyEntry || r.RulesVersion != plain.RulesVersion {
			t.Errorf("result %+v differs from %+v", r, plain)
		}
	}
}

// fixedStore loads cp and saves nothing.
type fixedStore struct{ cp *verify.Checkpoint }

func (s fixedStore) Load() (*verify.Checkpoint, error) { return s.cp, nil }
func (s fixedStore) Save(*verify.Checkpoint) error     { return nil }

func (fixedStore) AppendIndex(int64) (verify.IndexAppender, error) { return nil, verify.ErrNoIndex }
func (fixedStore) ReadIndex(uint64) ([]byte, error)                { return nil, verify.ErrNoIndex }
