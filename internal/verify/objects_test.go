package verify_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// TestUnreadableObjectFailsItsEntry (issue 13, hole 1): an object that is
// in the repository but that verification cannot read fails its entry,
// always, even when a later entry of the same ref supersedes it; and the
// other rules and the global rules of that entry are still checked (first:
// when one of them fails the path rules' diff is not computed at all,
// TestFailingRefRuleComputesNoDiff). Here src/crypto's tree lists its entries out of order: git
// reads it (git's fsck calls it an error), git-secure refuses it.
func TestUnreadableObjectFailsItsEntry(t *testing.T) {
	f := newDepthTemplate(t).Clone(t)
	f.AddRule(policy.Rule{Name: "main", Refs: []string{depthMain}, Allow: []string{"team:developers"}})
	f.AddRule(policy.Rule{Name: "crypto", Paths: []string{"src/crypto/**"}, Allow: []string{"sec1"}})
	f.Stage("add global rule linear", func(p, base *policy.Policy, now time.Time) error {
		return p.AddGlobalRule(base, policy.GlobalRule{Name: "linear", Type: policy.GlobalNoForcePush, Refs: []string{depthMain}}, now)
	})
	f.Apply("admin")
	fix := f.CommitMain("security fix")
	f.Record("dev1", "main")

	blob, err := f.S.RunErr(f.Dir, []byte("backdoor\n"), "git", "hash-object", "-w", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	bh := scenarioHash(t, blob)
	raw := []byte("100644 b.c\x00" + string(bh[:]) + "100644 a.c\x00" + string(bh[:]))
	out, err := f.S.RunErr(f.Dir, raw, "git", "hash-object", "-t", "tree", "--literally", "-w", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	crypto := strings.TrimSpace(out)
	if ls := f.S.Git(f.Dir, "ls-tree", crypto); !strings.Contains(ls, "b.c") {
		t.Fatalf("git must read the unsorted tree: %q", ls)
	}
	srcOut, err := f.S.RunErr(f.Dir, []byte("040000 tree "+crypto+"\tcrypto\n"), "git", "mktree")
	if err != nil {
		t.Fatal(err)
	}
	rootOut, err := f.S.RunErr(f.Dir, []byte("040000 tree "+strings.TrimSpace(srcOut)+"\tsrc\n"), "git", "mktree")
	if err != nil {
		t.Fatal(err)
	}
	e := scenarioHash(t, f.S.Git(f.Dir, "commit-tree", strings.TrimSpace(rootOut), "-p", fix.String(), "-m", "E"))
	later := f.NewCommit(e, "F")
	n := f.Forge("dev1", &rsl.Entry{Type: rsl.TypeRef, Ref: depthMain, Old: fix, New: e})
	f.Forge("dev1", &rsl.Entry{Type: rsl.TypeRef, Ref: depthMain, Old: e, New: later},
		gitrepo.RefUpdate{Name: depthMain, Old: fix, New: later})

	_, failed := f.MustFail(verify.Options{}, verify.ErrBadObject, depthMain, "rule crypto", "not sorted")
	bad := false
	for _, p := range failed.Problems {
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want only #%d: %v", p.Entry, n, p)
		}
		bad = bad || (p.Kind == verify.ErrBadObject && p.Rule == "crypto")
	}
	if !bad {
		t.Errorf("want the unreadable tree (rule crypto) reported:\n%v", failed)
	}
}

// TestAbsentCommitOfSupersededEntryIsForgiven: the other side of the rule
// above. dev1 (allowed on main, not on src/crypto/**) recorded main, then
// rewrote it (no no-force-push rule) and recorded the rewrite. In a fresh
// clone the first commit is truly absent: that entry's path rule cannot be
// checked, and only that is forgiven, because a later entry of main
// superseded it and is checked from the newest recorded state present.
func TestAbsentCommitOfSupersededEntryIsForgiven(t *testing.T) {
	f := newDepthTemplate(t).Clone(t)
	f.AddRule(policy.Rule{Name: "main", Refs: []string{depthMain}, Allow: []string{"team:developers"}})
	f.AddRule(policy.Rule{Name: "crypto", Paths: []string{"src/crypto/**"}, Allow: []string{"sec1"}})
	f.Apply("admin")
	base := f.Ref(depthMain)
	first := f.CommitMain("feature")
	f.Record("dev1", "main")
	f.S.Git(f.Dir, "reset", "-q", "--hard", base.String())
	f.CommitMain("feature again")
	f.Record("dev1", "main")

	dst := filepath.Join(t.TempDir(), "fresh.git")
	f.S.Git(f.Dir, "clone", "-q", "--mirror", "file://"+f.Dir, dst)
	g, err := gitrepo.OpenWithEnv(dst, f.S.Environ())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if ok, err := g.HasObject(first); err != nil || ok {
		t.Fatalf("the rewritten commit is still in the fresh clone (%v)", err)
	}
	m := *f
	m.Dir, m.G = dst, g
	m.R = &porcelain.Repo{Git: g, Now: f.R.Now, Home: f.S.Home}
	res := m.MustVerify(verify.Options{})
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "history rewritten") {
		t.Errorf("warnings %q; want one about the rewritten history", res.Warnings)
	}
}
