package sign_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/keykinds"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// signSK makes an armored SSHSIG with a software security key, as
// ssh-keygen -Y sign does with a real one (hiddeco/sshsig does the SSHSIG
// framing; the SoftSK does the authenticator's part).
func signSK(t *testing.T, k *keykinds.SoftSK, msg []byte, ns string) []byte {
	t.Helper()
	sig, err := sshsig.Sign(strings.NewReader(string(msg)), k, sshsig.HashSHA512, ns)
	if err != nil {
		t.Fatal(err)
	}
	return sshsig.Armor(sig)
}

// keygenVerify runs ssh-keygen -Y verify, the reference, with an
// allowed_signers line for pub (with options) and returns whether it
// accepted and its output.
func keygenVerify(t *testing.T, s *testutil.Sandbox, options string, pub ssh.PublicKey, msg, armored []byte, ns string) (bool, string) {
	t.Helper()
	dir := t.TempDir()
	line := "signer@example.com "
	if options != "" {
		line += options + " "
	}
	line += strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))) + "\n"
	allowed := writeFile(t, dir, "allowed_signers", []byte(line))
	sigFile := writeFile(t, dir, "msg.sig", armored)
	out, err := s.RunErr(dir, msg, "ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "signer@example.com", "-n", ns, "-s", sigFile)
	return err == nil, out + errString(err)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestSecurityKeySignaturesAgainstSSHKeygen builds sk signatures in Go in
// OpenSSH's format and checks that this package and ssh-keygen -Y verify
// agree on each, for both key types: user presence required, user
// verification required by verify-required, another application, another
// message, another namespace. ssh-keygen is the reference for the
// cryptography; git-secure is deliberately stricter than OpenSSH 9.2's
// ssh-keygen -Y verify on the flags, which that tool does not check at all
// (it accepts an untouched signature, and its allowed_signers has no
// verify-required option): keygenOK says what ssh-keygen answers.
func TestSecurityKeySignaturesAgainstSSHKeygen(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen not installed")
	}
	s := testutil.NewSandbox(t)
	msg := []byte("tree 1234\n\nRSL entry\n")
	cases := []struct {
		name      string
		flags     byte
		verifyReq bool
		signApp   string // "" = the key's
		verifyMsg []byte // nil = msg
		verifyNS  string // "" = git
		wantOK    bool
		keygenOK  bool
		wantErr   string
	}{
		{name: "touched", flags: keykinds.FlagUserPresent, wantOK: true, keygenOK: true},
		{name: "touched+verified", flags: keykinds.FlagUserPresent | keykinds.FlagUserVerified, wantOK: true, keygenOK: true},
		{name: "no touch", flags: 0, wantErr: "did not confirm user presence", keygenOK: true},
		{name: "verify-required, verified", flags: keykinds.FlagUserPresent | keykinds.FlagUserVerified, verifyReq: true, wantOK: true, keygenOK: true},
		{name: "verify-required, not verified", flags: keykinds.FlagUserPresent, verifyReq: true, wantErr: "requires user verification", keygenOK: true},
		{name: "other application", flags: keykinds.FlagUserPresent, signApp: "ssh:other", wantErr: "does not verify"},
		{name: "other message", flags: keykinds.FlagUserPresent, verifyMsg: []byte("tree 5678\n"), wantErr: "does not verify"},
		{name: "other namespace", flags: keykinds.FlagUserPresent, verifyNS: sign.NamespaceAttestation, wantErr: "namespace"},
		{name: "unknown flag bits", flags: keykinds.FlagUserPresent | 0x40, wantErr: "unknown security key flags", keygenOK: true},
	}
	for _, typ := range []string{"ed25519-sk", "ecdsa-sk"} {
		for _, c := range cases {
			t.Run(typ+"/"+c.name, func(t *testing.T) {
				k := keykinds.NewSoftSK(t, typ)
				k.Flags, k.SignApplication = c.flags, c.signApp
				armored := signSK(t, k, msg, sign.NamespaceGit)
				line := k.AuthorizedKey()
				if c.verifyReq {
					line = sign.OptionVerifyRequired + " " + line
				}
				pub, _, err := sign.ParsePublicKey([]byte(line))
				if err != nil {
					t.Fatal(err)
				}
				sk, ok := pub.(*sign.SKKey)
				if !ok || sk.VerifyRequired != c.verifyReq || sk.Application != "ssh:" {
					t.Fatalf("ParsePublicKey = %#v", pub)
				}
				vmsg, ns := msg, sign.NamespaceGit
				if c.verifyMsg != nil {
					vmsg = c.verifyMsg
				}
				if c.verifyNS != "" {
					ns = c.verifyNS
				}
				got, err := sign.VerifySSHSig(armored, vmsg, ns, trust(pub))
				ours := err == nil
				if ours != c.wantOK {
					t.Fatalf("ours: ok=%v err=%v, want ok=%v", ours, err, c.wantOK)
				}
				if err != nil {
					if !errors.Is(err, sign.ErrBadSignature) || !strings.Contains(err.Error(), c.wantErr) {
						t.Fatalf("error %q, want ErrBadSignature containing %q", err, c.wantErr)
					}
				} else if sign.Fingerprint(got) != sign.Fingerprint(k.PublicKey()) {
					t.Fatal("verified with another key")
				}
				theirs, out := keygenVerify(t, s, "", k.PublicKey(), vmsg, armored, ns)
				if theirs != c.keygenOK {
					t.Fatalf("ssh-keygen -Y verify ok=%v (%s), want %v", theirs, out, c.keygenOK)
				}
				// The fingerprint is ssh-keygen's.
				if fp := keygenFingerprint(t, s, k.AuthorizedKey()); fp != sign.Fingerprint(pub) {
					t.Fatalf("fingerprint %s, ssh-keygen says %s", sign.Fingerprint(pub), fp)
				}
			})
		}
	}
}

