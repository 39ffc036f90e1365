package verify_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// leaf is one tree entry of pathTree: a mode and, for a blob or symlink,
// its content, for a gitlink the commit it names.
type leaf struct{ mode, content string }

// pathTree writes the tree holding files (slash-separated paths) with git
// hash-object and git mktree, and returns its name.
func pathTree(t *testing.T, f *ScenarioFixture, files map[string]leaf) string {
	t.Helper()
	var lines []string
	sub := map[string]map[string]leaf{}
	for p, l := range files {
		dir, rest, nested := strings.Cut(p, "/")
		if nested {
			if sub[dir] == nil {
				sub[dir] = map[string]leaf{}
			}
			sub[dir][rest] = l
			continue
		}
		typ, h := "blob", l.content
		if l.mode == "160000" {
			typ = "commit"
		} else {
			out, err := f.S.RunErr(f.Dir, []byte(l.content), "git", "hash-object", "-w", "--stdin")
			if err != nil {
				t.Fatal(err)
			}
			h = out
		}
		lines = append(lines, fmt.Sprintf("%s %s %s\t%s", l.mode, typ, h, p))
	}
	for dir, files := range sub {
		lines = append(lines, fmt.Sprintf("040000 tree %s\t%s", pathTree(t, f, files), dir))
	}
	sort.Strings(lines)
	out, err := f.S.RunErr(f.Dir, []byte(strings.Join(lines, "\n")+"\n"), "git", "mktree")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPathRulesAcrossEntries: a path rule catches a change however deep,
// and whatever kind of entry changes, after entries that changed the
// files around it: the diffs of consecutive entries share trees and
// commits (kept between entries) and each rule's answer for a path is
// kept too; none of it may hide a protected change. Patterns with ** and
// * at several levels; the change is a deep edit, a mode change, a
// rename, a file added under a protected name, a directory replaced by a
// symlink, by a gitlink or by a file, a file replaced by a directory, a
// symlink retargeted, a gitlink moved. Each must fail on rule keys,
// naming the entry and the path.
func TestPathRulesAcrossEntries(t *testing.T) {
	t.Parallel()
	tmpl := NewScenarioTemplate(t)
	const dev = "refs/heads/dev"
	base := func(f *ScenarioFixture) map[string]leaf {
		return map[string]leaf{
			"src/a/b/c/keys/x.pem":        {"100644", "key\n"},
			"src/a/b/c/other.txt":         {"100644", "o1\n"},
			"vendor/foo/lib/deep/1/2/f.c": {"100644", "f\n"},
			"vendor/foo/lib/sub":          {"160000", f.Ref("refs/heads/main").String()},
			"vendor/foo/README":           {"100644", "r1\n"},
			"ci/run.sh":                   {"100755", "run\n"},
			"ci/link":                     {"120000", "run.sh"},
			"plain.txt":                   {"100644", "p1\n"},
		}
	}
	attacks := []struct {
		name, path string
		edit       func(f *ScenarioFixture, m map[string]leaf)
	}{
		{"deep edit", "src/a/b/c/keys/x.pem", func(_ *ScenarioFixture, m map[string]leaf) { m["src/a/b/c/keys/x.pem"] = leaf{"100644", "other key\n"} }},
		{"mode change", "src/a/b/c/keys/x.pem", func(_ *ScenarioFixture, m map[string]leaf) { m["src/a/b/c/keys/x.pem"] = leaf{"100755", "key\n"} }},
		{"rename", "src/a/b/c/keys/y.pem", func(_ *ScenarioFixture, m map[string]leaf) {
			m["src/a/b/c/keys/y.pem"] = m["src/a/b/c/keys/x.pem"]
			delete(m, "src/a/b/c/keys/x.pem")
		}},
		{"added under a protected name", "src/z/keys/new.pem", func(_ *ScenarioFixture, m map[string]leaf) { m["src/z/keys/new.pem"] = leaf{"100644", "p1\n"} }},
		{"directory replaced by a symlink", "src/a/b/c/keys/x.pem", func(_ *ScenarioFixture, m map[string]leaf) {
			delete(m, "src/a/b/c/keys/x.pem")
			m["src/a/b/c/keys"] = leaf{"120000", "/etc"}
		}},
		{"directory replaced by a gitlink", "vendor/foo/lib/deep/1/2/f.c", func(f *ScenarioFixture, m map[string]leaf) {
			delete(m, "vendor/foo/lib/deep/1/2/f.c")
			m["vendor/foo/lib/deep"] = leaf{"160000", f.Ref("refs/heads/main").String()}
		}},
		{"directory replaced by a file", "vendor/foo/lib/deep/1/2/f.c", func(_ *ScenarioFixture, m map[string]leaf) {
			delete(m, "vendor/foo/lib/deep/1/2/f.c")
			m["vendor/foo/lib/deep"] = leaf{"100644", "flat\n"}
		}},
		{"file replaced by a directory", "ci/run.sh", func(_ *ScenarioFixture, m map[string]leaf) {
			delete(m, "ci/run.sh")
			m["ci/run.sh/x"] = leaf{"100644", "run\n"}
		}},
		{"symlink retargeted", "ci/link", func(_ *ScenarioFixture, m map[string]leaf) { m["ci/link"] = leaf{"120000", "/bin/sh"} }},
		{"gitlink moved", "vendor/foo/lib/sub", func(f *ScenarioFixture, m map[string]leaf) {
			m["vendor/foo/lib/sub"] = leaf{"160000", f.NewCommit(f.Ref("refs/heads/main"), "moved").String()}
		}},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			f := tmpl.Clone(t)
			f.AddRule(policy.Rule{Name: "keys", Refs: []string{dev}, Paths: []string{"src/**/keys/*.pem", "vendor/*/lib/**", "ci/*"}, Allow: []string{"alice"}})
			f.Apply("alice")
			files := base(f)
			prev := gitrepo.ZeroHash
			commit := func(msg string) gitrepo.Hash {
				args := []string{"commit-tree", pathTree(t, f, files), "-m", msg}
				if !prev.IsZero() {
					args = append(args, "-p", prev.String())
				}
				return scenarioHash(t, f.S.Git(f.Dir, args...))
			}
			move := func(key string, c gitrepo.Hash) uint64 {
				n := f.Forge(key, &rsl.Entry{Type: rsl.TypeRef, Ref: dev, Old: prev, New: c}, gitrepo.RefUpdate{Name: dev, Old: prev, New: c})
				prev = c
				return n
			}
			move("alice", commit("dev, by alice"))
			// bob changes files next to the protected ones, several times:
			// every tree on the way to them changes, none of theirs.
			for i := range 3 {
				files["src/a/b/c/other.txt"] = leaf{"100644", fmt.Sprintf("o%d\n", i+2)}
				files["vendor/foo/README"] = leaf{"100644", fmt.Sprintf("r%d\n", i+2)}
				files["plain.txt"] = leaf{"100644", fmt.Sprintf("p%d\n", i+2)}
				move("bob", commit(fmt.Sprintf("bob's change %d", i)))
			}
			f.MustVerify(verify.Options{})
			a.edit(f, files)
			n := move("bob", commit("bob's attack: "+a.name))
			f.MustFail(verify.Options{}, verify.ErrUnauthorized, dev, "rule keys", fmt.Sprintf("entry #%d", n), "signer bob is not allowed", "protected files changed: ", a.path)
		})
	}
}
