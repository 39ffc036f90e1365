package sign_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

func TestSignVerifySSHSig(t *testing.T) {
	s := testutil.NewSandbox(t)
	other := pubOf(t, s.NewKey("other", "ed25519"))
	for _, typ := range keyTypes {
		t.Run(typ, func(t *testing.T) {
			k := s.NewKey("k-"+typ, typ)
			signer := loadFile(t, k.Private)
			pub := pubOf(t, k)
			if !sameKey(signer.PublicKey(), pub) {
				t.Fatal("signer key differs from .pub")
			}
			data := []byte("tree 1234\nparent abcd\n\nRSL entry\n")
			armored, err := sign.SignSSHSig(signer, data, sign.NamespaceGit)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(armored, []byte("-----BEGIN SSH SIGNATURE-----\n")) ||
				!bytes.HasSuffix(armored, []byte("-----END SSH SIGNATURE-----\n")) {
				t.Fatalf("unexpected armor:\n%s", armored)
			}
			parsed, err := sshsig.Unarmor(armored)
			if err != nil {
				t.Fatal(err)
			}
			if parsed.HashAlgorithm != sshsig.HashSHA512 {
				t.Errorf("hash %s, want sha512", parsed.HashAlgorithm)
			}
			if typ == "rsa" && parsed.Signature.Format != ssh.KeyAlgoRSASHA512 {
				t.Errorf("rsa signature format %s, want rsa-sha2-512", parsed.Signature.Format)
			}

			got, err := sign.VerifySSHSig(armored, data, sign.NamespaceGit, trust(other, pub))
			if err != nil {
				t.Fatalf("verify: %v", err)
			}
			if !sameKey(got, pub) {
				t.Fatal("verify returned a different key")
			}
			fp, err := sign.SignatureFingerprint(armored)
			if err != nil || fp != sign.Fingerprint(pub) {
				t.Fatalf("SignatureFingerprint = %q, %v; want %q", fp, err, sign.Fingerprint(pub))
			}

			// Tampered data.
			bad := append(bytes.Clone(data), 'x')
			if _, err := sign.VerifySSHSig(armored, bad, sign.NamespaceGit, trust(pub)); !errors.Is(err, sign.ErrBadSignature) {
				t.Errorf("tampered data: err = %v, want ErrBadSignature", err)
			}
			// Wrong namespace.
			if _, err := sign.VerifySSHSig(armored, data, sign.NamespaceAttestation, trust(pub)); !errors.Is(err, sign.ErrBadSignature) {
				t.Errorf("wrong namespace: err = %v, want ErrBadSignature", err)
			}
			// Unknown key.
			_, err = sign.VerifySSHSig(armored, data, sign.NamespaceGit, trust(other))
			if !errors.Is(err, sign.ErrUnknownKey) || !strings.Contains(err.Error(), sign.Fingerprint(pub)) {
				t.Errorf("unknown key: err = %v, want ErrUnknownKey naming %s", err, sign.Fingerprint(pub))
			}
			// Lookup that answers the fingerprint with a different key.
			liar := func(string) (ssh.PublicKey, bool) { return other, true }
			if _, err := sign.VerifySSHSig(armored, data, sign.NamespaceGit, liar); !errors.Is(err, sign.ErrUnknownKey) {
				t.Errorf("lookup with different key: err = %v, want ErrUnknownKey", err)
			}
			nilKey := func(string) (ssh.PublicKey, bool) { return nil, true }
			if _, err := sign.VerifySSHSig(armored, data, sign.NamespaceGit, nilKey); !errors.Is(err, sign.ErrUnknownKey) {
				t.Errorf("lookup with nil key: err = %v, want ErrUnknownKey", err)
			}

			// Raw variants, attestation namespace.
			raw, err := sign.SignRaw(signer, data, sign.NamespaceAttestation)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(raw, []byte("SSHSIG")) {
				t.Fatal("raw signature lacks SSHSIG preamble")
			}
			if got, err := sign.VerifyRaw(raw, data, sign.NamespaceAttestation, trust(pub)); err != nil || !sameKey(got, pub) {
				t.Fatalf("VerifyRaw: %v", err)
			}
			if _, err := sign.VerifyRaw(raw, data, sign.NamespaceGit, trust(pub)); !errors.Is(err, sign.ErrBadSignature) {
				t.Errorf("VerifyRaw wrong namespace: %v", err)
			}
			if _, err := sign.VerifyRaw(raw, bad, sign.NamespaceAttestation, trust(pub)); !errors.Is(err, sign.ErrBadSignature) {
				t.Errorf("VerifyRaw tampered: %v", err)
			}
			if _, err := sign.VerifyRaw(raw, data, sign.NamespaceAttestation, trust(other)); !errors.Is(err, sign.ErrUnknownKey) {
				t.Errorf("VerifyRaw unknown key: %v", err)
			}
			// A raw signature is not an armored one and vice versa.
			if _, err := sign.VerifySSHSig(raw, data, sign.NamespaceAttestation, trust(pub)); !errors.Is(err, sign.ErrBadSignature) {
				t.Errorf("raw given as armored: %v", err)
			}
			if _, err := sign.VerifyRaw(armored, data, sign.NamespaceGit, trust(pub)); !errors.Is(err, sign.ErrBadSignature) {
				t.Errorf("armored given as raw: %v", err)
			}
		})
	}
}

