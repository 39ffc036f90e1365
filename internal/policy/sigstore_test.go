package policy

import (
	"strings"
	"testing"

	"github.com/theupdateframework/go-tuf/v2/metadata"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/keyless"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/keylesstest"
)

// TestSigstoreIdentityInPolicy: a keyless identity is a person key that
// survives encoding; its signatures verify only once root.json pins the
// Sigstore instance that made them, and only for that identity; it is
// never a root or rules key; a malformed pin is refused.
func TestSigstoreIdentityInPolicy(t *testing.T) {
	f := newFixture(t)
	s, other := keylesstest.New(t), keylesstest.New(t)
	kim := keyless.Identity{Issuer: "https://accounts.google.com", Subject: "kim@example.com"}
	pub, _, err := sign.ParsePublicKey([]byte("sigstore-oidc " + kim.Issuer + " " + kim.Subject))
	must(t, err)
	p, err := f.p.Clone()
	must(t, err)
	must(t, p.AddPerson(f.p, "kim", []ssh.PublicKey{pub}, t0))
	fp := sign.Fingerprint(pub)

	payload := []byte(`{"signed":"metadata"}`)
	signAs := func(st *keylesstest.Sigstore, id keyless.Identity, ns string, data []byte) []byte {
		der, err := st.Sign(t, keylesstest.Request{Cert: keylesstest.Cert{Identity: id}, Namespace: ns, Data: data}).DER()
		must(t, err)
		return der
	}
	signWith := func(st *keylesstest.Sigstore, id keyless.Identity) []byte {
		return signAs(st, id, sign.NamespacePolicy, payload)
	}
	good := signWith(s, kim)
	keyOf := func(p *Policy) *Key {
		person, ok := p.PersonByFingerprint(fp)
		if !ok {
			t.Fatalf("kim's identity %s not found", fp)
		}
		return person.Keys[0]
	}
	if keyOf(p).VerifyMetadata(payload, good) {
		t.Fatal("keyless signature verified without a pinned Sigstore instance")
	}
	err = sign.VerifyTUFSignatureKey(keyOf(p).Public, payload, good)
	if err == nil || !strings.Contains(err.Error(), "pins no Sigstore instance") {
		t.Fatalf("without a pin: %v", err)
	}

	must(t, p.SetSigstore(f.p, s.FulcioPEM(), s.RekorPEM(), t0))
	root, targets := encode(t, p)
	again, err := Parse(root, targets)
	must(t, err)
	if r2, t2 := encode(t, again); string(r2) != string(root) || string(t2) != string(targets) {
		t.Fatal("policy with a keyless identity does not re-encode to the same bytes")
	}
	if !strings.Contains(string(targets), `"keytype":"sigstore-oidc"`) || !strings.Contains(string(root), `"x-git-secure-sigstore"`) {
		t.Errorf("policy lacks the keyless identity or the pin")
	}
	k := keyOf(again)
	if got := sign.DescribeKey(k.Public); got != "sigstore-oidc https://accounts.google.com kim@example.com" {
		t.Errorf("described as %q", got)
	}
	if !k.VerifyMetadata(payload, good) {
		t.Fatal("kim's keyless signature does not verify with the pinned Sigstore")
	}
	for name, sig := range map[string][]byte{
		"another Sigstore":  signWith(other, kim),
		"another identity":  signWith(s, keyless.Identity{Issuer: kim.Issuer, Subject: "mallory@example.com"}),
		"another issuer":    signWith(s, keyless.Identity{Issuer: "https://token.actions.githubusercontent.com", Subject: kim.Subject}),
		"other payload":     signAs(s, kim, sign.NamespacePolicy, []byte("x")),
		"another namespace": signAs(s, kim, sign.NamespaceAttestation, payload),
	} {
		if k.VerifyMetadata(payload, sig) {
			t.Errorf("%s: verified", name)
		}
	}
	// Entries: an armored keyless commit signature is found through LookupKey.
	commit := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nentry\n")
	armored := s.Sign(t, keylesstest.Request{Cert: keylesstest.Cert{Identity: kim}, Namespace: sign.NamespaceGit, Data: commit}).Armor(t)
	got, err := sign.VerifySSHSig(armored, commit, sign.NamespaceGit, again.LookupKey)
	if err != nil || sign.Fingerprint(got) != fp {
		t.Fatalf("entry signature: %v", err)
	}
	if _, err := sign.VerifySSHSig(armored, commit, sign.NamespaceGit, f.p.LookupKey); err == nil || !strings.Contains(err.Error(), "not trusted") {
		t.Fatalf("entry signature by an unknown identity: %v", err)
	}

	if err := p.AddRoleKey(f.p, metadata.TARGETS, pub, t0); err == nil || !strings.Contains(err.Error(), "root, rules and timestamp keys must be") {
		t.Errorf("keyless identity as a rules key: %v", err)
	}
	if err := p.SetSigstore(f.p, other.RekorPEM(), other.RekorPEM(), t0); err == nil || !strings.Contains(err.Error(), "CERTIFICATE") {
		t.Errorf("a key as Fulcio root: %v", err)
	}
	hand, err := again.Clone()
	must(t, err)
	hand.Root.Signed.UnrecognizedFields[fieldSigstore] = map[string]any{"fulcio": string(s.FulcioPEM())}
	hr, ht := encode(t, hand)
	if _, err := Parse(hr, ht); err == nil || !strings.Contains(err.Error(), fieldSigstore) {
		t.Errorf("root.json with a half pin: %v", err)
	}
	must(t, again.RemoveSigstore(f.p, t0))
	if keyOf(again).VerifyMetadata(payload, good) {
		t.Error("verified after the pin was removed")
	}
}
