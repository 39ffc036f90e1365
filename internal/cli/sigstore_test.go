package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/keylesstest"
)

// TestCLISigstoreIdentity: trust set-sigstore pins a Sigstore instance (a
// root change), add-person takes a keyless identity as its key text, and
// both refuse what is malformed, saying why.
func TestCLISigstoreIdentity(t *testing.T) {
	h := NewCLIHarness(t)
	h.Setup()
	s := keylesstest.New(t)
	dir := t.TempDir()
	fulcio, rekor := filepath.Join(dir, "fulcio.pem"), filepath.Join(dir, "rekor.pub")
	if err := os.WriteFile(fulcio, s.FulcioPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rekor, s.RekorPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	r := h.Run("trust", "set-sigstore", "--fulcio-root", rekor, "--rekor-key", rekor)
	if r.Code == 0 || !strings.Contains(r.Stderr, "CERTIFICATE") {
		t.Errorf("a key as the Fulcio root:\n%s", r)
	}
	r = h.Want(0, "trust", "set-sigstore", "--fulcio-root", fulcio, "--rekor-key", rekor)
	if !strings.Contains(r.Stdout, "staged: set sigstore") {
		t.Errorf("set-sigstore output:\n%s", r)
	}
	h.Want(0, "policy", "apply", "--key", h.Priv("alice"))

	id := "sigstore-oidc https://accounts.google.com kim@example.com"
	r = h.Run("policy", "add-person", "kim", "--key", "sigstore-oidc http://accounts.google.com kim@example.com")
	if r.Code != 2 || !strings.Contains(r.Stderr, "is not an https URL") {
		t.Errorf("an http issuer:\n%s", r)
	}
	h.Want(0, "policy", "add-person", "kim", "--key", id)
	h.Want(0, "policy", "apply", "--key", h.Priv("alice"))
	pub, _, err := sign.ParsePublicKey([]byte(id))
	if err != nil {
		t.Fatal(err)
	}
	r = h.Want(0, "policy", "list", "--json")
	if !strings.Contains(r.Stdout, sign.Fingerprint(pub)) {
		t.Errorf("policy list lacks kim's identity %s:\n%s", sign.Fingerprint(pub), r)
	}
	h.Want(0, "verify")

	// kim signs log entries through gitsign (git's gpg.x509.program), in
	// offline Rekor mode, with the pinned Sigstore.
	h.Want(0, "policy", "add-rule", "dev", "--ref", "refs/heads/dev", "--allow", "kim")
	h.Want(0, "policy", "apply", "--key", h.Priv("alice"))
	state := t.TempDir()
	s.Save(t, state)
	h.Git("config", "gpg.x509.program", keylesstest.BuildFakeGitsign(t, t.TempDir()))
	t.Setenv("KEYLESSTEST_DIR", state)
	t.Setenv("KEYLESSTEST_ISSUER", "https://accounts.google.com")
	t.Setenv("KEYLESSTEST_SUBJECT", "kim@example.com")
	h.Git("branch", "dev", "main~1")
	h.Want(0, "rsl", "record", "dev", "--key", id)
	h.Want(0, "verify")

	// kim's approval counts toward a rule that needs alice and kim.
	h.Want(0, "policy", "add-rule", "rel", "--ref", "refs/heads/rel", "--allow", "alice", "--allow", "kim", "--threshold", "2")
	h.Want(0, "policy", "apply", "--key", h.Priv("alice"))
	h.Git("branch", "rel", "main")
	h.Want(0, "rsl", "record", "rel", "--key", h.Priv("alice"))
	if r := h.Want(1, "verify"); !strings.Contains(r.Stderr, "rule rel") {
		t.Errorf("rel before kim's approval:\n%s", r)
	}
	r = h.Want(0, "attest", "approve", "rel", "--to", h.Git("rev-parse", "main"), "--key", id)
	if !strings.Contains(r.Stdout, "kim approves refs/heads/rel") {
		t.Errorf("approve output:\n%s", r)
	}
	h.Want(0, "verify")

	// The same identity certified by another Sigstore is not kim.
	otherState := t.TempDir()
	keylesstest.New(t).Save(t, otherState)
	t.Setenv("KEYLESSTEST_DIR", otherState)
	h.Git("branch", "-f", "dev", "main")
	recorded := h.Want(0, "rsl", "record", "dev", "--key", id)
	r = h.Want(1, "verify")
	if !strings.Contains(r.Stdout+r.Stderr, "not the pinned Rekor log") {
		t.Errorf("an entry signed through another Sigstore:\n%s", r)
	}

	// Revoked like any key: what kim signs from the next entry on fails.
	t.Setenv("KEYLESSTEST_DIR", state)
	var last int
	if _, err := fmt.Sscanf(recorded.Stdout, "recorded entry #%d", &last); err != nil {
		t.Fatalf("entry number: %v\n%s", err, recorded)
	}
	h.Want(0, "trust", "revoke-key", id, "--from-entry", strconv.Itoa(last+1))
	h.Want(0, "policy", "apply", "--key", h.Priv("alice"))
	h.Git("branch", "-f", "dev", "main~1")
	r = h.Run("rsl", "record", "dev", "--key", id)
	if r.Code == 0 {
		r = h.Want(1, "verify")
	}
	if !strings.Contains(r.Stdout+r.Stderr, "revoked") {
		t.Errorf("an entry by kim after the revocation:\n%s", r)
	}
}
