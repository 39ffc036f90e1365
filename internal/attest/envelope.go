package attest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/sign"
)

// Envelope is a decoded DSSE envelope with exactly one signature. Sig is the
// raw SSHSIG blob (namespace sign.NamespaceAttestation) over
// dsse.PAE(PayloadType, Payload); KeyID is the SHA256 fingerprint of the key
// embedded in Sig.
type Envelope struct {
	PayloadType string
	Payload     []byte
	KeyID       string
	Sig         []byte
}

type wireEnvelope struct {
	PayloadType string          `json:"payloadType"`
	Payload     string          `json:"payload"`
	Signatures  []wireSignature `json:"signatures"`
}

type wireSignature struct {
	KeyID string `json:"keyid"`
	Sig   string `json:"sig"`
}

const keyIDPrefix = "SHA256:"

// decodeKeyID decodes a canonical "SHA256:<43 chars unpadded base64>" key id
// to the 32-byte digest.
func decodeKeyID(keyID string) ([]byte, error) {
	b64, ok := strings.CutPrefix(keyID, keyIDPrefix)
	if !ok {
		return nil, malformed("keyid %q is not a SHA256 fingerprint", keyID)
	}
	sum, err := base64.RawStdEncoding.Strict().DecodeString(b64)
	if err != nil || len(sum) != sha256.Size || base64.RawStdEncoding.EncodeToString(sum) != b64 {
		return nil, malformed("keyid %q is not a canonical SHA256 fingerprint", keyID)
	}
	return sum, nil
}

// decodeB64 decodes canonical padded standard base64 (the only spelling
// accepted: no URL alphabet, no line breaks, no non-zero padding bits).
func decodeB64(s, what string) ([]byte, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	// Strict decoding refuses padding bits that are not zero and missing
	// padding, but skips \r and \n: with those refused by the length, s
	// is the one encoding of b (checked without encoding b again: this
	// runs twice for every approval read).
	if err != nil || base64.StdEncoding.EncodedLen(len(b)) != len(s) {
		return nil, malformed("%s is not canonical standard base64", what)
	}
	return b, nil
}

