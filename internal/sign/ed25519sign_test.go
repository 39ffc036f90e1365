package sign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/pem"
	"os"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// signEd25519 gives crypto/ed25519's bytes (Ed25519 is deterministic) for
// random keys and messages of every length up to two SHA-512 blocks and
// beyond, and for RFC 8032's first test vector.
func TestSignEd25519MatchesStdlib(t *testing.T) {
	for i := 0; i < 300; i++ {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		msg := make([]byte, i)
		if _, err := rand.Read(msg); err != nil {
			t.Fatal(err)
		}
		got, want := signEd25519(priv, msg), ed25519.Sign(priv, msg)
		if !bytes.Equal(got, want) {
			t.Fatalf("key %x, message %x: signature %x, crypto/ed25519 %x", priv.Seed(), msg, got, want)
		}
		if !ed25519.Verify(priv.Public().(ed25519.PublicKey), msg, got) {
			t.Fatalf("signature %x does not verify", got)
		}
	}
	// RFC 8032, 7.1, TEST 1 (empty message).
	seed := hexOf(t, "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
	want := hexOf(t, "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"+
		"5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
	priv := ed25519.NewKeyFromSeed(seed)
	if got := signEd25519(priv, nil); !bytes.Equal(got, want) || !bytes.Equal(priv.Public().(ed25519.PublicKey), hexOf(t, "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")) {
		t.Fatalf("RFC 8032 test 1: %x", got)
	}
}

// An Ed25519 key file signs through signEd25519, with the bytes the ssh
// package's own signer makes; other key types keep the ssh package's.
func TestKeySignerEd25519(t *testing.T) {
	s := testutil.NewSandbox(t)
	for _, typ := range []string{"ed25519", "ecdsa", "rsa"} {
		k := s.NewKey("k-"+typ, typ)
		signer, err := LoadSigner(KeySpec{File: k.Private})
		if err != nil {
			t.Fatal(err)
		}
		ks := signer.(*keySigner)
		if (ks.ed != nil) != (typ == "ed25519") {
			t.Fatalf("%s: fast Ed25519 signing = %v", typ, ks.ed != nil)
		}
		if typ != "ed25519" {
			continue
		}
		data, err := os.ReadFile(k.Private)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := ssh.ParsePrivateKey(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range [][]byte{nil, []byte("message"), bytes.Repeat([]byte("x"), 1000)} {
			got, err := signer.Sign(nil, msg)
			if err != nil {
				t.Fatal(err)
			}
			want, err := plain.Sign(rand.Reader, msg)
			if err != nil {
				t.Fatal(err)
			}
			if got.Format != want.Format || !bytes.Equal(got.Blob, want.Blob) || len(got.Rest) != 0 {
				t.Fatalf("signature %s %x, ssh package %s %x", got.Format, got.Blob, want.Format, want.Blob)
			}
			if err := signer.PublicKey().Verify(msg, got); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A key file whose public half is not its seed's is left to the ssh
	// package (which signs it as crypto/ed25519 does).
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	pub, err := ssh.NewPublicKey(other.Public())
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	own, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	if rawEd25519(pem.EncodeToMemory(block), own) == nil {
		t.Fatal("an Ed25519 key file was not taken for fast signing")
	}
	if rawEd25519(pem.EncodeToMemory(block), pub) != nil {
		t.Fatal("a key file for another public key was taken for fast signing")
	}
}

func hexOf(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
