package policy

import (
	"strings"
	"testing"
)

// TestPathScopeNeverSkipsCoveredPath: every directory above a path that a
// rule covers (CoversPath, with its case folds, the directories a pattern
// spells out, .gitattributes above its files) is reached by the rules'
// scope, and a directory that reports every is followed by nothing the
// scope would skip; directories far from every pattern are skipped.
func TestPathScopeNeverSkipsCoveredPath(t *testing.T) {
	rules := []*Rule{
		{Name: "crypto", Paths: []string{"src/crypto/**"}},
		{Name: "docs", Paths: []string{"docs/*.md", "a/b/c"}},
		{Name: "mid", Paths: []string{"lib/*/x/**"}},
	}
	scope := NewPathScope(rules)
	paths := []string{
		"src/crypto/aes.c", "SRC/Crypto/aes.c", "ſrc/crypto/aes.c", "src:stream/crypto/aes.c",
		"src./crypto/aes.c", "src\\crypto/aes.c", "src\u200c/crypto/aes.c", "src/crypto/deep/er/x",
		"src/.gitattributes", "src/crypto/.gitattributes", "docs/x.md", "DOCS/y.md", "a/b/c", "A/B/C",
		"a/.gitattributes", "lib/q/x/y", "lib/q/.gitattributes", "src/crypto", "src",
		"bomb/00aa/01bb/x", "other/src/crypto/aes.c", "docs/sub/x.md", "docs/sub/.gitattributes",
		"docs/sub/deeper/.gitattributes", "a/b/.gitattributes", "a/b/c/.gitattributes", "lib/q/r/s/.gitattributes",
	}
	covered := 0
	for _, p := range paths {
		cov := false
		for _, r := range rules {
			cov = cov || r.CoversPath(p)
		}
		if !cov {
			continue
		}
		covered++
		comps := strings.Split(p, "/")
		for i := 1; i < len(comps); i++ {
			dir := strings.Join(comps[:i], "/")
			may, every := scope.Reach(dir)
			if !may {
				t.Errorf("%s is covered, but the scope skips %s", p, dir)
			}
			if every {
				break
			}
		}
	}
	if covered < 15 {
		t.Fatalf("only %d of the paths are covered: the test no longer tests the folds", covered)
	}
	for _, dir := range []string{"bomb", "bomb/00aa", "other", "other/src", "lib2", "a/c", "a/b/c", "a/b/c/d"} {
		if may, _ := scope.Reach(dir); may {
			t.Errorf("the scope reaches %s, which no pattern can", dir)
		}
	}
	if may, every := scope.Reach("src/crypto/deep"); !may || !every {
		t.Errorf("src/crypto/deep: want every path below reached, got may %v every %v", may, every)
	}
	untrusted := NewPathScope([]*Rule{{Name: "u", Paths: []string{"src/**"}, Untrusted: "not signed"}})
	if may, every := untrusted.Reach("bomb"); !may || !every {
		t.Errorf("a rule file that counts for nothing must reach everything")
	}
	if NewPathScope([]*Rule{{Name: "main", Refs: []string{"refs/heads/main"}}}) != nil {
		t.Errorf("no path rule: want no scope")
	}
}
