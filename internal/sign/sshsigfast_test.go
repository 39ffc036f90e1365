package sign_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math/big"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/keykinds"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// sshsigParts is a binary SSHSIG structure field by field, so that a test
// can get exactly one of them wrong.
type sshsigParts struct {
	magic    string
	version  uint32
	key      []byte
	ns       string
	reserved string
	hash     string
	format   string
	blob     []byte
	rest     []byte // after the signature blob (an sk signature's flags and counter)
	trailing []byte // after the signature
}

func appendStr(b []byte, s []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func (p sshsigParts) marshal() []byte {
	sig := appendStr(nil, []byte(p.format))
	sig = appendStr(sig, p.blob)
	sig = append(sig, p.rest...)
	out := append([]byte(p.magic), binary.BigEndian.AppendUint32(nil, p.version)...)
	for _, f := range [][]byte{p.key, []byte(p.ns), []byte(p.reserved), []byte(p.hash), sig} {
		out = appendStr(out, f)
	}
	return append(out, p.trailing...)
}

// signedData is what an SSHSIG signature of msg covers.
func signedData(ns, hash string, msg []byte) []byte {
	var d []byte
	if hash == "sha256" {
		s := sha256.Sum256(msg)
		d = s[:]
	} else {
		s := sha512.Sum512(msg)
		d = s[:]
	}
	out := []byte("SSHSIG")
	for _, f := range [][]byte{[]byte(ns), nil, []byte(hash), d} {
		out = appendStr(out, f)
	}
	return out
}

// goodParts signs msg with s (namespace git, sha512) and returns the parts
// of the signature.
func goodParts(t testing.TB, s ssh.Signer, msg []byte) sshsigParts {
	t.Helper()
	sig, err := s.Sign(rand.Reader, signedData(sign.NamespaceGit, "sha512", msg))
	if err != nil {
		t.Fatal(err)
	}
	return sshsigParts{magic: "SSHSIG", version: 1, key: s.PublicKey().Marshal(), ns: sign.NamespaceGit,
		hash: "sha512", format: sig.Format, blob: sig.Blob, rest: sig.Rest}
}

// armorWidth armors raw with base64 lines of width characters.
func armorWidth(raw []byte, width int) []byte {
	return armorB64(base64.StdEncoding.EncodeToString(raw), width)
}

func armorB64(b64 string, width int) []byte {
	return []byte("-----BEGIN SSH SIGNATURE-----\n" + wrap(b64, width) + "-----END SSH SIGNATURE-----\n")
}

// padBitsSet armors raw with a bit set in the padding of its base64 (the
// bits after the last byte): the same bytes to a lax decoder, refused by
// a strict one and by ssh-keygen. ok is false when raw needs no padding.
func padBitsSet(raw []byte) (armored []byte, ok bool) {
	b64 := base64.StdEncoding.EncodeToString(raw)
	last := strings.TrimRight(b64, "=")
	if len(last) == len(b64) {
		return nil, false
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	v := strings.IndexByte(alphabet, last[len(last)-1])
	b64 = last[:len(last)-1] + string(alphabet[v|1]) + b64[len(last):]
	return armorB64(b64, 70), true
}

func ecdsaSigner(t testing.TB, c elliptic.Curve) ssh.Signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ed25519Signer(t testing.TB) ssh.Signer {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ecdsaBlob is an SSH ECDSA signature blob of the mpint bodies r and s as
// given (not minimized).
func ecdsaBlob(r, s []byte) []byte { return appendStr(appendStr(nil, r), s) }

// ecdsaRS splits an SSH ECDSA signature blob.
func ecdsaRS(t testing.TB, blob []byte) (r, s *big.Int) {
	t.Helper()
	var rs struct{ R, S *big.Int }
	if err := ssh.Unmarshal(blob, &rs); err != nil {
		t.Fatal(err)
	}
	return rs.R, rs.S
}

// TestVerifyRefusals: one defect at a time in an otherwise valid
// signature (the signature over the signed data is real wherever the
// defect allows), each refused for its reason.
func TestVerifyRefusals(t *testing.T) {
	msg := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nRSL entry\n")
	ed := ed25519Signer(t)
	ec := ecdsaSigner(t, elliptic.P256())
	sk := keykinds.NewSoftSK(t, "ed25519-sk")
	skPub, err := sign.NewSKKey(sk.PublicKey(), false)
	if err != nil {
		t.Fatal(err)
	}
	other := ed25519Signer(t)
	lookup := trust(ed.PublicKey(), ec.PublicKey(), skPub)
	edGood, ecGood, skGood := goodParts(t, ed, msg), goodParts(t, ec, msg), goodParts(t, sk, msg)
	for name, p := range map[string]sshsigParts{"ed25519": edGood, "ecdsa": ecGood, "sk": skGood} {
		if _, err := sign.VerifyRaw(p.marshal(), msg, sign.NamespaceGit, lookup); err != nil {
			t.Fatalf("control %s: %v", name, err)
		}
	}
	r, s := ecdsaRS(t, ecGood.blob)
	with := func(p sshsigParts, change func(*sshsigParts)) []byte {
		change(&p)
		return p.marshal()
	}
	cases := []struct {
		name string
		raw  []byte
		want string
	}{
		{"wrong magic", with(edGood, func(p *sshsigParts) { p.magic = "SSHSIH" }), "invalid magic preamble"},
		{"version 2", with(edGood, func(p *sshsigParts) { p.version = 2 }), "unsupported signature version 2"},
		{"reserved set", with(edGood, func(p *sshsigParts) { p.reserved = "x" }), "reserved field set"},
		{"sha384", with(edGood, func(p *sshsigParts) { p.hash = "sha384" }), `hash algorithm "sha384"`},
		{"no hash", with(edGood, func(p *sshsigParts) { p.hash = "" }), `hash algorithm ""`},
		{"sha256 named, sha512 signed", with(edGood, func(p *sshsigParts) { p.hash = "sha256" }), "signature does not verify"},
		{"other namespace", with(edGood, func(p *sshsigParts) { p.ns = "file" }), `namespace "file"`},
		{"algorithm of another key type", with(edGood, func(p *sshsigParts) { p.format = ssh.KeyAlgoECDSA256 }), "signature algorithm"},
		{"data after the ed25519 signature", with(edGood, func(p *sshsigParts) { p.rest = []byte{1} }), "trailing data in signature"},
		{"data after the structure", with(edGood, func(p *sshsigParts) { p.trailing = []byte{0} }), "trailing data"},
		{"truncated", edGood.marshal()[:len(edGood.marshal())-1], "truncated"},
		{"only the magic", []byte("SSHSIG"), "truncated"},
		{"short ed25519 signature", with(edGood, func(p *sshsigParts) { p.blob = p.blob[:63] }), "signature does not verify"},
		{"ed25519 key of 31 bytes", with(edGood, func(p *sshsigParts) { p.key = appendStr(appendStr(nil, []byte("ssh-ed25519")), make([]byte, 31)) }), "malformed ed25519 key"},
		{"ed25519 key with trailing byte", with(edGood, func(p *sshsigParts) { p.key = append(bytes.Clone(p.key), 0) }), "malformed ed25519 key"},
		{"certificate", with(edGood, func(p *sshsigParts) { p.key = appendStr(nil, []byte("ssh-ed25519-cert-v01@openssh.com")) }), "certificates are not supported"},
		{"unknown key type", with(edGood, func(p *sshsigParts) { p.key = appendStr(nil, []byte("ssh-foo")) }), `unsupported key type: "ssh-foo"`},
		{"untrusted key", goodParts(t, other, msg).marshal(), "not trusted"},
		{"another message", with(edGood, func(p *sshsigParts) { p.blob = goodParts(t, ed, []byte("x")).blob }), "signature does not verify"},
		{"ecdsa curve name of another curve", with(ecGood, func(p *sshsigParts) {
			p.key = bytes.Replace(p.key, []byte("\x00\x00\x00\x08nistp256"), []byte("\x00\x00\x00\x08nistp384"), 1)
		}), "malformed ecdsa-sha2-nistp256 key"},
		{"ecdsa compressed point", with(ecGood, func(p *sshsigParts) {
			pk := ec.PublicKey().(ssh.CryptoPublicKey).CryptoPublicKey().(*ecdsa.PublicKey)
			pt := elliptic.MarshalCompressed(elliptic.P256(), pk.X, pk.Y)
			p.key = appendStr(appendStr(appendStr(nil, []byte(ssh.KeyAlgoECDSA256)), []byte("nistp256")), pt)
		}), "point is not on the curve"},
		{"ecdsa point off the curve", with(ecGood, func(p *sshsigParts) {
			k := bytes.Clone(p.key)
			k[len(k)-1] ^= 1
			p.key = k
		}), "point is not on the curve"},
		{"ecdsa r with a needless zero byte", with(ecGood, func(p *sshsigParts) { p.blob = ecdsaBlob(append([]byte{0, 0}, r.Bytes()...), s.Bytes()) }), "signature does not verify"},
		{"ecdsa negative s", with(ecGood, func(p *sshsigParts) { p.blob = ecdsaBlob(mpint(r), append([]byte{0x80}, s.Bytes()...)) }), "signature does not verify"},
		{"ecdsa zero r", with(ecGood, func(p *sshsigParts) { p.blob = ecdsaBlob(nil, mpint(s)) }), "signature does not verify"},
		{"ecdsa data after s", with(ecGood, func(p *sshsigParts) { p.blob = append(ecdsaBlob(mpint(r), mpint(s)), 0) }), "signature does not verify"},
		{"sk without flags and counter", with(skGood, func(p *sshsigParts) { p.rest = nil }), "must end in flags and counter"},
		{"sk with a short counter", with(skGood, func(p *sshsigParts) { p.rest = p.rest[:4] }), "must end in flags and counter"},
		{"sk key for another application", with(skGood, func(p *sshsigParts) {
			p.key = appendStr(appendStr(appendStr(nil, []byte(ssh.KeyAlgoSKED25519)), skPub.PublicKey.(ssh.CryptoPublicKey).CryptoPublicKey().(ed25519.PublicKey)), []byte("https://example.com"))
		}), `does not start with "ssh:"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := sign.VerifyRaw(c.raw, msg, sign.NamespaceGit, lookup)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one saying %q", err, c.want)
			}
			if !errors.Is(err, sign.ErrBadSignature) && !errors.Is(err, sign.ErrUnknownKey) {
				t.Fatalf("err = %v, want ErrBadSignature or ErrUnknownKey", err)
			}
			if _, err := sign.VerifySSHSig(armorWidth(c.raw, 70), msg, sign.NamespaceGit, lookup); err == nil {
				t.Fatal("the armored signature verifies")
			}
		})
	}
}

// mpint is the minimal SSH mpint body of a positive n.
func mpint(n *big.Int) []byte {
	b := n.Bytes()
	if len(b) > 0 && b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	return b
}

// TestArmorRefusals: the armor is read strictly; each defect is refused
// for its reason, and the line widths writers use are accepted.
func TestArmorRefusals(t *testing.T) {
	msg := []byte("entry\n")
	ed := ed25519Signer(t)
	raw := goodParts(t, ed, msg).marshal()
	lookup := trust(ed.PublicKey())
	for _, w := range []int{4, 64, 70, 76} {
		if _, err := sign.VerifySSHSig(armorWidth(raw, w), msg, sign.NamespaceGit, lookup); err != nil {
			t.Fatalf("lines of %d: %v", w, err)
		}
	}
	good := armorWidth(raw, 70)
	lines := strings.Split(string(good), "\n")
	b64 := base64.StdEncoding.EncodeToString(raw)
	nonzeroPad, ok := padBitsSet(raw)
	if !ok {
		t.Fatalf("a signature of %d bytes has no padding", len(raw))
	}
	cases := []struct {
		name, armored, want string
	}{
		{"line of 77", string(armorWidth(raw, 77)), "malformed armor: line"},
		{"empty line", strings.Replace(string(good), "-----\n", "-----\n\n", 1), "malformed armor: line"},
		{"space in a line", lines[0] + "\n " + strings.Join(lines[1:], "\n"), "malformed armor: line"},
		{"CR line ends", strings.ReplaceAll(string(good), "\n", "\r\n"), "CR line ends"},
		{"no END line", strings.Join(lines[:len(lines)-2], "\n") + "\n", "no END line"},
		{"text after END", string(good) + "x", "trailing data after armored signature"},
		{"a second block", string(good) + string(good), "trailing data after armored signature"},
		{"text before BEGIN", "x" + string(good), "not an armored SSH signature"},
		{"padding in the middle", "-----BEGIN SSH SIGNATURE-----\nAA==\n" + strings.Join(lines[1:], "\n"), "malformed armor"},
		{"nonzero padding bits", string(nonzeroPad), "malformed armor: illegal base64"},
		{"header", "-----BEGIN SSH SIGNATURE-----\nA: b\n" + b64 + "\n-----END SSH SIGNATURE-----\n", "malformed armor: line"},
		{"other END", strings.Replace(string(good), "-----END SSH SIGNATURE-----", "-----END PGP SIGNATURE-----", 1), "malformed armor: line"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := sign.VerifySSHSig([]byte(c.armored), msg, sign.NamespaceGit, lookup)
			if !errors.Is(err, sign.ErrBadSignature) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrBadSignature saying %q", err, c.want)
			}
			if _, err := sign.SignatureFingerprint([]byte(c.armored)); err == nil {
				t.Fatal("SignatureFingerprint accepted it")
			}
		})
	}
}

// wrap breaks s into lines of width characters, each ending in "\n".
func wrap(s string, width int) string {
	var b strings.Builder
	for len(s) > width {
		b.WriteString(s[:width] + "\n")
		s = s[width:]
	}
	return b.String() + s + "\n"
}

// refKey is a key of one kind for the differential tests: its trusted
// form, its allowed_signers line and signatures of the test message.
type refKey struct {
	name    string
	pub     ssh.PublicKey // as trusted (an *sign.SKKey for security keys)
	allowed string        // allowed_signers line for ssh-keygen
	sigs    [][]byte      // binary SSHSIG signatures of the message
}

// refKeys makes one key of each kind git-secure verifies itself: ed25519
// and ECDSA keys made by ssh-keygen, signing with ssh-keygen -Y sign (sha512
// and sha256), and software security keys signing as OpenSSH does.
func refKeys(t *testing.T, s *testutil.Sandbox, msg []byte) []refKey {
	t.Helper()
	dir := t.TempDir()
	msgFile := writeFile(t, dir, "msg", msg)
	var keys []refKey
	for _, kt := range []struct{ name, typ, bits string }{
		{"ed25519", "ed25519", ""}, {"ecdsa-p256", "ecdsa", "256"}, {"ecdsa-p384", "ecdsa", "384"}, {"ecdsa-p521", "ecdsa", "521"},
	} {
		priv := filepath.Join(dir, kt.name)
		args := []string{"-q", "-t", kt.typ, "-N", "", "-C", kt.name, "-f", priv}
		if kt.bits != "" {
			args = append(args, "-b", kt.bits)
		}
		s.Run(dir, "ssh-keygen", args...)
		line := strings.TrimSpace(readString(t, priv+".pub"))
		pub, _, err := sign.ParsePublicKey([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		k := refKey{name: kt.name, pub: pub, allowed: "signer@example.com " + line}
		for _, h := range []string{"sha512", "sha256"} {
			s.Run(dir, "ssh-keygen", "-q", "-Y", "sign", "-O", "hashalg="+h, "-f", priv, "-n", sign.NamespaceGit, msgFile)
			raw, err := sign.UnarmorSSHSig([]byte(readString(t, msgFile+".sig")))
			if err != nil {
				t.Fatalf("%s %s: %v", kt.name, h, err)
			}
			k.sigs = append(k.sigs, raw)
			if err := os.Remove(msgFile + ".sig"); err != nil {
				t.Fatal(err)
			}
		}
		keys = append(keys, k)
	}
	for _, typ := range []string{"ed25519-sk", "ecdsa-sk"} {
		for _, verifyRequired := range []bool{false, true} {
			sk := keykinds.NewSoftSK(t, typ)
			sk.Flags = keykinds.FlagUserPresent | keykinds.FlagUserVerified
			pub, err := sign.NewSKKey(sk.PublicKey(), verifyRequired)
			if err != nil {
				t.Fatal(err)
			}
			name := typ
			if verifyRequired {
				name += "+verify-required"
			}
			// OpenSSH 9.2's allowed_signers has no verify-required: ssh-keygen
			// is given the plain key (it accepts more than we do).
			k := refKey{name: name, pub: pub, allowed: "signer@example.com " + sk.AuthorizedKey()}
			for _, h := range []sshsig.HashAlgorithm{sshsig.HashSHA512, sshsig.HashSHA256} {
				sig, err := sshsig.Sign(bytes.NewReader(msg), sk, h, sign.NamespaceGit)
				if err != nil {
					t.Fatal(err)
				}
				k.sigs = append(k.sigs, sig.Marshal())
			}
			keys = append(keys, k)
		}
	}
	return keys
}

// keygenJudge runs ssh-keygen -Y verify (with the key in allowed_signers)
// or, with check, -Y check-novalidate on an armored signature of msg and
// returns whether it accepted.
func keygenJudge(t *testing.T, s *testutil.Sandbox, dir string, k refKey, msg, armored []byte, check bool) (bool, string) {
	t.Helper()
	sigFile := writeFile(t, dir, "sig", armored)
	args := []string{"-Y", "verify", "-f", filepath.Join(dir, k.name+".allowed"), "-I", "signer@example.com", "-n", sign.NamespaceGit, "-s", sigFile}
	if check {
		args = []string{"-Y", "check-novalidate", "-n", sign.NamespaceGit, "-s", sigFile}
	}
	out, err := s.RunErr(dir, msg, "ssh-keygen", args...)
	return err == nil, out
}

// mutate returns a copy of raw changed at random: one to three bytes
// changed, or a byte inserted or removed, or the tail cut.
func mutate(rng *mrand.Rand, raw []byte) []byte {
	m := bytes.Clone(raw)
	switch rng.IntN(6) {
	case 0:
		i := rng.IntN(len(m) + 1)
		return append(m[:i], append([]byte{byte(rng.IntN(256))}, raw[i:]...)...)
	case 1:
		i := rng.IntN(len(m))
		return append(m[:i], raw[i+1:]...)
	case 2:
		return m[:rng.IntN(len(m))]
	}
	for range 1 + rng.IntN(3) {
		m[rng.IntN(len(m))] ^= byte(1 + rng.IntN(255))
	}
	return m
}

// TestVerifyAgainstSSHKeygen is the differential test of this package's
// SSHSIG verifier against OpenSSH's: for keys of every kind it verifies
// itself, signatures made by ssh-keygen -Y sign (and by software security
// keys in OpenSSH's format) verify here and there, at every armor width;
// then every signature this package accepts among mutated ones (each byte
// flipped, random changes, armor variants) must be accepted by ssh-keygen
// -Y verify and -Y check-novalidate too. What ssh-keygen accepts and this
// package refuses (it is stricter: reserved field, padding bits, CR,
// unknown sk flags, verify-required) is only counted. -short tries fewer
// mutations.
func TestVerifyAgainstSSHKeygen(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen not installed")
	}
	s := testutil.NewSandbox(t)
	msg := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nRSL entry\n")
	dir := t.TempDir()
	rng := mrand.New(mrand.NewPCG(1, 2))
	random, flipEvery := 2000, 7
	if testing.Short() {
		random, flipEvery = 150, 29
	}
	keygenRuns, stricter := 0, map[string]int{}
	for _, k := range refKeys(t, s, msg) {
		writeFile(t, dir, k.name+".allowed", []byte(k.allowed+"\n"))
		lookup := trust(k.pub)
		mustAgree := func(what string, armored []byte) {
			t.Helper()
			_, err := sign.VerifySSHSig(armored, msg, sign.NamespaceGit, lookup)
			if err != nil {
				return
			}
			for _, check := range []bool{false, true} {
				keygenRuns++
				if ok, out := keygenJudge(t, s, dir, k, msg, armored, check); !ok {
					t.Fatalf("%s %s: accepted here, refused by ssh-keygen (check-novalidate %v): %s\n%s", k.name, what, check, out, armored)
				}
			}
		}
		for i, raw := range k.sigs {
			for _, w := range []int{64, 70, 76} {
				armored := armorWidth(raw, w)
				if _, err := sign.VerifySSHSig(armored, msg, sign.NamespaceGit, lookup); err != nil {
					t.Fatalf("%s signature %d, lines of %d: %v", k.name, i, w, err)
				}
				if w == 70 {
					mustAgree("as signed", armored)
				}
			}
			// Every n-th byte flipped (all of them, less often with -short).
			for pos := i % flipEvery; pos < len(raw); pos += flipEvery {
				m := bytes.Clone(raw)
				m[pos] ^= 0x01
				mustAgree("byte flipped", armorWidth(m, 70))
			}
			for range random / len(k.sigs) {
				m := mutate(rng, raw)
				mustAgree("mutated", armorWidth(m, 70))
			}
			// Refused here; ssh-keygen's answer is counted, not required.
			variants := map[string][]byte{
				"CRLF armor":     bytes.ReplaceAll(armorWidth(raw, 70), []byte("\n"), []byte("\r\n")),
				"reserved field": reservedSet(t, raw),
			}
			if v, ok := padBitsSet(raw); ok {
				variants["padding bits"] = v
			}
			for what, variant := range variants {
				if _, err := sign.VerifySSHSig(variant, msg, sign.NamespaceGit, lookup); err == nil {
					t.Fatalf("%s: accepted a variant this package refuses: %q", k.name, variant)
				}
				if !testing.Short() {
					keygenRuns++
					if ok, _ := keygenJudge(t, s, dir, k, msg, variant, true); ok {
						stricter[what]++
					}
				}
			}
		}
	}
	t.Logf("ssh-keygen ran %d times; of the variants this package refuses it accepted %v", keygenRuns, stricter)
}

// reservedSet is raw (a valid signature) with its reserved field set and
// armored: the signed data does not cover it, so ssh-keygen accepts it.
func reservedSet(t *testing.T, raw []byte) []byte {
	t.Helper()
	p, err := sshsig.ParseSignature(raw)
	if err != nil {
		t.Fatal(err)
	}
	parts := sshsigParts{magic: "SSHSIG", version: 1, key: p.PublicKey.Marshal(), ns: p.Namespace, reserved: "x",
		hash: string(p.HashAlgorithm), format: p.Signature.Format, blob: p.Signature.Blob, rest: p.Signature.Rest}
	return armorWidth(parts.marshal(), 70)
}

// FuzzVerifyAgainstHiddeco: whatever this package's verifier accepts,
// hiddeco/sshsig with golang.org/x/crypto/ssh (the path it replaced, still
// used for RSA keys) accepts too, armored or raw, and SignatureFingerprint
// names the key that verified.
func FuzzVerifyAgainstHiddeco(f *testing.F) {
	msg := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nRSL entry\n")
	signers := []ssh.Signer{ed25519Signer(f), ecdsaSigner(f, elliptic.P256()), ecdsaSigner(f, elliptic.P384()), ecdsaSigner(f, elliptic.P521())}
	var trusted []ssh.PublicKey
	for _, s := range signers {
		trusted = append(trusted, s.PublicKey())
	}
	for _, typ := range []string{"ed25519-sk", "ecdsa-sk"} {
		sk := keykinds.NewSoftSK(f, typ)
		signers = append(signers, sk)
		pub, err := sign.NewSKKey(sk.PublicKey(), false)
		if err != nil {
			f.Fatal(err)
		}
		trusted = append(trusted, pub)
	}
	for _, s := range signers {
		for _, h := range []sshsig.HashAlgorithm{sshsig.HashSHA512, sshsig.HashSHA256} {
			sig, err := sshsig.Sign(bytes.NewReader(msg), s, h, sign.NamespaceGit)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(sig.Marshal(), msg, false)
			f.Add(sshsig.Armor(sig), msg, true)
		}
	}
	lookup := trust(trusted...)
	f.Fuzz(func(t *testing.T, sig, data []byte, armored bool) {
		var got ssh.PublicKey
		var err error
		if armored {
			got, err = sign.VerifySSHSig(sig, data, sign.NamespaceGit, lookup)
		} else {
			got, err = sign.VerifyRaw(sig, data, sign.NamespaceGit, lookup)
		}
		if err != nil {
			return
		}
		var parsed *sshsig.Signature
		var perr error
		if armored {
			parsed, perr = sshsig.Unarmor(sig)
			if fp, err := sign.SignatureFingerprint(sig); err != nil || fp != sign.Fingerprint(got) {
				t.Fatalf("SignatureFingerprint = %q, %v; verified with %s", fp, err, sign.Fingerprint(got))
			}
		} else {
			parsed, perr = sshsig.ParseSignature(sig)
		}
		if perr != nil {
			t.Fatalf("accepted a signature hiddeco/sshsig cannot parse: %v", perr)
		}
		if !bytes.Equal(parsed.PublicKey.Marshal(), got.Marshal()) {
			t.Fatal("verified with another key than the embedded one")
		}
		if err := sshsig.Verify(bytes.NewReader(data), parsed, got, parsed.HashAlgorithm, sign.NamespaceGit); err != nil {
			t.Fatalf("accepted a signature hiddeco/sshsig refuses: %v", err)
		}
	})
}
