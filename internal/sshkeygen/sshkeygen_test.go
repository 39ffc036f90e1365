package sshkeygen_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/sshkeygen"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// TestSignWithSSHKeygen: ssh-keygen -Y sign makes the signature (with an
// ordinary key file here: a security key file needs its device), and
// internal/sign takes it in armored and raw form; the prompt says to
// touch the key; bad arguments never reach ssh-keygen.
func TestSignWithSSHKeygen(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen not installed")
	}
	s := testutil.NewSandbox(t)
	k := s.NewKey("k", "ed25519")
	line, err := os.ReadFile(k.Public)
	if err != nil {
		t.Fatal(err)
	}
	pub, _, err := sign.ParsePublicKey(line)
	if err != nil {
		t.Fatal(err)
	}
	var prompt bytes.Buffer
	signer, err := sshkeygen.New("", k.Private, pub, &prompt)
	if err != nil {
		t.Fatal(err)
	}
	fp := sign.Fingerprint(pub)
	lookup := func(got string) (ssh.PublicKey, bool) { return pub, got == fp }
	msg := []byte("tree 1\n\nentry\n")
	armored, err := sign.SignSSHSig(signer, msg, sign.NamespaceGit)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(armored, []byte("-----BEGIN SSH SIGNATURE-----")) {
		t.Fatalf("armor:\n%s", armored)
	}
	if _, err := sign.VerifySSHSig(armored, msg, sign.NamespaceGit, lookup); err != nil {
		t.Fatal(err)
	}
	raw, err := sign.SignRaw(signer, msg, sign.NamespaceAttestation)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sign.VerifyRaw(raw, msg, sign.NamespaceAttestation, lookup); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prompt.String(), "touch the security key") || !strings.Contains(prompt.String(), fp) {
		t.Errorf("prompt: %q", prompt.String())
	}
	if _, err := signer.SignMessage(msg, "git -O x"); err == nil {
		t.Error("namespace with a space accepted")
	}
	if _, err := sshkeygen.New("", "-f/etc/passwd", pub, nil); err == nil {
		t.Error("key file that looks like an option accepted")
	}
	// Another key's file: the signature is refused before use.
	other := s.NewKey("other", "ed25519")
	wrong, err := sshkeygen.New("", other.Private, pub, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sign.SignSSHSig(wrong, msg, sign.NamespaceGit); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("signature by another key file: %v", err)
	}
}
