package keyless

import (
	"bytes"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
	"math/big"
	"time"
)

// Object identifiers of the CMS subset gitsign writes.
var (
	oidSignedData      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2}
	oidData            = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidContentType     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 3}
	oidMessageDigest   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 4}
	oidSigningTime     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 5}
	oidSHA256          = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 1}
	oidECDSAWithSHA256 = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
	// OIDRekorEntry is the unsigned attribute that holds a serialized
	// Rekor TransparencyLogEntry (protobuf-specs), as gitsign's offline
	// mode embeds it.
	OIDRekorEntry = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 3, 1}
)

// maxCerts bounds the certificates a signature may carry (gitsign embeds
// only the leaf; older versions added the intermediate).
const maxCerts = 3

type contentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue `asn1:"explicit,tag:0"`
}

type signedData struct {
	Version          int
	DigestAlgorithms []pkix.AlgorithmIdentifier `asn1:"set"`
	EncapContentInfo encapContentInfo
	Certificates     asn1.RawValue   `asn1:"optional,tag:0"`
	CRLs             asn1.RawValue   `asn1:"optional,tag:1"`
	SignerInfos      []asn1.RawValue `asn1:"set"`
}

type encapContentInfo struct {
	EContentType asn1.ObjectIdentifier
	EContent     asn1.RawValue `asn1:"optional,explicit,tag:0"`
}

type signerInfo struct {
	Version            int
	SID                issuerAndSerial
	DigestAlgorithm    pkix.AlgorithmIdentifier
	SignedAttrs        asn1.RawValue `asn1:"tag:0"`
	SignatureAlgorithm pkix.AlgorithmIdentifier
	Signature          []byte
	UnsignedAttrs      asn1.RawValue `asn1:"optional,tag:1"`
}

type issuerAndSerial struct {
	Issuer asn1.RawValue
	Serial *big.Int
}

type attribute struct {
	Type   asn1.ObjectIdentifier
	Values asn1.RawValue `asn1:"set"`
}

// message is a parsed, not yet verified, gitsign signature.
type message struct {
	leaf        *x509.Certificate
	extra       []*x509.Certificate // other embedded certificates: candidate intermediates only
	signedAttrs []byte              // DER of the signed attributes as signed (a SET)
	digest      []byte              // the message digest attribute
	signingTime time.Time           // the signer's clock: informative only
	signature   []byte              // ECDSA over sha256(signedAttrs)
	rekorEntry  []byte              // serialized TransparencyLogEntry
}

// unmarshalDER decodes exactly one DER value into v.
func unmarshalDER(b []byte, v any, what string) error {
	rest, err := asn1.Unmarshal(b, v)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBadSignature, what, err)
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: %s: trailing data", ErrBadSignature, what)
	}
	return nil
}

// parseMessage decodes the DER of a detached CMS SignedData with one
// signer, as gitsign writes it.
func parseMessage(der []byte) (*message, error) {
	var ci contentInfo
	if err := unmarshalDER(der, &ci, "content info"); err != nil {
		return nil, err
	}
	if !ci.ContentType.Equal(oidSignedData) {
		return nil, fmt.Errorf("%w: content type %v is not signed data", ErrBadSignature, ci.ContentType)
	}
	var sd signedData
	if err := unmarshalDER(ci.Content.Bytes, &sd, "signed data"); err != nil {
		return nil, err
	}
	switch {
	case sd.Version != 1:
		return nil, fmt.Errorf("%w: signed data version %d, want 1", ErrBadSignature, sd.Version)
	case len(sd.DigestAlgorithms) != 1 || !sd.DigestAlgorithms[0].Algorithm.Equal(oidSHA256):
		return nil, fmt.Errorf("%w: digest algorithms must be exactly sha256", ErrBadSignature)
	case !sd.EncapContentInfo.EContentType.Equal(oidData) || len(sd.EncapContentInfo.EContent.FullBytes) != 0:
		return nil, fmt.Errorf("%w: not a detached signature of data", ErrBadSignature)
	case len(sd.CRLs.FullBytes) != 0:
		return nil, fmt.Errorf("%w: CRLs in signature", ErrBadSignature)
	case len(sd.SignerInfos) != 1:
		return nil, fmt.Errorf("%w: %d signers, want exactly one", ErrBadSignature, len(sd.SignerInfos))
	}
	certs, err := parseCerts(sd.Certificates)
	if err != nil {
		return nil, err
	}
	return parseSigner(sd.SignerInfos[0].FullBytes, certs)
}

