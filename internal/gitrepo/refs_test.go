package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

func TestValidRefName(t *testing.T) {
	good := []string{"refs/heads/main", "refs/secure/rsl", "refs/tags/v1.0", "refs/heads/a-b_c/d", "refs/heads/ünï", "refs/x/@", "refs/heads/a.b",
		"refs/heads/a./b", "refs/heads/@", "refs/heads/a@b", "refs/heads/a.lock.b", "refs/heads/a{b}"}
	bad := []string{
		"", "HEAD", "main", "-x", "refs/", "refs", "refs/heads/../x", "refs/heads/a..b",
		"refs/heads/.hidden", "refs/heads/a/.b", "refs/@{", "refs/heads/x.lock", "refs/heads/x.lock/y", "refs/heads/a@{1}",
		"refs/heads/a\x01b", "refs/heads/a\x7fb", "refs/heads/a b", "refs/heads/a~1", "refs/heads/a^",
		"refs/heads/a:b", "refs/heads/a?", "refs/heads/a*", "refs/heads/a[", "refs/heads/a\\b",
		"refs/heads//x", "refs/heads/x/", "refs/heads/x.", "refs/heads/\n", "/refs/heads/x",
		"refs/" + strings.Repeat("a", 1100),
	}
	for _, n := range good {
		if err := ValidRefName(n); err != nil {
			t.Errorf("ValidRefName(%q) = %v", n, err)
		}
	}
	for _, n := range bad {
		if err := ValidRefName(n); err == nil {
			t.Errorf("ValidRefName(%q) accepted", n)
		}
	}
	// Agreement with git check-ref-format on the bad and good lists.
	s, dir, r := newRepo(t, 1)
	_ = r
	for _, n := range append(good, bad[1:]...) {
		if strings.ContainsAny(n, "\x00") || !strings.HasPrefix(n, "refs/") || len(n) > maxRefNameLen {
			continue
		}
		_, err := s.RunErr(dir, nil, "git", "check-ref-format", n)
		if (err == nil) != (ValidRefName(n) == nil) {
			t.Errorf("%q: git says ok=%v, we say %v", n, err == nil, ValidRefName(n))
		}
	}
}

