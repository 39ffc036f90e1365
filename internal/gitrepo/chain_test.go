package gitrepo

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// chainRepo makes a repository whose history has merges, commits stored
// whole and as deltas in a pack, loose commits on top, and commits git
// writes only with --literally (uppercase hex parents, which git rev-list
// follows and the in-process listing leaves to it); it returns every
// commit.
func chainRepo(t *testing.T) (*testutil.Sandbox, string, []Hash) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 2)
	// Long, nearly equal messages: repack stores commits as deltas.
	long := strings.Repeat("a message long enough for git to store a commit as a delta of another\n", 30)
	for i := range 12 {
		s.Commit(dir, fmt.Sprintf("f%d.txt", i%3), fmt.Sprintf("c %d\n", i), fmt.Sprintf("commit %d\n\n%s", i, long))
		if i == 5 {
			s.Git(dir, "checkout", "-q", "-b", "side", "HEAD~2")
			s.Commit(dir, "side.txt", "s", "side")
			s.Git(dir, "checkout", "-q", "main")
			s.Git(dir, "merge", "-q", "--no-ff", "-m", "merge", "side")
		}
	}
	s.Git(dir, "repack", "-a", "-d", "-f", "-q", "--window=50", "--depth=20")
	s.Git(dir, "prune-packed")
	if vp := s.Git(dir, "verify-pack", "-v", mustGlob(t, filepath.Join(dir, ".git", "objects", "pack", "*.idx"))); !strings.Contains(vp, " commit ") || !regexpDeltaCommit(vp) {
		t.Fatalf("no commit stored as a delta:\n%s", vp)
	}
	s.Commit(dir, "loose.txt", "l", "loose 1")
	tip := s.Commit(dir, "loose.txt", "m", "loose 2")
	tree := s.Git(dir, "rev-parse", "HEAD^{tree}")
	id := "A <a@x> 1700000000 +0000"
	odd := hashLiterally(t, s, dir, fmt.Appendf(nil, "tree %s\nparent %s\nauthor %s\ncommitter %s\n\nupper-case parent\n", tree, strings.ToUpper(tip), id, id))
	hashLiterally(t, s, dir, fmt.Appendf(nil, "tree %s\nparent %s\nauthor %s\ncommitter %s\n\non the odd one\n", tree, odd, id, id))
	var all []Hash
	for _, l := range strings.Fields(s.Git(dir, "cat-file", "--batch-all-objects", "--batch-check=%(objecttype) %(objectname)")) {
		if len(l) == 40 {
			all = append(all, mustParse(t, l))
		}
	}
	var commits []Hash
	for _, h := range all {
		if strings.TrimSpace(s.Git(dir, "cat-file", "-t", h.String())) == "commit" {
			commits = append(commits, h)
		}
	}
	return s, dir, commits
}

func regexpDeltaCommit(verifyPack string) bool {
	for _, line := range strings.Split(verifyPack, "\n") {
		f := strings.Fields(line)
		if len(f) == 7 && f[1] == "commit" { // a delta: depth and base follow
			return true
		}
	}
	return false
}

