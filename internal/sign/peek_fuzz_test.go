package sign

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"testing"

	"golang.org/x/crypto/ssh"
)

// FuzzPeekSSHSIG: peekSSHSIG reads the key type and signature algorithm of
// any bytes without panicking, and agrees with the SSHSIG parser on every
// signature parseRaw accepts; what it refuses by name (DSA keys, SHA-1
// ssh-rsa signatures) never parses.
func FuzzPeekSSHSIG(f *testing.F) {
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	rsaKey, err := rsa.GenerateKey(rand.Reader, MinRSABits)
	if err != nil {
		f.Fatal(err)
	}
	for _, k := range []any{edKey, rsaKey} {
		s, err := ssh.NewSignerFromKey(k)
		if err != nil {
			f.Fatal(err)
		}
		raw, err := SignRaw(s, []byte("seed"), NamespaceGit)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte("SSHSIG\x00\x00\x00\x01\x00\x00\x00\x0bssh-dss"))
	f.Add([]byte("SSHSIG"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		keyType, algo := peekSSHSIG(raw)
		sig, err := parseRaw(raw)
		if err != nil {
			return
		}
		if keyType != sig.PublicKey.Type() || algo != sig.Signature.Format {
			t.Fatalf("peek says key %q, algorithm %q; the parser %q, %q", keyType, algo, sig.PublicKey.Type(), sig.Signature.Format)
		}
		if keyType == ssh.InsecureKeyAlgoDSA || algo == ssh.KeyAlgoRSA {
			t.Fatalf("parsed a signature with key %q and algorithm %q", keyType, algo)
		}
	})
}
