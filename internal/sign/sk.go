package sign

import (
	"bytes"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"golang.org/x/crypto/ssh"
)

// FIDO security keys ("sk" keys, made with ssh-keygen -t ed25519-sk or
// ecdsa-sk) sign in OpenSSH's own format: the authenticator signs
// sha256(application) || flags || counter || sha256(message), and the SSH
// signature carries flags and counter after the signature blob. Their
// private half never leaves the device: signing goes through ssh-agent
// (which asks the device, and the device waits for a touch).

// Flags of an sk signature (from the authenticator data).
const (
	// SKUserPresent says the user touched the device. It is required.
	SKUserPresent = 0x01
	// SKUserVerified says the device verified the user (PIN or
	// biometrics). It is required when the key has the verify-required
	// option.
	SKUserVerified = 0x04
)

// OptionVerifyRequired is the key option (as in OpenSSH's allowed_signers
// and authorized_keys) that makes an sk key's signatures count only when
// the device verified the user.
const OptionVerifyRequired = "verify-required"

// Limits of the sk parsers.
const (
	// MaxSKApplication bounds an sk key's application string.
	MaxSKApplication = 256
	// maxSKKeyBlob bounds the wire encoding of an sk public key.
	maxSKKeyBlob = 1024
)

// SKKey is a FIDO security key: an sk-ssh-ed25519@openssh.com or
// sk-ecdsa-sha2-nistp256@openssh.com public key, its application string,
// and whether its signatures need user verification. It is an
// ssh.PublicKey whose wire encoding (and so fingerprint) is the plain sk
// key's, exactly as ssh-keygen prints it.
type SKKey struct {
	ssh.PublicKey
	// Application is the FIDO application (relying party) the key was
	// made for, "ssh:" unless ssh-keygen -O application=ssh:... said
	// otherwise. Signatures bind its SHA-256.
	Application string
	// VerifyRequired demands the user-verified flag on every signature.
	VerifyRequired bool

	point []byte // ed25519 key or uncompressed P-256 point
}

// isSKType reports whether t names a security key type.
func isSKType(t string) bool {
	return t == ssh.KeyAlgoSKED25519 || t == ssh.KeyAlgoSKECDSA256
}

// NewSKKey checks an sk public key strictly (see parseSKBlob) and returns
// it with its options. A key of another type fails with ErrUnsupportedKey.
func NewSKKey(pub ssh.PublicKey, verifyRequired bool) (*SKKey, error) {
	if pub == nil || !isSKType(pub.Type()) {
		return nil, fmt.Errorf("%w: not a security key", ErrUnsupportedKey)
	}
	if k, ok := pub.(*SKKey); ok {
		pub = k.PublicKey
	}
	blob := pub.Marshal()
	typ, point, app, err := parseSKBlob(blob)
	if err != nil {
		return nil, err
	}
	if typ != pub.Type() {
		return nil, fmt.Errorf("%w: key type %q does not match its encoding %q", ErrUnsupportedKey, pub.Type(), typ)
	}
	return &SKKey{PublicKey: pub, Application: app, VerifyRequired: verifyRequired, point: point}, nil
}

// ParseSKKey parses the wire encoding of an sk public key strictly.
func ParseSKKey(blob []byte, verifyRequired bool) (*SKKey, error) {
	if _, _, _, err := parseSKBlob(blob); err != nil {
		return nil, err
	}
	pub, err := ssh.ParsePublicKey(blob)
	if err != nil {
		return nil, fmt.Errorf("%w: security key: %v", ErrUnsupportedKey, err)
	}
	if !bytes.Equal(pub.Marshal(), blob) {
		return nil, fmt.Errorf("%w: security key: non-canonical encoding", ErrUnsupportedKey)
	}
	return NewSKKey(pub, verifyRequired)
}