// sshsigKey extracts the public key (wire format) and namespace from a raw
// SSHSIG blob, checking only its framing; the signature itself is checked by
// sign.VerifyRaw.
func sshsigKey(blob []byte) (pub []byte, namespace string, err error) {
	const magic = "SSHSIG"
	if !bytes.HasPrefix(blob, []byte(magic)) || len(blob) < len(magic)+4 {
		return nil, "", malformed("signature is not an SSHSIG blob")
	}
	rest := blob[len(magic):]
	if binary.BigEndian.Uint32(rest) != 1 {
		return nil, "", malformed("unsupported SSHSIG version")
	}
	rest = rest[4:]
	var fields [5][]byte // publickey, namespace, reserved, hash_algorithm, signature
	for i := range fields {
		if len(rest) < 4 {
			return nil, "", malformed("truncated SSHSIG blob")
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(n) > uint64(len(rest)) {
			return nil, "", malformed("truncated SSHSIG blob")
		}
		fields[i], rest = rest[:n], rest[n:]
	}
	if len(rest) != 0 {
		return nil, "", malformed("trailing data after SSHSIG blob")
	}
	return fields[0], string(fields[1]), nil
}

// validate checks everything about e that does not need a trusted key.
func (e *Envelope) validate() error {
	if e.PayloadType != PayloadType {
		return malformed("payloadType %q is not %q", e.PayloadType, PayloadType)
	}
	if len(e.Payload) == 0 {
		return malformed("empty payload")
	}
	if len(e.Payload) > MaxStatementSize {
		return malformed("payload is %d bytes, limit %d", len(e.Payload), MaxStatementSize)
	}
	want, err := decodeKeyID(e.KeyID)
	if err != nil {
		return err
	}
	if len(e.Sig) > sign.MaxSignatureSize {
		return malformed("signature is %d bytes, limit %d", len(e.Sig), sign.MaxSignatureSize)
	}
	if sign.IsOpenPGPSignature(e.Sig) {
		return e.validateOpenPGP()
	}
	if sign.IsKeylessSignature(e.Sig) {
		return e.validateKeyless()
	}
	pub, ns, err := sshsigKey(e.Sig)
	if err != nil {
		return err
	}
	if ns != sign.NamespaceAttestation {
		return malformed("signature namespace %q is not %q", ns, sign.NamespaceAttestation)
	}
	if got := sha256.Sum256(pub); !bytes.Equal(got[:], want) {
		return malformed("keyid %s does not match the key in the signature", e.KeyID)
	}
	return nil
}

// Marshal returns the canonical envelope JSON of e.
func (e *Envelope) Marshal() ([]byte, error) {
	if err := e.validate(); err != nil {
		return nil, err
	}
	out, err := json.Marshal(wireEnvelope{
		PayloadType: e.PayloadType,
		Payload:     base64.StdEncoding.EncodeToString(e.Payload),
		Signatures:  []wireSignature{{KeyID: e.KeyID, Sig: base64.StdEncoding.EncodeToString(e.Sig)}},
	})
	if err != nil {
		return nil, err
	}
	if len(out) > MaxEnvelopeSize {
		return nil, malformed("envelope is %d bytes, limit %d", len(out), MaxEnvelopeSize)
	}
	return out, nil
}

// Sign wraps statement in a DSSE envelope signed by s and returns the
// envelope JSON. The statement must be an approval, test-run, forge
// review or verification summary statement its parser accepts.
func Sign(statement []byte, s ssh.Signer) ([]byte, error) {
	if _, err := ParseApproval(statement); err != nil && !isSummary(statement) && !isForgeReview(statement) {
		if _, err2 := ParseTestRun(statement); err2 != nil {
			if bytes.Contains(statement, []byte(PredicateTestRun)) {
				err = err2
			}
			return nil, fmt.Errorf("attest: refusing to sign: %w", err)
		}
	}
	if s == nil {
		return nil, errors.New("attest: sign: no signer")
	}
	payload := bytes.Clone(statement)
	sig, err := sign.SignRaw(s, dsse.PAE(PayloadType, payload), sign.NamespaceAttestation)
	if err != nil {
		return nil, fmt.Errorf("attest: sign: %w", err)
	}
	e := &Envelope{PayloadType: PayloadType, Payload: payload, KeyID: sign.Fingerprint(s.PublicKey()), Sig: sig}
	out, err := e.Marshal()
	if err != nil {
		return nil, fmt.Errorf("attest: sign: %w", err)
	}
	return out, nil
}

// ParseEnvelope strictly decodes envelope JSON: at most MaxEnvelopeSize
// bytes, exact field names, no unknown fields or duplicate keys, canonical
// padded standard base64, the fixed payloadType, exactly one signature, a
// canonical SHA256 keyid equal to the fingerprint of the key embedded in the
// SSHSIG blob, and the attestation namespace. It does not verify the
// signature. Errors wrap ErrMalformed.
func ParseEnvelope(data []byte) (*Envelope, error) {
	if len(data) > MaxEnvelopeSize {
		return nil, malformed("envelope is %d bytes, limit %d", len(data), MaxEnvelopeSize)
	}
	v, err := decodeStrict(data)
	if err != nil {
		return nil, malformed("envelope: %v", err)
	}
	top, err := asObject(v, "envelope")
	if err == nil {
		err = checkKeys(top, "envelope", []string{"payloadType", "payload", "signatures"})
	}
	if err != nil {
		return nil, malformed("%v", err)
	}
	e := &Envelope{}
	if e.PayloadType, err = asString(top["payloadType"], "payloadType"); err != nil {
		return nil, malformed("%v", err)
	}
	if e.PayloadType != PayloadType {
		return nil, malformed("payloadType %q is not %q", e.PayloadType, PayloadType)
	}
	p, err := asString(top["payload"], "payload")
	if err != nil {
		return nil, malformed("%v", err)
	}
	if e.Payload, err = decodeB64(p, "payload"); err != nil {
		return nil, err
	}
	sigs, ok := top["signatures"].([]any)
	if !ok || len(sigs) != 1 {
		return nil, malformed("envelope must have exactly one signature")
	}
	so, err := asObject(sigs[0], "signature")
	if err == nil {
		err = checkKeys(so, "signature", []string{"keyid", "sig"})
	}
	if err == nil {
		e.KeyID, err = asString(so["keyid"], "keyid")
	}
	var s string
	if err == nil {
		s, err = asString(so["sig"], "sig")
	}
	if err != nil {
		return nil, malformed("%v", err)
	}
	if e.Sig, err = decodeB64(s, "sig"); err != nil {
		return nil, err
	}
	if err := e.validate(); err != nil {
		return nil, err
	}
	return e, nil
}

// Verify checks the signature over dsse.PAE(PayloadType, Payload) in the
// attestation namespace. lookup is called with e.KeyID only and decides
// whether that key is trusted; the trusted key must be exactly the key
// embedded in the signature. It returns the signer's key. Errors from
// sign.VerifyRaw (sign.ErrUnknownKey, sign.ErrBadSignature, ...) are
// returned wrapped; structural problems wrap ErrMalformed. Verify does not
// look at the payload: parse it with ParseApproval or ParseTestRun.
func (e *Envelope) Verify(lookup func(fp string) (ssh.PublicKey, bool)) (ssh.PublicKey, error) {
	if lookup == nil {
		return nil, errors.New("attest: verify: no key lookup")
	}
	if err := e.validate(); err != nil {
		return nil, err
	}
	pub, err := sign.VerifyRaw(e.Sig, dsse.PAE(e.PayloadType, e.Payload), sign.NamespaceAttestation,
		func(fp string) (ssh.PublicKey, bool) {
			if fp != e.KeyID {
				return nil, false
			}
			return lookup(fp)
		})
	if err != nil {
		return nil, fmt.Errorf("attest: verify envelope signed by %s: %w", e.KeyID, err)
	}
	if sign.Fingerprint(pub) != e.KeyID {
		return nil, malformed("keyid %s does not match the verified key %s", e.KeyID, sign.Fingerprint(pub))
	}
	return pub, nil
}
