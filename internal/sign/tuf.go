package sign

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/asn1"
	"errors"
	"fmt"
	"io"
	"math/big"

	"github.com/sigstore/sigstore/pkg/signature"
	"golang.org/x/crypto/ssh"
)

// TUFSigner adapts an SSH signer (a key file or an ssh-agent key) to the
// sigstore signature.Signer that go-tuf's Metadata.Sign takes. ed25519 keys
// give the raw 64-byte ed25519 signature of the message (scheme "ed25519");
// ECDSA P-256 keys give an ASN.1 DER signature over SHA-256 of the message
// (scheme "ecdsa-sha2-nistp256"). Other keys, including RSA, fail with
// ErrUnsupportedKey: policy and root keys must be ed25519 or ecdsa-p256.
// PublicKey returns the crypto.PublicKey, so metadata.KeyFromPublicKey gives
// the same key ID as TUFKey. Every signature is checked against the public
// key before it is returned. A security key or an OpenPGP key gets a signer
// that also implements TUFKeyHolder (tufkinds.go): such keys sign rule
// files as persons, never root or rules metadata.
func TUFSigner(s ssh.Signer) (signature.Signer, error) {
	if s == nil {
		return nil, ErrNoKey
	}
	pub := s.PublicKey()
	switch pub.Type() {
	case ssh.KeyAlgoED25519, ssh.KeyAlgoECDSA256:
	case ssh.KeyAlgoSKED25519, ssh.KeyAlgoSKECDSA256, KeyTypeOpenPGP, KeyTypeSigstore:
		// Person keys of these kinds sign rule files (see tufkinds.go).
		if err := checkKey(pub); err != nil {
			return nil, fmt.Errorf("sign: tuf signer %s: %w", Fingerprint(pub), err)
		}
		return &kindTUFSigner{s: s, pub: pub}, nil
	default:
		return nil, fmt.Errorf("sign: tuf signer %s: %w: %s (policy/root keys must be ed25519 or ecdsa-p256)", Fingerprint(pub), ErrUnsupportedKey, pub.Type())
	}
	ck, err := cryptoKey(pub)
	if err != nil {
		return nil, fmt.Errorf("sign: tuf signer %s: %w", Fingerprint(pub), err)
	}
	switch k := ck.(type) {
	case ed25519.PublicKey:
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return nil, fmt.Errorf("sign: tuf signer %s: %w: curve %s (policy/root keys must be ed25519 or ecdsa-p256)", Fingerprint(pub), ErrUnsupportedKey, k.Curve.Params().Name)
		}
	default:
		return nil, fmt.Errorf("sign: tuf signer %s: %w: %T", Fingerprint(pub), ErrUnsupportedKey, ck)
	}
	return &tufSigner{s: s, pub: pub, key: ck}, nil
}

type tufSigner struct {
	s   ssh.Signer
	pub ssh.PublicKey
	key crypto.PublicKey
}

func (t *tufSigner) PublicKey(...signature.PublicKeyOption) (crypto.PublicKey, error) {
	return t.key, nil
}

// SignMessage signs the whole message. Options may supply the random source;
// a pre-computed digest is refused because SSH keys hash the message
// themselves.
func (t *tufSigner) SignMessage(message io.Reader, opts ...signature.SignOption) ([]byte, error) {
	rnd := io.Reader(rand.Reader)
	var digest []byte
	for _, o := range opts {
		o.ApplyRand(&rnd)
		o.ApplyDigest(&digest)
	}
	if digest != nil {
		return nil, errors.New("sign: tuf sign: signing a pre-computed digest is not supported")
	}
	if rnd == nil {
		rnd = rand.Reader
	}
	if message == nil {
		return nil, errors.New("sign: tuf sign: no message")
	}
	msg, err := io.ReadAll(message)
	if err != nil {
		return nil, fmt.Errorf("sign: tuf sign: read message: %w", err)
	}
	fp := Fingerprint(t.pub)
	sig, err := t.s.Sign(rnd, msg)
	if err != nil {
		return nil, fmt.Errorf("sign: tuf sign with %s: %w", fp, err)
	}
	if sig.Format != t.pub.Type() {
		return nil, fmt.Errorf("sign: tuf sign with %s: got a %q signature, want %q", fp, sig.Format, t.pub.Type())
	}
	switch k := t.key.(type) {
	case ed25519.PublicKey:
		if len(sig.Blob) != ed25519.SignatureSize || !ed25519.Verify(k, msg, sig.Blob) {
			return nil, fmt.Errorf("sign: tuf sign with %s: %w", fp, ErrBadSignature)
		}
		return bytes.Clone(sig.Blob), nil
	case *ecdsa.PublicKey:
		var rs struct{ R, S *big.Int }
		if err := ssh.Unmarshal(sig.Blob, &rs); err != nil {
			return nil, fmt.Errorf("sign: tuf sign with %s: malformed ecdsa signature: %w", fp, err)
		}
		if !bytes.Equal(ssh.Marshal(&rs), sig.Blob) || rs.R.Sign() <= 0 || rs.S.Sign() <= 0 {
			return nil, fmt.Errorf("sign: tuf sign with %s: malformed ecdsa signature", fp)
		}
		h := sha256.Sum256(msg)
		if !ecdsa.Verify(k, h[:], rs.R, rs.S) {
			return nil, fmt.Errorf("sign: tuf sign with %s: %w", fp, ErrBadSignature)
		}
		der, err := asn1.Marshal(struct{ R, S *big.Int }{rs.R, rs.S})
		if err != nil {
			return nil, fmt.Errorf("sign: tuf sign with %s: %w", fp, err)
		}
		return der, nil
	}
	return nil, fmt.Errorf("sign: tuf sign with %s: %w", fp, ErrUnsupportedKey)
}

var _ signature.Signer = (*tufSigner)(nil)
