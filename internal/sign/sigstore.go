package sign

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/theupdateframework/go-tuf/v2/metadata"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/keyless"
)

// Keyless Sigstore identities (gitsign). The "key" is an OIDC identity:
// the issuer and the subject Fulcio certifies. Its signatures are
// internal/keyless signatures (CMS with a Fulcio certificate and an
// embedded Rekor entry), verified against the Sigstore instance the
// policy pins (root.json), which the policy attaches to the key it
// returns from a lookup ([SigstoreKey.Trust]).
//
//	keytype        scheme         keyval.public
//	sigstore-oidc  sigstore-oidc  base64(string "sigstore-oidc", string issuer, string subject)

// KeyTypeSigstore is the key type (and TUF key type and scheme) of a
// keyless Sigstore identity.
const KeyTypeSigstore = "sigstore-oidc"

// maxIdentityPart bounds an issuer or a subject.
const maxIdentityPart = 256

// SigstoreKey is a keyless identity as a key. Trust, when set, is the
// pinned Sigstore instance its signatures verify against; without it they
// verify against nothing.
type SigstoreKey struct {
	keyless.Identity
	Trust *keyless.Trust
}

// NewSigstoreKey checks an identity: the issuer an https URL, the subject
// an email address or a URI, both printable ASCII without spaces and at
// most 256 bytes.
func NewSigstoreKey(issuer, subject string) (*SigstoreKey, error) {
	for _, p := range []string{issuer, subject} {
		if p == "" || len(p) > maxIdentityPart || strings.IndexFunc(p, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
			return nil, fmt.Errorf("%w: %s identity part %.64q must be 1 to %d printable ASCII characters without spaces", ErrUnsupportedKey, KeyTypeSigstore, p, maxIdentityPart)
		}
	}
	if u, err := url.Parse(issuer); err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%w: %s issuer %.64q is not an https URL (e.g. https://accounts.google.com)", ErrUnsupportedKey, KeyTypeSigstore, issuer)
	}
	if !strings.Contains(subject, "@") && !strings.Contains(subject, "://") {
		return nil, fmt.Errorf("%w: %s subject %.64q is neither an email address nor a URI", ErrUnsupportedKey, KeyTypeSigstore, subject)
	}
	return &SigstoreKey{Identity: keyless.Identity{Issuer: issuer, Subject: subject}}, nil
}

// Type returns KeyTypeSigstore.
func (k *SigstoreKey) Type() string { return KeyTypeSigstore }

// Marshal returns the identity SSH wire style: what Fingerprint hashes.
func (k *SigstoreKey) Marshal() []byte {
	return ssh.Marshal(struct{ Type, Issuer, Subject string }{KeyTypeSigstore, k.Issuer, k.Subject})
}

// Verify always fails: a keyless signature is not an SSH signature.
func (k *SigstoreKey) Verify([]byte, *ssh.Signature) error {
	return fmt.Errorf("%w: %s %s does not make SSH signatures", ErrBadSignature, KeyTypeSigstore, k.Identity)
}

// String is the policy's text form: "sigstore-oidc ISSUER SUBJECT".
func (k *SigstoreKey) String() string { return KeyTypeSigstore + " " + k.Issuer + " " + k.Subject }

// WithTrust returns a copy of k that verifies against t.
func (k *SigstoreKey) WithTrust(t *keyless.Trust) *SigstoreKey {
	return &SigstoreKey{Identity: k.Identity, Trust: t}
}

// parseSigstoreLine parses "sigstore-oidc ISSUER SUBJECT".
func parseSigstoreLine(l []byte) (*SigstoreKey, error) {
	f := strings.Fields(string(l))
	if len(f) != 3 || f[0] != KeyTypeSigstore {
		return nil, fmt.Errorf("sign: parse public key: want %q", KeyTypeSigstore+" ISSUER SUBJECT")
	}
	k, err := NewSigstoreKey(f[1], f[2])
	if err != nil {
		return nil, fmt.Errorf("sign: parse public key: %w", err)
	}
	return k, nil
}

