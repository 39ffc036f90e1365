package sign_test

import (
	"bytes"
	"crypto"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gpgsign"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/keykinds"
)

// newGPG makes a gpg home with a key of algo and points GNUPGHOME at it
// (gpgsign runs gpg with the process environment, as git does).
func newGPG(t *testing.T, algo string) *keykinds.GPG {
	t.Helper()
	g := keykinds.NewGPG(t, t.TempDir(), "Alice <alice@example.com>", algo)
	t.Setenv("GNUPGHOME", g.Home)
	return g
}

func gpgSigner(t *testing.T, g *keykinds.GPG) *gpgsign.Signer {
	t.Helper()
	s, err := gpgsign.New("gpg", g.Fingerprint)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOpenPGPSignVerify signs with real gpg and verifies here, with gpg
// --verify as the reference, for each accepted algorithm: the armored form
// (RSL entries, as git keeps it in a commit) and the raw form (DSSE
// envelopes), namespace and key checks, and tampering.
func TestOpenPGPSignVerify(t *testing.T) {
	for _, algo := range []string{"ed25519", "nistp256", "rsa3072"} {
		t.Run(algo, func(t *testing.T) {
			g := newGPG(t, algo)
			s := gpgSigner(t, g)
			pub, ok := s.PublicKey().(*sign.OpenPGPKey)
			if !ok || pub.OpenPGPFingerprint() != g.Fingerprint || pub.UserID != "Alice <alice@example.com>" {
				t.Fatalf("public key %#v", s.PublicKey())
			}
			// The policy's copy comes from the user's export.
			policyKey, uid, err := sign.ParsePublicKey(g.ExportPublic())
			if err != nil {
				t.Fatal(err)
			}
			if uid != pub.UserID || sign.Fingerprint(policyKey) != sign.Fingerprint(pub) || !strings.HasPrefix(sign.Fingerprint(pub), "SHA256:") {
				t.Fatalf("parsed %s %q, signer %s", sign.Fingerprint(policyKey), uid, sign.Fingerprint(pub))
			}
			msg := []byte("tree 1234\n\nRSL entry\n")
			armored, err := sign.SignSSHSig(s, msg, sign.NamespaceGit)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(armored, []byte("-----BEGIN PGP SIGNATURE-----")) {
				t.Fatalf("armor:\n%s", armored)
			}
			got, err := sign.VerifySSHSig(armored, msg, sign.NamespaceGit, trust(policyKey))
			if err != nil {
				t.Fatal(err)
			}
			if sign.Fingerprint(got) != sign.Fingerprint(policyKey) {
				t.Fatal("verified with another key")
			}
			if fp, err := sign.SignatureFingerprint(armored); err != nil || fp != sign.Fingerprint(policyKey) {
				t.Fatalf("SignatureFingerprint = %s, %v", fp, err)
			}
			// gpg, the reference, agrees.
			dir := t.TempDir()
			sigFile := writeFile(t, dir, "m.sig", armored)
			msgFile := writeFile(t, dir, "m", msg)
			if out, err := g.RunErr(nil, "--verify", sigFile, msgFile); err != nil {
				t.Fatalf("gpg --verify: %v %s", err, out)
			}
			if _, err := g.RunErr(nil, "--verify", sigFile, writeFile(t, dir, "other", []byte("tree 9"))); err == nil {
				t.Fatal("gpg verified a tampered message")
			}

			checks := []struct {
				name    string
				msg     []byte
				ns      string
				lookup  func(string) (ssh.PublicKey, bool)
				is      error
				wantErr string
			}{
				{"tampered", []byte("tree 9"), sign.NamespaceGit, trust(policyKey), sign.ErrBadSignature, "OpenPGP key " + g.Fingerprint},
				{"other namespace", msg, sign.NamespaceAttestation, trust(policyKey), sign.ErrBadSignature, "namespace \"git\""},
				{"unknown key", msg, sign.NamespaceGit, trust(), sign.ErrUnknownKey, g.Fingerprint},
			}
			for _, c := range checks {
				_, err := sign.VerifySSHSig(armored, c.msg, c.ns, c.lookup)
				if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.wantErr) {
					t.Errorf("%s: %v, want %v containing %q", c.name, err, c.is, c.wantErr)
				}
			}

			raw, err := sign.SignRaw(s, msg, sign.NamespaceAttestation)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sign.VerifyRaw(raw, msg, sign.NamespaceAttestation, trust(policyKey)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestOpenPGPRefusals: keys and signatures that fail closed, each with
// its reason.
func TestOpenPGPRefusals(t *testing.T) {
	g := newGPG(t, "ed25519")
	policyKey, _, err := sign.ParsePublicKey(g.ExportPublic())
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("payload")
	dir := t.TempDir()
	msgFile := writeFile(t, dir, "m", msg)

	// A plain gpg signature (no git-secure notations) is refused.
	plain := []byte(g.Run(nil, "--armor", "--detach-sign", "--output", "-", msgFile))
	if _, err := sign.VerifySSHSig(plain, msg, sign.NamespaceGit, trust(policyKey)); !errors.Is(err, sign.ErrBadSignature) || !strings.Contains(err.Error(), "lacks the") {
		t.Errorf("plain gpg signature: %v", err)
	}
	// Armor headers in a signature are refused.
	good, err := sign.SignSSHSig(gpgSigner(t, g), msg, sign.NamespaceGit)
	if err != nil {
		t.Fatal(err)
	}
	withHeader := bytes.Replace(good, []byte("-----\n"), []byte("-----\nComment: hi\n"), 1)
	if _, err := sign.VerifySSHSig(withHeader, msg, sign.NamespaceGit, trust(policyKey)); !errors.Is(err, sign.ErrBadSignature) || !strings.Contains(err.Error(), "armor headers") {
		t.Errorf("signature with an armor header: %v", err)
	}
	// SHA-1 is refused.
	sha1 := []byte(g.Run(nil, "--armor", "--detach-sign", "--digest-algo", "SHA1",
		"--sig-notation", sign.NotationNamespace+"=git", "--sig-notation", sign.NotationKey+"="+g.Fingerprint, "--output", "-", msgFile))
	if _, err := sign.VerifySSHSig(sha1, msg, sign.NamespaceGit, trust(policyKey)); !errors.Is(err, sign.ErrBadSignature) || !strings.Contains(err.Error(), "SHA-256 or stronger") {
		t.Errorf("SHA-1 signature: %v", err)
	}
	// A notation naming another key than the one that signed.
	other := keykinds.NewGPG(t, t.TempDir(), "Bob <bob@example.com>", "ed25519")
	otherKey, _, err := sign.ParsePublicKey(other.ExportPublic())
	if err != nil {
		t.Fatal(err)
	}
	lying := []byte(g.Run(nil, "--armor", "--detach-sign", "--digest-algo", "SHA512",
		"--sig-notation", sign.NotationNamespace+"=git", "--sig-notation", sign.NotationKey+"="+other.Fingerprint, "--output", "-", msgFile))
	if _, err := sign.VerifySSHSig(lying, msg, sign.NamespaceGit, trust(policyKey, otherKey)); !errors.Is(err, sign.ErrBadSignature) || !strings.Contains(err.Error(), "not part of it") {
		t.Errorf("signature naming another key: %v", err)
	}
	// Unsupported algorithms are refused when the key is added.
	for _, algo := range []string{"rsa1024", "dsa2048", "brainpoolP256r1"} {
		w := keykinds.NewGPG(t, t.TempDir(), "Weak <weak@example.com>", algo)
		_, _, err := sign.ParsePublicKey(w.ExportPublic())
		if !errors.Is(err, sign.ErrUnsupportedKey) {
			t.Errorf("%s key: %v, want ErrUnsupportedKey", algo, err)
		}
	}
	// A key that may only certify (and encrypt) signs nothing.
	certOnly := keykinds.NewGPGUsage(t, t.TempDir(), "Cert <cert@example.com>", "ed25519", "cert")
	if _, _, err := sign.ParsePublicKey(certOnly.ExportPublic()); err == nil || !strings.Contains(err.Error(), "no key that may sign") {
		t.Errorf("certify-only key: %v", err)
	}
	// Secret keys, two keys, trailing data.
	secret := []byte(g.Run(nil, "--pinentry-mode", "loopback", "--passphrase", "", "--armor", "--export-secret-keys", g.Fingerprint))
	if _, _, err := sign.ParsePublicKey(secret); err == nil {
		t.Error("secret key accepted as a public key")
	}
	both := append(g.ExportPublic(), other.ExportPublic()...)
	if _, _, err := sign.ParsePublicKey(both); err == nil {
		t.Error("two armored keys accepted")
	}
	if _, _, err := sign.ParsePublicKey(append(g.ExportPublic(), "junk\n"...)); err == nil {
		t.Error("trailing data accepted")
	}
}

// forgeSubkeySignature signs msg with the subkey subFpr of g's secret key
// at time at, with the git-secure notations, as a compromised or outdated
// subkey could (gpg itself refuses to sign with an expired subkey).
func forgeSubkeySignature(t *testing.T, g *keykinds.GPG, subFpr string, msg []byte, ns string, at time.Time) []byte {
	t.Helper()
	secret := g.Run(nil, "--pinentry-mode", "loopback", "--passphrase", "", "--export-secret-keys", g.Fingerprint)
	list, err := openpgp.ReadKeyRing(strings.NewReader(secret))
	if err != nil || len(list) != 1 {
		t.Fatalf("read secret key: %v", err)
	}
	var priv *packet.PrivateKey
	for _, s := range list[0].Subkeys {
		if strings.EqualFold(string(hexUpper(s.PublicKey.Fingerprint)), subFpr) {
			priv = s.PrivateKey
		}
	}
	if priv == nil {
		t.Fatalf("no subkey %s", subFpr)
	}
	cfg := &packet.Config{Time: func() time.Time { return at }}
	sig := &packet.Signature{
		Version: 4, SigType: packet.SigTypeBinary, PubKeyAlgo: priv.PubKeyAlgo, Hash: crypto.SHA512,
		CreationTime: at, IssuerKeyId: &priv.KeyId, IssuerFingerprint: priv.Fingerprint,
		Notations: []*packet.Notation{
			{Name: sign.NotationNamespace, Value: []byte(ns), IsHumanReadable: true},
			{Name: sign.NotationKey, Value: []byte(g.Fingerprint), IsHumanReadable: true},
		},
	}
	h, err := sig.PrepareSign(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.Write(msg)
	if err := sig.Sign(h, priv, cfg); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := sig.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func hexUpper(b []byte) []byte {
	const digits = "0123456789ABCDEF"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return out
}

// TestOpenPGPSubkeys: a signing subkey signs for its primary key; an
// expired subkey's later signatures and a revoked subkey's signatures fail
// closed, naming the key and the subkey.
func TestOpenPGPSubkeys(t *testing.T) {
	g := newGPG(t, "ed25519")
	msg := []byte("payload")

	// A valid subkey: gpg picks it for signing.
	g.AddSigningSubkey("ed25519", "never")
	s := gpgSigner(t, g)
	policyKey, _, err := sign.ParsePublicKey(g.ExportPublic())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sign.SignRaw(s, msg, sign.NamespaceAttestation)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sign.VerifyRaw(raw, msg, sign.NamespaceAttestation, trust(policyKey)); err != nil {
		t.Fatal(err)
	}

	// A key made in 2019 with a subkey made in 2020 that expired a day
	// later.
	old := keykinds.NewGPGAt(t, t.TempDir(), "Old <old@example.com>", "ed25519", "20190101T000000")
	expiredFpr := old.AddSigningSubkeyAt("20200101T000000", "ed25519", "1d")
	oldKey, _, err := sign.ParsePublicKey(old.ExportPublic())
	if err != nil {
		t.Fatal(err)
	}
	within := forgeSubkeySignature(t, old, expiredFpr, msg, sign.NamespaceAttestation, time.Date(2020, 1, 1, 12, 0, 0, 0, time.UTC))
	if _, err := sign.VerifyRaw(within, msg, sign.NamespaceAttestation, trust(oldKey)); err != nil {
		t.Errorf("signature made while the subkey was valid: %v", err)
	}
	after := forgeSubkeySignature(t, old, expiredFpr, msg, sign.NamespaceAttestation, time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC))
	_, err = sign.VerifyRaw(after, msg, sign.NamespaceAttestation, trust(oldKey))
	if !errors.Is(err, sign.ErrBadSignature) || !strings.Contains(err.Error(), old.Fingerprint) || !strings.Contains(err.Error(), "had expired") {
		t.Errorf("signature by an expired subkey: %v", err)
	}

	// Revoke the first signing subkey; the policy gets the revocation.
	subs := g.Subkeys()
	g.RevokeSubkey(1)
	revokedKey, _, err := sign.ParsePublicKey(g.ExportPublic())
	if err != nil {
		t.Fatal(err)
	}
	_, err = sign.VerifyRaw(raw, msg, sign.NamespaceAttestation, trust(revokedKey))
	if !errors.Is(err, sign.ErrBadSignature) || !strings.Contains(err.Error(), "signing subkey "+subs[0]) || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("signature by a revoked subkey: %v", err)
	}
}

// TestOpenPGPCanonical: a key with several user IDs and subkeys has one
// encoding (the policy stores it and re-reads it byte for byte), and the
// revocation of a subkey survives it.
func TestOpenPGPCanonical(t *testing.T) {
	g := newGPG(t, "ed25519")
	for _, uid := range []string{"Zed <z@example.com>", "Ann <a@example.com>", "Mid <m@example.com>"} {
		g.Run(nil, "--passphrase", "", "--quick-add-uid", g.Fingerprint, uid)
	}
	g.AddSigningSubkey("ed25519", "never")
	s := gpgSigner(t, g)
	raw, err := sign.SignRaw(s, []byte("m"), sign.NamespaceGit)
	if err != nil {
		t.Fatal(err)
	}
	g.AddSigningSubkey("rsa3072", "never")
	g.RevokeSubkey(1)
	first, err := sign.ParseOpenPGPKey(g.ExportPublic())
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := sign.ParseOpenPGPKeyBinary(first.Bytes())
		if err != nil {
			t.Fatalf("canonical encoding does not parse back: %v", err)
		}
		if !bytes.Equal(again.Bytes(), first.Bytes()) {
			t.Fatal("two encodings of one key")
		}
		if _, err := sign.VerifyRaw(raw, []byte("m"), sign.NamespaceGit, trust(again)); err == nil || !strings.Contains(err.Error(), "revoked") {
			t.Fatalf("revoked subkey after a round trip: %v", err)
		}
	}
}
