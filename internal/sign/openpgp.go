package sign

import (
	"bytes"
	"crypto"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"golang.org/x/crypto/ssh"
)

// OpenPGP keys (what gpg holds) are person keys too. git-secure verifies
// their signatures with github.com/ProtonMail/go-crypto; it never runs gpg
// here (signing with gpg lives in internal/gpgsign).
//
// An OpenPGP signature made for git-secure is a detached binary-document
// signature whose hashed area carries two notations: NotationNamespace,
// whose value is the namespace (the role SSHSIG's namespace plays: an
// approval's signature is never an entry's), and NotationKey, the
// fingerprint of the primary key, by which the policy finds the key. Both
// are covered by the signature.

// KeyTypeOpenPGP is the type name of an OpenPGP key (OpenPGPKey.Type).
const KeyTypeOpenPGP = "openpgp"

// Notations of a git-secure OpenPGP signature.
const (
	NotationNamespace = "namespace@git-secure.dev"
	NotationKey       = "key@git-secure.dev"
)

// Limits of the OpenPGP parsers.
const (
	// MaxOpenPGPKeySize bounds an OpenPGP public key, armored or binary.
	MaxOpenPGPKeySize = 64 << 10
	// maxOpenPGPSubkeys bounds the subkeys of one key.
	maxOpenPGPSubkeys = 32
)

const (
	pgpKeyArmor = "PGP PUBLIC KEY BLOCK"
	pgpSigArmor = "PGP SIGNATURE"
)

// OpenPGPKey is an OpenPGP public key (a primary key with its user IDs and
// subkeys). It is an ssh.PublicKey so that it goes wherever person keys go:
// its Marshal is the SSH-style encoding of the type and the primary key's
// fingerprint (string "openpgp", string fingerprint), so its git-secure
// fingerprint (Fingerprint: "SHA256:...") names the primary key whatever
// user IDs or subkeys are added later. Its Verify refuses: OpenPGP
// signatures are checked with VerifyRaw or VerifySSHSig.
type OpenPGPKey struct {
	// UserID is the primary user ID ("" if there is none).
	UserID string

	entity *openpgp.Entity
	raw    []byte // canonical binary encoding (Bytes)
}

// Type returns KeyTypeOpenPGP.
func (k *OpenPGPKey) Type() string { return KeyTypeOpenPGP }

// Marshal returns string "openpgp" and string primary fingerprint, SSH
// wire style: the identity that Fingerprint hashes.
func (k *OpenPGPKey) Marshal() []byte {
	return marshalOpenPGPID(k.entity.PrimaryKey.Fingerprint)
}

func marshalOpenPGPID(fpr []byte) []byte {
	return ssh.Marshal(struct {
		Type        string
		Fingerprint []byte
	}{KeyTypeOpenPGP, fpr})
}

// Verify always fails: an OpenPGP signature is not an SSH signature.
func (k *OpenPGPKey) Verify([]byte, *ssh.Signature) error {
	return fmt.Errorf("%w: OpenPGP key %s does not make SSH signatures", ErrBadSignature, k.OpenPGPFingerprint())
}

// OpenPGPFingerprint returns the primary key's OpenPGP fingerprint in
// upper-case hex, as gpg --list-keys prints it.
func (k *OpenPGPKey) OpenPGPFingerprint() string {
	return strings.ToUpper(hex.EncodeToString(k.entity.PrimaryKey.Fingerprint))
}

// Bytes returns the key's canonical binary encoding (the transferable
// public key as go-crypto re-serializes it), what the policy stores.
func (k *OpenPGPKey) Bytes() []byte { return bytes.Clone(k.raw) }

// isArmoredOpenPGPKey reports whether b starts (after whitespace) with an
// armored OpenPGP public key.
func isArmoredOpenPGPKey(b []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("-----BEGIN "+pgpKeyArmor+"-----"))
}