func TestSignSSHSigRejectsEmptyNamespace(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	s, _ := ssh.NewSignerFromKey(priv)
	if _, err := sign.SignSSHSig(s, []byte("x"), ""); err == nil {
		t.Fatal("empty namespace accepted")
	}
	if _, err := sign.VerifySSHSig([]byte("x"), []byte("x"), "", trust(s.PublicKey())); err == nil {
		t.Fatal("empty namespace accepted by verify")
	}
}

// TestInteropSSHKeygenVerifiesOurs checks that ssh-keygen -Y verify accepts
// our signatures.
func TestInteropSSHKeygenVerifiesOurs(t *testing.T) {
	s := testutil.NewSandbox(t)
	for _, typ := range keyTypes {
		t.Run(typ, func(t *testing.T) {
			k := s.NewKey("ours-"+typ, typ)
			signer := loadFile(t, k.Private)
			dir := t.TempDir()
			data := []byte("payload for " + typ + "\n")
			armored, err := sign.SignSSHSig(signer, data, sign.NamespaceGit)
			if err != nil {
				t.Fatal(err)
			}
			sigPath := writeFile(t, dir, "data.sig", armored)
			allowed := writeFile(t, dir, "allowed_signers", []byte(fmt.Sprintf("signer@example.com namespaces=\"git\" %s\n", k.PublicLine(t))))
			out, err := s.RunErr(dir, data, "ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "signer@example.com", "-n", "git", "-s", sigPath)
			if err != nil {
				t.Fatalf("ssh-keygen -Y verify: %v\n%s", err, out)
			}
			// ssh-keygen agrees tampered data and another namespace fail.
			if _, err := s.RunErr(dir, append(data, 'x'), "ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "signer@example.com", "-n", "git", "-s", sigPath); err == nil {
				t.Fatal("ssh-keygen verified tampered data")
			}
			// And it finds the signer by key.
			id, err := s.RunErr(dir, nil, "ssh-keygen", "-Y", "find-principals", "-f", allowed, "-s", sigPath)
			if err != nil || id != "signer@example.com" {
				t.Fatalf("find-principals = %q, %v", id, err)
			}
		})
	}
}

// TestInteropWeVerifySSHKeygen checks that we verify ssh-keygen -Y sign
// signatures, with its default sha512 and with sha256.
func TestInteropWeVerifySSHKeygen(t *testing.T) {
	s := testutil.NewSandbox(t)
	for _, typ := range keyTypes {
		for _, hash := range []string{"sha512", "sha256"} {
			t.Run(typ+"-"+hash, func(t *testing.T) {
				k := s.NewKey("theirs-"+typ+"-"+hash, typ)
				pub := pubOf(t, k)
				dir := t.TempDir()
				data := []byte("signed by ssh-keygen " + typ + "\n")
				file := writeFile(t, dir, "msg", data)
				s.Run(dir, "ssh-keygen", "-q", "-Y", "sign", "-f", k.Private, "-n", "git", "-O", "hashalg="+hash, file)
				armored, err := os.ReadFile(file + ".sig")
				if err != nil {
					t.Fatal(err)
				}
				got, err := sign.VerifySSHSig(armored, data, sign.NamespaceGit, trust(pub))
				if err != nil {
					t.Fatalf("verify ssh-keygen signature: %v\n%s", err, armored)
				}
				if !sameKey(got, pub) {
					t.Fatal("wrong key returned")
				}
				if _, err := sign.VerifySSHSig(armored, data[1:], sign.NamespaceGit, trust(pub)); !errors.Is(err, sign.ErrBadSignature) {
					t.Fatalf("tampered: %v", err)
				}
				if _, err := sign.VerifySSHSig(armored, data, "file", trust(pub)); !errors.Is(err, sign.ErrBadSignature) {
					t.Fatalf("namespace: %v", err)
				}
			})
		}
	}
}

// TestInteropGitCommit checks that a commit signed by git with
// gpg.format=ssh verifies, and that git verifies a commit signature we make.
func TestInteropGitCommit(t *testing.T) {
	s := testutil.NewSandbox(t)
	k := s.NewKey("git-signer", "ed25519")
	pub := pubOf(t, k)
	repo := s.InitRepo("repo", 1)
	s.Git(repo, "config", "gpg.format", "ssh")
	s.Git(repo, "config", "user.signingkey", k.Private)
	s.Git(repo, "commit", "-q", "-S", "--allow-empty", "-m", "signed")
	raw := s.Git(repo, "cat-file", "commit", "HEAD") + "\n"
	payload, sig := splitGPGSig(t, raw)
	if _, err := sign.VerifySSHSig(sig, payload, sign.NamespaceGit, trust(pub)); err != nil {
		t.Fatalf("verify git's signature: %v", err)
	}

	// Now sign the same payload ourselves, write the commit object, and let
	// git verify it.
	signer := loadFile(t, k.Private)
	ours, err := sign.SignSSHSig(signer, payload, sign.NamespaceGit)
	if err != nil {
		t.Fatal(err)
	}
	obj := insertGPGSig(payload, ours)
	allowed := writeFile(t, s.Home, "allowed", []byte("committer@example.com "+k.PublicLine(t)+"\n"))
	s.Git(repo, "config", "gpg.ssh.allowedSignersFile", allowed)
	h, err := s.RunErr(repo, obj, "git", "hash-object", "-t", "commit", "-w", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.RunErr(repo, nil, "git", "verify-commit", h); err != nil {
		t.Fatalf("git verify-commit: %v %s", err, out)
	}
}

func splitGPGSig(t *testing.T, raw string) (payload, sig []byte) {
	t.Helper()
	hdr, body, ok := strings.Cut(raw, "\n\n")
	if !ok {
		t.Fatal("no commit body")
	}
	var keep, sigLines []string
	in := false
	for _, l := range strings.Split(hdr, "\n") {
		switch {
		case strings.HasPrefix(l, "gpgsig "):
			in = true
			sigLines = append(sigLines, strings.TrimPrefix(l, "gpgsig "))
		case in && strings.HasPrefix(l, " "):
			sigLines = append(sigLines, l[1:])
		default:
			in = false
			keep = append(keep, l)
		}
	}
	if len(sigLines) == 0 {
		t.Fatal("commit is not signed")
	}
	return []byte(strings.Join(keep, "\n") + "\n\n" + body), []byte(strings.Join(sigLines, "\n") + "\n")
}

func insertGPGSig(payload, sig []byte) []byte {
	hdr, body, _ := bytes.Cut(payload, []byte("\n\n"))
	lines := strings.Split(strings.TrimSuffix(string(sig), "\n"), "\n")
	var b bytes.Buffer
	b.Write(hdr)
	b.WriteString("\ngpgsig " + strings.Join(lines, "\n ") + "\n\n")
	b.Write(body)
	return b.Bytes()
}

// TestVerifyStrictParsing checks armor and blob malformations.
func TestVerifyStrictParsing(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := ssh.NewSignerFromKey(priv)
	pub := signer.PublicKey()
	data := []byte("data")
	armored, err := sign.SignSSHSig(signer, data, sign.NamespaceGit)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sign.SignRaw(signer, data, sign.NamespaceGit)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sign.VerifySSHSig(armored, data, sign.NamespaceGit, trust(pub)); err != nil {
		t.Fatal(err)
	}
	// Trailing whitespace is tolerated; CRLF line ends are not (git strips
	// the CRs of the signatures it stores; ssh-keygen and encoding/pem
	// write LF).
	crlf := bytes.ReplaceAll(armored, []byte("\n"), []byte("\r\n"))
	for _, ok := range [][]byte{append(bytes.Clone(armored), "\n\n  "...), bytes.TrimSuffix(armored, []byte("\n"))} {
		if _, err := sign.VerifySSHSig(ok, data, sign.NamespaceGit, trust(pub)); err != nil {
			t.Errorf("rejected acceptable armor %q: %v", ok, err)
		}
	}

	// Blob with the reserved field set (parsers that ignore it would accept).
	parsed, _ := sshsig.ParseSignature(raw)
	withReserved := ssh.Marshal(struct {
		Magic     [6]byte
		Version   uint32
		PublicKey string
		Namespace string
		Reserved  string
		Hash      string
		Signature string
	}{[6]byte{'S', 'S', 'H', 'S', 'I', 'G'}, 1, string(pub.Marshal()), sign.NamespaceGit, "x", "sha512", string(ssh.Marshal(parsed.Signature))})
	withHash := func(h string) []byte {
		return ssh.Marshal(struct {
			Magic     [6]byte
			Version   uint32
			PublicKey string
			Namespace string
			Reserved  string
			Hash      string
			Signature string
		}{[6]byte{'S', 'S', 'H', 'S', 'I', 'G'}, 1, string(pub.Marshal()), sign.NamespaceGit, "", h, string(ssh.Marshal(parsed.Signature))})
	}
	if !bytes.Equal(withHash("sha512"), raw) {
		t.Fatal("test encoding differs from SignRaw")
	}
	sigWithRest := *parsed.Signature
	sigWithRest.Rest = []byte{1, 2, 3, 4, 5}
	armorOf := func(b []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: "SSH SIGNATURE", Bytes: b}) }

	cases := map[string][]byte{
		"empty":             nil,
		"garbage":           []byte("hello"),
		"leading text":      append([]byte("x\n"), armored...),
		"leading space":     append([]byte(" "), armored...),
		"trailing text":     append(bytes.Clone(armored), "x"...),
		"two blocks":        append(bytes.Clone(armored), armored...),
		"wrong type":        bytes.ReplaceAll(armored, []byte("SSH SIGNATURE"), []byte("PGP SIGNATURE")),
		"headers":           pem.EncodeToMemory(&pem.Block{Type: "SSH SIGNATURE", Headers: map[string]string{"A": "b"}, Bytes: raw}),
		"oversized":         append(bytes.Clone(armored), bytes.Repeat([]byte(" "), sign.MaxSignatureSize)...),
		"truncated blob":    armorOf(raw[:len(raw)-1]),
		"trailing blob":     armorOf(append(bytes.Clone(raw), 0)),
		"reserved set":      armorOf(withReserved),
		"sha384":            armorOf(withHash("sha384")),
		"sha1":              armorOf(withHash("sha1")),
		"signature rest":    armorOf(withHashSig(pub, &sigWithRest)),
		"bad base64":        []byte("-----BEGIN SSH SIGNATURE-----\n!!!!\n-----END SSH SIGNATURE-----\n"),
		"missing end":       bytes.TrimSuffix(armored, []byte("-----END SSH SIGNATURE-----\n")),
		"garbage then good": append([]byte("-----BEGIN SSH SIGNATURE-----\nAAAA\n"), armored...),
		"CRLF":              crlf,
		"CR after END":      append(bytes.Clone(armored), '\r'),
		"CR in body":        crInBody(armored),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := sign.VerifySSHSig(in, data, sign.NamespaceGit, trust(pub)); !errors.Is(err, sign.ErrBadSignature) {
				t.Errorf("err = %v, want ErrBadSignature", err)
			}
			if _, err := sign.SignatureFingerprint(in); err == nil {
				t.Error("SignatureFingerprint accepted it")
			}
		})
	}
	rawCases := map[string][]byte{
		"oversized": append(bytes.Clone(raw), make([]byte, sign.MaxSignatureSize)...),
		"trailing":  append(bytes.Clone(raw), 0),
		"reserved":  withReserved,
		"sha384":    withHash("sha384"),
	}
	for name, in := range rawCases {
		if _, err := sign.VerifyRaw(in, data, sign.NamespaceGit, trust(pub)); !errors.Is(err, sign.ErrBadSignature) {
			t.Errorf("raw %s: err = %v, want ErrBadSignature", name, err)
		}
	}
}

