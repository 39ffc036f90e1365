package verify_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// logReadsRepo counts the reads of the log's entry commits one by one.
type logReadsRepo struct {
	*gitrepo.Repo
	log   map[gitrepo.Hash]bool
	reads int
}

func (c *logReadsRepo) ReadCommit(h gitrepo.Hash) (*gitrepo.Commit, error) {
	if c.log[h] {
		c.reads++
	}
	return c.Repo.ReadCommit(h)
}

// Protected refs moved past the log are classified (rollback, teleport,
// changed without an entry) from one walk of the log, not one walk per
// ref: a remote serving 800 moved tags; branches here made a fresh clone read the log
// 800 times (attack session 15, 04).
func TestMismatchesOneLogWalk(t *testing.T) {
	f := NewScenarioTemplate(t).Clone(t)
	f.AddRule(policy.Rule{Name: "releases", Refs: []string{"refs/heads/r*"}, Allow: []string{"alice"}, Threshold: 1})
	f.Apply("alice")
	const k = 8
	base := f.Ref("refs/heads/main")
	commits := make([]gitrepo.Hash, k+1)
	for i := range commits {
		commits[i] = f.NewCommit(base, fmt.Sprintf("c%d", i))
	}
	for i := 1; i <= k; i++ {
		f.SetRef(fmt.Sprintf("refs/heads/r%d", i), commits[i])
		f.Record("alice", fmt.Sprintf("refs/heads/r%d", i))
	}
	// r1 goes back to a value it had (rollback), r2 to r3's (teleport),
	// the others to a commit the log never recorded.
	f.SetRef("refs/heads/r1", commits[0])
	f.Record("alice", "refs/heads/r1")
	repo := &logReadsRepo{Repo: f.G, log: map[gitrepo.Hash]bool{}}
	tip := f.Ref(rsl.Ref)
	if err := rsl.WalkBack(f.G, tip, func(rec *rsl.Record) (bool, error) {
		repo.log[rec.ID] = true
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := verify.Verify(repo, verify.Options{Now: ScenarioNow}); err != nil {
		t.Fatal(err)
	}
	clean := repo.reads
	f.SetRef("refs/heads/r1", commits[1])
	f.SetRef("refs/heads/r2", commits[3])
	stray := f.NewCommit(base, "stray")
	for i := 3; i <= k; i++ {
		f.SetRef(fmt.Sprintf("refs/heads/r%d", i), stray)
	}
	repo.reads = 0
	_, err := verify.Verify(repo, verify.Options{Now: ScenarioNow})
	_, failed := ScenarioWantProblem(t, err, verify.ErrUnrecorded, "refs/heads/r1", "rollback")
	ScenarioWantProblem(t, err, verify.ErrUnrecorded, "refs/heads/r2", "which the log records for refs/heads/r3", "teleport")
	for i := 3; i <= k; i++ {
		ScenarioWantProblem(t, err, verify.ErrUnrecorded, fmt.Sprintf("refs/heads/r%d", i), "changed without an entry")
	}
	if len(failed.Problems) != k {
		var all []string
		for _, p := range failed.Problems {
			all = append(all, p.Error())
		}
		t.Errorf("want %d problems, got:\n%s", k, strings.Join(all, "\n"))
	}
	// What the verification of the same log reads anyway, and one walk
	// more for the mismatches.
	if n := len(repo.log); repo.reads > clean+n {
		t.Errorf("the log's %d entries were read %d times one by one for %d moved refs (%d when none moved): want one walk more", n, repo.reads, k, clean)
	}
}
