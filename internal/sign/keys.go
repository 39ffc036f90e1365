package sign

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"errors"
	"fmt"
	"strings"

	"github.com/theupdateframework/go-tuf/v2/metadata"
	"golang.org/x/crypto/ssh"
)

// Namespaces of SSHSIG signatures made and checked by git-secure.
const (
	// NamespaceGit is git's own namespace for commit and tag signatures. RSL
	// entries are ordinary SSH-signed git commits, so they use it too.
	NamespaceGit = "git"
	// NamespaceAttestation is the namespace of DSSE envelopes of attestations.
	NamespaceAttestation = "git-secure-attestation-v1"
)

// Sentinel errors; test with errors.Is.
var (
	ErrUnknownKey     = errors.New("sign: signature made by a key that is not trusted")
	ErrBadSignature   = errors.New("sign: signature does not verify")
	ErrNoKey          = errors.New("sign: no signing key configured")
	ErrUnsupportedKey = errors.New("sign: unsupported key type")
	// ErrKeyUnavailable means a signing key is configured but its private
	// half cannot be used: the key file is passphrase-protected, or the key
	// is not loaded in ssh-agent, or there is no ssh-agent.
	ErrKeyUnavailable = errors.New("sign: private key not available")
)

// Limits.
const (
	// MaxSignatureSize bounds an armored signature and a raw SSHSIG blob.
	MaxSignatureSize = 16 << 10
	// MaxPublicKeyLineSize bounds one authorized_keys line.
	MaxPublicKeyLineSize = 16 << 10
	// MinRSABits and MaxRSABits bound the size of accepted RSA keys.
	MinRSABits = 2048
	MaxRSABits = 16384
)

// Fingerprint is the SHA256 fingerprint of an SSH public key as ssh-keygen
// prints it ("SHA256:" followed by unpadded standard base64).
func Fingerprint(pub ssh.PublicKey) string {
	return ssh.FingerprintSHA256(pub)
}

// checkKey reports whether pub is a key type this package accepts.
func checkKey(pub ssh.PublicKey) error {
	if pub == nil {
		return fmt.Errorf("%w: no key", ErrUnsupportedKey)
	}
	switch t := pub.Type(); t {
	case ssh.KeyAlgoED25519, ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521:
		return nil
	case ssh.KeyAlgoRSA:
		cp, ok := pub.(ssh.CryptoPublicKey)
		if !ok {
			return fmt.Errorf("%w: %s key without public parameters", ErrUnsupportedKey, t)
		}
		rk, ok := cp.CryptoPublicKey().(*rsa.PublicKey)
		if !ok {
			return fmt.Errorf("%w: %s key is not RSA", ErrUnsupportedKey, t)
		}
		if n := rk.N.BitLen(); n < MinRSABits || n > MaxRSABits {
			return fmt.Errorf("%w: RSA key of %d bits (need %d to %d)", ErrUnsupportedKey, n, MinRSABits, MaxRSABits)
		}
		return nil
	case ssh.KeyAlgoSKED25519, ssh.KeyAlgoSKECDSA256:
		return fmt.Errorf("%w: %s (security keys are not supported yet)", ErrUnsupportedKey, t)
	default:
		if strings.Contains(t, "-cert-") {
			return fmt.Errorf("%w: %s (certificates are not supported)", ErrUnsupportedKey, t)
		}
		return fmt.Errorf("%w: %s", ErrUnsupportedKey, t)
	}
}

// ParsePublicKey parses exactly one authorized_keys-format line
// ("ssh-ed25519 AAAA... comment", one trailing newline allowed) and returns
// the key and its comment. Options before the key type, further lines and
// lines longer than MaxPublicKeyLineSize are rejected. Accepted types are
// ed25519, ecdsa-sha2-nistp256/384/521 and ssh-rsa of at least 2048 bits;
// anything else, including sk-* security keys and certificates, fails with
// ErrUnsupportedKey.
func ParsePublicKey(line []byte) (ssh.PublicKey, string, error) {
	if len(line) > MaxPublicKeyLineSize {
		return nil, "", fmt.Errorf("sign: parse public key: line of %d bytes exceeds %d", len(line), MaxPublicKeyLineSize)
	}
	l := bytes.TrimSuffix(line, []byte("\n"))
	l = bytes.TrimSuffix(l, []byte("\r"))
	if bytes.ContainsAny(l, "\r\n\x00") {
		return nil, "", errors.New("sign: parse public key: want exactly one line")
	}
	l = bytes.TrimSpace(l)
	if len(l) == 0 {
		return nil, "", errors.New("sign: parse public key: empty")
	}
	if l[0] == '#' {
		return nil, "", errors.New("sign: parse public key: line is a comment")
	}
	// Check the key type word first so that unsupported key types get
	// ErrUnsupportedKey, and so that authorized_keys options (which come
	// before the key type) are rejected.
	typ, _, _ := bytes.Cut(l, []byte(" "))
	if i := bytes.IndexByte(typ, '\t'); i >= 0 {
		typ = typ[:i]
	}
	switch string(typ) {
	case ssh.KeyAlgoED25519, ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521, ssh.KeyAlgoRSA:
	case ssh.KeyAlgoSKED25519, ssh.KeyAlgoSKECDSA256:
		return nil, "", fmt.Errorf("sign: parse public key: %w: %s (security keys are not supported yet)", ErrUnsupportedKey, typ)
	default:
		return nil, "", fmt.Errorf("sign: parse public key: %w: %.64q", ErrUnsupportedKey, typ)
	}
	pub, comment, options, rest, err := ssh.ParseAuthorizedKey(l)
	if err != nil {
		return nil, "", fmt.Errorf("sign: parse public key: %w", err)
	}
	if len(options) != 0 || len(bytes.TrimSpace(rest)) != 0 {
		return nil, "", errors.New("sign: parse public key: unexpected options or trailing data")
	}
	if pub.Type() != string(typ) {
		return nil, "", fmt.Errorf("sign: parse public key: key type %q does not match encoded key %q", typ, pub.Type())
	}
	if err := checkKey(pub); err != nil {
		return nil, "", fmt.Errorf("sign: parse public key: %w", err)
	}
	return pub, comment, nil
}

