package verify

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
)

// randomTrees writes random trees into a fresh repository: names from a
// small pool (files and directories of one name, case variants, .key
// files, .gitattributes), subtrees often shared, so that diffs of two of
// them skip equal subtrees, see files become directories and the other
// way, and reach and miss the rules' directories.
type randomTrees struct {
	tb    testing.TB
	repo  *gitrepo.Repo
	rnd   *rand.Rand
	blobs []gitrepo.Hash
	// made keeps the subtrees written at each depth, for reuse.
	made [4][]gitrepo.Hash
}

var randomNames = []string{"src", "crypto", "Crypto", "a.key", "B.KEY", "k.key", "doc", "x", "y.c", ".gitattributes", ".gitmodules", "deep", "é.key"}

func newRandomTrees(tb testing.TB, seed uint64) *randomTrees {
	tb.Helper()
	dir := tb.TempDir()
	cmd := exec.Command("git", "init", "-q", "--bare", dir)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("git init: %v: %s", err, out)
	}
	repo, err := gitrepo.OpenWithEnv(dir, cmd.Env)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { repo.Close() })
	rt := &randomTrees{tb: tb, repo: repo, rnd: rand.New(rand.NewPCG(seed, 1))}
	for i := range 3 {
		h, err := repo.WriteObject("blob", fmt.Appendf(nil, "%d\n", i))
		if err != nil {
			tb.Fatal(err)
		}
		rt.blobs = append(rt.blobs, h)
	}
	return rt
}

// tree writes a random tree of at most 3-depth levels below it.
func (rt *randomTrees) tree(depth int) gitrepo.Hash {
	if made := rt.made[depth]; len(made) > 0 && rt.rnd.IntN(3) == 0 {
		return made[rt.rnd.IntN(len(made))]
	}
	var ents []gitrepo.TreeEntry
	for _, name := range randomNames {
		if rt.rnd.IntN(2) == 0 {
			continue
		}
		if depth < 3 && rt.rnd.IntN(2) == 0 {
			ents = append(ents, gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: name, Hash: rt.tree(depth + 1)})
			continue
		}
		ents = append(ents, gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: name, Hash: rt.blobs[rt.rnd.IntN(len(rt.blobs))]})
	}
	h, err := rt.repo.WriteTree(ents)
	if err != nil {
		rt.tb.Fatal(err)
	}
	rt.made[depth] = append(rt.made[depth], h)
	return h
}