// ParseOpenPGPKey parses one ASCII-armored OpenPGP public key, as
// gpg --export --armor FINGERPRINT writes it: at most MaxOpenPGPKeySize
// bytes, exactly one armor block and nothing but whitespace around it, one
// primary key, no secret key material. The key must be acceptable
// (checkOpenPGPEntity). Errors wrap ErrUnsupportedKey when the key is of a
// refused kind and say what to do.
func ParseOpenPGPKey(armored []byte) (*OpenPGPKey, error) {
	if len(armored) > MaxOpenPGPKeySize {
		return nil, fmt.Errorf("sign: openpgp key: %d bytes exceeds %d", len(armored), MaxOpenPGPKeySize)
	}
	body, err := unarmorPGP(armored, pgpKeyArmor)
	if err != nil {
		return nil, fmt.Errorf("sign: openpgp key: %w", err)
	}
	return parseOpenPGPBinary(body, false)
}

// ParseOpenPGPKeyBinary parses the canonical binary encoding Bytes
// returns; anything that does not re-encode to exactly the input fails.
func ParseOpenPGPKeyBinary(b []byte) (*OpenPGPKey, error) {
	return parseOpenPGPBinary(b, true)
}

func parseOpenPGPBinary(b []byte, canonical bool) (*OpenPGPKey, error) {
	if len(b) > MaxOpenPGPKeySize {
		return nil, fmt.Errorf("sign: openpgp key: %d bytes exceeds %d", len(b), MaxOpenPGPKeySize)
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		return nil, errors.New("sign: openpgp key: not an OpenPGP packet")
	}
	list, err := openpgp.ReadKeyRing(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("sign: openpgp key: %v", err)
	}
	if len(list) != 1 {
		return nil, fmt.Errorf("sign: openpgp key: want exactly one key, got %d (export one: gpg --export --armor FINGERPRINT)", len(list))
	}
	e := list[0]
	if e.PrivateKey != nil {
		return nil, errors.New("sign: openpgp key: holds secret key material: give the public key (gpg --export --armor FINGERPRINT)")
	}
	for _, s := range e.Subkeys {
		if s.PrivateKey != nil {
			return nil, errors.New("sign: openpgp key: holds secret key material: give the public key (gpg --export --armor FINGERPRINT)")
		}
	}
	if err := checkOpenPGPEntity(e); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := serializeCanonical(&out, e); err != nil {
		return nil, fmt.Errorf("sign: openpgp key: encode: %v", err)
	}
	if canonical && !bytes.Equal(out.Bytes(), b) {
		return nil, errors.New("sign: openpgp key: non-canonical encoding")
	}
	k := &OpenPGPKey{entity: e, raw: out.Bytes()}
	if id := e.PrimaryIdentity(); id != nil {
		k.UserID = id.Name
	}
	return k, nil
}

// checkOpenPGPEntity accepts a key whose primary key and signing subkeys
// use an accepted algorithm (checkOpenPGPAlgorithm), with at most
// maxOpenPGPSubkeys subkeys and a valid self-signature, and which is not
// revoked. Subkeys that cannot sign are not looked at.
func checkOpenPGPEntity(e *openpgp.Entity) error {
	fpr := strings.ToUpper(hex.EncodeToString(e.PrimaryKey.Fingerprint))
	if len(e.Subkeys) > maxOpenPGPSubkeys {
		return fmt.Errorf("sign: openpgp key %s: %d subkeys, at most %d", fpr, len(e.Subkeys), maxOpenPGPSubkeys)
	}
	if e.PrimaryKey.Version != 4 && e.PrimaryKey.Version != 6 {
		return &UnsupportedKeyError{Reason: fmt.Sprintf("openpgp key %s: version %d keys are not accepted (only v4 and v6)", fpr, e.PrimaryKey.Version)}
	}
	if self, _ := e.PrimarySelfSignature(); self == nil {
		return fmt.Errorf("sign: openpgp key %s: no valid self-signature", fpr)
	}
	if len(e.Revocations) > 0 {
		return fmt.Errorf("sign: openpgp key %s is revoked: give a key that is in use", fpr)
	}
	if err := checkOpenPGPAlgorithm(e.PrimaryKey); err != nil {
		return fmt.Errorf("sign: openpgp key %s: primary key: %w", fpr, err)
	}
	self, _ := e.PrimarySelfSignature()
	canSign := self.FlagsValid && self.FlagSign
	for _, s := range e.Subkeys {
		if s.Sig == nil || !s.Sig.FlagsValid || !s.Sig.FlagSign {
			continue
		}
		if err := checkOpenPGPAlgorithm(s.PublicKey); err != nil {
			return fmt.Errorf("sign: openpgp key %s: signing subkey %X: %w", fpr, s.PublicKey.Fingerprint, err)
		}
		canSign = true
	}
	if !canSign {
		return fmt.Errorf("sign: openpgp key %s has no key that may sign: add a signing subkey (gpg --quick-add-key %s ed25519 sign)", fpr, fpr)
	}
	return nil
}

