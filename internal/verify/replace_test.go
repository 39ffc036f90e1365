package verify_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/verify"
)

// replaceOf makes, in f, a commit like main's tip (same parents) whose
// tree has a changed file, and returns main's tip and that replacement.
func replaceOf(f *ScenarioFixture) (tip, repl gitrepo.Hash) {
	f.T.Helper()
	tip = f.Ref("refs/heads/main")
	f.S.Git(f.Dir, "checkout", "-q", "--detach", "main")
	if err := os.WriteFile(filepath.Join(f.Dir, "replaced.txt"), []byte("not what main holds\n"), 0o644); err != nil {
		f.T.Fatal(err)
	}
	f.S.Git(f.Dir, "add", "replaced.txt")
	f.S.Git(f.Dir, "commit", "-q", "--amend", "-m", "the replacement")
	repl = scenarioHash(f.T, f.S.Git(f.Dir, "rev-parse", "HEAD"))
	f.S.Git(f.Dir, "checkout", "-q", "main")
	return tip, repl
}

// TestReadRewrites: a replace ref, a graft file or a shallow file makes git
// read other objects or history than verification reads; verification
// fails while one exists that no rule names explicitly, and says how to
// remove it.
func TestReadRewrites(t *testing.T) {
	t.Parallel()
	tmpl := NewScenarioTemplate(t)
	replaceRule := func(f *ScenarioFixture, name, pattern string) {
		f.AddRule(policy.Rule{Name: name, Refs: []string{pattern}, Allow: []string{"alice"}, Threshold: 1})
		f.Apply("alice")
	}

	t.Run("replace ref of main's tip", func(t *testing.T) {
		f := tmpl.Clone(t)
		tip, repl := replaceOf(f)
		f.S.Git(f.Dir, "replace", tip.String(), repl.String())
		ref := policy.ReplaceRefPrefix + tip.String()
		p, _ := f.MustFail(verify.Options{}, verify.ErrReadRewritten, ref, "git replace", "no rule names refs/replace/ explicitly")
		if p.Ref != ref || !strings.Contains(p.Hint, "git update-ref -d "+ref) || !strings.Contains(p.Hint, "--ref 'refs/replace/*'") {
			t.Errorf("problem names %q with hint %q; want the ref and how to delete it or allow it", p.Ref, p.Hint)
		}
		// Asking for main alone still fails: the replacement is main's content.
		f.MustFail(verify.Options{Refs: []string{"refs/heads/main"}}, verify.ErrReadRewritten, ref)
		f.S.Git(f.Dir, "update-ref", "-d", ref)
		f.MustVerify(verify.Options{})
	})

	t.Run("replace ref whose name is no object id", func(t *testing.T) {
		f := tmpl.Clone(t)
		_, repl := replaceOf(f)
		ref := policy.ReplaceRefPrefix + "not-an-id"
		f.SetRef(ref, repl)
		f.MustFail(verify.Options{}, verify.ErrReadRewritten, ref, "replaces objects with "+repl.String()[:12])
	})

	t.Run("replace ref recorded under a catch-all rule", func(t *testing.T) {
		f := tmpl.Clone(t)
		replaceRule(f, "everything", "refs/**")
		tip, repl := replaceOf(f)
		f.S.Git(f.Dir, "replace", tip.String(), repl.String())
		ref := policy.ReplaceRefPrefix + tip.String()
		f.Record("alice", ref)
		f.MustFail(verify.Options{}, verify.ErrReadRewritten, ref)
	})

	t.Run("replace ref allowed by a rule that names refs/replace/", func(t *testing.T) {
		f := tmpl.Clone(t)
		replaceRule(f, "replacements", "refs/replace/*")
		tip, repl := replaceOf(f)
		f.S.Git(f.Dir, "replace", tip.String(), repl.String())
		ref := policy.ReplaceRefPrefix + tip.String()
		// Named, so protected like any ref: first without its entry.
		f.MustFail(verify.Options{}, verify.ErrUnrecorded, ref)
		f.Record("alice", ref)
		f.MustVerify(verify.Options{})
	})

	t.Run("replace ref in a pushed state", func(t *testing.T) {
		f := tmpl.Clone(t)
		tip, repl := replaceOf(f)
		ref := policy.ReplaceRefPrefix + tip.String()
		values := map[string]gitrepo.Hash{}
		for _, r := range mustList(t, f.G) {
			values[r.Name] = r.Hash
		}
		values[ref] = repl
		f.MustFail(verify.Options{RefValues: values}, verify.ErrReadRewritten, ref)
		values[ref] = gitrepo.Hash{} // a push deleting it
		f.MustVerify(verify.Options{RefValues: values})
	})

	t.Run("grafts", func(t *testing.T) {
		f := tmpl.Clone(t)
		tip := f.Ref("refs/heads/main")
		grafts := filepath.Join(f.Dir, ".git", "info", "grafts")
		if err := os.WriteFile(grafts, []byte(tip.String()+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		p, _ := f.MustFail(verify.Options{}, verify.ErrReadRewritten, grafts, "other parents")
		if !strings.Contains(p.Hint, "remove "+grafts) {
			t.Errorf("hint %q does not say to remove the graft file", p.Hint)
		}
		if err := os.Remove(grafts); err != nil {
			t.Fatal(err)
		}
		f.MustVerify(verify.Options{})
	})

	t.Run("shallow clone", func(t *testing.T) {
		f := tmpl.Clone(t)
		dst := filepath.Join(t.TempDir(), "shallow")
		f.S.Git(f.Dir, "clone", "-q", "--depth", "1", "file://"+f.Dir, dst)
		f.S.Git(dst, "fetch", "-q", "origin", "refs/secure/*:refs/secure/*")
		g, err := gitrepo.OpenWithEnv(dst, f.S.Environ())
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		_, err = verify.Verify(g, verify.Options{Now: ScenarioNow, LocalAhead: true, IgnoreMissingRefs: true})
		p, _ := ScenarioWantProblem(t, err, verify.ErrReadRewritten, "this clone is shallow")
		if !strings.Contains(p.Hint, "git fetch --unshallow") {
			t.Errorf("hint %q does not say how to get a full clone", p.Hint)
		}
	})

	t.Run("shallow server", func(t *testing.T) {
		f := tmpl.Clone(t)
		m := f.Mirror()
		m.MustVerify(verify.Options{})
		shallow := filepath.Join(m.Dir, "shallow")
		first := m.S.Git(m.Dir, "rev-list", "--max-parents=0", "main")
		if err := os.WriteFile(shallow, []byte(first+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		m.MustFail(verify.Options{}, verify.ErrReadRewritten, "this repository is shallow", shallow)
	})
}

func mustList(t *testing.T, g *gitrepo.Repo) []gitrepo.Ref {
	t.Helper()
	refs, err := g.ListRefs("refs/")
	if err != nil {
		t.Fatal(err)
	}
	return refs
}
