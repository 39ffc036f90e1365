package sign

import (
	"bytes"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/big"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// This file verifies SSHSIG signatures by ed25519, ECDSA and security keys
// without golang.org/x/crypto/ssh's reflection-based wire decoding, which
// made most of a verification's allocations: the armor and the binary
// structure are read in place, the signed data is built in a stack buffer
// and the fingerprint comes straight from the key's wire bytes. The rules
// are those of parseRaw and the hiddeco/sshsig path (still used for RSA
// keys), or stricter: base64 with zero padding bits and no CR, minimal
// ECDSA integers. FuzzVerifyAgainstHiddeco and
// TestVerifyAgainstSSHKeygen hold it to them.

// sshsigMagic starts a binary SSHSIG structure and the data it signs.
const sshsigMagic = "SSHSIG"

// maxArmorLine bounds a base64 line of the armor (ssh-keygen writes 70
// characters, encoding/pem 64).
const maxArmorLine = 76

// sshsigFields are the parts of a binary SSHSIG structure, slices of it.
type sshsigFields struct {
	key       []byte // the public key's wire encoding
	keyType   string // its type (one of the constants of ssh, never allocated)
	point     []byte // ed25519 key or uncompressed ECDSA point inside key
	namespace []byte
	hash      sshsig.HashAlgorithm
	sigFormat []byte
	sigBlob   []byte
	sigRest   []byte // an sk signature's flags and counter
}

// unarmorInto decodes exactly one "SSH SIGNATURE" block into dst when it
// is large enough (a new slice otherwise). The block is BEGIN line,
// base64 lines of 1 to maxArmorLine characters each ending in "\n", END
// line; only spaces, tabs and newlines may follow, nothing may precede.
func unarmorInto(dst, armored []byte) ([]byte, error) {
	if len(armored) > MaxSignatureSize {
		return nil, fmt.Errorf("%w: armored signature of %d bytes exceeds %d", ErrBadSignature, len(armored), MaxSignatureSize)
	}
	rest, ok := bytes.CutPrefix(armored, []byte(armorBegin+"\n"))
	if !ok {
		if bytes.HasPrefix(armored, []byte(armorBegin+"\r")) {
			return nil, fmt.Errorf("%w: malformed armor: CR line ends", ErrBadSignature)
		}
		return nil, fmt.Errorf("%w: not an armored SSH signature", ErrBadSignature)
	}
	body := rest
	n := 0 // bytes of body, newlines included
	for {
		line, after, found := bytes.Cut(rest, []byte("\n"))
		if string(line) == armorEnd {
			if !onlySpace(after) {
				return nil, fmt.Errorf("%w: trailing data after armored signature", ErrBadSignature)
			}
			break
		}
		if !found {
			return nil, fmt.Errorf("%w: malformed armor: no END line", ErrBadSignature)
		}
		if len(line) == 0 || len(line) > maxArmorLine || !isBase64(line) {
			return nil, fmt.Errorf("%w: malformed armor: line %.80q", ErrBadSignature, string(line))
		}
		n += len(line) + 1
		rest = after
	}
	body = body[:n]
	if need := base64.StdEncoding.DecodedLen(len(body)); cap(dst) < need {
		dst = make([]byte, need)
	} else {
		dst = dst[:need]
	}
	// Strict: the padding bits must be zero, as ssh-keygen wants them.
	m, err := base64.StdEncoding.Strict().Decode(dst, body)
	if err != nil {
		return nil, fmt.Errorf("%w: malformed armor: %v", ErrBadSignature, err)
	}
	return dst[:m], nil
}

func onlySpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' {
			return false
		}
	}
	return true
}

func isBase64(b []byte) bool {
	for _, c := range b {
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '+', c == '/', c == '=':
		default:
			return false
		}
	}
	return true
}