// checkOpenPGPAlgorithm accepts EdDSA over Curve25519 (v4 and v6), ECDSA
// over NIST P-256/P-384/P-521 and RSA of MinRSABits to MaxRSABits; DSA,
// ElGamal, Ed448, Brainpool, secp256k1 and post-quantum keys are refused.
func checkOpenPGPAlgorithm(pk *packet.PublicKey) error {
	refuse := func(what string) error {
		return &UnsupportedKeyError{Reason: fmt.Sprintf("%s keys are not accepted: use ed25519 (gpg --quick-generate-key NAME ed25519), ECDSA on NIST P-256/384/521, or RSA of at least %d bits", what, MinRSABits)}
	}
	switch pk.PubKeyAlgo {
	case packet.PubKeyAlgoEd25519:
		return nil
	case packet.PubKeyAlgoEdDSA, packet.PubKeyAlgoECDSA:
		c, err := pk.Curve()
		if err != nil {
			return refuse("unknown-curve")
		}
		switch {
		case pk.PubKeyAlgo == packet.PubKeyAlgoEdDSA && c == packet.Curve25519:
			return nil
		case pk.PubKeyAlgo == packet.PubKeyAlgoECDSA && (c == packet.CurveNistP256 || c == packet.CurveNistP384 || c == packet.CurveNistP521):
			return nil
		}
		return refuse(fmt.Sprintf("%s on %s", algoName(pk.PubKeyAlgo), c))
	case packet.PubKeyAlgoRSA, packet.PubKeyAlgoRSASignOnly:
		n, err := pk.BitLength()
		if err != nil {
			return refuse("malformed RSA")
		}
		return checkRSABits(int(n))
	}
	return refuse(algoName(pk.PubKeyAlgo))
}

func algoName(a packet.PublicKeyAlgorithm) string {
	switch a {
	case packet.PubKeyAlgoDSA:
		return "DSA"
	case packet.PubKeyAlgoElGamal:
		return "ElGamal"
	case packet.PubKeyAlgoEdDSA:
		return "EdDSA"
	case packet.PubKeyAlgoECDSA:
		return "ECDSA"
	case packet.PubKeyAlgoEd448:
		return "Ed448"
	}
	return fmt.Sprintf("algorithm %d", a)
}

// unarmorPGP returns the body of exactly one armor block of type typ that
// is preceded and followed by nothing but whitespace. Armor headers
// ("Comment: ...") are refused in a signature, which git-secure writes
// itself; a key exported by a configured gpg may carry them.
func unarmorPGP(armored []byte, typ string) ([]byte, error) {
	t := bytes.TrimSpace(armored)
	if !bytes.HasPrefix(t, []byte("-----BEGIN "+typ+"-----")) {
		return nil, fmt.Errorf("not an armored %s", strings.ToLower(typ))
	}
	if bytes.Count(t, []byte("-----BEGIN ")) != 1 || bytes.Count(t, []byte("-----END ")) != 1 {
		return nil, fmt.Errorf("want exactly one armored %s", strings.ToLower(typ))
	}
	if !bytes.HasSuffix(t, []byte("-----END "+typ+"-----")) {
		return nil, fmt.Errorf("trailing data after armored %s", strings.ToLower(typ))
	}
	block, err := armor.Decode(bytes.NewReader(t))
	if err != nil {
		return nil, fmt.Errorf("malformed armor: %v", err)
	}
	if block.Type != typ {
		return nil, fmt.Errorf("armor type %.40q, want %q", block.Type, typ)
	}
	if typ == pgpSigArmor && len(block.Header) != 0 {
		return nil, errors.New("unexpected armor headers")
	}
	body, err := io.ReadAll(io.LimitReader(block.Body, MaxOpenPGPKeySize+1))
	if err != nil {
		return nil, fmt.Errorf("malformed armor: %v", err)
	}
	if len(body) > MaxOpenPGPKeySize {
		return nil, fmt.Errorf("armored body exceeds %d bytes", MaxOpenPGPKeySize)
	}
	return body, nil
}

