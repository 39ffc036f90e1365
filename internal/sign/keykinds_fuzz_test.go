package sign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/theupdateframework/go-tuf/v2/metadata"
	"golang.org/x/crypto/ssh"
)

// seedSKBlob is the wire encoding of an sk-ssh-ed25519 key.
func seedSKBlob(app string) []byte {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	return ssh.Marshal(struct{ Type, Key, App string }{ssh.KeyAlgoSKED25519, string(pub), app})
}

// FuzzParseSKKey: ParseSKKey never panics, and what it accepts re-encodes
// to exactly the input, with an application that starts with "ssh:".
func FuzzParseSKKey(f *testing.F) {
	f.Add(seedSKBlob("ssh:"))
	f.Add(seedSKBlob("ssh:example"))
	f.Add(seedSKBlob("https://example.com"))
	f.Add([]byte("\x00\x00\x00\x22sk-ecdsa-sha2-nistp256@openssh.com\x00\x00\x00\x08nistp256"))
	f.Fuzz(func(t *testing.T, blob []byte) {
		k, err := ParseSKKey(blob, false)
		if err != nil {
			return
		}
		if !bytes.Equal(k.Marshal(), blob) {
			t.Fatalf("accepted %x re-encodes as %x", blob, k.Marshal())
		}
		if len(k.Application) < 4 || k.Application[:4] != "ssh:" {
			t.Fatalf("accepted application %q", k.Application)
		}
	})
}

// FuzzSKSignatureFields: the flags and counter parser never panics and
// accepts exactly five bytes.
func FuzzSKSignatureFields(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 7})
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0, 7, 0})
	f.Fuzz(func(t *testing.T, rest []byte) {
		flags, counter, err := SKSignatureFields(rest)
		if (err == nil) != (len(rest) == 5) {
			t.Fatalf("len %d: err %v", len(rest), err)
		}
		if err == nil && (flags != rest[0] || counter != binary.BigEndian.Uint32(rest[1:])) {
			t.Fatal("fields misread")
		}
	})
}

// seedOpenPGP makes an OpenPGP key in process, its canonical encoding, its
// armored export and a git-secure signature of "seed".
func seedOpenPGP(tb testing.TB) (key *OpenPGPKey, armored, sig []byte) {
	return seedOpenPGPMsg(tb, []byte("seed"))
}

