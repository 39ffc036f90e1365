package verify_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/verify"
)

// flipFixture makes refs/heads/flip (alice's alone) flip between main's
// tree and the same tree plus a directory big/ of width files (one blob),
// recorded by alice flips times, under a path rule on big/** (so every
// entry's changed files are computed). It returns the fixture and the
// number of the last entry before the flips.
func flipFixture(t *testing.T, width, flips int) (*ScenarioFixture, uint64) {
	f := NewScenarioTemplate(t).Clone(t)
	f.AddRule(policy.Rule{Name: "flip", Refs: []string{"refs/heads/flip"}, Allow: []string{"alice"}, Threshold: 1})
	f.AddRule(policy.Rule{Name: "crypto", Paths: []string{"big/**", "src/crypto/**"}, Allow: []string{"alice"}, Threshold: 1})
	f.Apply("alice")
	blob := strings.TrimSpace(f.S.Git(f.Dir, "hash-object", "-w", "--stdin"))
	var big strings.Builder
	for i := 0; i < width; i++ {
		fmt.Fprintf(&big, "100644 blob %s\tf%07d\n", blob, i)
	}
	bigTree := strings.TrimSpace(runStdin(t, f, big.String(), "mktree"))
	root := f.S.Git(f.Dir, "ls-tree", "HEAD") + "\n040000 tree " + bigTree + "\tbig\n"
	withBig := strings.TrimSpace(runStdin(t, f, root, "mktree"))
	main := f.Ref("refs/heads/main")
	a := scenarioHash(t, f.S.Git(f.Dir, "commit-tree", withBig, "-p", main.String(), "-m", "with big"))
	b := scenarioHash(t, f.S.Git(f.Dir, "commit-tree", main.String()+"^{tree}", "-p", a.String(), "-m", "without big"))
	_, before := f.Tip()
	for i := 0; i < flips; i++ {
		to := a
		if i%2 == 1 {
			to = b
		}
		f.S.Git(f.Dir, "update-ref", "refs/heads/flip", to.String())
		f.Record("alice", "refs/heads/flip")
	}
	return f, before.Number
}

func runStdin(t *testing.T, f *ScenarioFixture, stdin string, args ...string) string {
	t.Helper()
	out, err := f.S.RunErr(f.Dir, []byte(stdin), "git", args...)
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return out
}

// TestDiffsComputedOncePerPair: a branch flipped between two trees costs
// one diff per pair of trees, however many entries flip it (each entry
// used to diff again: 61 flips with a million-entry directory kept a
// server busy for minutes).
func TestDiffsComputedOncePerPair(t *testing.T) {
	const flips = 12
	f, _ := flipFixture(t, 2000, flips)
	res, err := f.Verify(verify.Options{})
	var failed *verify.Failed
	if err != nil && !errors.As(err, &failed) {
		t.Fatal(err)
	}
	if failed != nil {
		for _, p := range failed.Problems {
			if !errors.Is(p, verify.ErrThreshold) {
				t.Fatalf("unexpected problem: %v", p)
			}
		}
	}
	// The pairs: main before -> with big, then with big <-> without big
	// (one pair both ways), plus the template's own entries' diffs.
	if res.Diffs > 4 {
		t.Errorf("%d flips computed %d tree diffs; want each pair of trees diffed once (at most 4)", flips, res.Diffs)
	}
}

// TestBudget: the new entries' diffs are charged to the budget, and a
// verification that spends it fails closed naming the entry; entries
// before the budget's start are never charged.
func TestBudget(t *testing.T) {
	f, before := flipFixture(t, 3000, 4)
	_, err := f.Verify(verify.Options{Budget: &verify.Budget{After: before, MaxPaths: 2500}})
	p, _ := ScenarioWantProblem(t, err, verify.ErrBudget, "more than 2500 paths")
	if p.Entry != before+1 || p.Ref != "refs/heads/flip" || !strings.Contains(p.Hint, "secure.maxPushPaths") || strings.Contains(p.Hint, "maxPushSeconds") {
		t.Errorf("problem %+v: want entry #%d, refs/heads/flip and a hint naming secure.maxPushPaths only", p, before+1)
	}
	// The diff that spent it is no unreadable object (the stranger's
	// refusal said so, with a hint to rewrite history), and the problem
	// says "budget exceeded" once.
	wantOneBudgetProblem(t, err, "paths budget")
	// The same log, already accepted (the budget starts after it).
	_, last := f.Tip()
	_, err = f.Verify(verify.Options{Budget: &verify.Budget{After: last.Number, MaxPaths: 2500}})
	var failed *verify.Failed
	if errors.As(err, &failed) {
		for _, p := range failed.Problems {
			if errors.Is(p, verify.ErrBudget) {
				t.Errorf("an entry before the budget's start was charged: %v", p)
			}
		}
	}
	// Enough budget: the cache serves the flips back and forth.
	if _, err := f.Verify(verify.Options{Budget: &verify.Budget{After: before, MaxPaths: 6500}}); errors.Is(err, verify.ErrBudget) {
		t.Errorf("4 flips of one pair of trees spent more than two diffs' worth: %v", err)
	}
}

