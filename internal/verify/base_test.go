package verify

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// ancestrySource counts what choosing a new ref's base asks the
// repository: peels of recorded targets, merge bases (and the commits
// each is given), reductions to independent commits.
type ancestrySource struct {
	Source
	peels, mergeBases, maxMergeBaseArgs, reductions, reductionArgs int
}

func (s *ancestrySource) PeelToCommit(h gitrepo.Hash) (gitrepo.Hash, error) {
	s.peels++
	return s.Source.PeelToCommit(h)
}

func (s *ancestrySource) MergeBase(a gitrepo.Hash, others ...gitrepo.Hash) (gitrepo.Hash, bool, error) {
	s.mergeBases++
	s.maxMergeBaseArgs = max(s.maxMergeBaseArgs, len(others))
	return s.Source.MergeBase(a, others...)
}

func (s *ancestrySource) Independent(hs ...gitrepo.Hash) ([]gitrepo.Hash, error) {
	s.reductions++
	s.reductionArgs += len(hs)
	return s.Source.(independentSource).Independent(hs...)
}

// manyTags is a repository whose main has commits commits (every tenth
// changes doc/, the others src/), a side branch forked at main~5 with a
// doc/ change, and tags tags on main's commits (several per commit, half
// of them annotated): what a project with many release tags records.
type manyTags struct {
	repo  *gitrepo.Repo
	main  []gitrepo.Hash // oldest first
	side  gitrepo.Hash
	tags  []gitrepo.Hash // recorded targets, tag objects for annotated tags
	other gitrepo.Hash   // a root commit sharing no history
}

func newManyTags(tb testing.TB, commits, tags int) *manyTags {
	tb.Helper()
	dir := tb.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@x")
	git := func(stdin string, args ...string) string {
		tb.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("", "init", "-q", "-b", "main")
	var fi strings.Builder
	for i := 1; i <= commits; i++ {
		path := fmt.Sprintf("src/f%d", i%7)
		if i%10 == 0 {
			path = "doc/d"
		}
		fmt.Fprintf(&fi, "commit refs/heads/main\nmark :%d\ncommitter a <a@x> %d +0000\ndata 2\nc\n", i, 1700000000+i)
		if i > 1 {
			fmt.Fprintf(&fi, "from :%d\n", i-1)
		}
		fmt.Fprintf(&fi, "M 100644 inline %s\ndata %d\n%d\n\n", path, len(fmt.Sprint(i))+1, i)
	}
	fmt.Fprintf(&fi, "commit refs/heads/side\ncommitter a <a@x> %d +0000\ndata 2\ns\nfrom :%d\nM 100644 inline doc/side\ndata 2\ns\n\n", 1800000000, commits-5)
	fmt.Fprintf(&fi, "commit refs/heads/other\ncommitter a <a@x> %d +0000\ndata 2\no\nM 100644 inline doc/o\ndata 2\no\n\n", 1800000001)
	git(fi.String(), "fast-import", "--quiet")
	m := &manyTags{}
	for _, l := range strings.Fields(git("", "rev-list", "--reverse", "main")) {
		m.main = append(m.main, scenarioHashOf(tb, l))
	}
	m.side = scenarioHashOf(tb, git("", "rev-parse", "side"))
	m.other = scenarioHashOf(tb, git("", "rev-parse", "other"))
	var up strings.Builder
	for i := 0; i < tags; i++ {
		c := m.main[i%len(m.main)]
		if i%2 == 1 {
			git("", "tag", "-a", "-m", "t", fmt.Sprintf("a%d", i), c.String())
			m.tags = append(m.tags, scenarioHashOf(tb, git("", "rev-parse", fmt.Sprintf("refs/tags/a%d", i))))
			continue
		}
		fmt.Fprintf(&up, "create refs/tags/l%d %s\n", i, c)
		m.tags = append(m.tags, c)
	}
	git(up.String(), "update-ref", "--stdin")
	repo, err := gitrepo.OpenWithEnv(filepath.Join(dir, ".git"), env)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { repo.Close() })
	m.repo = repo
	return m
}