// parseCerts decodes the [0] IMPLICIT SET OF Certificate.
func parseCerts(raw asn1.RawValue) ([]*x509.Certificate, error) {
	if !raw.IsCompound {
		return nil, fmt.Errorf("%w: no certificate in signature", ErrBadSignature)
	}
	var certs []*x509.Certificate
	for rest := raw.Bytes; len(rest) > 0; {
		if len(certs) == maxCerts {
			return nil, fmt.Errorf("%w: more than %d certificates", ErrBadSignature, maxCerts)
		}
		var one asn1.RawValue
		var err error
		if rest, err = asn1.Unmarshal(rest, &one); err != nil {
			return nil, fmt.Errorf("%w: certificates: %v", ErrBadSignature, err)
		}
		c, err := x509.ParseCertificate(one.FullBytes)
		if err != nil {
			return nil, fmt.Errorf("%w: certificate: %v", ErrBadSignature, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("%w: no certificate in signature", ErrBadSignature)
	}
	return certs, nil
}

// parseSigner decodes the one SignerInfo and finds its certificate.
func parseSigner(der []byte, certs []*x509.Certificate) (*message, error) {
	var si signerInfo
	if err := unmarshalDER(der, &si, "signer info"); err != nil {
		return nil, err
	}
	switch {
	case si.Version != 1:
		return nil, fmt.Errorf("%w: signer info version %d, want 1", ErrBadSignature, si.Version)
	case !si.DigestAlgorithm.Algorithm.Equal(oidSHA256):
		return nil, fmt.Errorf("%w: digest algorithm %v, want sha256", ErrBadSignature, si.DigestAlgorithm.Algorithm)
	case !si.SignatureAlgorithm.Algorithm.Equal(oidECDSAWithSHA256):
		return nil, fmt.Errorf("%w: signature algorithm %v, want ecdsa-with-SHA256", ErrBadSignature, si.SignatureAlgorithm.Algorithm)
	}
	m := &message{signature: si.Signature}
	for i, c := range certs {
		if bytes.Equal(c.RawIssuer, si.SID.Issuer.FullBytes) && c.SerialNumber.Cmp(si.SID.Serial) == 0 {
			m.leaf = c
			m.extra = append(append(m.extra, certs[:i]...), certs[i+1:]...)
			break
		}
	}
	if m.leaf == nil {
		return nil, fmt.Errorf("%w: the signer's certificate is not in the signature", ErrBadSignature)
	}
	// The signature covers the attributes re-tagged as a SET (RFC 5652 5.4).
	m.signedAttrs = append([]byte{0x31}, si.SignedAttrs.FullBytes[1:]...)
	if err := m.parseSignedAttrs(si.SignedAttrs.Bytes); err != nil {
		return nil, err
	}
	entry, err := rekorAttribute(si.UnsignedAttrs)
	if err != nil {
		return nil, err
	}
	m.rekorEntry = entry
	return m, nil
}

// attributes decodes a SET OF Attribute's contents, each with exactly one
// value, each type at most once.
func attributes(b []byte, what string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for rest := b; len(rest) > 0; {
		var a attribute
		var err error
		if rest, err = asn1.Unmarshal(rest, &a); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBadSignature, what, err)
		}
		var v asn1.RawValue
		if r, err := asn1.Unmarshal(a.Values.Bytes, &v); err != nil || len(r) != 0 {
			return nil, fmt.Errorf("%w: %s: attribute %v must have exactly one value", ErrBadSignature, what, a.Type)
		}
		k := a.Type.String()
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%w: %s: attribute %v twice", ErrBadSignature, what, a.Type)
		}
		out[k] = v.FullBytes
	}
	return out, nil
}

// parseSignedAttrs requires exactly content type (data), message digest
// (32 bytes) and signing time: anything else signed could mean something
// this verifier does not check.
func (m *message) parseSignedAttrs(b []byte) error {
	attrs, err := attributes(b, "signed attributes")
	if err != nil {
		return err
	}
	for _, oid := range []asn1.ObjectIdentifier{oidContentType, oidMessageDigest, oidSigningTime} {
		if _, ok := attrs[oid.String()]; !ok || len(attrs) != 3 {
			return fmt.Errorf("%w: signed attributes must be exactly content type, message digest and signing time", ErrBadSignature)
		}
	}
	var ct asn1.ObjectIdentifier
	if err := unmarshalDER(attrs[oidContentType.String()], &ct, "content type attribute"); err != nil {
		return err
	}
	if !ct.Equal(oidData) {
		return fmt.Errorf("%w: signed content type %v is not data", ErrBadSignature, ct)
	}
	if err := unmarshalDER(attrs[oidMessageDigest.String()], &m.digest, "message digest attribute"); err != nil {
		return err
	}
	if len(m.digest) != 32 {
		return fmt.Errorf("%w: message digest of %d bytes is not sha256", ErrBadSignature, len(m.digest))
	}
	return unmarshalDER(attrs[oidSigningTime.String()], &m.signingTime, "signing time attribute")
}

// rekorAttribute returns the TransparencyLogEntry among the unsigned
// attributes; others (an RFC 3161 timestamp) are not used and ignored.
func rekorAttribute(raw asn1.RawValue) ([]byte, error) {
	attrs, err := attributes(raw.Bytes, "unsigned attributes")
	if err != nil {
		return nil, err
	}
	v, ok := attrs[OIDRekorEntry.String()]
	if !ok {
		return nil, fmt.Errorf("%w: no Rekor entry in the signature (sign with GITSIGN_REKOR_MODE=offline, which embeds it)", ErrBadSignature)
	}
	var entry []byte
	if err := unmarshalDER(v, &entry, "Rekor entry attribute"); err != nil {
		return nil, err
	}
	return entry, nil
}