// cryptoKey returns the crypto.PublicKey inside pub.
func cryptoKey(pub ssh.PublicKey) (crypto.PublicKey, error) {
	if err := checkKey(pub); err != nil {
		return nil, err
	}
	cp, ok := pub.(ssh.CryptoPublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnsupportedKey, pub.Type())
	}
	return cp.CryptoPublicKey(), nil
}

// TUFKey converts an SSH public key into a go-tuf metadata.Key and returns it
// with its TUF key ID. ed25519, ECDSA P-256 and RSA keys are supported (RSA
// keys become rsassa-pss-sha256 keys, which TUFSigner cannot sign for). ECDSA
// P-384/P-521 keys fail with ErrUnsupportedKey because go-tuf would label
// them with the P-256 scheme.
func TUFKey(pub ssh.PublicKey) (*metadata.Key, string, error) {
	ck, err := cryptoKey(pub)
	if err != nil {
		return nil, "", fmt.Errorf("sign: tuf key: %w", err)
	}
	if ek, ok := ck.(*ecdsa.PublicKey); ok && ek.Curve != elliptic.P256() {
		return nil, "", fmt.Errorf("sign: tuf key: %w: %s (TUF keys must be ed25519, ecdsa-sha2-nistp256 or rsa)", ErrUnsupportedKey, pub.Type())
	}
	k, err := metadata.KeyFromPublicKey(ck)
	if err != nil {
		return nil, "", fmt.Errorf("sign: tuf key %s: %w", Fingerprint(pub), err)
	}
	id, err := k.ID()
	if err != nil {
		return nil, "", fmt.Errorf("sign: tuf key %s: %w", Fingerprint(pub), err)
	}
	return k, id, nil
}

// PublicKeyFromTUF converts a go-tuf key (ed25519, ecdsa/ecdsa-sha2-nistp256
// or rsassa-pss-sha256) back into an SSH public key. It is the inverse of
// TUFKey.
func PublicKeyFromTUF(k *metadata.Key) (ssh.PublicKey, error) {
	if k == nil {
		return nil, errors.New("sign: key from tuf: nil key")
	}
	switch k.Type {
	case metadata.KeyTypeEd25519:
		if k.Scheme != metadata.KeySchemeEd25519 {
			return nil, fmt.Errorf("sign: key from tuf: %w: type %q with scheme %q", ErrUnsupportedKey, k.Type, k.Scheme)
		}
	case metadata.KeyTypeECDSA_SHA2_P256, metadata.KeyTypeECDSA_SHA2_P256_COMPAT:
		if k.Scheme != metadata.KeySchemeECDSA_SHA2_P256 {
			return nil, fmt.Errorf("sign: key from tuf: %w: type %q with scheme %q", ErrUnsupportedKey, k.Type, k.Scheme)
		}
	case metadata.KeyTypeRSASSA_PSS_SHA256:
	default:
		return nil, fmt.Errorf("sign: key from tuf: %w: %q", ErrUnsupportedKey, k.Type)
	}
	ck, err := k.ToPublicKey()
	if err != nil {
		return nil, fmt.Errorf("sign: key from tuf: %w", err)
	}
	switch ck := ck.(type) {
	case ed25519.PublicKey:
		if len(ck) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("sign: key from tuf: ed25519 key of %d bytes", len(ck))
		}
	case *ecdsa.PublicKey:
		if ck.Curve != elliptic.P256() {
			return nil, fmt.Errorf("sign: key from tuf: %w: ecdsa key on %s with scheme %q", ErrUnsupportedKey, ck.Curve.Params().Name, k.Scheme)
		}
	}
	pub, err := ssh.NewPublicKey(ck)
	if err != nil {
		return nil, fmt.Errorf("sign: key from tuf: %w", err)
	}
	if err := checkKey(pub); err != nil {
		return nil, fmt.Errorf("sign: key from tuf: %w", err)
	}
	return pub, nil
}