func scenarioHashOf(tb testing.TB, s string) gitrepo.Hash {
	tb.Helper()
	h, err := gitrepo.ParseHash(s)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// TestNewRefBaseBounded: with 500 recorded tags under a path rule, each
// new tag costs one merge base against the few commits that reach every
// target, and each target is peeled once for the whole run (before: 500
// peels and a merge base of 500 commits per new tag, a second and a half
// a tag at 3 000 tags); the files found changed are the same as with
// every target (BaseCache nil: the old way) for a new tag on an old
// commit of main, at main's tip, on top of it, off the side branch, and
// on a history of its own.
func TestNewRefBaseBounded(t *testing.T) {
	t.Parallel()
	const nTags, nNew = 500, 20
	m := newManyTags(t, 60, nTags)
	targets := append(slices.Clone(m.tags), m.side)
	src := &ancestrySource{Source: m.repo}
	var bases BaseCache
	news := []gitrepo.Hash{m.main[3], m.main[len(m.main)-1], m.side, m.other, m.main[55]}
	for i := 0; len(news) < nNew; i++ {
		news = append(news, m.main[(i*7)%len(m.main)])
	}
	for i, n := range news {
		got, err := changedSinceBase(src, &bases, n, targets, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := changedSinceBase(m.repo, nil, n, targets, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.paths, want.paths) {
			t.Fatalf("new tag %d at %s: changed %v, with every target %v", i, n, got, want)
		}
		targets = append(targets, n) // recorded: a target of the next
	}
	t.Logf("%d new tags over %d targets: %d peels, %d merge bases (at most %d commits each), %d reductions of %d commits in all",
		nNew, nTags+1, src.peels, src.mergeBases, src.maxMergeBaseArgs, src.reductions, src.reductionArgs)
	// Every distinct target peeled once (the new commits too).
	if limit := nTags + 1 + nNew; src.peels > limit {
		t.Errorf("%d peels for %d new tags over %d targets, want at most %d (one per target)", src.peels, nNew, nTags+1, limit)
	}
	if src.mergeBases != nNew {
		t.Errorf("%d merge bases for %d new tags, want one each", src.mergeBases, nNew)
	}
	// main's tip, the side branch, the other root and a new tag or two.
	if src.maxMergeBaseArgs > 4 {
		t.Errorf("a merge base was given %d commits, want the few independent ones", src.maxMergeBaseArgs)
	}
	if limit := 60 + 1 + nNew*5; src.reductionArgs > limit {
		t.Errorf("reductions were given %d commits in all, want at most %d (the distinct targets once, then the few tips and the new one)", src.reductionArgs, limit)
	}
}

// TestNewRefBaseMissingTarget: a recorded target that is not in the
// repository is no base (as before the cache), and is asked again, not
// remembered as absent.
func TestNewRefBaseMissingTarget(t *testing.T) {
	t.Parallel()
	m := newManyTags(t, 20, 10)
	gone := gitrepo.Hash{0xde, 0xad}
	var bases BaseCache
	for i := 0; i < 2; i++ {
		got, err := changedSinceBase(m.repo, &bases, m.other, []gitrepo.Hash{gone}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.paths, []string{"doc/o"}) {
			t.Fatalf("changed %v against a missing target only, want every file (doc/o) as from the empty tree", got)
		}
	}
	if bases.Peels != 2 {
		t.Fatalf("a missing target was peeled %d times in two asks, want 2", bases.Peels)
	}
}

// BenchmarkNewTagBase is the cost of choosing the base of one new tag
// under a path rule with N recorded tags: all-targets peels every target
// and asks one merge base of all of them (before); cached peels each
// target once and asks the merge base of their independent commits (a
// verifier or recording process judging its second and later new tag).
func BenchmarkNewTagBase(b *testing.B) {
	for _, n := range []int{500, 3000} {
		m := newManyTags(b, 300, n)
		b.Run(fmt.Sprintf("tags=%d/all-targets", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				if _, err := changedSinceBase(m.repo, nil, m.main[i%len(m.main)], m.tags, nil, nil); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(fmt.Sprintf("tags=%d/cached", n), func(b *testing.B) {
			var bases BaseCache
			i := 0
			for b.Loop() {
				if _, err := changedSinceBase(m.repo, &bases, m.main[i%len(m.main)], m.tags, nil, nil); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