// seedOpenPGPMsg is seedOpenPGP with the signature over msg.
func seedOpenPGPMsg(tb testing.TB, msg []byte) (key *OpenPGPKey, armored, sig []byte) {
	e, err := openpgp.NewEntity("Seed", "", "seed@example.com", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
	if err != nil {
		tb.Fatal(err)
	}
	var pub bytes.Buffer
	if err := e.Serialize(&pub); err != nil {
		tb.Fatal(err)
	}
	key, err = ParseOpenPGPKeyBinary(pub.Bytes())
	if err != nil {
		tb.Fatal(err)
	}
	armored = armorKey(tb, pub.Bytes())
	fpr := key.OpenPGPFingerprint()
	cfg := &packet.Config{SignatureNotations: []*packet.Notation{
		{Name: NotationNamespace, Value: []byte(NamespaceGit), IsHumanReadable: true},
		{Name: NotationKey, Value: []byte(fpr), IsHumanReadable: true},
	}}
	var s bytes.Buffer
	if err := openpgp.DetachSign(&s, e, bytes.NewReader(msg), cfg); err != nil {
		tb.Fatal(err)
	}
	return key, armored, s.Bytes()
}

func armorKey(tb testing.TB, raw []byte) []byte {
	out, err := ArmorOpenPGPSignature(raw)
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.ReplaceAll(out, []byte(pgpSigArmor), []byte(pgpKeyArmor))
}

// FuzzParseOpenPGPKeyBinary: the policy's OpenPGP key parser never panics,
// and what it accepts re-encodes to exactly the input.
func FuzzParseOpenPGPKeyBinary(f *testing.F) {
	key, _, _ := seedOpenPGP(f)
	f.Add(key.Bytes())
	f.Add([]byte{0x99, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseOpenPGPKeyBinary(b)
		if err != nil {
			return
		}
		if !bytes.Equal(k.Bytes(), b) {
			t.Fatal("accepted key re-encodes differently")
		}
	})
}

// FuzzParseOpenPGPKey: the armored key parser never panics, and an
// accepted key's canonical encoding parses again to the same key.
func FuzzParseOpenPGPKey(f *testing.F) {
	_, armored, _ := seedOpenPGP(f)
	f.Add(armored)
	f.Add([]byte("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n=twTO\n-----END PGP PUBLIC KEY BLOCK-----\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseOpenPGPKey(b)
		if err != nil {
			return
		}
		again, err := ParseOpenPGPKeyBinary(k.Bytes())
		if err != nil || Fingerprint(again) != Fingerprint(k) {
			t.Fatalf("canonical encoding does not parse back: %v", err)
		}
	})
}

// FuzzOpenPGPSignature: verifying any bytes as an OpenPGP signature never
// panics, and nothing but the seed's signature verifies for the seed's
// message.
func FuzzOpenPGPSignature(f *testing.F) {
	key, _, sig := seedOpenPGP(f)
	f.Add(sig, []byte("seed"))
	f.Add([]byte{0xc2, 0x00}, []byte("seed"))
	lookup := func(fp string) (ssh.PublicKey, bool) { return key, fp == Fingerprint(key) }
	f.Fuzz(func(t *testing.T, raw, msg []byte) {
		if len(raw) == 0 {
			return
		}
		raw[0] |= 0x80 // an OpenPGP packet, not SSHSIG
		_, _ = openPGPSignatureFingerprint(raw)
		if _, err := VerifyRaw(raw, msg, NamespaceGit, lookup); err == nil && !bytes.Equal(msg, []byte("seed")) {
			t.Fatalf("signature verified for message %q", msg)
		}
	})
}

// FuzzPublicKeyFromTUFKind: the policy's TUF form of security keys and
// OpenPGP keys never panics, and what it accepts converts back (TUFKey)
// to exactly the same key object.
func FuzzPublicKeyFromTUFKind(f *testing.F) {
	key, _, _ := seedOpenPGP(f)
	sk, err := ParseSKKey(seedSKBlob("ssh:"), true)
	if err != nil {
		f.Fatal(err)
	}
	sg, err := NewSigstoreKey("https://accounts.google.com", "kim@example.com")
	if err != nil {
		f.Fatal(err)
	}
	for _, pub := range []ssh.PublicKey{key, sk, sg} {
		k, _, err := TUFKey(pub)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(k.Type, k.Scheme, k.Value.PublicKey)
	}
	f.Add(ssh.KeyAlgoSKECDSA256, SchemeSK, "AAAA")
	f.Fuzz(func(t *testing.T, typ, scheme, value string) {
		k := &metadata.Key{Type: typ, Scheme: scheme, Value: metadata.KeyVal{PublicKey: value}}
		if IsTUFNative(k) {
			return
		}
		pub, err := PublicKeyFromTUF(k)
		if err != nil {
			return
		}
		back, _, err := TUFKey(pub)
		if err != nil {
			t.Fatalf("accepted key does not convert back: %v", err)
		}
		if back.Type != typ || back.Scheme != scheme || back.Value.PublicKey != value {
			t.Fatalf("%s/%s/%q converts back to %s/%s/%q", typ, scheme, value, back.Type, back.Scheme, back.Value.PublicKey)
		}
	})
}

// FuzzOpenPGPDetached: verifying any bytes as a gpg-made detached
// signature (git push --signed, gpg.format openpgp) never panics, and
// nothing but a signature of the seed's message verifies for it.
func FuzzOpenPGPDetached(f *testing.F) {
	key, _, sig := seedOpenPGP(f)
	armored, err := ArmorOpenPGPSignature(sig)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(armored, []byte("seed"))
	f.Add([]byte("-----BEGIN PGP SIGNATURE-----\n\nwgA=\n-----END PGP SIGNATURE-----\n"), []byte("seed"))
	lookup := func(fp string) (ssh.PublicKey, bool) { return key, fp == Fingerprint(key) }
	owner := func([]byte) (string, bool) { return Fingerprint(key), true }
	f.Fuzz(func(t *testing.T, armored, msg []byte) {
		_, _ = OpenPGPDetachedFingerprint(armored)
		_, _ = OpenPGPDetachedIssuer(armored)
		if _, err := VerifyOpenPGPDetached(armored, msg, NamespaceGit, lookup, owner); err == nil && !bytes.Equal(msg, []byte("seed")) {
			t.Fatalf("signature verified for message %q", msg)
		}
	})
}
