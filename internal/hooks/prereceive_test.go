package hooks

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/testutil"
)

// TestPreReceiveRefusesDeletingTheMetadata: one push that deletes the log
// and the policy together (and moves main) must not pass as a push to a
// repository that is not protected.
func TestPreReceiveRefusesDeletingTheMetadata(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 2)
	key := s.NewKey("alice", "ed25519")
	g, err := gitrepo.OpenWithEnv(dir, s.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	r := &porcelain.Repo{Git: g, Now: time.Now, Home: s.Home}
	if _, err := r.Init(key.Private); err != nil {
		t.Fatal(err)
	}
	rslTip, _, _ := g.ResolveRef("refs/secure/rsl")
	polTip, _, _ := g.ResolveRef("refs/secure/policy")
	main, _, _ := g.ResolveRef("refs/heads/main")
	other := s.Commit(dir, "x.txt", "x\n", "unrecorded") // moves main
	var in bytes.Buffer
	in.WriteString(rslTip.String() + " " + gitrepo.ZeroHash.String() + " refs/secure/rsl\n")
	in.WriteString(polTip.String() + " " + gitrepo.ZeroHash.String() + " refs/secure/policy\n")
	in.WriteString(main.String() + " " + other + " refs/heads/main\n")
	// The hook reads the refs as they are before the push: put main back.
	s.Git(dir, "update-ref", "refs/heads/main", main.String())
	var stderr bytes.Buffer
	err = Run(&Context{Repo: r, Name: "pre-receive", Stdin: &in, Stderr: &stderr, Getenv: func(string) string { return "" }})
	if !errors.Is(err, ErrRejected) || !strings.Contains(stderr.String(), "cannot be deleted") {
		t.Fatalf("deleting the log and the policy in one push: err=%v, stderr=%q; want a rejection saying they cannot be deleted", err, stderr.String())
	}
}