// ArmorOpenPGPSignature armors a binary OpenPGP signature as
// "-----BEGIN PGP SIGNATURE-----", the form git keeps in a commit.
func ArmorOpenPGPSignature(raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, pgpSigArmor, nil)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(raw); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// isOpenPGPSignature reports whether a raw signature is an OpenPGP packet
// rather than an SSHSIG blob ("SSHSIG..."): OpenPGP packets start with a
// byte whose top bit is set.
func isOpenPGPSignature(raw []byte) bool { return len(raw) > 0 && raw[0]&0x80 != 0 }

// isArmoredOpenPGPSignature reports whether armored is a PGP SIGNATURE.
func isArmoredOpenPGPSignature(armored []byte) bool {
	return bytes.HasPrefix(armored, []byte("-----BEGIN "+pgpSigArmor+"-----"))
}

// parsedPGPSig is a parsed git-secure OpenPGP signature.
type parsedPGPSig struct {
	sig       *packet.Signature
	namespace string
	keyFpr    []byte // primary fingerprint from NotationKey
}

// parseOpenPGPSignature parses a binary OpenPGP signature strictly:
// at most MaxSignatureSize bytes, exactly one signature packet, version 4
// or 6, over a binary document, hashed with SHA-256/384/512 (or SHA3), a
// creation time, exactly one NotationNamespace and one NotationKey
// notation in the hashed area, and no other critical notation.
func parseOpenPGPSignature(raw []byte) (*parsedPGPSig, error) {
	if len(raw) > MaxSignatureSize {
		return nil, fmt.Errorf("%w: signature of %d bytes exceeds %d", ErrBadSignature, len(raw), MaxSignatureSize)
	}
	r := packet.NewReader(bytes.NewReader(raw))
	p, err := r.Next()
	if err != nil {
		return nil, fmt.Errorf("%w: malformed OpenPGP signature: %v", ErrBadSignature, err)
	}
	sig, ok := p.(*packet.Signature)
	if !ok {
		return nil, fmt.Errorf("%w: OpenPGP packet is not a signature", ErrBadSignature)
	}
	if _, err := r.Next(); err != io.EOF {
		return nil, fmt.Errorf("%w: more than one OpenPGP packet", ErrBadSignature)
	}
	if sig.Version != 4 && sig.Version != 6 {
		return nil, fmt.Errorf("%w: OpenPGP signature version %d", ErrBadSignature, sig.Version)
	}
	if sig.SigType != packet.SigTypeBinary {
		return nil, fmt.Errorf("%w: OpenPGP signature of type 0x%02x, want a binary document signature (0x00)", ErrBadSignature, uint8(sig.SigType))
	}
	switch sig.Hash {
	case crypto.SHA256, crypto.SHA384, crypto.SHA512, crypto.SHA3_256, crypto.SHA3_512:
	default:
		return nil, fmt.Errorf("%w: OpenPGP signature hashed with %v: use SHA-256 or stronger (gpg --digest-algo SHA512)", ErrBadSignature, sig.Hash)
	}
	if sig.CreationTime.IsZero() {
		return nil, fmt.Errorf("%w: OpenPGP signature without a creation time", ErrBadSignature)
	}
	out := &parsedPGPSig{sig: sig}
	var nsSeen, keySeen bool
	for _, n := range sig.Notations {
		switch n.Name {
		case NotationNamespace:
			if nsSeen {
				return nil, fmt.Errorf("%w: OpenPGP signature names two namespaces", ErrBadSignature)
			}
			nsSeen, out.namespace = true, string(n.Value)
		case NotationKey:
			if keySeen {
				return nil, fmt.Errorf("%w: OpenPGP signature names two keys", ErrBadSignature)
			}
			keySeen = true
			s := string(n.Value)
			fpr, err := hex.DecodeString(s)
			if err != nil || (len(fpr) != 20 && len(fpr) != 32) || strings.ToUpper(s) != s {
				return nil, fmt.Errorf("%w: OpenPGP signature: %s %.80q is not an upper-case hex fingerprint", ErrBadSignature, NotationKey, s)
			}
			out.keyFpr = fpr
		default:
			if n.IsCritical {
				return nil, fmt.Errorf("%w: OpenPGP signature has unknown critical notation %.64q", ErrBadSignature, n.Name)
			}
		}
	}
	if !nsSeen || !keySeen {
		return nil, fmt.Errorf("%w: OpenPGP signature lacks the %s and %s notations: it was not made by git-secure (sign with git secure, which runs gpg --sig-notation)", ErrBadSignature, NotationNamespace, NotationKey)
	}
	return out, nil
}