// The chain listing and the bulk commit reader give, in-process, what git
// rev-list --first-parent and cat-file give, from every commit (packed
// whole, packed as a delta, loose, with parents only git reads), at every
// bound.
func TestChainInProcessLikeGit(t *testing.T) {
	s, dir, commits := chainRepo(t)
	fast, err := OpenWithEnv(dir, inProcessEnv(s))
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	if fast.fast == nil {
		t.Fatal("in-process readers off")
	}
	git, err := OpenWithEnv(dir, append(inProcessEnv(s), EnvNoFastPath+"=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer git.Close()
	odd := 0
	for _, tip := range commits {
		if _, _, ok := fast.fast.FirstParent(tip); !ok {
			odd++
		}
		want := strings.Fields(s.Git(dir, "rev-list", "--first-parent", tip.String()))
		for _, max := range []int{1, 2, len(want), len(want) + 5} {
			got, err := listInProcess(fast, tip, max)
			if err != nil {
				t.Fatalf("%s max %d: %v", tip, max, err)
			}
			w := want[:min(max, len(want))]
			if len(got) != len(w) {
				t.Fatalf("%s max %d: %d listed, git lists %d", tip, max, len(got), len(w))
			}
			for i := range got {
				if got[i].String() != w[i] {
					t.Fatalf("%s max %d: #%d is %s, git says %s", tip, max, i, got[i], w[i])
				}
			}
		}
	}
	if odd != 1 {
		t.Fatalf("%d commits left to git by the in-process listing, want 1 (the upper-case parent)", odd)
	}
	// The companion of every bulk read below is a commit both readers
	// parse: commits are in hash order and the odd commits' hashes change
	// with the clock, so commits[0] was sometimes the odd one and its
	// error hid the one under test.
	var good Hash
	for _, h := range commits {
		if _, err := git.ReadCommit(h); err == nil {
			good = h
			break
		}
	}
	if good.IsZero() {
		t.Fatal("no commit git reads")
	}
	// Every commit read in bulk, with the bytes from a caller's buffer.
	var arena []byte
	alloc := func(n int) []byte {
		if len(arena) < n {
			arena = make([]byte, 64<<10)
		}
		b := arena[:n:n]
		arena = arena[n:]
		return b
	}
	read := func(r *Repo, hs []Hash) ([]*Commit, error) {
		var out []*Commit
		keep := func(c *Commit) error {
			out = append(out, c)
			return nil
		}
		if r == git {
			return out, r.ReadCommitsInto(hs, alloc, keep)
		}
		return out, r.ReadCommitsInProcess(hs, alloc, keep)
	}
	for _, h := range commits {
		got, gerr := read(fast, []Hash{h, good})
		want, werr := read(git, []Hash{h, good})
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%s: in-process error %v, git's %v", h, gerr, werr)
		}
		if gerr != nil {
			if !strings.Contains(gerr.Error(), "commit "+h.String()) || !strings.Contains(gerr.Error(), "not lowercase hex") {
				t.Fatalf("%s: in-process error %v, want it to name the commit and the hex", h, gerr)
			}
			continue
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.Hash != w.Hash || !bytes.Equal(g.Raw, w.Raw) || !bytes.Equal(g.Signature, w.Signature) || g.Message != w.Message || fmt.Sprint(g.Parents) != fmt.Sprint(w.Parents) {
				t.Fatalf("%s: in-process %+v, git %+v", h, g, w)
			}
		}
	}
	// A missing commit is left to git, which names it.
	missing := mustParse(t, strings.Repeat("cd", 20))
	if _, err := read(fast, []Hash{good, missing}); err == nil || !strings.Contains(err.Error(), missing.String()) {
		t.Fatalf("missing commit: %v", err)
	}
	if _, err := listInProcess(fast, missing, 3); err == nil || !strings.Contains(err.Error(), "gitrepo: list "+missing.String()) {
		t.Fatalf("missing tip: %v", err)
	}
	// A blob is not a commit.
	blob := mustParse(t, s.Git(dir, "rev-parse", "HEAD:loose.txt"))
	if _, err := read(fast, []Hash{blob}); err == nil || !strings.Contains(err.Error(), "object "+blob.String()+" is a blob") {
		t.Fatalf("blob read as a commit: %v", err)
	}
	if _, err := read(git, []Hash{blob}); err == nil || !strings.Contains(err.Error(), "object "+blob.String()+" is a blob") {
		t.Fatalf("blob read as a commit by git: %v", err)
	}
}

// hashLiterally writes raw as a commit git would not write itself.
func hashLiterally(t *testing.T, s *testutil.Sandbox, dir string, raw []byte) string {
	t.Helper()
	out, err := s.RunErr(dir, raw, "git", "hash-object", "-t", "commit", "-w", "--literally", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

func listInProcess(r *Repo, tip Hash, max int) ([]Hash, error) {
	var out []Hash
	err := r.FirstParentsInProcess(tip, max, func(h Hash) error {
		out = append(out, h)
		return nil
	})
	return out, err
}
