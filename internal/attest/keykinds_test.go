package attest

import (
	"errors"
	"strings"
	"testing"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"

	"github.com/git-secure/git-secure/internal/gpgsign"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/keykinds"
)

// TestOpenPGPEnvelope: an approval signed with an OpenPGP key (through
// gpg) parses and verifies; its keyid must name the key the signature's
// notation names, and its namespace must be the attestation namespace.
func TestOpenPGPEnvelope(t *testing.T) {
	g := keykinds.NewGPG(t, t.TempDir(), "Gina <gina@example.com>", "ed25519")
	t.Setenv("GNUPGHOME", g.Home)
	s, err := gpgsign.New("gpg", g.Fingerprint)
	if err != nil {
		t.Fatal(err)
	}
	pub, _, err := sign.ParsePublicKey(g.ExportPublic())
	if err != nil {
		t.Fatal(err)
	}
	data, err := Sign(testApproval(t), s)
	if err != nil {
		t.Fatal(err)
	}
	e, err := ParseEnvelope(data)
	if err != nil {
		t.Fatal(err)
	}
	if e.KeyID != sign.Fingerprint(pub) {
		t.Fatalf("keyid %s, want %s", e.KeyID, sign.Fingerprint(pub))
	}
	if got, err := e.Verify(trust(pub)); err != nil || sign.Fingerprint(got) != e.KeyID {
		t.Fatalf("verify: %v", err)
	}
	other := keykinds.NewSoftSK(t, "ed25519-sk")
	swapped := *e
	swapped.KeyID = sign.Fingerprint(other.PublicKey())
	if _, err := swapped.Marshal(); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "does not match the key in the signature") {
		t.Errorf("keyid of another key: %v", err)
	}
	// A signature over the same PAE in the git namespace.
	gitSig, err := sign.SignRaw(s, dsse.PAE(e.PayloadType, e.Payload), sign.NamespaceGit)
	if err != nil {
		t.Fatal(err)
	}
	wrongNS := *e
	wrongNS.Sig = gitSig
	if _, err := wrongNS.Marshal(); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "namespace") {
		t.Errorf("signature in the git namespace: %v", err)
	}
	// The signature with one byte changed.
	bad := *e
	bad.Sig = append([]byte(nil), e.Sig...)
	bad.Sig[len(bad.Sig)-1] ^= 1
	if _, err := bad.Verify(trust(pub)); err == nil {
		t.Error("tampered OpenPGP signature verified")
	}
}
