package porcelain

import (
	"crypto/ed25519"
	"crypto/sha256"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// stagingRepo is the empty bare repository the staged-change tests build
// their policies in (closed with the test), and the fixed time and
// identity they write with.
func stagingRepo(t testing.TB) (*gitrepo.Repo, time.Time, gitrepo.Ident) {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--bare", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	g, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return g, now, gitrepo.Ident{Name: "Staging Test", Email: "staging@example.com", When: now}
}

// stagingKey is the deterministic Ed25519 key of name: the same name gives
// the same key in every staged-change test.
func stagingKey(t testing.TB, name string) (ssh.Signer, ssh.PublicKey) {
	t.Helper()
	seed := sha256.Sum256([]byte("staging test key " + name))
	s, err := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(seed[:]))
	if err != nil {
		t.Fatal(err)
	}
	return s, s.PublicKey()
}
