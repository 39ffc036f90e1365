package sign

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/binary"
	"encoding/pem"
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
	// NamespaceTimestamp is the namespace of freshness statements
	// (refs/secure/timestamp): a key of the policy's timestamp role
	// signs nothing else, and nothing else verifies with it.
	NamespaceTimestamp = "git-secure-timestamp-v1"
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

// UnsupportedKeyError says in words why a key is refused and what to use
// instead. It matches ErrUnsupportedKey with errors.Is.
type UnsupportedKeyError struct{ Reason string }

func (e *UnsupportedKeyError) Error() string { return e.Reason }

// Unwrap returns ErrUnsupportedKey.
func (e *UnsupportedKeyError) Unwrap() error { return ErrUnsupportedKey }

// errDSA refuses DSA keys, which OpenSSH has deprecated since 7.0 (1024-bit
// keys and SHA-1 signatures) and no longer builds. golang.org/x/crypto/ssh
// cannot even parse them, so the key type is recognized by name.
var errDSA error = &UnsupportedKeyError{Reason: fmt.Sprintf("DSA keys (ssh-dss) are not accepted: use ed25519 (ssh-keygen -t ed25519), ECDSA, or RSA of at least %d bits", MinRSABits)}

// checkRSABits refuses RSA moduli outside [MinRSABits, MaxRSABits].
func checkRSABits(n int) error {
	switch {
	case n < MinRSABits:
		return &UnsupportedKeyError{Reason: fmt.Sprintf("RSA key of %d bits is too short: at least %d bits are needed (make a new key: ssh-keygen -t ed25519, or ssh-keygen -t rsa -b 3072)", n, MinRSABits)}
	case n > MaxRSABits:
		return &UnsupportedKeyError{Reason: fmt.Sprintf("RSA key of %d bits is too long: at most %d bits are accepted", n, MaxRSABits)}
	}
	return nil
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
		return checkRSABits(rk.N.BitLen())
	case ssh.InsecureKeyAlgoDSA:
		return errDSA
	case ssh.KeyAlgoSKED25519, ssh.KeyAlgoSKECDSA256:
		if _, _, _, err := parseSKBlob(pub.Marshal()); err != nil {
			return err
		}
		return nil
	case KeyTypeOpenPGP:
		if _, ok := pub.(*OpenPGPKey); !ok {
			return fmt.Errorf("%w: %s key without its key material", ErrUnsupportedKey, t)
		}
		return nil
	case KeyTypeSigstore:
		if _, ok := pub.(*SigstoreKey); !ok {
			return fmt.Errorf("%w: %s key of another type", ErrUnsupportedKey, t)
		}
		return nil
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
// lines longer than MaxPublicKeyLineSize are rejected, except the one
// option verify-required before a security key. Accepted types are
// ed25519, ecdsa-sha2-nistp256/384/521, ssh-rsa of at least 2048 bits and
// the security keys sk-ssh-ed25519@openssh.com and
// sk-ecdsa-sha2-nistp256@openssh.com (returned as an *SKKey); anything
// else, including certificates, fails with ErrUnsupportedKey; a DSA key or
// an RSA key of another size fails with an *UnsupportedKeyError (which
// wraps it) saying what is wrong.
//
// An armored OpenPGP public key ("-----BEGIN PGP PUBLIC KEY BLOCK-----")
// is parsed with ParseOpenPGPKey instead and returned as an *OpenPGPKey,
// its comment the primary user ID.
func ParsePublicKey(line []byte) (ssh.PublicKey, string, error) {
	if isArmoredOpenPGPKey(line) {
		k, err := ParseOpenPGPKey(line)
		if err != nil {
			return nil, "", err
		}
		return k, k.UserID, nil
	}
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
	typ := firstWord(l)
	if string(typ) == KeyTypeSigstore {
		k, err := parseSigstoreLine(l)
		return k, "", err
	}
	verifyRequired := false
	if string(typ) == OptionVerifyRequired {
		verifyRequired = true
		l = bytes.TrimSpace(l[len(typ):])
		typ = firstWord(l)
		if !isSKType(string(typ)) {
			return nil, "", fmt.Errorf("sign: parse public key: option %s is only for security keys (sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com)", OptionVerifyRequired)
		}
	}
	switch string(typ) {
	case ssh.KeyAlgoED25519, ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521, ssh.KeyAlgoRSA:
	case ssh.KeyAlgoSKED25519, ssh.KeyAlgoSKECDSA256:
	case ssh.InsecureKeyAlgoDSA:
		return nil, "", fmt.Errorf("sign: parse public key: %w", errDSA)
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
	if isSKType(pub.Type()) {
		sk, err := NewSKKey(pub, verifyRequired)
		if err != nil {
			return nil, "", fmt.Errorf("sign: parse public key: %w", err)
		}
		return sk, comment, nil
	}
	return pub, comment, nil
}

// firstWord returns l up to the first space or tab.
func firstWord(l []byte) []byte {
	if i := bytes.IndexAny(l, " \t"); i >= 0 {
		return l[:i]
	}
	return l
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
//
// Security keys and OpenPGP keys, which go-tuf does not know, become keys
// of their own type (tufKindKey): they may be person keys, which sign
// rule files, but not root or rules keys.
func TUFKey(pub ssh.PublicKey) (*metadata.Key, string, error) {
	if pub != nil && (isSKType(pub.Type()) || pub.Type() == KeyTypeOpenPGP || pub.Type() == KeyTypeSigstore) {
		return tufKindKey(pub)
	}
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
	id, err := KeyID(k)
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
	case ssh.KeyAlgoSKED25519, ssh.KeyAlgoSKECDSA256, KeyTypeOpenPGP, KeyTypeSigstore:
		return publicKeyFromTUFKind(k)
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

// PublicKeyOfPrivate returns the public half of a private key file's
// contents: of an unencrypted key, or of a passphrase-protected OpenSSH key
// (which stores its public key in clear). A key of a refused type or size
// fails with an error wrapping ErrUnsupportedKey that says what is wrong
// (DSA, RSA under MinRSABits); anything else that is not a private key
// fails with the parser's error.
func PublicKeyOfPrivate(data []byte) (ssh.PublicKey, error) {
	var pub ssh.PublicKey
	s, err := ssh.ParsePrivateKey(data)
	var pme *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &pme) && pme.PublicKey != nil:
		pub = pme.PublicKey
	case err != nil && isSKType(privateKeyType(data)):
		// A security key's file holds a handle; its public key is in clear.
		_, blob := privateKeyPublicBlob(data)
		sk, err := ParseSKKey(blob, false)
		if err != nil {
			return nil, fmt.Errorf("sign: private key: %w", err)
		}
		return sk, nil
	case err != nil:
		if privateKeyType(data) == ssh.InsecureKeyAlgoDSA {
			return nil, fmt.Errorf("sign: private key: %w", errDSA)
		}
		return nil, fmt.Errorf("sign: private key: %w", err)
	default:
		pub = s.PublicKey()
	}
	if err := checkKey(pub); err != nil {
		return nil, fmt.Errorf("sign: private key: %w", err)
	}
	return pub, nil
}

// opensshKeyMagic starts the body of an "OPENSSH PRIVATE KEY" PEM block.
const opensshKeyMagic = "openssh-key-v1\x00"

// privateKeyType names the key type of a private key file from what the
// file says in clear: a PEM "DSA PRIVATE KEY" block, or the first public
// key of an OpenSSH key file (after the cipher, KDF name, KDF options and
// key count). It returns "" when it cannot tell. It lets the key types the
// ssh package no longer parses (DSA) be refused by name.
func privateKeyType(data []byte) string {
	typ, _ := privateKeyPublicBlob(data)
	return typ
}

// privateKeyPublicBlob is privateKeyType that also returns the first
// public key's wire encoding of an OpenSSH key file (nil for PEM DSA).
func privateKeyPublicBlob(data []byte) (string, []byte) {
	block, _ := pem.Decode(data)
	if block == nil {
		return "", nil
	}
	switch block.Type {
	case "DSA PRIVATE KEY":
		return ssh.InsecureKeyAlgoDSA, nil
	case "OPENSSH PRIVATE KEY":
	default:
		return "", nil
	}
	rest, ok := bytes.CutPrefix(block.Bytes, []byte(opensshKeyMagic))
	for range 3 { // cipher name, KDF name, KDF options
		if _, rest, ok = sshString(rest, ok); !ok {
			return "", nil
		}
	}
	if len(rest) < 4 {
		return "", nil
	}
	blob, _, ok := sshString(rest[4:], true)
	typ, _, ok := sshString(blob, ok)
	if !ok {
		return "", nil
	}
	return string(typ), blob
}

// sshString splits an SSH wire-format string (uint32 length, bytes) off b;
// ok is false when b is too short or ok was already false.
func sshString(b []byte, ok bool) (s, rest []byte, _ bool) {
	if !ok || len(b) < 4 {
		return nil, nil, false
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, nil, false
	}
	return b[4 : 4+n], b[4+n:], true
}

// DescribeKey names what kind of key pub is, for listings: its SSH type,
// with " verify-required" for a security key that needs user
// verification and its application when not "ssh:", or "openpgp" and the
// OpenPGP fingerprint.
func DescribeKey(pub ssh.PublicKey) string {
	switch k := pub.(type) {
	case *OpenPGPKey:
		return "openpgp " + k.OpenPGPFingerprint()
	case *SigstoreKey:
		return k.String()
	case *SKKey:
		d := k.Type()
		if k.Application != "ssh:" {
			d += " application=" + k.Application
		}
		if k.VerifyRequired {
			d += " " + OptionVerifyRequired
		}
		return d
	}
	return pub.Type()
}