func keygenFingerprint(t *testing.T, s *testutil.Sandbox, line string) string {
	t.Helper()
	p := writeFile(t, t.TempDir(), "k.pub", []byte(line+"\n"))
	out := s.Run("", "ssh-keygen", "-l", "-E", "sha256", "-f", p)
	f := strings.Fields(out)
	if len(f) < 2 {
		t.Fatalf("ssh-keygen -l: %q", out)
	}
	return f[1]
}

// TestSecurityKeyThroughAgent signs through an ssh-agent that holds the
// security key (as ssh-add of an sk key file does): LoadSigner with the
// .pub file finds it there, and the signature verifies here and with
// ssh-keygen. A device that reports no touch makes signing fail.
func TestSecurityKeyThroughAgent(t *testing.T) {
	s := testutil.NewSandbox(t)
	for _, typ := range []string{"ed25519-sk", "ecdsa-sk"} {
		t.Run(typ, func(t *testing.T) {
			dir := t.TempDir()
			k := keykinds.NewSoftSK(t, typ)
			sock := keykinds.ServeAgent(t, dir, k)
			pubFile := writeFile(t, dir, "id_sk.pub", []byte(k.AuthorizedKey()+" me\n"))
			signer, err := sign.LoadSigner(sign.KeySpec{File: pubFile, AgentSocket: sock})
			if err != nil {
				t.Fatal(err)
			}
			defer signer.Close()
			msg := []byte("payload\n")
			armored, err := sign.SignSSHSig(signer, msg, sign.NamespaceGit)
			if err != nil {
				t.Fatal(err)
			}
			pub := pubOf2(t, k.AuthorizedKey())
			if _, err := sign.VerifySSHSig(armored, msg, sign.NamespaceGit, trust(pub)); err != nil {
				t.Fatal(err)
			}
			if ok, out := keygenVerify(t, s, "", k.PublicKey(), msg, armored, sign.NamespaceGit); !ok {
				t.Fatalf("ssh-keygen -Y verify: %s", out)
			}
			raw, err := sign.SignRaw(signer, msg, sign.NamespaceAttestation)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sign.VerifyRaw(raw, msg, sign.NamespaceAttestation, trust(pub)); err != nil {
				t.Fatal(err)
			}
			k.Flags = 0 // not touched
			if _, err := sign.SignSSHSig(signer, msg, sign.NamespaceGit); err == nil || !strings.Contains(err.Error(), "user presence") {
				t.Fatalf("untouched signature: %v, want a user presence error", err)
			}
		})
	}
}