// parseSKBlob splits an sk key's wire encoding: type, then for ed25519 the
// 32-byte key, for ECDSA the curve name "nistp256" and an uncompressed
// point on P-256, then the application. Nothing may follow, every field
// must be there, and the application must start with "ssh:" (OpenSSH
// refuses other applications for SSH keys) and be printable ASCII.
func parseSKBlob(blob []byte) (typ string, point []byte, app string, err error) {
	fail := func(format string, args ...any) (string, []byte, string, error) {
		return "", nil, "", fmt.Errorf("%w: security key: %s", ErrUnsupportedKey, fmt.Sprintf(format, args...))
	}
	if len(blob) > maxSKKeyBlob {
		return fail("key of %d bytes exceeds %d", len(blob), maxSKKeyBlob)
	}
	t, rest, ok := sshString(blob, true)
	if !ok {
		return fail("truncated key type")
	}
	switch string(t) {
	case ssh.KeyAlgoSKED25519:
		point, rest, ok = sshString(rest, true)
		if !ok || len(point) != ed25519.PublicKeySize {
			return fail("ed25519 key must be %d bytes", ed25519.PublicKeySize)
		}
	case ssh.KeyAlgoSKECDSA256:
		var curve []byte
		curve, rest, ok = sshString(rest, true)
		if !ok || string(curve) != "nistp256" {
			return fail("ecdsa key must be on nistp256")
		}
		point, rest, ok = sshString(rest, true)
		if !ok || len(point) != 65 || point[0] != 4 {
			return fail("ecdsa key must be an uncompressed P-256 point")
		}
		// A copy: the check must keep no reference to blob.
		if _, err := ecdsaP256(bytes.Clone(point)); err != nil {
			return fail("%v", err)
		}
	default:
		return fail("type %.64q is not a security key type", string(t))
	}
	a, rest, ok := sshString(rest, true)
	if !ok {
		return fail("truncated application")
	}
	if len(rest) != 0 {
		return fail("trailing data")
	}
	if len(a) > MaxSKApplication {
		return fail("application of %d bytes exceeds %d", len(a), MaxSKApplication)
	}
	if !strings.HasPrefix(string(a), "ssh:") {
		return fail("application %.64q does not start with \"ssh:\"", string(a))
	}
	for _, c := range a {
		if c < 0x21 || c > 0x7e {
			return fail("application %.64q is not printable ASCII", string(a))
		}
	}
	return string(t), point, string(a), nil
}

func ecdsaP256(point []byte) (*ecdsa.PublicKey, error) {
	// crypto/ecdh checks that the point is on the curve.
	if _, err := ecdh.P256().NewPublicKey(point); err != nil || len(point) != 65 {
		return nil, errors.New("point is not on P-256")
	}
	x, y := new(big.Int).SetBytes(point[1:33]), new(big.Int).SetBytes(point[33:])
	return &ecdsa.PublicKey{Curve: elliptic.P256(), X: x, Y: y}, nil
}

// skRequiresUV reports whether signatures by pub need the user-verified
// flag: an *SKKey with VerifyRequired.
func skRequiresUV(pub ssh.PublicKey) bool {
	k, ok := pub.(*SKKey)
	return ok && k.VerifyRequired
}

// SKSignatureFields splits the flags and counter off an sk signature's
// trailing bytes (exactly one flags byte and a big-endian uint32).
func SKSignatureFields(rest []byte) (flags byte, counter uint32, err error) {
	if len(rest) != 5 {
		return 0, 0, fmt.Errorf("%w: security key signature must end in flags and counter (5 bytes), not %d bytes", ErrBadSignature, len(rest))
	}
	return rest[0], binary.BigEndian.Uint32(rest[1:]), nil
}

// SKSignedData is what a security key signs for message data: the SHA-256
// of the application, the flags, the counter and the SHA-256 of data.
func SKSignedData(application string, flags byte, counter uint32, data []byte) []byte {
	app := sha256.Sum256([]byte(application))
	msg := sha256.Sum256(data)
	out := make([]byte, 0, 2*sha256.Size+5)
	out = append(out, app[:]...)
	out = append(out, flags)
	out = binary.BigEndian.AppendUint32(out, counter)
	return append(out, msg[:]...)
}