func TestRefs(t *testing.T) {
	s, dir, r := newRepo(t, 2)
	head := mustParse(t, s.Git(dir, "rev-parse", "HEAD"))
	prev := mustParse(t, s.Git(dir, "rev-parse", "HEAD~1"))
	s.Git(dir, "tag", "-a", "-m", "tag", "v1", prev.String())
	tag := mustParse(t, s.Git(dir, "rev-parse", "refs/tags/v1"))
	s.Git(dir, "update-ref", "refs/secure/rsl", head.String())
	s.Git(dir, "update-ref", "refs/secure/policy", prev.String())
	s.Git(dir, "update-ref", "refs/heads/refs/secure/nope", head.String()) // DWIM trap
	s.Git(dir, "pack-refs", "--all")
	s.Git(dir, "update-ref", "refs/secureX", head.String())

	for _, tt := range []struct {
		name string
		want Hash
		ok   bool
	}{
		{"HEAD", head, true},
		{"refs/heads/main", head, true},
		{"refs/tags/v1", tag, true}, // not peeled
		{"refs/secure/rsl", head, true},
		{"refs/secure/nope", ZeroHash, false},
		{"refs/secure", ZeroHash, false},
		{"refs/heads/missing", ZeroHash, false},
	} {
		got, ok, err := r.ResolveRef(tt.name)
		if err != nil || ok != tt.ok || got != tt.want {
			t.Errorf("ResolveRef(%q) = %s %v %v, want %s %v", tt.name, got, ok, err, tt.want, tt.ok)
		}
	}
	for _, n := range []string{"main", "-h", "refs/heads/../x", "HEAD~1"} {
		if _, _, err := r.ResolveRef(n); err == nil {
			t.Errorf("ResolveRef(%q) accepted", n)
		}
	}

	refs, err := r.ListRefs("refs/secure/")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(refs) != fmt.Sprint([]Ref{{"refs/secure/policy", prev}, {"refs/secure/rsl", head}}) {
		t.Errorf("ListRefs(refs/secure/) = %v", refs)
	}
	refs, err = r.ListRefs("refs/secure")
	if err != nil || len(refs) != 3 {
		t.Errorf("ListRefs(refs/secure) = %v %v", refs, err)
	}
	refs, err = r.ListRefs("refs/tags/", "refs/secure/r")
	if err != nil || len(refs) != 2 || refs[0].Name != "refs/secure/rsl" || refs[1].Name != "refs/tags/v1" {
		t.Errorf("ListRefs(two prefixes) = %v %v", refs, err)
	}
	all, err := r.ListRefs()
	if err != nil || len(all) != 6 || !sort.SliceIsSorted(all, func(i, j int) bool { return all[i].Name < all[j].Name }) {
		t.Errorf("ListRefs() = %v %v", all, err)
	}
	if _, err := r.ListRefs("--all"); err == nil {
		t.Error("ListRefs(--all) accepted")
	}

	if got, err := r.SymbolicRef("HEAD"); err != nil || got != "refs/heads/main" {
		t.Errorf("SymbolicRef(HEAD) = %q %v", got, err)
	}
	if _, err := r.SymbolicRef("refs/heads/main"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SymbolicRef(non-symbolic) = %v", err)
	}

	if got, err := r.ResolveRevision("v1"); err != nil || got != prev {
		t.Errorf("ResolveRevision(v1) = %s %v", got, err)
	}
	if got, err := r.ResolveRevision("main~1"); err != nil || got != prev {
		t.Errorf("ResolveRevision(main~1) = %s %v", got, err)
	}
	if _, err := r.ResolveRevision("nonexistent"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ResolveRevision(nonexistent) = %v", err)
	}
	for _, rev := range []string{"", "-h", "--output=/tmp/x", "a\nb"} {
		if _, err := r.ResolveRevision(rev); err == nil {
			t.Errorf("ResolveRevision(%q) accepted", rev)
		}
	}
	// Tree is not a commit.
	tree := s.Git(dir, "rev-parse", "HEAD^{tree}")
	if _, err := r.ResolveRevision(tree); err == nil {
		t.Error("ResolveRevision(tree) accepted")
	}

	// PeelToCommit follows nested tags and rejects non-commits.
	s.Git(dir, "tag", "-a", "-m", "nested", "v1n", "v1")
	nested := mustParse(t, s.Git(dir, "rev-parse", "refs/tags/v1n"))
	// ResolveObject keeps an annotated tag: a push or approval of its
	// hash, full or abbreviated, is of the tag object, not its commit.
	if got, err := r.ResolveObject(nested.String()[:12]); err != nil || got != nested {
		t.Errorf("ResolveObject(abbreviated tag) = %s %v, want the tag %s", got, err, nested)
	}
	if got, err := r.ResolveObject("v1n"); err != nil || got != nested {
		t.Errorf("ResolveObject(v1n) = %s %v, want the tag %s", got, err, nested)
	}
	if got, err := r.ResolveObject("main~1"); err != nil || got != prev {
		t.Errorf("ResolveObject(main~1) = %s %v", got, err)
	}
	if _, err := r.ResolveObject("nonexistent"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ResolveObject(nonexistent) = %v", err)
	}
	if _, err := r.ResolveObject("-h"); err == nil {
		t.Error("ResolveObject(-h) accepted")
	}
	if got, err := r.PeelToCommit(nested); err != nil || got != prev {
		t.Errorf("PeelToCommit = %s %v", got, err)
	}
	if got, err := r.PeelToCommit(head); err != nil || got != head {
		t.Errorf("PeelToCommit(commit) = %s %v", got, err)
	}
	s.Git(dir, "tag", "-a", "-m", "treetag", "tt", tree)
	if _, err := r.PeelToCommit(mustParse(t, s.Git(dir, "rev-parse", "refs/tags/tt"))); err == nil {
		t.Error("PeelToCommit(tag of tree) succeeded")
	}
	prevTag := nested
	for i := 0; i < 11; i++ {
		s.Git(dir, "tag", "-a", "-m", "deep", fmt.Sprintf("d%d", i), prevTag.String())
		prevTag = mustParse(t, s.Git(dir, "rev-parse", fmt.Sprintf("refs/tags/d%d", i)))
	}
	if _, err := r.PeelToCommit(prevTag); err == nil {
		t.Error("PeelToCommit(13 nested tags) succeeded")
	}
}