// TestWalkedRulesMatchListed (differential): judging a diff's paths while
// walking it (measuredChanges with nothing listed; each rule asked only
// in the directories its own scope reaches) says for every rule what
// matching the sorted list says (coveredPaths): how many files the rule
// covers, the first maxShownPaths of them, and so the same refusal text;
// under the rules' scope and without one (then only the rules' own
// scopes prune the walk). GIT_SECURE_WALK_SEEDS runs more seeds.
func TestWalkedRulesMatchListed(t *testing.T) {
	rules := []*policy.Rule{
		{Name: "keys", Paths: []string{"**/*.key"}},
		{Name: "crypto", Paths: []string{"src/crypto/**"}},
		{Name: "one", Paths: []string{"doc/x"}},
		{Name: "deep", Paths: []string{"deep/*/y.c", "src/**/a.key"}},
		{Name: "none", Paths: []string{"nowhere/**"}},
		{Name: "case", Paths: []string{"Src/CRYPTO/*.key", "DOC/**/X"}},
		{Name: "untrusted", Paths: []string{"x/**"}, Untrusted: "its rule file is not signed"},
	}
	many := 0 // rules that cover more files than a refusal names
	seeds := uint64(10)
	if n, err := strconv.ParseUint(os.Getenv("GIT_SECURE_WALK_SEEDS"), 10, 64); err == nil {
		seeds = n
	}
	for seed := range seeds {
		rt := newRandomTrees(t, seed)
		trees := []gitrepo.Hash{gitrepo.ZeroHash}
		for range 6 {
			trees = append(trees, rt.tree(0))
		}
		for _, scope := range []*policy.PathScope{nil, policy.NewPathScope(rules)} {
			for i, a := range trees {
				for _, b := range trees[i+1:] {
					listed, err := changesIn(rt.repo, a, b, scope, rules)
					if err != nil {
						t.Fatal(err)
					}
					want, err := changedPathsIn(rt.repo, a, b, scope)
					if err != nil {
						t.Fatal(err)
					}
					if listed.hits != nil || !slices.Equal(listed.paths, want) {
						t.Fatalf("seed %d: a small diff was not listed as ChangedPaths lists it", seed)
					}
					pd, err := rt.repo.MeasureChangedPaths(a, b, filterOf(scope))
					if err != nil {
						t.Fatal(err)
					}
					walked, err := measuredChanges(pd, rules, 0)
					if err != nil {
						t.Fatal(err)
					}
					if walked.n != len(want) || (len(want) > 0 && walked.hits == nil) {
						t.Fatalf("seed %d: walked %d paths (hits %v), want %d walked", seed, walked.n, walked.hits != nil, len(want))
					}
					for _, r := range rules {
						all := matchPaths(r, want)
						if len(all) > maxShownPaths {
							many++
						}
						first, n := coveredIn(rt.repo, r, walked)
						if n != len(all) || !slices.Equal(first, all[:min(len(all), maxShownPaths)]) {
							t.Fatalf("seed %d, %s..%s, scope %v, rule %s: walked %d files, first %q; the list has %d: %q", seed, a, b, scope != nil, r.Name, n, first, len(all), all)
						}
						old, now := describeOf(RuleDecision{Rule: r, Paths: all}), describeOf(RuleDecision{Rule: r, Paths: first, PathCount: n})
						if old != now {
							t.Fatalf("seed %d, rule %s: the refusal says %q, listed it said %q", seed, r.Name, now, old)
						}
					}
				}
			}
		}
	}
	if many == 0 {
		t.Fatal("no rule covered more files than a refusal names: the trees are too small to test the first paths kept")
	}
	t.Logf("%d rule judgements covered more than %d files", many, maxShownPaths)
}

func describeOf(rd RuleDecision) string {
	var b strings.Builder
	describePaths(&b, rd)
	return b.String()
}

// TestRuleHitsKeepsFirst: a rule's first paths are the smallest in byte
// order whatever order the walk gives them in, and every path counts.
func TestRuleHitsKeepsFirst(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var paths []string
		for range rnd.IntN(20) {
			paths = append(paths, fmt.Sprintf("p/%c%d", 'a'+rnd.IntN(5), rnd.IntN(4)))
		}
		var h ruleHits
		for _, p := range paths {
			h.add(p)
		}
		sorted := slices.Clone(paths)
		slices.Sort(sorted)
		if h.n != len(paths) || !slices.Equal(h.first, sorted[:min(len(sorted), maxShownPaths)]) {
			t.Fatalf("after %q: %d paths, first %q; want %d, %q", paths, h.n, h.first, len(paths), sorted[:min(len(sorted), maxShownPaths)])
		}
	}
}

