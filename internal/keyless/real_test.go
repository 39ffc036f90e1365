package keyless_test

import (
	"os"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/keyless"
)

// publicTrust is the public-good Sigstore instance: Fulcio's root and
// intermediate and Rekor's key, as Sigstore's TUF repository serves them.
func publicTrust(t testing.TB) *keyless.Trust {
	t.Helper()
	fulcio, err := os.ReadFile("testdata/sigstore-fulcio.pem")
	if err != nil {
		t.Fatal(err)
	}
	rekor, err := os.ReadFile("testdata/sigstore-rekor.pub")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := keyless.NewTrust(fulcio, rekor)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// realCommit is a commit signed by gitsign in offline Rekor mode with the
// public Sigstore (from gitsign's own repository).
func realCommit(t testing.TB) (payload, sig []byte) {
	t.Helper()
	raw, err := os.ReadFile("testdata/gitsign-offline.commit")
	if err != nil {
		t.Fatal(err)
	}
	c, err := gitrepo.ParseCommit(raw)
	if err != nil {
		t.Fatal(err)
	}
	return c.SignedPayload(), []byte(c.Signature)
}

func TestRealGitsignSignature(t *testing.T) {
	payload, sig := realCommit(t)
	v, err := keyless.Verify(sig, payload, keyless.NamespaceGit, publicTrust(t))
	if err != nil {
		t.Fatal(err)
	}
	want := keyless.Identity{Issuer: "https://accounts.google.com", Subject: "billy@chainguard.dev"}
	if v.Identity != want {
		t.Errorf("identity %v, want %v", v.Identity, want)
	}
	if v.Time.Before(v.Certificate.NotBefore) || v.Time.After(v.Certificate.NotAfter) || v.Time.Year() != 2023 {
		t.Errorf("time %v outside the certificate's validity", v.Time)
	}
	t.Logf("log index %d, integrated %v", v.LogIndex, v.Time)

	// The same signature over an altered commit fails, for the reason.
	altered := []byte(strings.Replace(string(payload), "Mon Jun", "Tue Jun", 1))
	_, err = keyless.Verify(sig, altered, keyless.NamespaceGit, publicTrust(t))
	if err == nil || !strings.Contains(err.Error(), "not over this data") {
		t.Fatalf("altered commit: %v", err)
	}
	// The commit signature is no signature in another namespace.
	_, err = keyless.Verify(sig, payload, "git-secure-policy-v1", publicTrust(t))
	if err == nil || !strings.Contains(err.Error(), "not over this data") {
		t.Fatalf("other namespace: %v", err)
	}
}