func pubOf2(t *testing.T, line string) ssh.PublicKey {
	t.Helper()
	pub, _, err := sign.ParsePublicKey([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// TestSecurityKeyTUF round-trips sk keys through TUF key form (the
// verify-required option is part of the key) and signs metadata payloads
// in the policy namespace.
func TestSecurityKeyTUF(t *testing.T) {
	for _, uv := range []bool{false, true} {
		dir := t.TempDir()
		k := keykinds.NewSoftSK(t, "ed25519-sk")
		if uv {
			k.Flags |= keykinds.FlagUserVerified
		}
		pub, err := sign.NewSKKey(k.PublicKey(), uv)
		if err != nil {
			t.Fatal(err)
		}
		tk, id, err := sign.TUFKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		back, err := sign.PublicKeyFromTUF(tk)
		if err != nil {
			t.Fatal(err)
		}
		if b, ok := back.(*sign.SKKey); !ok || b.VerifyRequired != uv || sign.Fingerprint(b) != sign.Fingerprint(pub) {
			t.Fatalf("round trip: %#v", back)
		}
		sock := keykinds.ServeAgent(t, dir, k)
		signer, err := sign.LoadSigner(sign.KeySpec{File: writeFile(t, dir, "k.pub", []byte(k.AuthorizedKey())), AgentSocket: sock})
		if err != nil {
			t.Fatal(err)
		}
		ts, err := sign.TUFSigner(signer)
		if err != nil {
			t.Fatal(err)
		}
		kh, ok := ts.(sign.TUFKeyHolder)
		if !ok {
			t.Fatal("TUF signer of a security key is not a TUFKeyHolder")
		}
		if _, hid, _ := kh.TUFKey(); hid != id && !uv {
			t.Fatalf("key id %s, want %s", hid, id)
		}
		payload := []byte(`{"signed":1}`)
		sig, err := ts.SignMessage(strings.NewReader(string(payload)))
		if err != nil {
			t.Fatal(err)
		}
		if err := sign.VerifyTUFSignature(tk, payload, sig); err != nil {
			t.Fatal(err)
		}
		if err := sign.VerifyTUFSignature(tk, []byte(`{"signed":2}`), sig); err == nil {
			t.Fatal("signature verified over another payload")
		}
		signer.Close()
		_ = rand.Reader
	}
}

// TestSecurityKeyPrivateFile: --key with a security key's private key
// file (which holds only a handle) signs through ssh-agent; without the
// key in the agent the error says to ssh-add it and that a touch is
// needed.
func TestSecurityKeyPrivateFile(t *testing.T) {
	dir := t.TempDir()
	k := keykinds.NewSoftSK(t, "ed25519-sk")
	file := k.PrivateKeyFile(t, dir)
	pub, err := sign.PublicKeyOfPrivate(mustRead(t, file))
	if err != nil || sign.Fingerprint(pub) != sign.Fingerprint(k.PublicKey()) {
		t.Fatalf("public key of the file: %v", err)
	}
	_, err = sign.LoadSigner(sign.KeySpec{File: file})
	if !errors.Is(err, sign.ErrKeyUnavailable) || !strings.Contains(err.Error(), "ssh-add "+file) || !strings.Contains(err.Error(), "touch") {
		t.Fatalf("sk key file without an agent: %v", err)
	}
	// Found from the file or from the .pub beside it.
	for _, p := range []string{file, file + ".pub"} {
		priv, sk, ok := sign.SecurityKeyFile(p, "")
		if !ok || priv != file || sign.Fingerprint(sk) != sign.Fingerprint(k.PublicKey()) {
			t.Errorf("SecurityKeyFile(%s) = %s, %v", p, priv, ok)
		}
	}
	if _, _, ok := sign.SecurityKeyFile(testutil.NewSandbox(t).NewKey("plain", "ed25519").Private, ""); ok {
		t.Error("an ed25519 key file taken for a security key")
	}
	sock := keykinds.ServeAgent(t, dir, k)
	s, err := sign.LoadSigner(sign.KeySpec{File: file, AgentSocket: sock})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	armored, err := sign.SignSSHSig(s, []byte("m"), sign.NamespaceGit)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sign.VerifySSHSig(armored, []byte("m"), sign.NamespaceGit, trust(pubOf2(t, k.AuthorizedKey()))); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSecurityKeyMutationsAgainstSSHKeygen flips single bytes of valid sk
// signatures: whatever this package accepts, ssh-keygen -Y verify (the
// reference) must accept too, and the untouched signature passes both.
func TestSecurityKeyMutationsAgainstSSHKeygen(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen not installed")
	}
	s := testutil.NewSandbox(t)
	msg := []byte("entry\n")
	for _, typ := range []string{"ed25519-sk", "ecdsa-sk"} {
		k := keykinds.NewSoftSK(t, typ)
		pub := pubOf2(t, k.AuthorizedKey())
		sig, err := sshsig.Sign(bytes.NewReader(msg), k, sshsig.HashSHA512, sign.NamespaceGit)
		if err != nil {
			t.Fatal(err)
		}
		raw := sig.Marshal()
		for i := 0; i < 24; i++ {
			mut := bytes.Clone(raw)
			pos := 0
			if i > 0 {
				var b [2]byte
				if _, err := rand.Read(b[:]); err != nil {
					t.Fatal(err)
				}
				pos = int(b[0])<<8 | int(b[1])
				pos %= len(mut)
				mut[pos] ^= 1 << (b[1] % 8)
			}
			_, err := sign.VerifyRaw(mut, msg, sign.NamespaceGit, trust(pub))
			ours := err == nil
			if i == 0 && !ours {
				t.Fatalf("%s: valid signature refused: %v", typ, err)
			}
			if !ours {
				continue
			}
			m, perr := sshsig.ParseSignature(mut)
			if perr != nil {
				t.Fatalf("%s: accepted a signature the SSHSIG parser refuses (byte %d)", typ, pos)
			}
			if theirs, out := keygenVerify(t, s, "", k.PublicKey(), msg, sshsig.Armor(m), sign.NamespaceGit); !theirs {
				t.Fatalf("%s: byte %d flipped: accepted here, refused by ssh-keygen: %s", typ, pos, out)
			}
		}
	}
}
