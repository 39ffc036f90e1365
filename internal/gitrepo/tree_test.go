package gitrepo

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// gitReadsTree writes raw as a tree object (git hash-object --literally,
// which checks nothing) and returns how git reads it: ls-tree's entries,
// or git's refusal.
func gitReadsTree(t testing.TB, s *testutil.Sandbox, dir string, raw []byte) ([]TreeEntry, error) {
	t.Helper()
	out, err := s.RunErr(dir, raw, "git", "hash-object", "-t", "tree", "--literally", "-w", "--stdin")
	if err != nil {
		t.Fatalf("hash-object --literally: %v", err)
	}
	h := mustParse(t, out)
	ls, err := s.RunErr(dir, nil, "git", "ls-tree", "-z", "--end-of-options", h.String())
	if err != nil {
		return nil, err
	}
	return ParseLsTree([]byte(ls))
}

// checkTreeLikeGit fails if ParseTree reads raw differently from git:
// whatever ParseTree accepts, git must read as the same entries. ParseTree
// may refuse what git reads only for what git's fsck reports (names, order,
// duplicates): a refusal fails the entry that needs the tree, closed.
func checkTreeLikeGit(t testing.TB, s *testutil.Sandbox, dir string, raw []byte) {
	t.Helper()
	got, err := ParseTree(raw)
	if err != nil {
		return
	}
	want, gitErr := gitReadsTree(t, s, dir, raw)
	if gitErr != nil {
		t.Fatalf("ParseTree(%q) = %+v; git does not read it: %v", raw, got, gitErr)
	}
	if !(len(got) == 0 && len(want) == 0) && !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseTree(%q)\n got %+v\nwant %+v (git ls-tree)", raw, got, want)
	}
}

var treeHash = strings.Repeat("\x01", 20)

func treeEntry(mode, name string) string { return mode + " " + name + "\x00" + treeHash }

// treeModes are modes git reads (old git wrote 100664; zero padding and
// permission bits are ignored; an unknown type reads as a gitlink).
var treeModes = []string{
	"100644", "100755", "120000", "40000", "160000",
	"100664", "100640", "100600", "100744", "100000", "040000", "0100644", "40755",
	"120777", "160001", "1", "0", "644", "755", "140000", "170000", "77777777777", "37777777777",
}

func TestParseTreeModesLikeGit(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("modes", 0)
	for _, m := range treeModes {
		raw := []byte(treeEntry(m, "a"))
		if _, err := ParseTree(raw); err != nil {
			t.Errorf("mode %s: ParseTree refuses what git reads: %v", m, err)
			continue
		}
		checkTreeLikeGit(t, s, dir, raw)
	}
	// The 100664 tree of the issue: a file beside a directory, read as git
	// reads it.
	checkTreeLikeGit(t, s, dir, []byte(treeEntry("100664", "aes.c")+treeEntry("40000", "b")+treeEntry("100755", "c")))
}

func TestParseTreeRefusesWhatGitRefuses(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("bad", 0)
	for _, raw := range []string{" a\x00" + treeHash, "10064a a\x00" + treeHash, "100644a\x00" + treeHash, "-1 a\x00" + treeHash, "100644 \x00" + treeHash} {
		if _, err := ParseTree([]byte(raw)); err == nil {
			t.Errorf("ParseTree(%q) accepted", raw)
		}
		if _, err := gitReadsTree(t, s, dir, []byte(raw)); err == nil {
			t.Errorf("git reads %q: the test's premise is wrong", raw)
		}
	}
}

func TestReadTreeMatchesLsTree(t *testing.T) {
	s, dir, r := newRepo(t, 2)
	s.Commit(dir, "a/b/c.txt", "c", "nested")
	s.Commit(dir, "a.b", "x", "sort trap")
	out := s.Git(dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
	for _, line := range strings.Split(out, "\n") {
		name, typ, _ := strings.Cut(line, " ")
		if typ != "tree" {
			continue
		}
		h := mustParse(t, name)
		got, err := r.ReadTree(h)
		if err != nil {
			t.Fatal(err)
		}
		ls, err := s.RunErr(dir, nil, "git", "ls-tree", "-z", h.String())
		if err != nil {
			t.Fatal(err)
		}
		want, err := ParseLsTree([]byte(ls))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("tree %s: ReadTree %+v, ls-tree %+v", h, got, want)
		}
	}
}

// FuzzParseTreeLikeGit compares ParseTree with git's own tree reader on
// generated trees.
func FuzzParseTreeLikeGit(f *testing.F) {
	_, trees := realObjects(f)
	for _, tr := range trees {
		f.Add(tr)
	}
	for _, m := range treeModes {
		f.Add([]byte(treeEntry(m, "a") + treeEntry("100644", "b")))
	}
	s := testutil.NewSandbox(f)
	dir := s.InitRepo("fuzz", 0)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 4096 {
			return
		}
		checkTreeLikeGit(t, s, dir, raw)
	})
}