// parseSSHSIG splits a binary SSHSIG structure strictly: magic, version 1,
// a supported key whose encoding is canonical, an empty reserved field,
// sha512 or sha256, a signature made with the key's algorithm (for RSA:
// rsa-sha2-512 or rsa-sha2-256, checked fully by parseRaw) ending in an
// sk signature's flags and counter or in nothing, and nothing after it.
func parseSSHSIG(raw []byte) (f sshsigFields, err error) {
	if len(raw) > MaxSignatureSize {
		return f, fmt.Errorf("%w: signature of %d bytes exceeds %d", ErrBadSignature, len(raw), MaxSignatureSize)
	}
	rest, ok := bytes.CutPrefix(raw, []byte(sshsigMagic))
	if !ok {
		return f, fmt.Errorf("%w: malformed: invalid magic preamble", ErrBadSignature)
	}
	if len(rest) < 4 {
		return f, fmt.Errorf("%w: malformed: truncated", ErrBadSignature)
	}
	if v := binary.BigEndian.Uint32(rest); v != 1 {
		return f, fmt.Errorf("%w: malformed: unsupported signature version %d", ErrBadSignature, v)
	}
	var reserved, hash, sig, typ []byte
	f.key, rest, ok = sshString(rest[4:], true)
	f.namespace, rest, ok = sshString(rest, ok)
	reserved, rest, ok = sshString(rest, ok)
	hash, rest, ok = sshString(rest, ok)
	sig, rest, ok = sshString(rest, ok)
	typ, _, ok = sshString(f.key, ok)
	f.sigFormat, sig, ok = sshString(sig, ok)
	f.sigBlob, f.sigRest, ok = sshString(sig, ok)
	if !ok {
		return f, fmt.Errorf("%w: malformed: truncated", ErrBadSignature)
	}
	if len(rest) != 0 {
		return f, fmt.Errorf("%w: malformed: trailing data", ErrBadSignature)
	}
	if f.keyType, f.point, err = parseKeyBlob(f.key, typ); err != nil {
		return f, fmt.Errorf("%w: signing key: %w", ErrBadSignature, err)
	}
	if f.keyType == ssh.KeyAlgoRSA && string(f.sigFormat) == ssh.KeyAlgoRSA {
		return f, fmt.Errorf("%w: %w", ErrBadSignature, errSHA1RSA)
	}
	if len(reserved) != 0 {
		return f, fmt.Errorf("%w: malformed: reserved field set", ErrBadSignature)
	}
	switch string(hash) {
	case string(sshsig.HashSHA512):
		f.hash = sshsig.HashSHA512
	case string(sshsig.HashSHA256):
		f.hash = sshsig.HashSHA256
	default:
		return f, fmt.Errorf("%w: hash algorithm %.16q", ErrBadSignature, string(hash))
	}
	return f, checkSignatureFields(&f)
}

// checkSignatureFields checks the signature's algorithm against the key
// and what follows the signature blob.
func checkSignatureFields(f *sshsigFields) error {
	if f.keyType == ssh.KeyAlgoRSA {
		if s := string(f.sigFormat); s != ssh.KeyAlgoRSASHA512 && s != ssh.KeyAlgoRSASHA256 {
			return fmt.Errorf("%w: signature algorithm %.32q for an RSA key (want rsa-sha2-512 or rsa-sha2-256)", ErrBadSignature, string(f.sigFormat))
		}
	} else if string(f.sigFormat) != f.keyType {
		return fmt.Errorf("%w: signature algorithm %.32q for a %s key", ErrBadSignature, string(f.sigFormat), knownKeyType(f.keyType))
	}
	if isSKType(f.keyType) {
		_, _, err := SKSignatureFields(f.sigRest)
		return err
	}
	if len(f.sigRest) != 0 {
		return fmt.Errorf("%w: malformed: trailing data in signature", ErrBadSignature)
	}
	return nil
}