// verifySK checks an sk signature (algorithm format, signature blob, and
// rest: flags and counter) over data (the bytes the SSH layer signs) made
// by key, whose fingerprint is fp: the signature algorithm, the flags (user presence always; user
// verification when the key requires it; no unknown bits) and the
// signature over SKSignedData. It does its own parsing, so that the rules
// stay here whatever golang.org/x/crypto/ssh does.
func verifySK(key *SKKey, fp string, data, format, blob, rest []byte) error {
	if string(format) != key.Type() {
		return fmt.Errorf("%w: key %s: not a %s signature", ErrBadSignature, fp, key.Type())
	}
	flags, counter, err := SKSignatureFields(rest)
	if err != nil {
		return fmt.Errorf("key %s: %w", fp, err)
	}
	if flags&SKUserPresent == 0 {
		return fmt.Errorf("%w: key %s: the security key did not confirm user presence (no touch): sign again and touch the key", ErrBadSignature, fp)
	}
	if key.VerifyRequired && flags&SKUserVerified == 0 {
		return fmt.Errorf("%w: key %s requires user verification (%s) but the signature lacks it: set a PIN on the key and sign again", ErrBadSignature, fp, OptionVerifyRequired)
	}
	if flags&^(SKUserPresent|SKUserVerified) != 0 {
		return fmt.Errorf("%w: key %s: unknown security key flags 0x%02x", ErrBadSignature, fp, flags)
	}
	signed := SKSignedData(key.Application, flags, counter, data)
	switch key.Type() {
	case ssh.KeyAlgoSKED25519:
		if len(blob) != ed25519.SignatureSize || !ed25519.Verify(ed25519.PublicKey(key.point), signed, blob) {
			return fmt.Errorf("%w: key %s: security key signature does not verify", ErrBadSignature, fp)
		}
	case ssh.KeyAlgoSKECDSA256:
		r, s, ok := parseECDSASignature(blob)
		if !ok {
			return fmt.Errorf("%w: key %s: malformed ecdsa signature", ErrBadSignature, fp)
		}
		pub, err := ecdsaP256(key.point)
		if err != nil {
			return fmt.Errorf("%w: key %s: %v", ErrBadSignature, fp, err)
		}
		h := sha256.Sum256(signed)
		if !ecdsa.Verify(pub, h[:], r, s) {
			return fmt.Errorf("%w: key %s: security key signature does not verify", ErrBadSignature, fp)
		}
	default:
		return fmt.Errorf("%w: %s", ErrUnsupportedKey, key.Type())
	}
	return nil
}

// securityKeyFile handles the private key file of a security key (made by
// ssh-keygen -t ed25519-sk or ecdsa-sk), which holds only a handle: the
// private key stays on the device. Signing goes through ssh-agent, which
// asks the device; the device waits for a touch (and a PIN with
// verify-required).
func securityKeyFile(spec KeySpec, path string, data []byte) (Signer, error) {
	_, blob := privateKeyPublicBlob(data)
	pub, err := ParseSKKey(blob, false)
	if err != nil {
		return nil, fmt.Errorf("sign: load key %s: %w", path, err)
	}
	s, err := agentSignerFor(spec, pub, path)
	if err != nil && errors.Is(err, ErrKeyUnavailable) {
		return nil, fmt.Errorf("%w: %s is a security key (%s) whose private key stays on the device: add it to ssh-agent (ssh-add %s); each signature then waits for a touch of the key", ErrKeyUnavailable, path, pub.Type(), path)
	}
	return s, err
}

// SecurityKeyFile reports whether path (a "~/" prefix expanded with home)
// names a security key's private key file, or the .pub file of one that
// lies beside it, and returns the private key file and the key. It is for
// callers that sign with ssh-keygen -Y sign when ssh-agent does not hold
// the key; it reads at most two files and never fails (ok is false).
func SecurityKeyFile(path, home string) (priv string, pub *SKKey, ok bool) {
	p, err := expandHome(path, home)
	if err != nil {
		return "", nil, false
	}
	for _, cand := range []string{p, strings.TrimSuffix(p, ".pub")} {
		b, err := readKeyFile(cand)
		if err != nil || !isSKType(privateKeyType(b)) {
			continue
		}
		k, err := PublicKeyOfPrivate(b)
		if sk, isSK := k.(*SKKey); err == nil && isSK {
			return cand, sk, true
		}
	}
	return "", nil, false
}