// TestTreeBombJudgedWithoutList: a diff of a tree bomb within the
// differ's bounds (4 levels of 24 entries of 40-byte names: 331 776
// paths, 54 MB of names, 59 MB as a list) under directories **/*.key
// reaches is judged while it is walked: what it keeps is the count and a
// few paths per rule, not the list (before, changedFiles returned all of
// it and coveredPaths a second list of the rule's files).
func TestTreeBombJudgedWithoutList(t *testing.T) {
	rt := newRandomTrees(t, 0)
	child := rt.keyBomb()
	rules := []*policy.Rule{{Name: "keys", Paths: []string{"**/*.key"}}, {Name: "crypto", Paths: []string{"src/crypto/**"}}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ch, err := changesIn(rt.repo, gitrepo.ZeroHash, child, policy.NewPathScope(rules), rules)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	const paths = 24 * 24 * 24 * 24
	first, n := coveredIn(rt.repo, rules[0], ch)
	var want []string
	for i := range maxShownPaths {
		comp := func(n int, c byte) string { return fmt.Sprintf("%02d", n) + strings.Repeat(string(c), 34) + ".key" }
		want = append(want, comp(0, 'd')+"/"+comp(0, 'c')+"/"+comp(0, 'b')+"/"+comp(i, 'a'))
	}
	if ch.n != paths || n != paths || !slices.Equal(first, want) {
		t.Errorf("the bomb changes %d paths, rule keys covers %d, first %q; want %d, all, first %q", ch.n, n, first, paths, want)
	}
	if _, n := coveredIn(rt.repo, rules[1], ch); n != 0 {
		t.Errorf("rule crypto covers %d of the bomb's files, want none", n)
	}
	if held > 4<<20 {
		t.Errorf("judging the bomb's diff holds %d MB; want its count and a few paths (under 4 MB), not its list", held>>20)
	}
	runtime.KeepAlive(ch)
}

// keyBomb writes a tree of 4 levels of 24 entries of 40-byte names ending
// in .key, each level's entries naming the next level's one tree: 331 776
// paths, 54 MB of names, too many to list.
func (rt *randomTrees) keyBomb() gitrepo.Hash {
	child, mode := rt.blobs[0], uint32(gitrepo.ModeFile)
	for lvl := range 4 {
		var ents []gitrepo.TreeEntry
		for i := range 24 {
			name := fmt.Sprintf("%02d", i) + strings.Repeat(string(rune('a'+lvl)), 34) + ".key"
			ents = append(ents, gitrepo.TreeEntry{Mode: mode, Name: name, Hash: child})
		}
		var err error
		if child, err = rt.repo.WriteTree(ents); err != nil {
			rt.tb.Fatal(err)
		}
		mode = gitrepo.ModeTree
	}
	return child
}

// commit writes a commit of tree.
func (rt *randomTrees) commit(tree gitrepo.Hash) gitrepo.Hash {
	h, err := rt.repo.WriteObject("commit", fmt.Appendf(nil, "tree %s\nauthor a <a@x> 1700000000 +0000\ncommitter a <a@x> 1700000000 +0000\n\nc\n", tree))
	if err != nil {
		rt.tb.Fatal(err)
	}
	return h
}

// TestNewRefBombWalkedPerTargets: a new ref's rules are judged against
// the recorded targets of the refs each covers; a diff too large to list
// is walked once per set of targets, for the rules that share it only.
func TestNewRefBombWalkedPerTargets(t *testing.T) {
	rt := newRandomTrees(t, 0)
	bomb := rt.commit(rt.keyBomb())
	base := rt.commit(gitrepo.ZeroHash)
	rules := []*policy.Rule{
		{Name: "keys", Paths: []string{"**/*.key"}},
		{Name: "first", Paths: []string{"**/00*.key"}},
		{Name: "other", Paths: []string{"**/*.key"}},
	}
	targets := func(r *policy.Rule) []gitrepo.Hash {
		if r.Name == "other" {
			return []gitrepo.Hash{base}
		}
		return nil
	}
	d := newDiffCache(rt.repo, nil)
	c := changeCache{src: d, t: Transition{Ref: "refs/heads/new", New: bomb}, in: Inputs{RecordedTargets: targets}, scope: policy.NewPathScope(rules), rules: rules}
	const all = 24 * 24 * 24 * 24
	for _, tt := range []struct {
		rule   int
		n      int
		judged int
	}{{0, all, 2}, {1, all / 24, 2}, {2, all, 1}} {
		ch, err := c.files(rules[tt.rule])
		if err != nil {
			t.Fatal(err)
		}
		if _, n := coveredIn(d, rules[tt.rule], ch); n != tt.n || len(ch.hits) != tt.judged {
			t.Errorf("rule %s: covers %d files, its walk judged %d rules; want %d files, %d rules", rules[tt.rule].Name, n, len(ch.hits), tt.n, tt.judged)
		}
	}
	if d.computed != 2 {
		t.Errorf("%d diffs computed, want one per set of targets (2)", d.computed)
	}
}
