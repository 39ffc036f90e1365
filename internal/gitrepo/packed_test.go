package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// PrunesPackedRef says yes only for a ref packed-refs holds once, at the
// line's old value, while packed-refs is not locked: what git pack-refs
// leaves before it removes the loose file. Everything else reads as the
// deletion it is.
func TestPrunesPackedRef(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 2)
	gitDir := filepath.Join(dir, ".git")
	s.Git(dir, "branch", "packed", "HEAD")
	s.Git(dir, "branch", "moved", "HEAD~1")
	s.Git(dir, "pack-refs", "--all")
	s.Git(dir, "branch", "-f", "moved", "HEAD") // loose at HEAD, packed at HEAD~1
	s.Git(dir, "branch", "loose", "HEAD")       // loose only
	g, err := OpenGitDir(gitDir, dir, inProcessEnv(s))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	head, _ := ParseHash(strings.TrimSpace(s.Git(dir, "rev-parse", "HEAD")))
	prev, _ := ParseHash(strings.TrimSpace(s.Git(dir, "rev-parse", "HEAD~1")))
	check := func(what, ref string, old Hash, want bool) {
		t.Helper()
		got, err := g.PrunesPackedRef(ref, old)
		if err != nil || got != want {
			t.Errorf("%s: PrunesPackedRef(%s, %s) = %v, %v; want %v", what, ref, old, got, err, want)
		}
	}
	check("packed at old", "refs/heads/packed", head, true)
	check("packed at another value", "refs/heads/moved", head, false)
	check("packed at the old value of the line", "refs/heads/moved", prev, true)
	check("loose only", "refs/heads/loose", head, false)
	check("zero old value", "refs/heads/packed", ZeroHash, false)
	check("a prefix of a packed ref", "refs/heads/pack", head, false)

	// A deletion holds packed-refs.lock through the prepared state.
	lock := filepath.Join(gitDir, "packed-refs.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	check("packed-refs locked", "refs/heads/packed", head, false)
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}

	// A ref listed twice, or a line too long to read, is not understood.
	packed := filepath.Join(gitDir, "packed-refs")
	data, err := os.ReadFile(packed)
	if err != nil {
		t.Fatal(err)
	}
	dup := string(data) + head.String() + " refs/heads/packed\n"
	if err := os.WriteFile(packed, []byte(dup), 0o644); err != nil {
		t.Fatal(err)
	}
	check("listed twice", "refs/heads/packed", head, false)
	long := string(data) + head.String() + " refs/heads/" + strings.Repeat("x", 4*maxRefNameLen) + "\n"
	if err := os.WriteFile(packed, []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	check("a line over the bound", "refs/heads/zzz", head, false)
	if err := os.Remove(packed); err != nil {
		t.Fatal(err)
	}
	check("no packed-refs", "refs/heads/packed", head, false)
}