// parseKeyBlob checks a public key's wire encoding (typ is its first
// field) and returns its type as one of ssh's constants and its point: the
// ed25519 key or the uncompressed ECDSA point (nil for sk and RSA keys,
// whose own parsers keep theirs). Refused types fail as checkKey fails.
func parseKeyBlob(blob, typ []byte) (string, []byte, error) {
	rest := blob[4+len(typ):]
	switch string(typ) {
	case ssh.KeyAlgoED25519:
		point, rest, ok := sshString(rest, true)
		if !ok || len(point) != ed25519.PublicKeySize || len(rest) != 0 {
			return "", nil, fmt.Errorf("%w: malformed ed25519 key", ErrUnsupportedKey)
		}
		return ssh.KeyAlgoED25519, point, nil
	case ssh.KeyAlgoECDSA256:
		return parseECDSAKey(rest, ssh.KeyAlgoECDSA256, "nistp256", ecdh.P256())
	case ssh.KeyAlgoECDSA384:
		return parseECDSAKey(rest, ssh.KeyAlgoECDSA384, "nistp384", ecdh.P384())
	case ssh.KeyAlgoECDSA521:
		return parseECDSAKey(rest, ssh.KeyAlgoECDSA521, "nistp521", ecdh.P521())
	case ssh.KeyAlgoSKED25519:
		_, _, _, err := parseSKBlob(blob)
		return ssh.KeyAlgoSKED25519, nil, err
	case ssh.KeyAlgoSKECDSA256:
		_, _, _, err := parseSKBlob(blob)
		return ssh.KeyAlgoSKECDSA256, nil, err
	case ssh.KeyAlgoRSA:
		e, rest, ok := sshString(rest, true)
		n, rest, ok := sshString(rest, ok)
		if !ok || len(e) == 0 || len(n) == 0 || len(rest) != 0 {
			return "", nil, fmt.Errorf("%w: malformed RSA key", ErrUnsupportedKey)
		}
		return ssh.KeyAlgoRSA, nil, nil
	case ssh.InsecureKeyAlgoDSA:
		return "", nil, errDSA
	}
	if bytes.Contains(typ, []byte("-cert-")) {
		return "", nil, fmt.Errorf("%w: %.64q (certificates are not supported)", ErrUnsupportedKey, string(typ))
	}
	return "", nil, fmt.Errorf("%w: %.64q", ErrUnsupportedKey, string(typ))
}

// parseECDSAKey checks the rest of an ECDSA key's wire encoding after its
// type: the curve name, then an uncompressed point on the curve.
func parseECDSAKey(rest []byte, keyType, curveName string, curve ecdh.Curve) (string, []byte, error) {
	name, rest, ok := sshString(rest, true)
	point, rest, ok := sshString(rest, ok)
	if !ok || string(name) != curveName || len(rest) != 0 {
		return "", nil, fmt.Errorf("%w: malformed %s key", ErrUnsupportedKey, keyType)
	}
	// crypto/ecdh takes only an uncompressed point on the curve (a copy:
	// the check must keep no reference to the signature).
	if _, err := curve.NewPublicKey(bytes.Clone(point)); err != nil || len(point) == 0 || point[0] != 4 {
		return "", nil, fmt.Errorf("%w: %s key: point is not on the curve", ErrUnsupportedKey, keyType)
	}
	return keyType, point, nil
}

// knownKeyType returns the constant of ssh equal to t, one of the types
// parseKeyBlob returns: an error that names it keeps no reference to the
// signature (Go's escape analysis does not tell a struct's fields apart).
func knownKeyType(t string) string {
	for _, c := range [...]string{ssh.KeyAlgoED25519, ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521, ssh.KeyAlgoSKED25519, ssh.KeyAlgoSKECDSA256, ssh.KeyAlgoRSA} {
		if t == c {
			return c
		}
	}
	return "unknown"
}

// blobFingerprint is Fingerprint of the key whose wire encoding is blob.
func blobFingerprint(blob []byte) string {
	sum := sha256.Sum256(blob)
	var b [len("SHA256:") + 43]byte
	copy(b[:], "SHA256:")
	base64.RawStdEncoding.Encode(b[len("SHA256:"):], sum[:])
	return string(b[:])
}

// ed25519WirePrefix is the wire encoding of an ed25519 key up to its 32
// key bytes.
const ed25519WirePrefix = "\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20"

// isKeyBlob reports whether pub's wire encoding is blob; for an ed25519
// key without encoding it.
func isKeyBlob(pub ssh.PublicKey, blob []byte) bool {
	if pub.Type() == ssh.KeyAlgoED25519 {
		if cp, ok := pub.(ssh.CryptoPublicKey); ok {
			if k, ok := cp.CryptoPublicKey().(ed25519.PublicKey); ok {
				n := len(ed25519WirePrefix)
				return len(blob) == n+len(k) && string(blob[:n]) == ed25519WirePrefix && bytes.Equal(blob[n:], k)
			}
		}
	}
	return bytes.Equal(pub.Marshal(), blob)
}

// appendSignedData appends what an SSHSIG signature covers: the magic,
// namespace, an empty reserved field, the hash algorithm and the digest.
func appendSignedData(dst []byte, namespace string, h sshsig.HashAlgorithm, digest []byte) []byte {
	dst = append(dst, sshsigMagic...)
	dst = appendSSHString(dst, namespace)
	dst = appendSSHString(dst, "")
	dst = appendSSHString(dst, string(h))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(digest)))
	return append(dst, digest...)
}

