package sign

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/theupdateframework/go-tuf/v2/metadata"
	"golang.org/x/crypto/ssh"
)

// Security keys and OpenPGP keys in TUF metadata (the policy's person
// keys). go-tuf knows neither, so they get key types and schemes of their
// own, and their signatures on metadata are this package's signatures in
// the NamespacePolicy namespace:
//
//	keytype                              scheme                  keyval.public
//	sk-ssh-ed25519@openssh.com           sshsig-sk               base64(SSH wire key)
//	sk-ssh-ed25519@openssh.com           sshsig-sk-verify-required
//	sk-ecdsa-sha2-nistp256@openssh.com   sshsig-sk | sshsig-sk-verify-required
//	openpgp                              openpgp                 base64(binary public key)
//
// A TUF signature ("sig", hex) by such a key is a binary SSHSIG blob (sk)
// or a binary OpenPGP signature (openpgp) over the canonical "signed"
// bytes. The scheme of an sk key records its verify-required option, so
// the option is part of the key ID.

// NamespacePolicy is the namespace of policy metadata signatures made by
// security keys and OpenPGP keys (rule files signed by persons).
const NamespacePolicy = "git-secure-policy-v1"

// TUF key schemes of the key kinds go-tuf does not know.
const (
	SchemeSK               = "sshsig-sk"
	SchemeSKVerifyRequired = "sshsig-sk-verify-required"
	SchemeOpenPGP          = "openpgp"
)

// maxTUFKindValue bounds keyval.public of these kinds (base64).
var maxTUFKindValue = base64.StdEncoding.EncodedLen(MaxOpenPGPKeySize)

func tufKindKey(pub ssh.PublicKey) (*metadata.Key, string, error) {
	var k *metadata.Key
	switch {
	case isSKType(pub.Type()):
		sk, ok := pub.(*SKKey)
		if !ok {
			var err error
			if sk, err = NewSKKey(pub, false); err != nil {
				return nil, "", fmt.Errorf("sign: tuf key: %w", err)
			}
		}
		scheme := SchemeSK
		if sk.VerifyRequired {
			scheme = SchemeSKVerifyRequired
		}
		k = &metadata.Key{Type: sk.Type(), Scheme: scheme, Value: metadata.KeyVal{PublicKey: base64.StdEncoding.EncodeToString(sk.Marshal())}}
	case pub.Type() == KeyTypeOpenPGP:
		pk, ok := pub.(*OpenPGPKey)
		if !ok {
			return nil, "", fmt.Errorf("sign: tuf key: %w: openpgp key without its key material", ErrUnsupportedKey)
		}
		k = &metadata.Key{Type: KeyTypeOpenPGP, Scheme: SchemeOpenPGP, Value: metadata.KeyVal{PublicKey: base64.StdEncoding.EncodeToString(pk.raw)}}
	case pub.Type() == KeyTypeSigstore:
		sk, ok := pub.(*SigstoreKey)
		if !ok {
			return nil, "", fmt.Errorf("sign: tuf key: %w: %s key of another type", ErrUnsupportedKey, KeyTypeSigstore)
		}
		k = tufSigstoreKey(sk)
	default:
		return nil, "", fmt.Errorf("sign: tuf key: %w: %s", ErrUnsupportedKey, pub.Type())
	}
	id, err := KeyID(k)
	if err != nil {
		return nil, "", fmt.Errorf("sign: tuf key %s: %w", Fingerprint(pub), err)
	}
	return k, id, nil
}

// publicKeyFromTUFKind decodes a key of the kinds above strictly: known
// type and scheme, canonical padded base64 within bounds, a key that
// parses strictly.
func publicKeyFromTUFKind(k *metadata.Key) (ssh.PublicKey, error) {
	v := k.Value.PublicKey
	if len(v) > maxTUFKindValue {
		return nil, fmt.Errorf("sign: key from tuf: %s key of %d bytes exceeds %d", k.Type, len(v), maxTUFKindValue)
	}
	b, err := base64.StdEncoding.Strict().DecodeString(v)
	if err != nil || base64.StdEncoding.EncodeToString(b) != v {
		return nil, fmt.Errorf("sign: key from tuf: %s key is not canonical base64", k.Type)
	}
	switch k.Type {
	case ssh.KeyAlgoSKED25519, ssh.KeyAlgoSKECDSA256:
		var uv bool
		switch k.Scheme {
		case SchemeSK:
		case SchemeSKVerifyRequired:
			uv = true
		default:
			return nil, fmt.Errorf("sign: key from tuf: %w: type %q with scheme %q", ErrUnsupportedKey, k.Type, k.Scheme)
		}
		sk, err := ParseSKKey(b, uv)
		if err != nil {
			return nil, fmt.Errorf("sign: key from tuf: %w", err)
		}
		if sk.Type() != k.Type {
			return nil, fmt.Errorf("sign: key from tuf: keytype %q holds a %s key", k.Type, sk.Type())
		}
		return sk, nil
	case KeyTypeOpenPGP:
		if k.Scheme != SchemeOpenPGP {
			return nil, fmt.Errorf("sign: key from tuf: %w: type %q with scheme %q", ErrUnsupportedKey, k.Type, k.Scheme)
		}
		pk, err := ParseOpenPGPKeyBinary(b)
		if err != nil {
			return nil, fmt.Errorf("sign: key from tuf: %w", err)
		}
		return pk, nil
	case KeyTypeSigstore:
		if k.Scheme != KeyTypeSigstore {
			return nil, fmt.Errorf("sign: key from tuf: %w: type %q with scheme %q", ErrUnsupportedKey, k.Type, k.Scheme)
		}
		sk, err := parseSigstoreWire(b)
		if err != nil {
			return nil, fmt.Errorf("sign: key from tuf: %w", err)
		}
		return sk, nil
	}
	return nil, fmt.Errorf("sign: key from tuf: %w: %q", ErrUnsupportedKey, k.Type)
}