// TestBudgetBoundsStoreHistoryWalk: an entry that fails on the store's tip
// makes verification walk the store's history (approvals a commit dropped
// still count); for an entry charged to a push's budget that walk's
// comparisons count against it, so a store history built to be costly
// fails the push with ErrBudget instead of keeping the server busy.
func TestBudgetBoundsStoreHistoryWalk(t *testing.T) {
	f := NewScenarioTemplate(t).Clone(t)
	_, before := f.Tip()
	to := f.CommitMain("approved change")
	f.Record("alice", "refs/heads/main")
	f.Approve("bob", "refs/heads/main", to, "")
	f.MustVerify(verify.Options{})
	// The store wiped on top (as on a server without the hook).
	store := f.Ref("refs/secure/attestations")
	empty := strings.TrimSpace(f.S.Git(f.Dir, "hash-object", "-t", "tree", "-w", "--stdin"))
	wiped := f.S.Git(f.Dir, "commit-tree", empty, "-p", store.String(), "-m", "wipe")
	f.SetRef("refs/secure/attestations", scenarioHash(t, wiped))
	// Unbounded: the union over the history still counts bob's approval.
	f.MustVerify(verify.Options{})
	// Charged to a budget of one path, with no earlier walk kept (a
	// server meets such a history in a push): the walk stops, the push
	// fails.
	if err := os.Remove(filepath.Join(f.Dir, ".git", "secure", "attestations-history")); err != nil {
		t.Fatal(err)
	}
	_, err := f.Verify(verify.Options{Budget: &verify.Budget{After: before.Number, MaxPaths: 1}})
	ScenarioWantProblem(t, err, verify.ErrBudget, "history")
}

// wantOneBudgetProblem: err's problems hold one ErrBudget, saying which
// budget (what) and "budget exceeded" once, and no object problem.
func wantOneBudgetProblem(t *testing.T, err error, what string) {
	t.Helper()
	var failed *verify.Failed
	if !errors.As(err, &failed) {
		t.Fatalf("want *verify.Failed, got %v", err)
	}
	n := 0
	for _, p := range failed.Problems {
		if errors.Is(p, verify.ErrBadObject) || errors.Is(p, verify.ErrMissingObject) {
			t.Errorf("a spent budget is reported as an object problem: %v [hint: %s]", p, p.Hint)
		}
		if errors.Is(p, verify.ErrBudget) {
			n++
			if c := strings.Count(p.Error(), "budget exceeded"); c != 1 || !strings.Contains(p.Error(), what) {
				t.Errorf("budget problem %q: want %q and \"budget exceeded\" once (%d)", p.Error(), what, c)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d budget problems, want 1: %s", n, scenarioDescribe(err))
	}
}

// TestTimeBudgetSaysSo: a push whose verification runs out of time is
// refused as such, naming the one key that raises the bound.
func TestTimeBudgetSaysSo(t *testing.T) {
	f, before := flipFixture(t, 100, 2)
	_, err := f.Verify(verify.Options{Budget: &verify.Budget{After: before, Deadline: time.Now().Add(-time.Second)}})
	p, _ := ScenarioWantProblem(t, err, verify.ErrBudget, "time budget")
	if !strings.Contains(p.Hint, "git config secure.maxPushSeconds") || strings.Contains(p.Hint, "maxPushPaths") {
		t.Errorf("hint %q: want the one key that raises the time bound, secure.maxPushSeconds", p.Hint)
	}
	wantOneBudgetProblem(t, err, "time budget")
}
