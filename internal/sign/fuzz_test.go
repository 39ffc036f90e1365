package sign_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"testing"

	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
	"golang.org/x/crypto/ssh"
)

// realSignature returns an ssh-keygen-made armored signature of data, its
// key, and an ed25519 signer made in Go.
func fuzzSeeds(f *testing.F) (keygenSig []byte, keygenPub ssh.PublicKey, goSigner ssh.Signer) {
	s := testutil.NewSandbox(f)
	k := s.NewKey("fuzz", "ed25519")
	file := writeFile(f, s.Home, "msg", []byte("fuzz data"))
	s.Run(s.Home, "ssh-keygen", "-q", "-Y", "sign", "-f", k.Private, "-n", "git", file)
	sig, err := os.ReadFile(file + ".sig")
	if err != nil {
		f.Fatal(err)
	}
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	goSigner, _ = ssh.NewSignerFromKey(priv)
	return sig, pubOf(f, k), goSigner
}

func FuzzVerifySSHSig(f *testing.F) {
	keygenSig, keygenPub, goSigner := fuzzSeeds(f)
	data := []byte("fuzz data")
	ours, err := sign.SignSSHSig(goSigner, data, sign.NamespaceGit)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(keygenSig, data)
	f.Add(ours, data)
	f.Add(ours[:len(ours)/2], data)
	f.Add([]byte("-----BEGIN SSH SIGNATURE-----\n-----END SSH SIGNATURE-----\n"), []byte{})
	trusted := trust(keygenPub, goSigner.PublicKey())
	f.Fuzz(func(t *testing.T, armored, msg []byte) {
		pub, err := sign.VerifySSHSig(armored, msg, sign.NamespaceGit, trusted)
		fp, fpErr := sign.SignatureFingerprint(armored)
		if err == nil {
			if !sameKey(pub, keygenPub) && !sameKey(pub, goSigner.PublicKey()) {
				t.Fatal("verified with an untrusted key")
			}
			if fpErr != nil || fp != sign.Fingerprint(pub) {
				t.Fatalf("SignatureFingerprint %q %v disagrees with verification", fp, fpErr)
			}
			// Only the signed message verifies.
			if !bytes.Equal(msg, data) {
				t.Fatalf("verified a message that was never signed: %q", msg)
			}
		}
		// Raw path with the same bytes must not panic either.
		_, _ = sign.VerifyRaw(armored, msg, sign.NamespaceAttestation, trusted)
	})
}

func FuzzParsePublicKey(f *testing.F) {
	s := testutil.NewSandbox(f)
	for _, typ := range keyTypes {
		f.Add([]byte(s.NewKey("fz-"+typ, typ).PublicLine(f)))
	}
	f.Add([]byte("key::ssh-ed25519 AAAA"))
	f.Add([]byte("sk-ssh-ed25519@openssh.com AAAA x"))
	f.Add([]byte(""))
	f.Add([]byte("sigstore-oidc https://accounts.google.com kim@example.com"))
	f.Fuzz(func(t *testing.T, line []byte) {
		pub, comment, err := sign.ParsePublicKey(line)
		if err != nil {
			return
		}
		// A parsed key re-serializes and parses to the same key.
		again := bytes.TrimSuffix(ssh.MarshalAuthorizedKey(pub), []byte("\n"))
		if sk, ok := pub.(*sign.SigstoreKey); ok {
			again = []byte(sk.String())
		}
		if comment != "" {
			again = append(append(again, ' '), comment...)
		}
		pub2, comment2, err := sign.ParsePublicKey(again)
		if err != nil {
			t.Fatalf("reparse %q: %v", again, err)
		}
		if !sameKey(pub, pub2) || comment2 != comment {
			t.Fatalf("reparse changed key or comment: %q vs %q", comment, comment2)
		}
		if _, _, err := sign.TUFKey(pub); err != nil && pub.Type() != ssh.KeyAlgoECDSA384 && pub.Type() != ssh.KeyAlgoECDSA521 {
			t.Fatalf("TUFKey of accepted key: %v", err)
		}
	})
}

func BenchmarkVerifySSHSigEd25519(b *testing.B) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := ssh.NewSignerFromKey(priv)
	data := bytes.Repeat([]byte("tree 0123456789abcdef0123456789abcdef01234567\n"), 8)
	armored, err := sign.SignSSHSig(signer, data, sign.NamespaceGit)
	if err != nil {
		b.Fatal(err)
	}
	lookup := trust(signer.PublicKey())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sign.VerifySSHSig(armored, data, sign.NamespaceGit, lookup); err != nil {
			b.Fatal(err)
		}
	}
}
