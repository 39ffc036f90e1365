package keyless

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"fmt"
	"time"
)

// NamespaceGit is the namespace of git's own signatures (commits, tags):
// gitsign signs the object's payload itself.
const NamespaceGit = "git"

// contentPrefix frames git-secure's other signatures with their namespace.
const contentPrefix = "git-secure-keyless-v1\x00"

// Fulcio's certificate extensions naming the OIDC issuer: .1.8 (a DER
// UTF8String) and the older .1.1 (the raw string).
var (
	oidFulcioIssuerV2 = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 8}
	oidFulcioIssuerV1 = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 1}
)

// Content is what a keyless signature in namespace over data signs:
// data itself in the git namespace (a commit or tag payload, as git hands
// it to gitsign); otherwise data framed with the namespace, which no git
// object payload (starting "tree " or "object ") can equal.
func Content(namespace string, data []byte) []byte {
	if namespace == NamespaceGit {
		return data
	}
	out := make([]byte, 0, len(contentPrefix)+len(namespace)+1+len(data))
	out = append(append(append(append(out, contentPrefix...), namespace...), 0), data...)
	return out
}

// Identity is a keyless signer: the OIDC issuer that vouched for the
// subject (an email address or a URI, as Fulcio certified it).
type Identity struct {
	Issuer  string
	Subject string
}

func (id Identity) String() string { return id.Subject + " (" + id.Issuer + ")" }

// Verified is what a verified signature proves.
type Verified struct {
	Identity    Identity
	Time        time.Time // when Rekor integrated the entry
	LogIndex    int64
	Certificate *x509.Certificate
}

// Verify checks an armored gitsign signature over data in namespace
// against the pinned trust, offline, and returns who made it and when.
// The caller decides whether that identity may sign.
func Verify(armored, data []byte, namespace string, trust *Trust) (*Verified, error) {
	der, err := Unarmor(armored)
	if err != nil {
		return nil, err
	}
	return VerifyDER(der, data, namespace, trust)
}

// VerifyDER is [Verify] for the DER of a signature (as a DSSE envelope or
// a TUF signature carries it).
func VerifyDER(der, data []byte, namespace string, trust *Trust) (*Verified, error) {
	if namespace == "" {
		return nil, fmt.Errorf("%w: empty namespace", ErrBadSignature)
	}
	if trust == nil {
		return nil, fmt.Errorf("%w: no pinned Sigstore instance", ErrBadSignature)
	}
	m, err := parseMessage(der)
	if err != nil {
		return nil, err
	}
	if d := sha256.Sum256(Content(namespace, data)); !bytes.Equal(d[:], m.digest) {
		return nil, fmt.Errorf("%w: signature is not over this data in namespace %q", ErrBadSignature, namespace)
	}
	key, ok := m.leaf.PublicKey.(*ecdsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: certificate key is %T, want ECDSA", ErrBadSignature, m.leaf.PublicKey)
	}
	if d := sha256.Sum256(m.signedAttrs); !ecdsa.VerifyASN1(key, d[:], m.signature) {
		return nil, fmt.Errorf("%w: signature does not verify with its certificate's key", ErrBadSignature)
	}
	entry, err := trust.verifyEntry(m)
	if err != nil {
		return nil, err
	}
	if err := trust.verifyChain(m, entry.integrated); err != nil {
		return nil, err
	}
	id, err := CertIdentity(m.leaf)
	if err != nil {
		return nil, err
	}
	return &Verified{Identity: id, Time: entry.integrated, LogIndex: entry.logIndex, Certificate: m.leaf}, nil
}

// verifyChain checks that the leaf chains to a pinned root for code
// signing at the time Rekor vouches for.
func (t *Trust) verifyChain(m *message, at time.Time) error {
	inter := t.intermediates.Clone()
	for _, c := range m.extra {
		inter.AddCert(c)
	}
	_, err := m.leaf.Verify(x509.VerifyOptions{
		Roots:         t.roots,
		Intermediates: inter,
		CurrentTime:   at,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
	})
	if err != nil {
		return fmt.Errorf("%w: certificate at %s (Rekor's time of the signature): %v", ErrBadSignature, at.Format(time.RFC3339), err)
	}
	return nil
}

// CertIdentity reads the OIDC issuer and subject Fulcio certified: the
// issuer extension(s) and the only email or URI subject alternative name.
func CertIdentity(c *x509.Certificate) (Identity, error) {
	var v1, v2 string
	var have1, have2 bool
	for _, e := range c.Extensions {
		switch {
		case e.Id.Equal(oidFulcioIssuerV2):
			if have2 {
				return Identity{}, fmt.Errorf("%w: two Fulcio issuer extensions", ErrBadSignature)
			}
			if err := unmarshalUTF8(e.Value, &v2); err != nil {
				return Identity{}, err
			}
			have2 = true
		case e.Id.Equal(oidFulcioIssuerV1):
			if have1 {
				return Identity{}, fmt.Errorf("%w: two Fulcio issuer extensions", ErrBadSignature)
			}
			v1, have1 = string(e.Value), true
		}
	}
	issuer := v2
	switch {
	case !have1 && !have2:
		return Identity{}, fmt.Errorf("%w: certificate names no OIDC issuer (not a Fulcio certificate)", ErrBadSignature)
	case have1 && have2 && v1 != v2:
		return Identity{}, fmt.Errorf("%w: certificate names two OIDC issuers %.128q and %.128q", ErrBadSignature, v1, v2)
	case !have2:
		issuer = v1
	}
	var subjects []string
	subjects = append(subjects, c.EmailAddresses...)
	for _, u := range c.URIs {
		subjects = append(subjects, u.String())
	}
	if len(subjects) != 1 || issuer == "" || subjects[0] == "" {
		return Identity{}, fmt.Errorf("%w: certificate must name exactly one email or URI subject and an issuer", ErrBadSignature)
	}
	return Identity{Issuer: issuer, Subject: subjects[0]}, nil
}

func unmarshalUTF8(b []byte, s *string) error {
	rest, err := asn1.UnmarshalWithParams(b, s, "utf8")
	if err != nil || len(rest) != 0 {
		return fmt.Errorf("%w: Fulcio issuer extension is not a UTF8String", ErrBadSignature)
	}
	return nil
}

// VerifyAs is [Verify] for a signature that must be want's.
func VerifyAs(armored, data []byte, namespace string, trust *Trust, want Identity) (*Verified, error) {
	der, err := Unarmor(armored)
	if err != nil {
		return nil, err
	}
	return VerifyDERAs(der, data, namespace, trust, want)
}

// VerifyDERAs is [VerifyDER] for a signature that must be want's.
func VerifyDERAs(der, data []byte, namespace string, trust *Trust, want Identity) (*Verified, error) {
	v, err := VerifyDER(der, data, namespace, trust)
	if err != nil {
		return nil, err
	}
	if v.Identity != want {
		return nil, fmt.Errorf("%w: signed by %s, want %s", ErrBadSignature, v.Identity, want)
	}
	return v, nil
}

// PeekIdentity returns the identity the signature's certificate names,
// without verifying anything: use it only to find whom to verify against.
func PeekIdentity(der []byte) (Identity, error) {
	m, err := parseMessage(der)
	if err != nil {
		return Identity{}, err
	}
	return CertIdentity(m.leaf)
}

// IsDER tells whether a raw signature is (to be parsed as) a CMS
// signature: a DER SEQUENCE, which neither an SSHSIG blob ("SSHSIG") nor
// an OpenPGP packet (high bit set) starts with.
func IsDER(sig []byte) bool { return len(sig) > 0 && sig[0] == 0x30 }
