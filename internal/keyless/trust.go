package keyless

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// Size limits of pinned material (the public Sigstore root and
// intermediate are 1.5 KiB).
const (
	maxTrustPEM   = 64 << 10
	maxTrustCerts = 8
)

// ErrBadTrust is wrapped by errors about pinned Fulcio or Rekor material.
var ErrBadTrust = errors.New("keyless: bad pinned Sigstore material")

// Trust is the pinned Sigstore instance: Fulcio's root certificates (and
// intermediates) and Rekor's public key.
type Trust struct {
	roots, intermediates *x509.CertPool
	rekorKey             *ecdsa.PublicKey
	logID                []byte // sha256 of the Rekor key's PKIX DER: Rekor's log ID
}

// NewTrust parses pinned material: fulcioPEM holds one or more
// CERTIFICATE blocks (self-signed ones are roots, the others
// intermediates, all CA certificates, at least one root); rekorPEM holds
// one PUBLIC KEY block, an ECDSA P-256 or P-384 key.
func NewTrust(fulcioPEM, rekorPEM []byte) (*Trust, error) {
	t := &Trust{roots: x509.NewCertPool(), intermediates: x509.NewCertPool()}
	if err := t.addFulcio(fulcioPEM); err != nil {
		return nil, err
	}
	key, err := parseRekorKey(rekorPEM)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		return nil, fmt.Errorf("%w: Rekor key: %v", ErrBadTrust, err)
	}
	id := sha256.Sum256(der)
	t.rekorKey, t.logID = key, id[:]
	return t, nil
}

func (t *Trust) addFulcio(fulcioPEM []byte) error {
	if len(fulcioPEM) > maxTrustPEM {
		return fmt.Errorf("%w: Fulcio PEM exceeds %d bytes", ErrBadTrust, maxTrustPEM)
	}
	roots, n := 0, 0
	for rest := bytes.TrimSpace(fulcioPEM); len(rest) > 0; rest = bytes.TrimSpace(rest) {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil || block.Type != "CERTIFICATE" || len(block.Headers) != 0 {
			return fmt.Errorf("%w: Fulcio PEM must hold only CERTIFICATE blocks", ErrBadTrust)
		}
		if n++; n > maxTrustCerts {
			return fmt.Errorf("%w: more than %d Fulcio certificates", ErrBadTrust, maxTrustCerts)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return fmt.Errorf("%w: Fulcio certificate: %v", ErrBadTrust, err)
		}
		if !c.IsCA || !c.BasicConstraintsValid {
			return fmt.Errorf("%w: Fulcio certificate %q is not a CA", ErrBadTrust, c.Subject)
		}
		if bytes.Equal(c.RawSubject, c.RawIssuer) && c.CheckSignatureFrom(c) == nil {
			t.roots.AddCert(c)
			roots++
		} else {
			t.intermediates.AddCert(c)
		}
	}
	if roots == 0 {
		return fmt.Errorf("%w: no self-signed Fulcio root certificate", ErrBadTrust)
	}
	return nil
}

func parseRekorKey(rekorPEM []byte) (*ecdsa.PublicKey, error) {
	block, rest := pem.Decode(bytes.TrimSpace(rekorPEM))
	if block == nil || block.Type != "PUBLIC KEY" || len(block.Headers) != 0 || len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("%w: Rekor key must be exactly one PUBLIC KEY PEM block", ErrBadTrust)
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: Rekor key: %v", ErrBadTrust, err)
	}
	ek, ok := k.(*ecdsa.PublicKey)
	if !ok || (ek.Curve != elliptic.P256() && ek.Curve != elliptic.P384()) {
		return nil, fmt.Errorf("%w: Rekor key is %T, want ECDSA P-256 or P-384", ErrBadTrust, k)
	}
	return ek, nil
}

// LogID is the pinned Rekor log's ID (sha256 of its key), hex as Rekor
// shows it.
func (t *Trust) LogID() []byte { return bytes.Clone(t.logID) }