func parseSigstoreWire(b []byte) (*SigstoreKey, error) {
	var w struct{ Type, Issuer, Subject string }
	if err := ssh.Unmarshal(b, &w); err != nil || w.Type != KeyTypeSigstore {
		return nil, fmt.Errorf("%w: malformed %s key", ErrUnsupportedKey, KeyTypeSigstore)
	}
	k, err := NewSigstoreKey(w.Issuer, w.Subject)
	if err != nil {
		return nil, err
	}
	if string(k.Marshal()) != string(b) {
		return nil, fmt.Errorf("%w: %s key is not canonical", ErrUnsupportedKey, KeyTypeSigstore)
	}
	return k, nil
}

func tufSigstoreKey(k *SigstoreKey) *metadata.Key {
	return &metadata.Key{Type: KeyTypeSigstore, Scheme: KeyTypeSigstore, Value: metadata.KeyVal{PublicKey: base64.StdEncoding.EncodeToString(k.Marshal())}}
}

// ErrNoSigstoreTrust means a keyless signature was checked against a
// policy that pins no Sigstore instance.
var ErrNoSigstoreTrust = errors.New("sign: the policy pins no Sigstore instance (a root change: git secure trust set-sigstore --fulcio-root PEM --rekor-key PEM)")

// verifyKeyless verifies a keyless signature (DER): the identity its
// certificate names finds the trusted key, whose pinned trust then checks
// everything (certificate chain, Rekor entry, identity).
func verifyKeyless(der, data []byte, namespace string, lookup func(string) (ssh.PublicKey, bool)) (ssh.PublicKey, error) {
	id, err := keyless.PeekIdentity(der)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	fp := Fingerprint(&SigstoreKey{Identity: id})
	trusted, ok := lookup(fp)
	if !ok || trusted == nil {
		return nil, fmt.Errorf("%w: %s (%s %s)", ErrUnknownKey, fp, KeyTypeSigstore, id)
	}
	sk, ok := trusted.(*SigstoreKey)
	if !ok || sk.Identity != id {
		return nil, fmt.Errorf("%w: %s (trusted key with that fingerprint differs from the signing identity)", ErrUnknownKey, fp)
	}
	if sk.Trust == nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadSignature, id, ErrNoSigstoreTrust)
	}
	if _, err := keyless.VerifyDERAs(der, data, namespace, sk.Trust, sk.Identity); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadSignature, id, err)
	}
	return trusted, nil
}

// keylessFingerprint is SignatureFingerprint for a keyless signature.
func keylessFingerprint(der []byte) (string, error) {
	id, err := keyless.PeekIdentity(der)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return Fingerprint(&SigstoreKey{Identity: id}), nil
}

// checkKeylessMade checks a keyless signature just made, when the signer
// knows no pinned Sigstore instance to verify it against: it must parse
// strictly, carry a Rekor entry and name the identity asked for (gitsign
// signs as whoever logged in). Every verifier checks the rest.
func checkKeylessMade(sk *SigstoreKey, der []byte) error {
	id, err := keyless.PeekIdentity(der)
	if err != nil {
		return fmt.Errorf("sign: the keyless signature made does not parse: %w", err)
	}
	if id != sk.Identity {
		return fmt.Errorf("sign: gitsign signed as %s, not as %s: log in to that account when gitsign asks", id, sk.Identity)
	}
	return nil
}

// KeylessSignatureKey returns the git-secure fingerprint of the identity a
// keyless signature (DER) names, without verifying anything. Errors wrap
// ErrBadSignature.
func KeylessSignatureKey(der []byte) (string, error) { return keylessFingerprint(der) }

// IsKeylessSignature reports whether a raw signature is (to be parsed as) a
// keyless one.
func IsKeylessSignature(raw []byte) bool { return keyless.IsDER(raw) }
