package keylesstest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/keyless"
	commonpb "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	rekorpb "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"google.golang.org/protobuf/proto"
)

var (
	oidSignedData    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2}
	oidData          = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidContentType   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 3}
	oidMessageDigest = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 4}
	oidSigningTime   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 5}
	oidSHA256        = pkix.AlgorithmIdentifier{Algorithm: asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 1}}
	oidECDSASHA256   = pkix.AlgorithmIdentifier{Algorithm: asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}}
)

// Signature is a signature before it is encoded, for tests to alter.
type Signature struct {
	Leaf        *x509.Certificate
	Extra       []*x509.Certificate // more certificates to embed
	SignedAttrs []byte              // DER SET as signed
	Sig         []byte
	Entry       *rekorpb.TransparencyLogEntry // nil: no Rekor attribute
}

// Request is one signing: Cert says who, Time is when the log integrates
// it (zero: now).
type Request struct {
	Cert
	Namespace string
	Data      []byte
	Time      time.Time
}

// Sign signs like gitsign in offline Rekor mode and returns the signature
// unencoded; Armor encodes it.
func (s *Sigstore) Sign(t testing.TB, r Request) *Signature {
	t.Helper()
	sig, err := s.sign(r)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

func (s *Sigstore) sign(r Request) (*Signature, error) {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leaf, err := s.Certify(r.Cert, &key.PublicKey, r.Time)
	if err != nil {
		return nil, err
	}
	attrs, err := signedAttrs(keyless.Content(r.Namespace, r.Data), r.Time)
	if err != nil {
		return nil, err
	}
	d := sha256.Sum256(attrs)
	sig, err := ecdsa.SignASN1(rand.Reader, key, d[:])
	if err != nil {
		return nil, err
	}
	out := &Signature{Leaf: leaf, SignedAttrs: attrs, Sig: sig}
	out.Entry, err = s.integrate(keyless.RekordBody(attrs, sig, leaf.Raw), r.Time)
	return out, err
}

// integrate appends body to the log and returns the entry gitsign embeds
// (without the body, which the verifier rebuilds).
func (s *Sigstore) integrate(body []byte, at time.Time) (*rekorpb.TransparencyLogEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tree.AppendData(body)
	size := s.tree.Size()
	index := size - 1
	hashes, err := s.tree.InclusionProof(index, size)
	if err != nil {
		return nil, err
	}
	root := s.tree.Hash()
	cp, err := s.checkpoint(size, root, at)
	if err != nil {
		return nil, err
	}
	d := sha256.Sum256(keyless.SETPayload(body, at.Unix(), s.logID, int64(index)))
	set, err := ecdsa.SignASN1(rand.Reader, s.rekorKey, d[:])
	if err != nil {
		return nil, err
	}
	return &rekorpb.TransparencyLogEntry{
		LogIndex:         int64(index),
		LogId:            &commonpb.LogId{KeyId: s.logID},
		KindVersion:      &rekorpb.KindVersion{Kind: "hashedrekord", Version: "0.0.1"},
		IntegratedTime:   at.Unix(),
		InclusionPromise: &rekorpb.InclusionPromise{SignedEntryTimestamp: set},
		InclusionProof: &rekorpb.InclusionProof{
			LogIndex: int64(index), RootHash: root, TreeSize: int64(size), Hashes: hashes,
			Checkpoint: &rekorpb.Checkpoint{Envelope: cp},
		},
	}, nil
}

// attribute encodes one Attribute with one value.
func attribute(oid asn1.ObjectIdentifier, value any) ([]byte, error) {
	v, err := asn1.Marshal(value)
	if err != nil {
		return nil, err
	}
	return asn1.Marshal(struct {
		Type   asn1.ObjectIdentifier
		Values asn1.RawValue
	}{oid, asn1.RawValue{Tag: asn1.TagSet, IsCompound: true, Bytes: v}})
}

// set encodes a DER SET OF (elements sorted) with the given class and tag.
func set(class, tag int, elems [][]byte) ([]byte, error) {
	slices.SortFunc(elems, bytes.Compare)
	return asn1.Marshal(asn1.RawValue{Class: class, Tag: tag, IsCompound: true, Bytes: bytes.Join(elems, nil)})
}

func signedAttrs(content []byte, at time.Time) ([]byte, error) {
	digest := sha256.Sum256(content)
	var elems [][]byte
	for _, a := range []struct {
		oid asn1.ObjectIdentifier
		v   any
	}{{oidContentType, oidData}, {oidSigningTime, at.UTC()}, {oidMessageDigest, digest[:]}} {
		b, err := attribute(a.oid, a.v)
		if err != nil {
			return nil, err
		}
		elems = append(elems, b)
	}
	return set(asn1.ClassUniversal, asn1.TagSet, elems)
}

// Armor encodes the signature as gitsign writes it in a gpgsig header.
func (s *Signature) Armor(t testing.TB) []byte {
	t.Helper()
	der, err := s.DER()
	if err != nil {
		t.Fatal(err)
	}
	return keyless.Armor(der)
}

// DER encodes the CMS ContentInfo.
func (s *Signature) DER() ([]byte, error) {
	var unsigned asn1.RawValue
	if s.Entry != nil {
		entry, err := proto.Marshal(s.Entry)
		if err != nil {
			return nil, err
		}
		a, err := attribute(keyless.OIDRekorEntry, entry)
		if err != nil {
			return nil, err
		}
		b, err := set(asn1.ClassContextSpecific, 1, [][]byte{a})
		if err != nil {
			return nil, err
		}
		unsigned.FullBytes = b
	}
	signed := append([]byte{0xa0}, s.SignedAttrs[1:]...) // [0] IMPLICIT
	si, err := asn1.Marshal(struct {
		Version int
		SID     struct {
			Issuer asn1.RawValue
			Serial *big.Int
		}
		DigestAlgorithm    pkix.AlgorithmIdentifier
		SignedAttrs        asn1.RawValue
		SignatureAlgorithm pkix.AlgorithmIdentifier
		Signature          []byte
		UnsignedAttrs      asn1.RawValue `asn1:"optional"`
	}{1, struct {
		Issuer asn1.RawValue
		Serial *big.Int
	}{asn1.RawValue{FullBytes: s.Leaf.RawIssuer}, s.Leaf.SerialNumber}, oidSHA256, asn1.RawValue{FullBytes: signed}, oidECDSASHA256, s.Sig, unsigned})
	if err != nil {
		return nil, fmt.Errorf("signer info: %w", err)
	}
	certs := [][]byte{s.Leaf.Raw}
	for _, c := range s.Extra {
		certs = append(certs, c.Raw)
	}
	return encodeSignedData(certs, si)
}

func encodeSignedData(certs [][]byte, signerInfo []byte) ([]byte, error) {
	certSet, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: bytes.Join(certs, nil)})
	if err != nil {
		return nil, err
	}
	sd, err := asn1.Marshal(struct {
		Version          int
		DigestAlgorithms []pkix.AlgorithmIdentifier `asn1:"set"`
		EncapContentInfo struct{ Type asn1.ObjectIdentifier }
		Certificates     asn1.RawValue
		SignerInfos      []asn1.RawValue `asn1:"set"`
	}{1, []pkix.AlgorithmIdentifier{oidSHA256}, struct{ Type asn1.ObjectIdentifier }{oidData},
		asn1.RawValue{FullBytes: certSet}, []asn1.RawValue{{FullBytes: signerInfo}}})
	if err != nil {
		return nil, fmt.Errorf("signed data: %w", err)
	}
	return asn1.Marshal(struct {
		Type    asn1.ObjectIdentifier
		Content asn1.RawValue
	}{oidSignedData, asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: sd}})
}

// Resign re-signs the Rekor parts after a test altered them, so that only
// the alteration it means is wrong: the SET over the entry as it now is.
func (s *Sigstore) Resign(t testing.TB, sig *Signature) {
	t.Helper()
	e := sig.Entry
	body := keyless.RekordBody(sig.SignedAttrs, sig.Sig, sig.Leaf.Raw)
	d := sha256.Sum256(keyless.SETPayload(body, e.IntegratedTime, e.GetLogId().GetKeyId(), e.LogIndex))
	set, err := ecdsa.SignASN1(rand.Reader, s.rekorKey, d[:])
	if err != nil {
		t.Fatal(err)
	}
	e.InclusionPromise = &rekorpb.InclusionPromise{SignedEntryTimestamp: set}
}
