package pushcert

import (
	"bytes"
	"crypto"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/sign"
)

// testdata/signed-openpgp.cert and signed-openpgp-fpr.cert were written
// by git 2.39 with gpg 2.2 (git push --signed, gpg.format openpgp, the
// default) to a server with receive.certNonceSeed set, signed by the key
// of testdata/openpgp-alice.asc: the first with user.signingkey unset
// (the pusher line is the committer ident) and a push option, the second
// with user.signingkey set to the key's fingerprint.

func pgpKey(t testing.TB, name string) *sign.OpenPGPKey {
	t.Helper()
	k, err := sign.ParseOpenPGPKey(readTestdata(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestParseGitOpenPGPCertificate(t *testing.T) {
	alice := pgpKey(t, "openpgp-alice.asc")
	for _, tc := range []struct{ file, pusher string }{
		{"signed-openpgp.cert", "Alice <alice@example.com>"},
		{"signed-openpgp-fpr.cert", alice.OpenPGPFingerprint()},
	} {
		t.Run(tc.file, func(t *testing.T) {
			raw := readTestdata(t, tc.file)
			c, err := Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			if c.Format != FormatOpenPGP || c.Pusher != tc.pusher || c.TZ != "+0000" {
				t.Errorf("format %q pusher %q tz %q", c.Format, c.Pusher, c.TZ)
			}
			if !bytes.HasPrefix(c.Signature, []byte(pgpBegin)) || !bytes.HasSuffix(c.Payload, []byte(" refs/heads/main\n")) && !bytes.HasSuffix(c.Payload, []byte(" refs/tags/v2\n")) {
				t.Errorf("payload/signature split: %q", c.Payload)
			}
			if !bytes.Equal(c.Encode(), raw) {
				t.Errorf("Encode differs from what git wrote")
			}
			if err := c.CheckSession(); err != nil {
				t.Errorf("CheckSession: %v", err)
			}
			key, err := c.Verify(lookupOf(alice))
			if err != nil {
				t.Fatalf("Verify with alice's OpenPGP key: %v", err)
			}
			if sign.Fingerprint(key) != sign.Fingerprint(alice) || c.SignerFingerprint() != sign.Fingerprint(alice) {
				t.Errorf("verified by %s, signer %s, want %s", sign.Fingerprint(key), c.SignerFingerprint(), sign.Fingerprint(alice))
			}
			if _, err := c.Verify(lookupOf(pgpKey(t, "openpgp-other.asc"), testKey(t, "alice.pub"))); !errors.Is(err, sign.ErrUnknownKey) || !strings.Contains(err.Error(), alice.OpenPGPFingerprint()) {
				t.Errorf("Verify with other keys: %v, want ErrUnknownKey naming %s", err, alice.OpenPGPFingerprint())
			}
		})
	}
	c, err := Parse(readTestdata(t, "signed-openpgp.cert"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Options[0] != "ci.skip" || len(c.Updates) != 2 || c.Updates[1].Ref != "refs/tags/v2" {
		t.Errorf("options %q updates %+v", c.Options, c.Updates)
	}
}

// goKey is an OpenPGP key made in-process, with its git-secure form.
type goKey struct {
	e   *openpgp.Entity
	pub *sign.OpenPGPKey
}

func newGoKey(t testing.TB, subkey bool) goKey {
	t.Helper()
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA}
	e, err := openpgp.NewEntity("Mallory", "", "mallory@example.com", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if subkey {
		if err := e.AddSigningSubkey(cfg); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	w, err := armor.Encode(&b, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	pub, err := sign.ParseOpenPGPKey(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return goKey{e, pub}
}

// signWith signs payload as gpg -bsa does (or with the changes cfg and
// text ask for) and returns the certificate.
func signWith(t testing.TB, k goKey, payload string, cfg *packet.Config, text bool) []byte {
	t.Helper()
	var b bytes.Buffer
	var err error
	if text {
		err = openpgp.ArmoredDetachSignText(&b, k.e, strings.NewReader(payload), cfg)
	} else {
		err = openpgp.ArmoredDetachSign(&b, k.e, strings.NewReader(payload), cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	b.WriteByte('\n')
	return append([]byte(payload), b.Bytes()...)
}

// ownerOf is Policy.OpenPGPSubkeyOwner over one key.
func ownerOf(k *sign.OpenPGPKey) func([]byte) (string, bool) {
	return func(sub []byte) (string, bool) {
		if k.HasSigningSubkey(sub) {
			return sign.Fingerprint(k), true
		}
		return "", false
	}
}

// TestOpenPGPVerifyRefuses: altered certificates, foreign keys, keys of
// another kind, and signatures not made the way git has gpg make them are
// refused, naming why.
func TestOpenPGPVerifyRefuses(t *testing.T) {
	raw := string(readTestdata(t, "signed-openpgp.cert"))
	payload := raw[:strings.Index(raw, pgpBegin)]
	alice := pgpKey(t, "openpgp-alice.asc")
	mal := newGoKey(t, false)
	sub := newGoKey(t, true)
	sha512 := &packet.Config{DefaultHash: crypto.SHA512}
	fprPayload := strings.Replace(payload, "Alice <alice@example.com>", alice.OpenPGPFingerprint(), 1)
	for _, tc := range []struct {
		name   string
		cert   []byte
		lookup func(string) (ssh.PublicKey, bool)
		kind   error
		want   string
		owner  func([]byte) (string, bool)
	}{
		{"go-signed ok", signWith(t, mal, payload, sha512, false), lookupOf(mal.pub), nil, "", nil},
		{"pusher names its own fingerprint", signWith(t, mal, strings.Replace(payload, "Alice <alice@example.com>", "0x"+mal.pub.OpenPGPFingerprint()+"!", 1), sha512, false), lookupOf(mal.pub), nil, "", nil},
		{"update", []byte(strings.Replace(raw, "refs/tags/v2", "refs/tags/v3", 1)), lookupOf(alice), sign.ErrBadSignature, "verification failure", nil},
		{"pushee", []byte(strings.Replace(raw, "pushee file:///tmp/pgpy/srv.git", "pushee file:///tmp/pgpy/evil.git", 1)), lookupOf(alice), sign.ErrBadSignature, "verification failure", nil},
		{"nonce", []byte(strings.Replace(raw, "nonce 1796612589-1", "nonce 1796612589-2", 1)), lookupOf(alice), sign.ErrBadSignature, "verification failure", nil},
		{"pusher ident", []byte(strings.Replace(raw, "pusher Alice", "pusher Alicf", 1)), lookupOf(alice), sign.ErrBadSignature, "verification failure", nil},
		{"foreign key", signWith(t, mal, payload, sha512, false), lookupOf(alice), sign.ErrUnknownKey, mal.pub.OpenPGPFingerprint(), nil},
		{"foreign key, pusher names alice", signWith(t, mal, fprPayload, sha512, false), lookupOf(alice, mal.pub), sign.ErrBadSignature, "the pusher line names OpenPGP key " + alice.OpenPGPFingerprint() + ", the signature is by " + mal.pub.OpenPGPFingerprint(), nil},
		{"foreign key, pusher names alice's key ID", signWith(t, mal, strings.Replace(payload, "Alice <alice@example.com>", alice.OpenPGPFingerprint()[24:], 1), sha512, false), lookupOf(mal.pub), sign.ErrBadSignature, "the pusher line names OpenPGP key", nil},
		{"ssh key under the fingerprint", []byte(raw), func(string) (ssh.PublicKey, bool) { return testKey(t, "alice.pub"), true }, sign.ErrUnknownKey, "is not an OpenPGP key", nil},
		{"text signature", signWith(t, mal, payload, sha512, true), lookupOf(mal.pub), sign.ErrBadSignature, "want a binary document signature", nil},
		{"git-secure signature for entries", signWith(t, mal, payload, &packet.Config{DefaultHash: crypto.SHA512, SignatureNotations: []*packet.Notation{{Name: sign.NotationNamespace, Value: []byte("git-secure-entry"), IsHumanReadable: true}}}, false), lookupOf(mal.pub), sign.ErrBadSignature, "made by git-secure for namespace \"git-secure-entry\"", nil},
		{"unknown critical notation", signWith(t, mal, payload, &packet.Config{DefaultHash: crypto.SHA512, SignatureNotations: []*packet.Notation{{Name: "x@example.com", Value: []byte("y"), IsCritical: true}}}, false), lookupOf(mal.pub), sign.ErrBadSignature, "unknown critical notation", nil},
		{"signing subkey without an owner lookup", signWith(t, sub, payload, sha512, false), lookupOf(sub.pub), sign.ErrUnknownKey, "neither a primary key nor a signing subkey of a trusted key", nil},
		{"signing subkey", signWith(t, sub, payload, sha512, false), lookupOf(sub.pub), nil, "", ownerOf(sub.pub)},
		{"pusher names the signing subkey", signWith(t, sub, strings.Replace(payload, "Alice <alice@example.com>", fmt.Sprintf("%X!", sub.e.Subkeys[len(sub.e.Subkeys)-1].PublicKey.Fingerprint), 1), sha512, false), lookupOf(sub.pub), nil, "", ownerOf(sub.pub)},
		{"pusher names the primary, subkey signs", signWith(t, sub, strings.Replace(payload, "Alice <alice@example.com>", sub.pub.OpenPGPFingerprint(), 1), sha512, false), lookupOf(sub.pub), nil, "", ownerOf(sub.pub)},
		{"signing subkey of a key not trusted (revoked)", signWith(t, sub, payload, sha512, false), lookupOf(alice), sign.ErrUnknownKey, "the primary key of OpenPGP signing subkey", ownerOf(sub.pub)},
		{"subkey owner names a key without it", signWith(t, sub, payload, sha512, false), lookupOf(mal.pub), sign.ErrUnknownKey, "which is not part of it", func([]byte) (string, bool) { return sign.Fingerprint(mal.pub), true }},
		{"subkey owner names an SSH key", signWith(t, sub, payload, sha512, false), lookupOf(testKey(t, "alice.pub")), sign.ErrUnknownKey, "is not an OpenPGP key", func([]byte) (string, bool) { return sign.Fingerprint(testKey(t, "alice.pub")), true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.cert)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			_, err = c.VerifyWith(tc.lookup, tc.owner)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify: %v, want %v with %q", err, tc.kind, tc.want)
			}
		})
	}
}

// TestOpenPGPParseRefuses: an OpenPGP signature block is taken only in
// the form gpg writes it, alone at the end.
func TestOpenPGPParseRefuses(t *testing.T) {
	raw := string(readTestdata(t, "signed-openpgp.cert"))
	i := strings.Index(raw, pgpBegin)
	payload, sig := raw[:i], raw[i:]
	ssh := string(readTestdata(t, "signed.cert"))
	sshSig := ssh[strings.Index(ssh, sigBegin):]
	for _, tc := range []struct{ name, in, want string }{
		{"ok", payload + sig, ""},
		{"armor header", payload + strings.Replace(sig, pgpBegin+"\n", pgpBegin+"Version: x\n\n", 1), "inside the signature block"},
		{"text after", payload + sig + "x\n", "does not end the certificate"},
		{"two blocks", payload + sig + sig, "inside the signature block"},
		{"then an SSH block", payload + sig + sshSig, "does not end the certificate"},
		{"SSH then OpenPGP", payload + sshSig + sig, "does not end the certificate"},
		{"no END", payload + strings.TrimSuffix(sig, pgpEnd), "does not end the certificate"},
		{"no final newline", payload + strings.TrimSuffix(sig, "\n"), "does not end the certificate"},
		{"BEGIN mid-line", strings.TrimSuffix(payload, "\n") + sig, "signature does not start a line"},
		{"empty block", payload + pgpBegin + pgpEnd, "empty or unterminated"},
		{"too big", payload + strings.Repeat("A", MaxSize) + sig, "more than 65536"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: %v, want ErrMalformed with %q", err, tc.want)
			}
		})
	}
}