// IsTUFNative reports whether go-tuf itself can verify signatures by k
// (ed25519, ecdsa P-256, RSA): what root and rules keys must be.
func IsTUFNative(k *metadata.Key) bool {
	switch k.Type {
	case ssh.KeyAlgoSKED25519, ssh.KeyAlgoSKECDSA256, KeyTypeOpenPGP, KeyTypeSigstore:
		return false
	}
	return true
}

// VerifyTUFSignature verifies sig over the canonical payload of metadata
// for a security key or OpenPGP key k (IsTUFNative false): a signature of
// this package in NamespacePolicy by exactly that key. Errors wrap
// ErrBadSignature, ErrUnknownKey or ErrUnsupportedKey.
func VerifyTUFSignature(k *metadata.Key, payload, sig []byte) error {
	if IsTUFNative(k) {
		return fmt.Errorf("%w: %s keys are verified by go-tuf", ErrUnsupportedKey, k.Type)
	}
	pub, err := PublicKeyFromTUF(k)
	if err != nil {
		return err
	}
	return VerifyTUFSignatureKey(pub, payload, sig)
}

// VerifyTUFSignatureKey is VerifyTUFSignature with the key already
// parsed: for a keyless identity, the policy's key with its pinned
// Sigstore trust attached.
func VerifyTUFSignatureKey(pub ssh.PublicKey, payload, sig []byte) error {
	fp := Fingerprint(pub)
	_, err := VerifyRaw(sig, payload, NamespacePolicy, func(got string) (ssh.PublicKey, bool) { return pub, got == fp })
	return err
}

// TUFKeyHolder is implemented by the signature.Signer that TUFSigner
// returns for a security key or an OpenPGP key: its TUF key (which go-tuf
// cannot derive from a crypto.PublicKey) and key ID. Metadata signed with
// it gets a Signature{KeyID, SignMessage(payload)} added by hand.
type TUFKeyHolder interface {
	TUFKey() (*metadata.Key, string, error)
}

// kindTUFSigner signs metadata with a security key (through ssh-agent) or
// an OpenPGP key (through gpg) in NamespacePolicy.
type kindTUFSigner struct {
	s   ssh.Signer
	pub ssh.PublicKey
}

func (t *kindTUFSigner) TUFKey() (*metadata.Key, string, error) { return TUFKey(t.pub) }

// PublicKey fails: go-tuf cannot use these keys (see TUFKeyHolder).
func (t *kindTUFSigner) PublicKey(...signature.PublicKeyOption) (crypto.PublicKey, error) {
	return nil, fmt.Errorf("sign: %w: %s keys sign TUF metadata through TUFKeyHolder", ErrUnsupportedKey, t.pub.Type())
}

func (t *kindTUFSigner) SignMessage(message io.Reader, opts ...signature.SignOption) ([]byte, error) {
	var digest []byte
	rnd := io.Reader(rand.Reader)
	for _, o := range opts {
		o.ApplyDigest(&digest)
		o.ApplyRand(&rnd)
	}
	if digest != nil {
		return nil, errors.New("sign: tuf sign: signing a pre-computed digest is not supported")
	}
	if message == nil {
		return nil, errors.New("sign: tuf sign: no message")
	}
	msg, err := io.ReadAll(message)
	if err != nil {
		return nil, fmt.Errorf("sign: tuf sign: read message: %w", err)
	}
	sig, err := SignRaw(t.s, msg, NamespacePolicy)
	if err != nil {
		return nil, err
	}
	if sk, ok := t.pub.(*SigstoreKey); ok && sk.Trust == nil {
		return sig, nil // signMessage checked what it could
	}
	// Check what was made, with the key as the policy will see it.
	k, _, err := t.TUFKey()
	if err != nil {
		return nil, err
	}
	if err := VerifyTUFSignature(k, msg, sig); err != nil {
		return nil, fmt.Errorf("sign: tuf sign with %s: %w", Fingerprint(t.pub), err)
	}
	return bytes.Clone(sig), nil
}

var (
	_ signature.Signer = (*kindTUFSigner)(nil)
	_ TUFKeyHolder     = (*kindTUFSigner)(nil)
)
