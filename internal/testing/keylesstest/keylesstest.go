// Package keylesstest is a Sigstore of its own for tests: a Fulcio CA
// (root and intermediate) issuing certificates with Fulcio's identity
// extensions, and a Rekor log with its own key that integrates entries
// into a real RFC 6962 tree and answers with signed entry timestamps,
// inclusion proofs and signed checkpoints. It signs exactly as gitsign
// does in offline Rekor mode (a detached CMS signature with the log entry
// in an unsigned attribute), so that internal/keyless verifies its
// signatures like real ones. It is for tests only: private keys are
// written unencrypted. It has no global state.
package keylesstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/keyless"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"
)

// Sigstore is a test Fulcio and Rekor.
type Sigstore struct {
	Name string // the log's origin in checkpoints

	root, inter       *x509.Certificate
	rootKey, interKey *ecdsa.PrivateKey
	rekorKey          *ecdsa.PrivateKey
	logID             []byte

	mu   sync.Mutex
	tree *testonly.Tree
}

// New makes a Sigstore whose log already holds a few entries (so that
// inclusion proofs are not trivial).
func New(t testing.TB) *Sigstore {
	t.Helper()
	s, err := newSigstore()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newSigstore() (*Sigstore, error) {
	s := &Sigstore{Name: "keylesstest.rekor - 1", tree: testonly.New(rfc6962.DefaultHasher)}
	var err error
	if s.rootKey, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader); err != nil {
		return nil, err
	}
	if s.interKey, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader); err != nil {
		return nil, err
	}
	if s.rekorKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		return nil, err
	}
	now := time.Now()
	ca := func(cn string) *x509.Certificate {
		return &x509.Certificate{
			SerialNumber: randSerial(), Subject: pkix.Name{Organization: []string{"keylesstest"}, CommonName: cn},
			NotBefore: now.AddDate(-5, 0, 0), NotAfter: now.AddDate(5, 0, 0),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
		}
	}
	if s.root, err = issue(ca("keylesstest-root"), nil, &s.rootKey.PublicKey, s.rootKey); err != nil {
		return nil, err
	}
	if s.inter, err = issue(ca("keylesstest-intermediate"), s.root, &s.interKey.PublicKey, s.rootKey); err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(&s.rekorKey.PublicKey)
	if err != nil {
		return nil, err
	}
	id := sha256.Sum256(der)
	s.logID = id[:]
	for i := range 5 {
		s.tree.AppendData(fmt.Appendf(nil, "someone else's entry %d", i))
	}
	return s, nil
}

func randSerial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

// issue signs template with key (self-signed when parent is nil).
func issue(template, parent *x509.Certificate, pub *ecdsa.PublicKey, key *ecdsa.PrivateKey) (*x509.Certificate, error) {
	if parent == nil {
		parent = template
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, pub, key)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

// FulcioPEM is the Fulcio root and intermediate to pin.
func (s *Sigstore) FulcioPEM() []byte {
	return append(pemCert(s.root), pemCert(s.inter)...)
}

// RekorPEM is the Rekor public key to pin.
func (s *Sigstore) RekorPEM() []byte {
	der, _ := x509.MarshalPKIXPublicKey(&s.rekorKey.PublicKey)
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func pemCert(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// Trust is this Sigstore pinned.
func (s *Sigstore) Trust(t testing.TB) *keyless.Trust {
	t.Helper()
	tr, err := keyless.NewTrust(s.FulcioPEM(), s.RekorPEM())
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Cert says what Fulcio certifies: zero times mean a ten-minute
// certificate around the signing time; IssuerV1Only writes only the older
// issuer extension; Fulcio, when set, is another Sigstore's CA.
type Cert struct {
	keyless.Identity
	NotBefore, NotAfter time.Time
	IssuerV1Only        bool
	Fulcio              *Sigstore
}

// Certify issues a Fulcio certificate for key.
func (s *Sigstore) Certify(c Cert, key *ecdsa.PublicKey, at time.Time) (*x509.Certificate, error) {
	ca := s
	if c.Fulcio != nil {
		ca = c.Fulcio
	}
	if c.NotBefore.IsZero() {
		c.NotBefore, c.NotAfter = at.Add(-time.Minute), at.Add(9*time.Minute)
	}
	tmpl := &x509.Certificate{
		SerialNumber: randSerial(), NotBefore: c.NotBefore, NotAfter: c.NotAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
	}
	if u, err := url.Parse(c.Subject); err == nil && u.Scheme != "" && u.Scheme != "mailto" {
		tmpl.URIs = []*url.URL{u}
	} else {
		tmpl.EmailAddresses = []string{c.Subject}
	}
	tmpl.ExtraExtensions = []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 1}, Value: []byte(c.Issuer)}}
	if !c.IssuerV1Only {
		v, err := asn1.MarshalWithParams(c.Issuer, "utf8")
		if err != nil {
			return nil, err
		}
		tmpl.ExtraExtensions = append(tmpl.ExtraExtensions, pkix.Extension{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 8}, Value: v})
	}
	return issue(tmpl, ca.inter, key, ca.interKey)
}

// checkpoint signs a note of the tree at its current size.
func (s *Sigstore) checkpoint(size uint64, root []byte, at time.Time) (string, error) {
	text := fmt.Sprintf("%s\n%d\n%s\nTimestamp: %d\n", s.Name, size, base64.StdEncoding.EncodeToString(root), at.UnixNano())
	d := sha256.Sum256([]byte(text))
	sig, err := ecdsa.SignASN1(rand.Reader, s.rekorKey, d[:])
	if err != nil {
		return "", err
	}
	return text + "\n\u2014 keylesstest.rekor " + base64.StdEncoding.EncodeToString(append(s.logID[:4:4], sig...)) + "\n", nil
}
