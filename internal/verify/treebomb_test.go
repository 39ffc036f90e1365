package verify_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// bombCommit makes a commit on main whose tree is main's plus a directory
// bomb/ of depth levels of fan entries with names of nameLen bytes, each
// level's entries all naming the next level's one tree (notes/attacks 01
// and 04: four trees of 31 entries of 100-byte names, 15 KiB, list 923 521
// paths of 400 bytes).
func bombCommit(t testing.TB, f *ScenarioFixture, depth, nameLen, fan int) gitrepo.Hash {
	t.Helper()
	g := f.G
	child, err := g.WriteObject("blob", []byte("x\n"))
	if err != nil {
		t.Fatal(err)
	}
	mode := uint32(gitrepo.ModeFile)
	for lvl := range depth {
		var ents []gitrepo.TreeEntry
		for i := range fan {
			ents = append(ents, gitrepo.TreeEntry{Mode: mode, Name: fmt.Sprintf("%02d", i) + strings.Repeat(string(rune('a'+lvl)), nameLen-2), Hash: child})
		}
		if child, err = g.WriteTree(ents); err != nil {
			t.Fatal(err)
		}
		mode = gitrepo.ModeTree
	}
	main := f.Ref("refs/heads/main")
	top, err := g.ReadTree(scenarioHash(t, f.S.Git(f.Dir, "rev-parse", main.String()+"^{tree}")))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := g.WriteTree(append(top, gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: "bomb", Hash: child}))
	if err != nil {
		t.Fatal(err)
	}
	return scenarioHash(t, f.S.Git(f.Dir, "commit-tree", tree.String(), "-p", main.String(), "-m", "bomb"))
}

// bombFixture: carol may move refs/heads/dev alone; path rule crypto
// (src/crypto/**, alice) covers main and dev; main needs 2 of alice, bob,
// carol.
func bombFixture(t testing.TB, paths ...string) *ScenarioFixture {
	f := NewScenarioTemplate(t).Clone(t)
	f.AddRule(policy.Rule{Name: "dev", Refs: []string{"refs/heads/dev"}, Allow: []string{"carol"}, Threshold: 1})
	f.AddRule(policy.Rule{Name: "crypto", Paths: append([]string{"src/crypto/**"}, paths...), Allow: []string{"alice"}, Threshold: 1})
	f.Apply("alice")
	return f
}

// TestTreeBombUnderUnprotectedPathsStaysCheap (attack 01): an entry that
// adds a tree bomb outside every path rule's patterns is accepted, and its
// diff skips bomb/: a handful of trees read, not the 923 521 paths.
func TestTreeBombUnderUnprotectedPathsStaysCheap(t *testing.T) {
	f := bombFixture(t)
	before := f.MustVerify(verify.Options{})
	bomb := bombCommit(t, f, 4, 100, 31)
	f.Forge("carol", &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/dev", New: bomb},
		gitrepo.RefUpdate{Name: "refs/heads/dev", New: bomb})
	res := f.MustVerify(verify.Options{})
	if work := res.DiffTrees - before.DiffTrees; work > 20 {
		t.Errorf("the bomb's entry cost the diffs %d tree reads and walks; want the top trees only (at most 20)", work)
	}
}

// TestTreeBombUnderProtectedPathsRefused: a tree bomb a path rule's
// patterns reach is refused while the diff is measured: the problem names
// the entry, the ref, the rule, the bound and what to do, and few trees
// were read.
func TestTreeBombUnderProtectedPathsRefused(t *testing.T) {
	f := bombFixture(t, "**/*.key")
	before := f.MustVerify(verify.Options{})
	bomb := bombCommit(t, f, 4, 100, 31)
	n := f.Forge("carol", &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/dev", New: bomb},
		gitrepo.RefUpdate{Name: "refs/heads/dev", New: bomb})
	p, _ := f.MustFail(verify.Options{}, verify.ErrBadObject, "refs/heads/dev", "rule crypto", "more than 128 MiB of changed path names")
	if p.Entry != n || !strings.Contains(p.Hint, "several entries") || !strings.Contains(p.Hint, "docs/scaling.md") {
		t.Errorf("problem %v (hint %q): want entry #%d and a hint to split the change, naming docs/scaling.md", p, p.Hint, n)
	}
	res, _ := f.Verify(verify.Options{})
	if work := res.DiffTrees - before.DiffTrees; work > 20 {
		t.Errorf("refusing the bomb cost %d tree reads and walks; want at most 20", work)
	}
}

// TestFailingRefRuleComputesNoDiff (attack 04): carol, with no right to
// move main alone, records main = main + a tree bomb under src/crypto.
// protect-main fails without a diff: the path rule is reported as not
// checked, and no diff is computed for the entry.
func TestFailingRefRuleComputesNoDiff(t *testing.T) {
	f := bombFixture(t)
	before := f.MustVerify(verify.Options{})
	bomb := bombCommit(t, f, 4, 100, 31)
	n := f.Forge("carol", &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/main", Old: f.Ref("refs/heads/main"), New: bomb},
		gitrepo.RefUpdate{Name: "refs/heads/main", Old: f.Ref("refs/heads/main"), New: bomb})
	p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, "rule protect-main", "path rule crypto not checked")
	if p.Entry != n {
		t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
	}
	res, _ := f.Verify(verify.Options{})
	if res.Diffs != before.Diffs || res.DiffTrees != before.DiffTrees {
		t.Errorf("the refused entry computed %d diffs (%d trees); want none", res.Diffs-before.Diffs, res.DiffTrees-before.DiffTrees)
	}
	// Once bob approves, the path rule is judged (and met: no file under
	// src/crypto changed), and the diff of bomb/ is skipped.
	f.Approve("bob", "refs/heads/main", bomb, "")
	res = f.MustVerify(verify.Options{})
	if work := res.DiffTrees - before.DiffTrees; res.Diffs == before.Diffs || work > 20 {
		t.Errorf("approved: %d diffs, %d trees read and walked; want the path rule judged, at most 20 trees", res.Diffs-before.Diffs, work)
	}
}

// BenchmarkVerifyTreeBomb: a verification whose log ends in an entry that
// adds a tree bomb within the differ's bounds (4 levels of 27 entries of
// 40-byte names: 531 441 paths of 163 bytes, 87 MB of names) under
// directories path rule **/*.key reaches, none of whose files it covers:
// the entry verifies, but the rule must be asked about every changed
// path. GIT_SECURE_BENCH_KEEP=DIR keeps a copy of the repository there.
// Metrics: peak-heap-MB (largest live heap seen while verifying),
// B/op, allocs/op.
//
//	go test -run '^$' -bench TreeBomb -benchtime 3x ./internal/verify
func BenchmarkVerifyTreeBomb(b *testing.B) {
	f := bombFixture(b, "**/*.key")
	bomb := bombCommit(b, f, 4, 40, 27)
	f.Forge("carol", &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/dev", New: bomb},
		gitrepo.RefUpdate{Name: "refs/heads/dev", New: bomb})
	f.MustVerify(verify.Options{}) // warm-up: git cat-file started
	if dir := os.Getenv("GIT_SECURE_BENCH_KEEP"); dir != "" {
		// A copy to measure git secure verify on (peak RSS).
		if out, err := exec.Command("cp", "-a", f.Dir, dir).CombinedOutput(); err != nil {
			b.Fatalf("keep the repository: %v: %s", err, out)
		}
	}
	runtime.GC()
	stop := peakHeap()
	b.ReportAllocs()
	for b.Loop() {
		f.MustVerify(verify.Options{})
	}
	b.ReportMetric(float64(stop())/(1<<20), "peak-heap-MB")
}