// openPGPFingerprintOf is the git-secure fingerprint of the OpenPGP
// primary key with fingerprint fpr.
func openPGPFingerprintOf(fpr []byte) string {
	return ssh.FingerprintSHA256(rawID(marshalOpenPGPID(fpr)))
}

// rawID is an ssh.PublicKey that is only its wire encoding (for
// fingerprints).
type rawID []byte

func (r rawID) Type() string                        { return KeyTypeOpenPGP }
func (r rawID) Marshal() []byte                     { return r }
func (r rawID) Verify([]byte, *ssh.Signature) error { return ErrBadSignature }

// String names the key as listings do: "openpgp" and its fingerprint.
func (k *OpenPGPKey) String() string { return "openpgp " + k.OpenPGPFingerprint() }

// subkeyByID returns the subkey with OpenPGP key ID id, or nil.
func (k *OpenPGPKey) subkeyByID(id uint64) *openpgp.Subkey {
	for i := range k.entity.Subkeys {
		if k.entity.Subkeys[i].PublicKey.KeyId == id {
			return &k.entity.Subkeys[i]
		}
	}
	return nil
}

// verifyOpenPGP verifies a binary git-secure OpenPGP signature of data in
// namespace against the key lookup returns for the primary key the
// signature names. Validity (expiry, binding signatures) is judged at the
// signature's creation time, as gpg does; an OpenPGP revocation of the
// primary key or of the signing subkey in the trusted key fails whatever
// its date. Errors name the key and say why.
func verifyOpenPGP(raw, data []byte, namespace string, lookup func(string) (ssh.PublicKey, bool)) (ssh.PublicKey, error) {
	ps, err := parseOpenPGPSignature(raw)
	if err != nil {
		return nil, err
	}
	if ps.namespace != namespace {
		return nil, fmt.Errorf("%w: namespace %.64q, want %q", ErrBadSignature, ps.namespace, namespace)
	}
	fp := openPGPFingerprintOf(ps.keyFpr)
	trusted, ok := lookup(fp)
	if !ok || trusted == nil {
		return nil, fmt.Errorf("%w: %s (OpenPGP key %X)", ErrUnknownKey, fp, ps.keyFpr)
	}
	k, ok := trusted.(*OpenPGPKey)
	if !ok || !bytes.Equal(k.entity.PrimaryKey.Fingerprint, ps.keyFpr) {
		return nil, fmt.Errorf("%w: %s (trusted key with that fingerprint is not OpenPGP key %X)", ErrUnknownKey, fp, ps.keyFpr)
	}
	name := fmt.Sprintf("OpenPGP key %s (%s)", k.OpenPGPFingerprint(), fp)
	if len(k.entity.Revocations) > 0 {
		return nil, fmt.Errorf("%w: %s is revoked (an OpenPGP revocation is in the policy's copy of the key)", ErrBadSignature, name)
	}
	if ps.sig.IssuerKeyId == nil {
		return nil, fmt.Errorf("%w: %s: signature does not name its issuer", ErrBadSignature, name)
	}
	issuer := *ps.sig.IssuerKeyId
	if sub := k.subkeyByID(issuer); sub != nil && len(sub.Revocations) > 0 {
		return nil, fmt.Errorf("%w: %s: signing subkey %X is revoked", ErrBadSignature, name, sub.PublicKey.Fingerprint)
	} else if sub == nil && k.entity.PrimaryKey.KeyId != issuer {
		return nil, fmt.Errorf("%w: %s: signed by key ID %016X, which is not part of it", ErrBadSignature, name, issuer)
	}
	if err := k.verifyDetached(name, fmt.Sprintf("key ID %016X", issuer), ps.sig.CreationTime, data, raw); err != nil {
		return nil, err
	}
	return k, nil
}

