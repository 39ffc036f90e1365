package sign_test

import (
	"crypto/dsa" //nolint:staticcheck // DSA signatures are made only to test that they are refused
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
	"golang.org/x/crypto/ssh"
)

// sshsigBlob builds a binary SSHSIG structure by hand, as ssh-keygen lays
// it out, around an SSH signature made by sign over the SSHSIG signed data
// of msg (namespace git, hash sha512).
func sshsigBlob(t *testing.T, pubBlob, msg []byte, signFn func(signed []byte) *ssh.Signature) []byte {
	t.Helper()
	digest := sha512.Sum512(msg)
	signed := append([]byte("SSHSIG"), ssh.Marshal(struct {
		Namespace, Reserved, Hash, Digest string
	}{sign.NamespaceGit, "", "sha512", string(digest[:])})...)
	return append([]byte("SSHSIG"), ssh.Marshal(struct {
		Version                                   uint32
		PublicKey, Namespace, Reserved, Hash, Sig string
	}{1, string(pubBlob), sign.NamespaceGit, "", "sha512", string(ssh.Marshal(signFn(signed)))})...)
}

// TestSHA1RSASignatureRefused: an SSHSIG whose RSA signature uses the
// SHA-1 "ssh-rsa" algorithm, made for real with the key, is refused with a
// message saying so, as ssh-keygen -Y verify refuses it; rsa-sha2-512 and
// rsa-sha2-256 signatures made the same way verify, with both.
func TestSHA1RSASignatureRefused(t *testing.T) {
	s := testutil.NewSandbox(t)
	k := s.NewKey("rsa-signer", "rsa")
	raw, err := os.ReadFile(k.Private)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ssh.ParsePrivateKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	pub := pubOf(t, k)
	dir := t.TempDir()
	msg := []byte("an RSL entry\n")
	writeFile(t, dir, "allowed", []byte("rsa-signer@example.com "+k.PublicLine(t)+"\n"))
	for _, tc := range []struct {
		algo string
		ok   bool
	}{
		{ssh.KeyAlgoRSA, false},
		{ssh.KeyAlgoRSASHA512, true},
		{ssh.KeyAlgoRSASHA256, true},
	} {
		t.Run(tc.algo, func(t *testing.T) {
			blob := sshsigBlob(t, pub.Marshal(), msg, func(signed []byte) *ssh.Signature {
				sig, err := key.(ssh.AlgorithmSigner).SignWithAlgorithm(rand.Reader, signed, tc.algo)
				if err != nil {
					t.Fatal(err)
				}
				return sig
			})
			armored := pem.EncodeToMemory(&pem.Block{Type: "SSH SIGNATURE", Bytes: blob})
			sigFile := writeFile(t, dir, tc.algo+".sig", armored)
			_, keygenErr := s.RunErr(dir, msg, "ssh-keygen", "-Y", "verify", "-f", filepath.Join(dir, "allowed"), "-I", "rsa-signer@example.com", "-n", "git", "-s", sigFile)
			if (keygenErr == nil) != tc.ok {
				t.Fatalf("ssh-keygen -Y verify of an %s signature: err = %v, want ok = %v", tc.algo, keygenErr, tc.ok)
			}
			_, err := sign.VerifySSHSig(armored, msg, sign.NamespaceGit, trust(pub))
			if tc.ok {
				if err != nil {
					t.Fatalf("%s signature: %v", tc.algo, err)
				}
				return
			}
			if !errors.Is(err, sign.ErrBadSignature) || !strings.Contains(err.Error(), "RSA signature over SHA-1 (ssh-rsa) is not accepted") {
				t.Fatalf("%s signature: err = %v, want ErrBadSignature saying SHA-1 ssh-rsa is not accepted", tc.algo, err)
			}
			if _, err := sign.VerifyRaw(blob, msg, sign.NamespaceGit, trust(pub)); err == nil || !strings.Contains(err.Error(), "over SHA-1") {
				t.Fatalf("raw %s signature: err = %v", tc.algo, err)
			}
		})
	}
}

const (
	dsaWhy   = "DSA keys (ssh-dss) are not accepted: use ed25519"
	rsa1kWhy = "RSA key of 1024 bits is too short: at least 2048 bits"
)