func TestUpdateRefs(t *testing.T) {
	s, dir, r := newRepo(t, 3)
	c := make([]Hash, 3)
	for i := range c {
		c[i] = mustParse(t, s.Git(dir, "rev-parse", fmt.Sprintf("HEAD~%d", i)))
	}
	get := func(name string) Hash {
		h, _, err := r.ResolveRef(name)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	// Create-only.
	if err := r.UpdateRefs([]RefUpdate{{Name: "refs/secure/rsl", New: c[2]}}, "create"); err != nil {
		t.Fatal(err)
	}
	err := r.UpdateRefs([]RefUpdate{{Name: "refs/secure/rsl", New: c[1]}}, "create again")
	if !errors.Is(err, ErrRefChanged) || !strings.Contains(err.Error(), "refs/secure/rsl") {
		t.Fatalf("create existing: %v", err)
	}
	// CAS success.
	if err := r.UpdateRefs([]RefUpdate{{Name: "refs/secure/rsl", Old: c[2], New: c[1]}}, "advance\nwith newline"); err != nil {
		t.Fatal(err)
	}
	if get("refs/secure/rsl") != c[1] {
		t.Fatal("not advanced")
	}
	if log := s.Git(dir, "reflog", "show", "--format=%gs", "refs/secure/rsl"); !strings.Contains(log, "advance with newline") {
		t.Errorf("reflog %q", log)
	}
	// CAS mismatch in a multi-ref transaction: nothing changes.
	err = r.UpdateRefs([]RefUpdate{
		{Name: "refs/secure/policy", New: c[0]},
		{Name: "refs/secure/rsl", Old: c[2], New: c[0]},
	}, "stale")
	if !errors.Is(err, ErrRefChanged) || !strings.Contains(err.Error(), "refs/secure/rsl") {
		t.Fatalf("stale: %v", err)
	}
	if get("refs/secure/rsl") != c[1] {
		t.Fatal("rsl changed")
	}
	if _, ok, _ := r.ResolveRef("refs/secure/policy"); ok {
		t.Fatal("policy created despite failed transaction")
	}
	// Atomic multi-ref success.
	if err := r.UpdateRefs([]RefUpdate{
		{Name: "refs/secure/policy", New: c[0]},
		{Name: "refs/secure/rsl", Old: c[1], New: c[0]},
	}, "both"); err != nil {
		t.Fatal(err)
	}
	// Delete with wrong and right old value.
	if err := r.UpdateRefs([]RefUpdate{{Name: "refs/secure/policy", Old: c[1]}}, "del"); !errors.Is(err, ErrRefChanged) {
		t.Fatalf("delete stale: %v", err)
	}
	if err := r.UpdateRefs([]RefUpdate{{Name: "refs/secure/policy", Old: c[0]}}, "del"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := r.ResolveRef("refs/secure/policy"); ok {
		t.Fatal("not deleted")
	}
	// Update of a missing ref with an old value.
	if err := r.UpdateRefs([]RefUpdate{{Name: "refs/secure/gone", Old: c[0], New: c[1]}}, ""); !errors.Is(err, ErrRefChanged) {
		t.Fatalf("missing ref: %v", err)
	}
	// Verify-absent.
	if err := r.UpdateRefs([]RefUpdate{{Name: "refs/secure/gone"}}, ""); err != nil {
		t.Fatalf("verify absent: %v", err)
	}
	// Invalid input.
	for _, u := range [][]RefUpdate{
		{{Name: "refs/heads/../x", New: c[0]}},
		{{Name: "-x", New: c[0]}},
		{{Name: "refs/a", New: c[0]}, {Name: "refs/a", New: c[1]}},
	} {
		if err := r.UpdateRefs(u, ""); err == nil || errors.Is(err, ErrRefChanged) {
			t.Errorf("UpdateRefs(%v) = %v", u, err)
		}
	}
	// Nonexistent object: an error, but not a lost CAS.
	if err := r.UpdateRefs([]RefUpdate{{Name: "refs/secure/x", New: mustParse(t, strings.Repeat("1", 40))}}, ""); err == nil || errors.Is(err, ErrRefChanged) {
		t.Errorf("nonexistent object: %v", err)
	}
	// Symbolic refs are not dereferenced: updating a symref replaces it
	// instead of moving its target.
	s.Git(dir, "symbolic-ref", "refs/secure/sym", "refs/heads/main")
	if err := r.UpdateRefs([]RefUpdate{{Name: "refs/secure/sym", Old: c[0], New: c[2]}}, ""); err != nil {
		t.Fatal(err)
	}
	if get("refs/heads/main") != c[0] {
		t.Fatal("symref target moved")
	}
}

func TestUpdateRefsRace(t *testing.T) {
	s, dir, r := newRepo(t, 2)
	base := mustParse(t, s.Git(dir, "rev-parse", "HEAD~1"))
	head := mustParse(t, s.Git(dir, "rev-parse", "HEAD"))
	// A second Repo on the same directory behaves like another process.
	r2 := open(t, s, dir)
	for round := 0; round < 10; round++ {
		name := fmt.Sprintf("refs/secure/race%d", round)
		if err := r.UpdateRefs([]RefUpdate{{Name: name, New: base}}, ""); err != nil {
			t.Fatal(err)
		}
		const n = 8
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins, lost := 0, 0
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				repo := r
				if i%2 == 1 {
					repo = r2
				}
				<-start
				err := repo.UpdateRefs([]RefUpdate{{Name: name, Old: base, New: head}}, "race")
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, ErrRefChanged):
					lost++
				default:
					t.Errorf("unexpected error: %v", err)
				}
			}(i)
		}
		close(start)
		wg.Wait()
		if wins != 1 || lost != n-1 {
			t.Fatalf("round %d: %d wins, %d lost", round, wins, lost)
		}
	}
}