// verifyDetached checks the detached signature raw over data by k's
// entity as of at (the signature's creation time), and says what went
// wrong in terms of name (the key as the policy names it) and issuer
// (the signing key as the signature names it).
func (k *OpenPGPKey) verifyDetached(name, issuer string, at time.Time, data, raw []byte) error {
	cfg := &packet.Config{Time: func() time.Time { return at }}
	_, _, err := openpgp.VerifyDetachedSignature(openpgp.EntityList{k.entity}, bytes.NewReader(data), bytes.NewReader(raw), cfg)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pgperrors.ErrKeyExpired):
		return fmt.Errorf("%w: %s: the signing key or subkey had expired when the signature was made (%s): extend it (gpg --quick-set-expire) and update the person's key in the policy", ErrBadSignature, name, at.UTC().Format(time.RFC3339))
	case errors.Is(err, pgperrors.ErrKeyRevoked):
		return fmt.Errorf("%w: %s is revoked", ErrBadSignature, name)
	case errors.Is(err, pgperrors.ErrUnknownIssuer):
		return fmt.Errorf("%w: %s: %s is not a valid signing key of it (expired, revoked, or not for signing) at %s", ErrBadSignature, name, issuer, at.UTC().Format(time.RFC3339))
	case errors.Is(err, pgperrors.ErrSignatureExpired):
		return fmt.Errorf("%w: %s: the signature or a binding signature had expired", ErrBadSignature, name)
	}
	return fmt.Errorf("%w: %s: %v", ErrBadSignature, name, err)
}

// openPGPSignatureFingerprint returns the git-secure fingerprint of the
// key a binary OpenPGP signature names, without verifying anything.
func openPGPSignatureFingerprint(raw []byte) (string, error) {
	ps, err := parseOpenPGPSignature(raw)
	if err != nil {
		return "", err
	}
	return openPGPFingerprintOf(ps.keyFpr), nil
}

// unarmorOpenPGPSignature is unarmorPGP for a signature, bounded by
// MaxSignatureSize.
func unarmorOpenPGPSignature(armored []byte) ([]byte, error) {
	if len(armored) > MaxSignatureSize {
		return nil, fmt.Errorf("%w: armored signature of %d bytes exceeds %d", ErrBadSignature, len(armored), MaxSignatureSize)
	}
	raw, err := unarmorPGP(armored, pgpSigArmor)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return raw, nil
}

// IsOpenPGPSignature reports whether a raw signature is a binary OpenPGP
// signature (as SignRaw makes for an OpenPGP key) rather than an SSHSIG
// blob. It looks at the first byte only.
func IsOpenPGPSignature(raw []byte) bool { return isOpenPGPSignature(raw) }

// OpenPGPSignatureKey parses a binary git-secure OpenPGP signature
// strictly and returns the git-secure fingerprint of the key it names and
// its namespace, without verifying anything. Errors wrap ErrBadSignature.
func OpenPGPSignatureKey(raw []byte) (fingerprint, namespace string, err error) {
	ps, err := parseOpenPGPSignature(raw)
	if err != nil {
		return "", "", err
	}
	return openPGPFingerprintOf(ps.keyFpr), ps.namespace, nil
}

// IsArmoredOpenPGPKey reports whether b is (starts like) an armored
// OpenPGP public key, for callers that explain why a key file failed.
func IsArmoredOpenPGPKey(b []byte) bool { return isArmoredOpenPGPKey(b) }

// serializeCanonical writes e as Entity.Serialize does, but with the user
// IDs in sorted order: go-crypto keeps them in a map, whose order changes
// from run to run, and the policy's copy of a key must have one encoding.
func serializeCanonical(w io.Writer, e *openpgp.Entity) error {
	if err := e.PrimaryKey.Serialize(w); err != nil {
		return err
	}
	for _, sig := range e.Revocations {
		if err := sig.Serialize(w); err != nil {
			return err
		}
	}
	for _, sig := range e.Signatures {
		if err := sig.Serialize(w); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(e.Identities))
	for name := range e.Identities {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		id := e.Identities[name]
		if err := id.UserId.Serialize(w); err != nil {
			return err
		}
		for _, sig := range id.Signatures {
			if err := sig.Serialize(w); err != nil {
				return err
			}
		}
	}
	for _, sub := range e.Subkeys {
		if err := sub.PublicKey.Serialize(w); err != nil {
			return err
		}
		for _, sig := range sub.Revocations {
			if err := sig.Serialize(w); err != nil {
				return err
			}
		}
		if err := sub.Sig.Serialize(w); err != nil {
			return err
		}
	}
	return nil
}