func appendSSHString(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(s)))
	return append(dst, s...)
}

// verifyFast is VerifyRaw for a parsed signature by a key other than RSA.
func verifyFast(f *sshsigFields, data []byte, namespace string, lookup func(fingerprint string) (ssh.PublicKey, bool)) (ssh.PublicKey, error) {
	if string(f.namespace) != namespace {
		return nil, fmt.Errorf("%w: namespace %.64q, want %q", ErrBadSignature, string(f.namespace), namespace)
	}
	fp := blobFingerprint(f.key)
	trusted, ok := lookup(fp)
	if !ok || trusted == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnknownKey, fp)
	}
	if !isKeyBlob(trusted, f.key) {
		return nil, fmt.Errorf("%w: %s (trusted key with that fingerprint differs from the signing key)", ErrUnknownKey, fp)
	}
	// A security key's encoding passed parseSKBlob, all checkKey checks.
	if !isSKType(f.keyType) {
		if err := checkKey(trusted); err != nil {
			return nil, fmt.Errorf("sign: verify: %w", err)
		}
	}
	var digest []byte
	if f.hash == sshsig.HashSHA512 {
		d := sha512.Sum512(data)
		digest = d[:]
	} else {
		d := sha256.Sum256(data)
		digest = d[:]
	}
	var buf [128]byte
	signed := appendSignedData(buf[:0], namespace, f.hash, digest)
	if isSKType(f.keyType) {
		sk, ok := trusted.(*SKKey)
		if !ok {
			var err error
			if sk, err = NewSKKey(trusted, false); err != nil {
				return nil, fmt.Errorf("sign: verify: %w", err)
			}
		}
		if err := verifySK(sk, fp, signed, f.sigFormat, f.sigBlob, f.sigRest); err != nil {
			return nil, err
		}
		return trusted, nil
	}
	if !verifyPlain(f, signed) {
		return nil, fmt.Errorf("%w: key %s: signature does not verify", ErrBadSignature, fp)
	}
	return trusted, nil
}

// verifyPlain checks an ed25519 or ECDSA signature over signed by the key
// in f (which the caller found byte for byte equal to the trusted key).
func verifyPlain(f *sshsigFields, signed []byte) bool {
	switch f.keyType {
	case ssh.KeyAlgoED25519:
		return len(f.sigBlob) == ed25519.SignatureSize && ed25519.Verify(ed25519.PublicKey(f.point), signed, f.sigBlob)
	case ssh.KeyAlgoECDSA256:
		h := sha256.Sum256(signed)
		return verifyECDSA(elliptic.P256(), f.point, h[:], f.sigBlob)
	case ssh.KeyAlgoECDSA384:
		h := sha512.Sum384(signed)
		return verifyECDSA(elliptic.P384(), f.point, h[:], f.sigBlob)
	case ssh.KeyAlgoECDSA521:
		h := sha512.Sum512(signed)
		return verifyECDSA(elliptic.P521(), f.point, h[:], f.sigBlob)
	}
	return false
}

// verifyECDSA checks an SSH ECDSA signature blob (mpints r and s, minimal,
// positive, nothing after them) over digest.
func verifyECDSA(curve elliptic.Curve, point, digest, blob []byte) bool {
	r, s, ok := parseECDSASignature(blob)
	if !ok {
		return false
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(curve, bytes.Clone(point))
	return err == nil && ecdsa.Verify(pub, digest, r, s)
}

// parseECDSASignature reads the mpints r and s of an SSH ECDSA signature
// blob. Both must be positive and minimally encoded, and nothing may
// follow them.
func parseECDSASignature(blob []byte) (r, s *big.Int, ok bool) {
	rb, rest, ok := sshString(blob, true)
	sb, rest, ok := sshString(rest, ok)
	if !ok || len(rest) != 0 || !positiveMpint(rb) || !positiveMpint(sb) {
		return nil, nil, false
	}
	return new(big.Int).SetBytes(rb), new(big.Int).SetBytes(sb), true
}

// positiveMpint reports whether b is the minimal mpint encoding of a
// positive number: no sign bit, a leading zero byte only before one with
// the high bit set, not zero.
func positiveMpint(b []byte) bool {
	switch {
	case len(b) == 0 || b[0]&0x80 != 0:
		return false
	case b[0] == 0:
		return len(b) > 1 && b[1]&0x80 != 0
	}
	return true
}
