package gitrepo

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// States of the files ref store in which a listing of some directories
// must still give what git for-each-ref gives: a symbolic ref whose target
// lies outside the listed directories, loose over a stale packed value,
// refs git ignores as broken (the null object name) and symbolic refs
// deeper than git follows. Before the fix the in-process reader answered
// the packed (old) value for the first, listed the null name and the
// too-deep chain; whatever it answers now (or leaves
// to git), ListRefs must equal git.
func TestListRefsLikeGitOnOddRefStores(t *testing.T) {
	zero := strings.Repeat("0", 40) + "\n"
	for _, tc := range []struct {
		name     string
		prefixes []string
		setup    func(s *testutil.Sandbox, dir, gitDir string)
	}{
		{"symbolic ref to a loose ref outside the listing whose packed value is stale", []string{"refs/heads/"}, func(s *testutil.Sandbox, dir, gitDir string) {
			s.Git(dir, "update-ref", "refs/other/x", "HEAD~1")
			s.Git(dir, "pack-refs", "--all")
			s.Git(dir, "update-ref", "refs/other/x", "HEAD")
			s.Git(dir, "symbolic-ref", "refs/heads/evil", "refs/other/x")
		}},
		{"loose ref holding the null name", []string{"refs/heads/"}, func(s *testutil.Sandbox, dir, gitDir string) {
			write(t, filepath.Join(gitDir, "refs", "heads", "nullref"), zero)
		}},
		{"packed ref holding the null name", nil, func(s *testutil.Sandbox, dir, gitDir string) {
			s.Git(dir, "pack-refs", "--all")
			f, err := os.OpenFile(filepath.Join(gitDir, "packed-refs"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(strings.Repeat("0", 40) + " refs/tags/zz-null\n"); err != nil {
				t.Fatal(err)
			}
		}},
		{"symbolic ref to a ref holding the null name", []string{"refs/heads/"}, func(s *testutil.Sandbox, dir, gitDir string) {
			write(t, filepath.Join(gitDir, "refs", "heads", "nullref"), zero)
			s.Git(dir, "symbolic-ref", "refs/heads/to-null", "refs/heads/nullref")
		}},
		{"symbolic refs chained as deep as git follows, and one deeper", []string{"refs/heads/"}, func(s *testutil.Sandbox, dir, gitDir string) {
			// s2 -> ... -> s6 -> main: git reads a ref at most 5 times
			// (SYMREF_MAXDEPTH), so it lists s3 to s6 and not s2.
			for i := 2; i <= 5; i++ {
				s.Git(dir, "symbolic-ref", fmt.Sprintf("refs/heads/s%d", i), fmt.Sprintf("refs/heads/s%d", i+1))
			}
			s.Git(dir, "symbolic-ref", "refs/heads/s6", "refs/heads/main")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testutil.NewSandbox(t)
			dir := s.InitRepo("repo", 3)
			gitDir := filepath.Join(dir, ".git")
			tc.setup(s, dir, gitDir)
			g, err := OpenGitDir(gitDir, dir, inProcessEnv(s))
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			got, err := g.ListRefs(tc.prefixes...)
			if err != nil {
				t.Fatalf("ListRefs(%q): %v", tc.prefixes, err)
			}
			want, err := g.forEachRef(patternsOf(tc.prefixes)...)
			if err != nil {
				t.Fatal(err)
			}
			want = filterSort(want, tc.prefixes)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ListRefs(%q) with the in-process reader:\n%v\ngit for-each-ref:\n%v", tc.prefixes, got, want)
			}
		})
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A packed-refs file that lists one ref twice with two values: git
// for-each-ref lists both, git rev-parse resolves one, and which one a
// listing kept depended on the reader (the in-process one kept the last,
// the sort after for-each-ref either). Now both readers refuse to answer,
// naming the ref, with or without the in-process readers.
func TestListRefsRefusesARefListedTwice(t *testing.T) {
	for _, env := range []string{"in-process", EnvNoFastPath} {
		t.Run(env, func(t *testing.T) {
			s := testutil.NewSandbox(t)
			dir := s.InitRepo("repo", 3)
			gitDir := filepath.Join(dir, ".git")
			a, b := strings.TrimSpace(s.Git(dir, "rev-parse", "HEAD~1")), strings.TrimSpace(s.Git(dir, "rev-parse", "HEAD"))
			s.Git(dir, "pack-refs", "--all")
			write(t, filepath.Join(gitDir, "packed-refs"), "# pack-refs with: peeled fully-peeled sorted \n"+
				a+" refs/heads/dup\n"+b+" refs/heads/dup\n"+b+" refs/heads/main\n")
			e := inProcessEnv(s)
			if env == EnvNoFastPath {
				e = append(e, EnvNoFastPath+"=1")
			}
			g, err := OpenWithEnv(dir, e)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			refs, err := g.ListRefs("refs/heads/")
			if b < a {
				a, b = b, a
			}
			if err == nil || !strings.Contains(err.Error(), "refs/heads/dup is listed twice, at "+a[:12]+" and "+b[:12]) {
				t.Fatalf("ListRefs = %v, %v; want it refused naming refs/heads/dup", refs, err)
			}
		})
	}
}