func TestChangedPaths(t *testing.T) {
	s, dir, r := newRepo(t, 0)
	write := func(files map[string]string) Hash {
		t.Helper()
		for p, c := range files {
			if c == "" {
				if err := os.RemoveAll(filepath.Join(dir, p)); err != nil {
					t.Fatal(err)
				}
			}
		}
		for p, c := range files {
			full := filepath.Join(dir, p)
			if c == "" {
				continue
			}
			_ = os.RemoveAll(full) // a directory replaced by a file
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s.Git(dir, "add", "-A")
		s.Git(dir, "commit", "-q", "--allow-empty", "-m", "x")
		return mustParse(t, s.Git(dir, "rev-parse", "HEAD^{tree}"))
	}
	trees := []Hash{ZeroHash}
	trees = append(trees, write(map[string]string{
		"README": "r", "a/b/c.txt": "c", "a/b/d.txt": "d", "a/e": "e", "x/y/z/w": "w", "same/s": "s", "f": "file", "a.b": "ab",
	}))
	trees = append(trees, write(map[string]string{
		"a/b/c.txt": "c2",                              // modified deep
		"a/e":       "",                                // deleted
		"x":         "",                                // dir deleted
		"f":         "",                                // file -> dir
		"f/g/h":     "h", "f/i": "i", "new/dir/n": "n", // added
		"a.b":   "",
		"a.b/c": "file->dir", // trap for sort order
	}))
	if err := os.Chmod(filepath.Join(dir, "README"), 0o755); err != nil {
		t.Fatal(err)
	}
	trees = append(trees, write(map[string]string{"a/b": "dir->file", "renamed": "c2"})) // mode change, dir->file
	trees = append(trees, write(map[string]string{"renamed": "", "moved/renamed": "c2"}))
	empty := mustParse(t, EmptyTreeHash)
	trees = append(trees, empty)
	trees = append(trees, linkTrees(t, s, dir)...)

	gitDiff := func(a, b Hash) []string {
		if a.IsZero() {
			a = empty
		}
		if b.IsZero() {
			b = empty
		}
		out := s.Git(dir, "diff-tree", "-r", "--no-renames", "--name-only", "-z", a.String(), b.String())
		var paths []string
		for _, p := range strings.Split(out, "\x00") {
			if p != "" {
				paths = append(paths, p)
			}
		}
		sort.Strings(paths)
		return paths
	}
	for i := range trees {
		for j := range trees {
			got, err := r.ChangedPaths(trees[i], trees[j])
			if err != nil {
				t.Fatal(err)
			}
			want := gitDiff(trees[i], trees[j])
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("ChangedPaths(%d, %d):\n got %q\nwant %q", i, j, got, want)
			}
		}
	}
	if _, err := r.ChangedPaths(trees[1], mustParse(t, strings.Repeat("2", 40))); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing tree: %v", err)
	}
}