// TestRefusedKeysSayWhy: a DSA key and a 1024-bit RSA key are refused
// wherever a key comes in (public key lines, key files, user.signingkey
// values, private key files, signatures), with ErrUnsupportedKey and a
// message that says what is wrong instead of "not an SSH public key".
func TestRefusedKeysSayWhy(t *testing.T) {
	s := testutil.NewSandbox(t)
	d := s.NewDSAKey("old-dsa")
	// Where this ssh-keygen still knows DSA, it reads the generated files
	// back as the same key, so the test refuses real DSA key files.
	for _, f := range []string{d.Private, d.PEM} {
		if out, err := s.RunErr(s.Home, nil, "ssh-keygen", "-y", "-f", f); err == nil {
			if got, want := strings.Fields(out), strings.Fields(readString(t, d.Public)); len(got) < 2 || got[1] != want[1] {
				t.Fatalf("ssh-keygen -y -f %s = %q, want the key of %s", f, out, d.Public)
			}
		} else {
			t.Logf("ssh-keygen cannot read DSA keys here (%v); the files are checked by construction only", err)
		}
	}
	rsaPriv := filepath.Join(s.Home, "rsa1024")
	s.Run(s.Home, "ssh-keygen", "-q", "-t", "rsa", "-b", "1024", "-N", "", "-f", rsaPriv)
	dsaLine, rsaLine := strings.TrimSpace(readString(t, d.Public)), strings.TrimSpace(readString(t, rsaPriv+".pub"))

	type attempt struct {
		name string
		do   func() error
		why  string
	}
	parse := func(line string) func() error {
		return func() error { _, _, err := sign.ParsePublicKey([]byte(line)); return err }
	}
	load := func(spec sign.KeySpec) func() error {
		return func() error {
			sg, err := sign.LoadSigner(spec)
			if err == nil {
				sg.Close()
			}
			return err
		}
	}
	ofPrivate := func(path string) func() error {
		return func() error { _, err := sign.PublicKeyOfPrivate([]byte(readString(t, path))); return err }
	}
	noAgent := "/nonexistent/agent.sock"
	for _, a := range []attempt{
		{"DSA public key line", parse(dsaLine), dsaWhy},
		{"RSA-1024 public key line", parse(rsaLine), rsa1kWhy},
		{"DSA private key file (OpenSSH format)", load(sign.KeySpec{File: d.Private}), dsaWhy},
		{"DSA private key file (PEM)", load(sign.KeySpec{File: d.PEM}), dsaWhy},
		{"DSA public key file for ssh-agent", load(sign.KeySpec{File: d.Public, AgentSocket: noAgent}), dsaWhy},
		{"DSA user.signingkey key::", load(sign.KeySpec{SigningKey: "key::" + dsaLine, AgentSocket: noAgent}), dsaWhy},
		{"DSA user.signingkey bare", load(sign.KeySpec{SigningKey: dsaLine, AgentSocket: noAgent}), dsaWhy},
		{"DSA user.signingkey path", load(sign.KeySpec{SigningKey: d.Private}), dsaWhy},
		{"RSA-1024 private key file", load(sign.KeySpec{File: rsaPriv}), rsa1kWhy},
		{"RSA-1024 user.signingkey key::", load(sign.KeySpec{SigningKey: "key::" + rsaLine, AgentSocket: noAgent}), rsa1kWhy},
		{"public half of a DSA private key", ofPrivate(d.Private), dsaWhy},
		{"public half of a DSA PEM key", ofPrivate(d.PEM), dsaWhy},
		{"public half of an RSA-1024 private key", ofPrivate(rsaPriv), rsa1kWhy},
	} {
		err := a.do()
		if !errors.Is(err, sign.ErrUnsupportedKey) || !strings.Contains(err.Error(), a.why) {
			t.Errorf("%s: err = %v, want ErrUnsupportedKey saying %q", a.name, err, a.why)
		}
		var refused *sign.UnsupportedKeyError
		if !errors.As(err, &refused) {
			t.Errorf("%s: err = %v is not an UnsupportedKeyError", a.name, err)
		}
	}

	// A real DSA signature (SHA-1, as ssh-dss signs) in an SSHSIG.
	pubBlob := mustParseBlob(t, dsaLine)
	msg := []byte("an RSL entry\n")
	blob := sshsigBlob(t, pubBlob, msg, func(signed []byte) *ssh.Signature {
		h := sha1.Sum(signed)
		r, sv, err := dsa.Sign(rand.Reader, d.Key, h[:])
		if err != nil {
			t.Fatal(err)
		}
		rs := make([]byte, 40)
		r.FillBytes(rs[:20])
		sv.FillBytes(rs[20:])
		return &ssh.Signature{Format: ssh.InsecureKeyAlgoDSA, Blob: rs}
	})
	anyKey := func(string) (ssh.PublicKey, bool) { return nil, false }
	if _, err := sign.VerifyRaw(blob, msg, sign.NamespaceGit, anyKey); !errors.Is(err, sign.ErrBadSignature) || !strings.Contains(err.Error(), dsaWhy) {
		t.Errorf("SSHSIG by a DSA key: err = %v, want ErrBadSignature saying %q", err, dsaWhy)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mustParseBlob returns the base64-decoded key of an authorized_keys line
// that the ssh package may not parse.
func mustParseBlob(t *testing.T, line string) []byte {
	t.Helper()
	f := strings.Fields(line)
	b, err := base64.StdEncoding.DecodeString(f[1])
	if err != nil {
		t.Fatal(err)
	}
	return b
}