// TestNoInProcessReadsLikeGit: a Repo opened with GIT_SECURE_NO_INPROCESS
// uses none of the in-process readers and reads and writes the same as
// one without it.
func TestNoInProcessReadsLikeGit(t *testing.T) {
	s, dir, fast := newInProcessRepo(t, 3)
	s.Commit(dir, "a/b/c.txt", "c", "nested")
	s.Git(dir, "pack-refs", "--all")
	s.Commit(dir, "a.b", "x", "loose after pack")
	s.Git(dir, "config", "secure.rootKeys", "SHA256:x")
	slow, err := OpenWithEnv(dir, append(s.Environ(), EnvNoInProcess+"=1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slow.Close() })
	if slow.fast != nil {
		t.Fatalf("the switch left an in-process reader on: %+v", slow)
	}
	if _, err := OpenGitDir(fast.GitDir(), dir, append(s.Environ(), EnvNoInProcess+"=1")); !errors.Is(err, ErrNeedProbe) {
		t.Fatalf("OpenGitDir with the switch: %v, want ErrNeedProbe (git finds the repository)", err)
	}
	for _, r := range []*Repo{fast, slow} {
		if _, err := r.ConfigList(); err != nil {
			t.Fatal(err)
		}
	}
	fc, _ := fast.ConfigList()
	sc, _ := slow.ConfigList()
	if !reflect.DeepEqual(fc, sc) {
		t.Errorf("config: in-process %+v, git %+v", fc, sc)
	}
	fr, err1 := fast.ListRefs()
	sr, err2 := slow.ListRefs()
	if err1 != nil || err2 != nil || !reflect.DeepEqual(fr, sr) {
		t.Errorf("refs: in-process %+v (%v), git %+v (%v)", fr, err1, sr, err2)
	}
	out := s.Git(dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
	var commits []Hash
	for _, line := range strings.Split(out, "\n") {
		name, typ, _ := strings.Cut(line, " ")
		h := mustParse(t, name)
		switch typ {
		case "tree":
			a, err1 := fast.ReadTree(h)
			b, err2 := slow.ReadTree(h)
			if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) {
				t.Errorf("tree %s: in-process %+v (%v), git %+v (%v)", h, a, err1, b, err2)
			}
		case "commit":
			commits = append(commits, h)
		}
		_, a, err1 := fast.ReadObject(h, 1<<20)
		_, b, err2 := slow.ReadObject(h, 1<<20)
		if err1 != nil || err2 != nil || string(a) != string(b) {
			t.Errorf("object %s differs (%v, %v)", h, err1, err2)
		}
	}
	for _, a := range commits {
		for _, b := range commits {
			x, err1 := fast.IsAncestor(a, b)
			y, err2 := slow.IsAncestor(a, b)
			if err1 != nil || err2 != nil || x != y {
				t.Errorf("IsAncestor(%s, %s): in-process %v (%v), git %v (%v)", a, b, x, err1, y, err2)
			}
		}
	}
	// Writes go through git too, the empty tree (which git knows without
	// storing it) included.
	if _, err := slow.WriteObject("tree", nil); err != nil {
		t.Fatal(err)
	}
	if all := s.Git(dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"); !strings.Contains(all, EmptyTreeHash) {
		t.Error("the empty tree was not stored")
	}
	blob, err := slow.WriteObject("blob", []byte("written by git\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Git(dir, "cat-file", "blob", blob.String()); got != "written by git" {
		t.Errorf("blob written with the switch reads %q", got)
	}
	head := mustParse(t, s.Git(dir, "rev-parse", "HEAD"))
	parent := mustParse(t, s.Git(dir, "rev-parse", "HEAD~1"))
	if err := slow.UpdateRefs([]RefUpdate{{Name: "refs/heads/main", Old: head, New: parent}}, "test"); err != nil {
		t.Fatal(err)
	}
	if got := s.Git(dir, "rev-parse", "refs/heads/main"); got != parent.String() {
		t.Errorf("main = %s after the update through git, want %s", got, parent)
	}
}

// FuzzParseLsTree: what ParseLsTree accepts is a valid tree (it encodes,
// and the encoding reads back the same).
func FuzzParseLsTree(f *testing.F) {
	f.Add([]byte("100644 blob " + strings.Repeat("ab", 20) + "\ta\x00040000 tree " + strings.Repeat("cd", 20) + "\tb\x00"))
	f.Add([]byte("160000 commit " + strings.Repeat("01", 20) + "\tsub\x00"))
	f.Fuzz(func(t *testing.T, out []byte) {
		entries, err := ParseLsTree(out)
		if err != nil {
			return
		}
		raw, err := EncodeTree(entries)
		if err != nil {
			t.Fatalf("EncodeTree of %+v: %v", entries, err)
		}
		back, err := ParseTree(raw)
		if err != nil || !(len(back) == 0 && len(entries) == 0) && !reflect.DeepEqual(back, entries) {
			t.Fatalf("ParseTree(EncodeTree(%+v)) = %+v, %v", entries, back, err)
		}
	})
}
