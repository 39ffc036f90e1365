package gitrepo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// SetHead moves HEAD only from the value the caller read, only to a
// branch, and never past another process's HEAD.lock; git reads the
// result as it reads its own symbolic-ref's.
func TestSetHead(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := filepath.Join(s.Home, "srv.git")
	s.Git(s.Home, "init", "-q", "--bare", dir)
	s.Git(dir, "symbolic-ref", "HEAD", "refs/heads/master")
	r := open(t, s, dir)
	for _, tc := range []struct{ target, old, want string }{
		{"refs/tags/v1", "refs/heads/master", "not a branch"},
		{"refs/secure/rsl", "refs/heads/master", "not a branch"},
		{"refs/heads/a..b", "refs/heads/master", "invalid"},
		{"main", "refs/heads/master", "invalid"},
		{"refs/heads/main", "refs/heads/dev", "not the symbolic ref to refs/heads/dev"},
	} {
		err := r.SetHead(tc.target, tc.old)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetHead(%q, %q) = %v, want an error saying %q", tc.target, tc.old, err, tc.want)
		}
		if strings.Contains(tc.want, "not the symbolic ref") && !errors.Is(err, ErrRefChanged) {
			t.Errorf("SetHead from a stale HEAD: %v does not wrap ErrRefChanged", err)
		}
	}
	if got := strings.TrimSpace(s.Git(dir, "symbolic-ref", "HEAD")); got != "refs/heads/master" {
		t.Fatalf("a refused SetHead moved HEAD to %s", got)
	}
	lock := filepath.Join(dir, "HEAD.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.SetHead("refs/heads/main", "refs/heads/master"); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), lock) {
		t.Errorf("SetHead with HEAD.lock present = %v, want ErrLocked naming %s", err, lock)
	}
	os.Remove(lock)
	if err := r.SetHead("refs/heads/main", "refs/heads/master"); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(s.Git(dir, "symbolic-ref", "HEAD")); got != "refs/heads/main" {
		t.Errorf("after SetHead, git reads HEAD as %s", got)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("SetHead left %s behind", lock)
	}
}