// linkTrees makes trees with symlinks, gitlinks (submodules) and a
// change six directories deep, by git mktree: a symlink retargeted, a
// gitlink moved to another commit, a symlink that becomes a directory, a
// gitlink that becomes a file, and the same deep file in two versions.
func linkTrees(t *testing.T, s *testutil.Sandbox, dir string) []Hash {
	t.Helper()
	blob := func(c string) string {
		out, err := s.RunErr(dir, []byte(c), "git", "hash-object", "-w", "--stdin")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	mktree := func(lines ...string) string {
		out, err := s.RunErr(dir, []byte(strings.Join(lines, "\n")+"\n"), "git", "mktree")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	deep := func(content string) string {
		h := mktree("100644 blob " + blob(content) + "\tf")
		for _, name := range []string{"6", "5", "4", "3", "2", "1"} {
			h = mktree("040000 tree " + h + "\t" + name)
		}
		return h
	}
	c1, c2 := s.Git(dir, "rev-parse", "HEAD"), s.Git(dir, "rev-parse", "HEAD^")
	a := mktree("120000 blob "+blob("a")+"\tlink", "160000 commit "+c1+"\tsub", "040000 tree "+deep("one")+"\tdeep", "100644 blob "+blob("r")+"\tREADME")
	b := mktree("120000 blob "+blob("b")+"\tlink", "160000 commit "+c2+"\tsub", "040000 tree "+deep("two")+"\tdeep", "100755 blob "+blob("r")+"\tREADME")
	c := mktree("040000 tree "+deep("one")+"\tlink", "100644 blob "+blob("x")+"\tsub", "040000 tree "+deep("one")+"\tdeep", "100644 blob "+blob("r")+"\tREADME")
	return []Hash{mustParse(t, a), mustParse(t, b), mustParse(t, c)}
}

func TestReadBlobAt(t *testing.T) {
	s, dir, r := newRepo(t, 0)
	s.Commit(dir, "policy/root.json", "{}\n", "p")
	if err := os.Symlink("root.json", filepath.Join(dir, "policy", "link")); err != nil {
		t.Fatal(err)
	}
	s.Git(dir, "add", "-A")
	s.Git(dir, "commit", "-q", "-m", "link")
	tree := mustParse(t, s.Git(dir, "rev-parse", "HEAD^{tree}"))
	if b, err := r.ReadBlobAt(tree, "policy/root.json", 100); err != nil || string(b) != "{}\n" {
		t.Fatalf("ReadBlobAt = %q %v", b, err)
	}
	if _, err := r.ReadBlobAt(tree, "policy/root.json", 2); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("too large: %v", err)
	}
	for _, p := range []string{"policy/none", "none/root.json", "policy/root.json/x"} {
		if _, err := r.ReadBlobAt(tree, p, 100); !errors.Is(err, ErrNotFound) {
			t.Errorf("%q: %v", p, err)
		}
	}
	for _, p := range []string{"", "/policy/root.json", "policy//root.json", "policy/../policy/root.json", "policy", "policy/link"} {
		if _, err := r.ReadBlobAt(tree, p, 100); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("%q: %v", p, err)
		}
	}
}

