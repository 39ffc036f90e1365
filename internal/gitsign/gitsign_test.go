package gitsign_test

import (
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitsign"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/keylesstest"
)

const kim = "sigstore-oidc https://accounts.google.com kim@example.com"

// TestSignThroughGitsign: the signer runs the program in offline Rekor
// mode; what it makes verifies with the identity and the pinned
// Sigstore, in the namespace asked for only; a login as someone else is
// refused at signing; a missing program says so.
func TestSignThroughGitsign(t *testing.T) {
	dir := t.TempDir()
	s := keylesstest.New(t)
	s.Save(t, dir)
	prog := keylesstest.BuildFakeGitsign(t, t.TempDir())
	t.Setenv("KEYLESSTEST_DIR", dir)
	t.Setenv("KEYLESSTEST_ISSUER", "https://accounts.google.com")
	t.Setenv("KEYLESSTEST_SUBJECT", "kim@example.com")
	signer, err := gitsign.New(prog, kim)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("an attestation\n")
	for _, ns := range []string{sign.NamespaceAttestation, sign.NamespaceGit} {
		raw, err := sign.SignRaw(signer, data, ns)
		if err != nil {
			t.Fatalf("%s: %v", ns, err)
		}
		trusted := signer.PublicKey().(*sign.SigstoreKey).WithTrust(s.Trust(t))
		lookup := func(fp string) (ssh.PublicKey, bool) { return trusted, fp == sign.Fingerprint(trusted) }
		if _, err := sign.VerifyRaw(raw, data, ns, lookup); err != nil {
			t.Fatalf("%s: %v", ns, err)
		}
		if _, err := sign.VerifyRaw(raw, data, "git-secure-policy-v1", lookup); err == nil || !strings.Contains(err.Error(), "not over this data") {
			t.Fatalf("%s signature as a policy signature: %v", ns, err)
		}
	}
	armored, err := sign.SignSSHSig(signer, data, sign.NamespaceGit)
	if err != nil || !strings.HasPrefix(string(armored), "-----BEGIN SIGNED MESSAGE-----") {
		t.Fatalf("armored: %v\n%s", err, armored)
	}

	t.Setenv("KEYLESSTEST_SUBJECT", "mallory@example.com")
	if _, err := sign.SignRaw(signer, data, sign.NamespaceGit); err == nil || !strings.Contains(err.Error(), "gitsign signed as mallory@example.com") {
		t.Fatalf("logged in as someone else: %v", err)
	}
	missing, err := gitsign.New(dir+"/no-such-gitsign", kim)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sign.SignRaw(missing, data, sign.NamespaceGit); err == nil || !strings.Contains(err.Error(), "no-such-gitsign") {
		t.Fatalf("missing program: %v", err)
	}
	if _, err := gitsign.New(prog, "ssh-ed25519 AAAA"); err == nil {
		t.Fatal("an SSH key accepted as a keyless identity")
	}
}