// crInBody puts a CR before the newline of the armor's first base64 line.
func crInBody(armored []byte) []byte {
	i := bytes.IndexByte(armored, '\n')
	j := i + 1 + bytes.IndexByte(armored[i+1:], '\n')
	return append(append(bytes.Clone(armored[:j]), '\r'), armored[j:]...)
}

func withHashSig(pub ssh.PublicKey, sig *ssh.Signature) []byte {
	return ssh.Marshal(struct {
		Magic     [6]byte
		Version   uint32
		PublicKey string
		Namespace string
		Reserved  string
		Hash      string
		Signature string
	}{[6]byte{'S', 'S', 'H', 'S', 'I', 'G'}, 1, string(pub.Marshal()), sign.NamespaceGit, "", "sha512", string(ssh.Marshal(sig))})
}

// TestVerifyRejectsSHA1RSA checks a signature whose RSA signature uses
// SHA-1 "ssh-rsa" is rejected.
func TestVerifyRejectsSHA1RSA(t *testing.T) {
	s := testutil.NewSandbox(t)
	k := s.NewKey("rsa1", "rsa")
	raw, err := os.ReadFile(k.Private)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ssh.ParsePrivateKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("data")
	good, err := sign.SignRaw(key, data, sign.NamespaceGit)
	if err != nil {
		t.Fatal(err)
	}
	parsed, _ := sshsig.ParseSignature(good)
	// Re-sign the signed data with SHA-1.
	h := sshsig.HashSHA512.Hash()
	h.Write(data)
	signed := append([]byte("SSHSIG"), ssh.Marshal(struct {
		Namespace, Reserved, Hash, Digest string
	}{sign.NamespaceGit, "", "sha512", string(h.Sum(nil))})...)
	sha1sig, err := key.(ssh.AlgorithmSigner).SignWithAlgorithm(rand.Reader, signed, ssh.KeyAlgoRSA)
	if err != nil {
		t.Fatal(err)
	}
	bad := withHashSig(parsed.PublicKey, sha1sig)
	if _, err := sign.VerifyRaw(bad, data, sign.NamespaceGit, trust(parsed.PublicKey)); !errors.Is(err, sign.ErrBadSignature) {
		t.Fatalf("ssh-rsa SHA-1 signature: err = %v, want ErrBadSignature", err)
	}
	// The same construction with rsa-sha2-512 verifies, so the test is sound.
	okSig, _ := key.(ssh.AlgorithmSigner).SignWithAlgorithm(rand.Reader, signed, ssh.KeyAlgoRSASHA512)
	if _, err := sign.VerifyRaw(withHashSig(parsed.PublicKey, okSig), data, sign.NamespaceGit, trust(parsed.PublicKey)); err != nil {
		t.Fatalf("control: %v", err)
	}
}