func TestConfigAndMergeBase(t *testing.T) {
	s, dir, r := newRepo(t, 2)
	if _, ok, err := r.Config("secure.unset"); ok || err != nil {
		t.Fatalf("unset: %v %v", ok, err)
	}
	if err := r.SetConfig("secure.value", "-v with spaces"); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := r.Config("secure.value"); !ok || err != nil || v != "-v with spaces" {
		t.Fatalf("Config = %q %v %v", v, ok, err)
	}
	s.Git(dir, "config", "--add", "secure.multi", "a")
	s.Git(dir, "config", "--add", "secure.multi", "b\nc")
	if v, err := r.ConfigAll("secure.multi"); err != nil || fmt.Sprint(v) != "[a b\nc]" {
		t.Fatalf("ConfigAll = %q %v", v, err)
	}
	if v, err := r.ConfigAll("secure.none"); err != nil || v != nil {
		t.Fatalf("ConfigAll unset = %q %v", v, err)
	}
	if err := r.UnsetConfig("secure.multi"); err != nil {
		t.Fatal(err)
	}
	if err := r.UnsetConfig("secure.multi"); err != nil {
		t.Fatalf("second unset: %v", err)
	}
	for _, k := range []string{"", "-l", "nodot", "a.b\nc"} {
		if _, _, err := r.Config(k); err == nil {
			t.Errorf("Config(%q) accepted", k)
		}
	}

	head := mustParse(t, s.Git(dir, "rev-parse", "HEAD"))
	prev := mustParse(t, s.Git(dir, "rev-parse", "HEAD~1"))
	s.Git(dir, "checkout", "-q", "--orphan", "other")
	s.Commit(dir, "o", "o", "orphan")
	orphan := mustParse(t, s.Git(dir, "rev-parse", "HEAD"))
	if mb, ok, err := r.MergeBase(head, prev); err != nil || !ok || mb != prev {
		t.Errorf("MergeBase = %s %v %v", mb, ok, err)
	}
	if _, ok, err := r.MergeBase(head, orphan); err != nil || ok {
		t.Errorf("MergeBase unrelated = %v %v", ok, err)
	}
	if ok, err := r.IsAncestor(prev, head); err != nil || !ok {
		t.Errorf("IsAncestor = %v %v", ok, err)
	}
	if ok, err := r.IsAncestor(head, prev); err != nil || ok {
		t.Errorf("IsAncestor reversed = %v %v", ok, err)
	}
	if _, err := r.IsAncestor(head, mustParse(t, strings.Repeat("3", 40))); err == nil {
		t.Error("IsAncestor(missing) succeeded")
	}
}

func TestRunGitError(t *testing.T) {
	_, _, r := newRepo(t, 1)
	out, err := r.Run(context.Background(), []byte("hello"), "hash-object", "--stdin")
	if err != nil || strings.TrimSpace(string(out)) != "b6fc4c620b67d95f953a5c1c1230aaab5db5a1b0" {
		t.Fatalf("Run = %q %v", out, err)
	}
	_, err = r.Run(context.Background(), nil, "rev-parse", "--verify", "nonexistent-rev")
	var ge *GitError
	if !errors.As(err, &ge) || ge.ExitCode != 128 || !strings.Contains(ge.Stderr, "fatal") || !strings.Contains(err.Error(), "fatal") {
		t.Fatalf("GitError = %#v", err)
	}
	_, err = r.Run(context.Background(), nil, "ls-remote", "https://user:s3cret@127.0.0.1:1/repo.git")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("credentials not redacted: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Run(ctx, nil, "status"); err == nil {
		t.Fatal("cancelled Run succeeded")
	}
	env := r.Env()
	found := false
	for _, kv := range env {
		found = found || kv == "GIT_NO_REPLACE_OBJECTS=1"
	}
	if !found {
		t.Error("Env lacks GIT_NO_REPLACE_OBJECTS")
	}
}

