package gitrepo

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo/fastpath"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// The in-process reader of the files ref store lists exactly what git
// for-each-ref lists, whatever mix of loose and packed refs.
func TestReadRefsFilesMatchesGit(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 3)
	gitDir := filepath.Join(dir, ".git")
	s.Git(dir, "branch", "packed-then-moved", "HEAD~1")
	s.Git(dir, "branch", "deep/nested/branch", "HEAD~2")
	s.Git(dir, "tag", "-a", "-m", "annotated", "v1", "HEAD~1")
	s.Git(dir, "tag", "light", "HEAD")
	s.Git(dir, "update-ref", "refs/secure/rsl", "HEAD")
	s.Git(dir, "update-ref", "refs/remotes/origin/main", "HEAD")
	s.Git(dir, "branch", "to-delete", "HEAD")
	s.Git(dir, "pack-refs", "--all")
	// After packing: moved (loose overrides packed), deleted from
	// packed-refs, new loose refs, a symbolic ref under refs/.
	s.Git(dir, "update-ref", "refs/heads/packed-then-moved", "HEAD")
	s.Git(dir, "update-ref", "-d", "refs/heads/to-delete")
	s.Git(dir, "update-ref", "refs/secure/policy", "HEAD~1")
	s.Git(dir, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
	g, err := OpenGitDir(gitDir, dir, inProcessEnv(s))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, prefixes := range [][]string{nil, {"refs/heads/"}, {"refs/secure/", "refs/heads/"}, {"refs/heads/pa"}, {"refs/remotes/"}, {"refs/tags/v1"}, {"refs/nothing/"}} {
		dirs := patternsOf(prefixes)
		if len(dirs) == 0 {
			dirs = []string{"refs/"}
		}
		got, err := inProcessRefs(g.fast, dirs) // no fallback allowed here
		if err != nil {
			t.Fatalf("in-process listing of %q: %v", dirs, err)
		}
		got = filterSort(got, prefixes)
		via, err := g.ListRefs(prefixes...)
		if err != nil || !reflect.DeepEqual(via, got) {
			t.Errorf("ListRefs(%q) = %v, %v; want the in-process listing %v", prefixes, via, err, got)
		}
		want, err := g.forEachRef(patternsOf(prefixes)...)
		if err != nil {
			t.Fatal(err)
		}
		want = filterSort(want, prefixes)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ListRefs(%q) in-process:\n%v\ngit for-each-ref:\n%v", prefixes, got, want)
		}
	}

	// ResolveRef reads the ref's directory in-process: the same answers as
	// git for-each-ref of the exact name.
	for _, name := range []string{"refs/heads/main", "refs/heads/packed-then-moved", "refs/heads/to-delete", "refs/heads/deep",
		"refs/heads/deep/nested/branch", "refs/tags/v1", "refs/secure/rsl", "refs/secure/policy", "refs/secure/timestamp",
		"refs/remotes/origin/HEAD", "refs/remotes/origin/main", "refs/nothing/here"} {
		if _, ok, err := g.fastRefs(name[:strings.LastIndexByte(name, '/')+1]); !ok || err != nil {
			t.Fatalf("%s is not resolved in-process: ok %v, err %v", name, ok, err)
		}
		got, gotOK, err := g.ResolveRef(name)
		if err != nil {
			t.Fatal(err)
		}
		refs, err := g.forEachRef(name)
		if err != nil {
			t.Fatal(err)
		}
		var want Hash
		wantOK := false
		for _, ref := range refs {
			if ref.Name == name {
				want, wantOK = ref.Hash, true
			}
		}
		if got != want || gotOK != wantOK {
			t.Errorf("ResolveRef(%s) = %s, %v; git for-each-ref: %s, %v", name, got, gotOK, want, wantOK)
		}
	}

	t.Run("fallbacks", func(t *testing.T) {
		for _, tc := range []struct{ name, ref, content string }{
			{"garbage loose ref", "refs/heads/garbage", "not a hash\n"},
			{"dangling symbolic ref", "refs/heads/dangling", "ref: refs/heads/nowhere\n"},
			{"no newline", "refs/heads/nonl", "0123456789012345678901234567890123456789"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := filepath.Join(gitDir, filepath.FromSlash(tc.ref))
				if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(p)
				if _, ok, err := g.fast.ListRefs([]string{"refs/"}); ok || err != nil {
					t.Fatalf("ok = %v, err = %v, want the fallback to git", ok, err)
				}
				// ListRefs still answers, through git.
				if _, err := g.ListRefs(); err != nil {
					t.Fatalf("ListRefs with %s: %v", tc.name, err)
				}
			})
		}
	})
}

// patternsOf is the directory of each prefix, as ListRefs asks git.
func patternsOf(prefixes []string) []string {
	var out []string
	for _, p := range prefixes {
		out = append(out, p[:strings.LastIndexByte(p, '/')+1])
	}
	return out
}

func filterSort(refs []Ref, prefixes []string) []Ref {
	var out []Ref
	for _, r := range refs {
		keep := len(prefixes) == 0
		for _, p := range prefixes {
			if len(r.Name) >= len(p) && r.Name[:len(p)] == p {
				keep = true
			}
		}
		if keep {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// inProcessRefs lists dirs with the in-process reader alone.
func inProcessRefs(f *fastpath.Repo, dirs []string) ([]Ref, error) {
	fast, ok, err := f.ListRefs(dirs)
	if err == nil && !ok {
		err = errors.New("left to git")
	}
	var refs []Ref
	for _, r := range fast {
		refs = append(refs, Ref{Name: r.Name, Hash: Hash(r.ID)})
	}
	return refs, err
}

// FuzzReadPackedRefs: packed-refs comes from the repository; whatever it
// holds, the reader must not panic, and every ref it accepts has a valid
// name (anything else goes to git).
func FuzzReadPackedRefs(f *testing.F) {
	f.Add([]byte("# pack-refs with: peeled fully-peeled sorted \n" + strings.Repeat("a", 40) + " refs/heads/main\n^" + strings.Repeat("b", 40) + "\n"))
	f.Add([]byte(strings.Repeat("a", 40) + " refs/heads/../x\n"))
	f.Add([]byte("no newline"))
	gitDir := f.TempDir()
	for _, d := range []string{"objects", "refs"} {
		if err := os.Mkdir(filepath.Join(gitDir, d), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	fast := fastpath.Open(fastpath.Options{GitDir: gitDir, CommonDir: gitDir, FilesRefs: true, ValidRefName: ValidRefName})
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(gitDir, "packed-refs"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		refs, ok, err := fast.ListRefs([]string{"refs/"})
		if err != nil {
			t.Fatalf("error other than the fallback: %v", err)
		}
		if !ok {
			return
		}
		for _, r := range refs {
			if ValidRefName(r.Name) != nil {
				t.Fatalf("accepted invalid name %q", r.Name)
			}
		}
	})
}