// A transaction started ahead (StartUpdateRefs) is UpdateRefs's: its
// compare-and-swap holds against a ref moved after the start (by git,
// in loose and in packed form), its reflog entry is written, and an
// aborted one changes nothing, leaves no lock and runs no
// reference-transaction hook.
func TestStartUpdateRefs(t *testing.T) {
	s, dir, r := newRepo(t, 3)
	c := make([]Hash, 3)
	for i := range c {
		c[i] = mustParse(t, s.Git(dir, "rev-parse", fmt.Sprintf("HEAD~%d", i)))
	}
	hookLog := filepath.Join(s.Home, "hook.log")
	hook := filepath.Join(dir, ".git", "hooks", "reference-transaction")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho \"$1\" >>'"+hookLog+"'\ncat >/dev/null\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hookRuns := func() string {
		b, _ := os.ReadFile(hookLog)
		_ = os.Remove(hookLog)
		return string(b)
	}
	get := func(name string) Hash {
		h, _, err := r.ResolveRef(name)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	const name = "refs/secure/rsl"
	tx, err := r.StartUpdateRefs("create")
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Apply([]RefUpdate{{Name: name, New: c[2]}}); err != nil {
		t.Fatal(err)
	}
	tx.Abort() // after Apply: nothing
	if get(name) != c[2] {
		t.Fatal("not created")
	}
	if got := hookRuns(); got != "prepared\ncommitted\n" {
		t.Fatalf("hook ran for %q", got)
	}
	// Aborted: no change, no hook, no lock left.
	tx, err = r.StartUpdateRefs("aborted")
	if err != nil {
		t.Fatal(err)
	}
	tx.Abort()
	tx.Abort()
	if get(name) != c[2] {
		t.Fatal("changed by an aborted transaction")
	}
	if got := hookRuns(); got != "" {
		t.Fatalf("hook ran for an aborted transaction: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "secure", "rsl.lock")); !os.IsNotExist(err) {
		t.Fatalf("lock left: %v", err)
	}
	if err := tx.Apply([]RefUpdate{{Name: name, Old: c[2], New: c[1]}}); err == nil {
		t.Fatal("an aborted transaction applied")
	}
	// The ref moves after the start, loose then packed: the transaction
	// started before loses its compare-and-swap and changes nothing.
	for _, packed := range []bool{false, true} {
		tx, err := r.StartUpdateRefs("stale")
		if err != nil {
			t.Fatal(err)
		}
		s.Git(dir, "update-ref", name, c[0].String())
		if packed {
			s.Git(dir, "pack-refs", "--all")
			if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "secure", "rsl")); !os.IsNotExist(err) {
				t.Fatalf("still loose after pack-refs: %v", err)
			}
		}
		hookRuns()
		err = tx.Apply([]RefUpdate{{Name: name, Old: c[2], New: c[1]}})
		if !errors.Is(err, ErrRefChanged) || !strings.Contains(err.Error(), name) {
			t.Fatalf("packed %v: stale transaction: %v", packed, err)
		}
		if get(name) != c[0] {
			t.Fatalf("packed %v: changed by a stale transaction", packed)
		}
		// Back to c[2] for the next round.
		s.Git(dir, "update-ref", name, c[2].String())
	}
	// A packed ref is updated by a transaction started ahead.
	s.Git(dir, "pack-refs", "--all")
	tx, err = r.StartUpdateRefs("advance\nfrom packed")
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Apply([]RefUpdate{{Name: name, Old: c[2], New: c[1]}}); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(s.Git(dir, "rev-parse", name)); get(name) != c[1] || got != c[1].String() {
		t.Fatal("not advanced")
	}
	if log := s.Git(dir, "reflog", "show", "--format=%gs", name); !strings.Contains(log, "advance from packed") {
		t.Errorf("reflog %q", log)
	}
	// Invalid input: refused before git reads anything.
	hookRuns()
	tx, err = r.StartUpdateRefs("bad")
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Apply([]RefUpdate{{Name: "refs/secure/bad..name", New: c[0]}}); err == nil {
		t.Fatal("invalid ref name applied")
	}
	if got := hookRuns(); got != "" {
		t.Fatalf("hook ran for a refused transaction: %q", got)
	}
}
