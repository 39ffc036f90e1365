package sign

import (
	"bytes"
	"crypto"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"golang.org/x/crypto/ssh"
)

// Signatures that gpg makes for git itself (gpg -bsau KEY, which git runs
// for git push --signed with gpg.format openpgp) carry none of git-secure's
// notations: they name their key only by the issuer fingerprint subpacket,
// the fingerprint of the (sub)key that signed. VerifyOpenPGPDetached
// checks those; what keeps such a signature from standing for another
// kind of statement is the caller's strict parsing of the signed bytes.

// VerifyOpenPGPDetached verifies an armored detached OpenPGP signature of
// data as gpg makes it for git: one version 4 or 6 binary-document
// signature packet, hashed with SHA-256 or stronger, with a creation time
// and an issuer fingerprint. lookup is asked for the git-secure
// fingerprint of the OpenPGP key the issuer fingerprint names (a primary
// key: a signature by a subkey fails with ErrUnknownKey, naming it). A
// signature that carries git-secure's namespace notation must carry
// namespace in it (a git-secure signature for another purpose is not
// taken for this one). Validity and revocations are judged as for
// git-secure's own OpenPGP signatures (verifyOpenPGP). Errors wrap
// ErrUnknownKey or ErrBadSignature.
func VerifyOpenPGPDetached(armored, data []byte, namespace string, lookup func(fingerprint string) (ssh.PublicKey, bool)) (ssh.PublicKey, error) {
	if lookup == nil {
		return nil, errors.New("sign: verify: no key lookup")
	}
	raw, sig, err := parseDetachedOpenPGP(armored, namespace)
	if err != nil {
		return nil, err
	}
	fp := openPGPFingerprintOf(sig.IssuerFingerprint)
	trusted, ok := lookup(fp)
	if !ok || trusted == nil {
		return nil, fmt.Errorf("%w: %s (OpenPGP key %X; a signature by a signing subkey is not matched to its primary key: sign with the primary key)", ErrUnknownKey, fp, sig.IssuerFingerprint)
	}
	k, ok := trusted.(*OpenPGPKey)
	if !ok || !bytes.Equal(k.entity.PrimaryKey.Fingerprint, sig.IssuerFingerprint) {
		return nil, fmt.Errorf("%w: %s (trusted key with that fingerprint is not OpenPGP key %X)", ErrUnknownKey, fp, sig.IssuerFingerprint)
	}
	name := fmt.Sprintf("OpenPGP key %s (%s)", k.OpenPGPFingerprint(), fp)
	if len(k.entity.Revocations) > 0 {
		return nil, fmt.Errorf("%w: %s is revoked (an OpenPGP revocation is in the policy's copy of the key)", ErrBadSignature, name)
	}
	if sig.IssuerKeyId != nil && *sig.IssuerKeyId != k.entity.PrimaryKey.KeyId {
		return nil, fmt.Errorf("%w: %s: the signature's issuer key ID %016X is not that key's", ErrBadSignature, name, *sig.IssuerKeyId)
	}
	at := sig.CreationTime
	cfg := &packet.Config{Time: func() time.Time { return at }}
	_, _, err = openpgp.VerifyDetachedSignature(openpgp.EntityList{k.entity}, bytes.NewReader(data), bytes.NewReader(raw), cfg)
	switch {
	case err == nil:
		return k, nil
	case errors.Is(err, pgperrors.ErrKeyExpired):
		return nil, fmt.Errorf("%w: %s had expired when the signature was made (%s): extend it (gpg --quick-set-expire) and update the person's key in the policy", ErrBadSignature, name, at.UTC().Format(time.RFC3339))
	case errors.Is(err, pgperrors.ErrKeyRevoked):
		return nil, fmt.Errorf("%w: %s is revoked", ErrBadSignature, name)
	case errors.Is(err, pgperrors.ErrUnknownIssuer):
		return nil, fmt.Errorf("%w: %s is not a valid signing key (expired, revoked, or not for signing) at %s", ErrBadSignature, name, at.UTC().Format(time.RFC3339))
	case errors.Is(err, pgperrors.ErrSignatureExpired):
		return nil, fmt.Errorf("%w: %s: the signature or a binding signature had expired", ErrBadSignature, name)
	}
	return nil, fmt.Errorf("%w: %s: %v", ErrBadSignature, name, err)
}

// OpenPGPDetachedFingerprint returns the git-secure fingerprint of the key
// an armored detached OpenPGP signature names by its issuer fingerprint,
// without verifying anything: for messages only.
func OpenPGPDetachedFingerprint(armored []byte) (string, error) {
	_, sig, err := parseDetachedOpenPGP(armored, "")
	if err != nil {
		return "", err
	}
	return openPGPFingerprintOf(sig.IssuerFingerprint), nil
}

// parseDetachedOpenPGP unarmors and parses a detached signature as
// VerifyOpenPGPDetached takes it, returning its binary form. namespace ""
// skips the namespace notation check.
func parseDetachedOpenPGP(armored []byte, namespace string) ([]byte, *packet.Signature, error) {
	raw, err := unarmorOpenPGPSignature(armored)
	if err != nil {
		return nil, nil, err
	}
	r := packet.NewReader(bytes.NewReader(raw))
	p, err := r.Next()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: malformed OpenPGP signature: %v", ErrBadSignature, err)
	}
	sig, ok := p.(*packet.Signature)
	if !ok {
		return nil, nil, fmt.Errorf("%w: OpenPGP packet is not a signature", ErrBadSignature)
	}
	if _, err := r.Next(); err != io.EOF {
		return nil, nil, fmt.Errorf("%w: more than one OpenPGP packet", ErrBadSignature)
	}
	if sig.Version != 4 && sig.Version != 6 {
		return nil, nil, fmt.Errorf("%w: OpenPGP signature version %d", ErrBadSignature, sig.Version)
	}
	if sig.SigType != packet.SigTypeBinary {
		return nil, nil, fmt.Errorf("%w: OpenPGP signature of type 0x%02x, want a binary document signature (0x00; is textmode set in gpg.conf?)", ErrBadSignature, uint8(sig.SigType))
	}
	switch sig.Hash {
	case crypto.SHA256, crypto.SHA384, crypto.SHA512, crypto.SHA3_256, crypto.SHA3_512:
	default:
		return nil, nil, fmt.Errorf("%w: OpenPGP signature hashed with %v: use SHA-256 or stronger (personal-digest-preferences SHA512 in gpg.conf)", ErrBadSignature, sig.Hash)
	}
	if sig.CreationTime.IsZero() {
		return nil, nil, fmt.Errorf("%w: OpenPGP signature without a creation time", ErrBadSignature)
	}
	if n := len(sig.IssuerFingerprint); n != 20 && n != 32 {
		return nil, nil, fmt.Errorf("%w: OpenPGP signature does not name its key by fingerprint (no issuer fingerprint subpacket: use gpg 2.2 or later)", ErrBadSignature)
	}
	for _, n := range sig.Notations {
		switch {
		case n.Name == NotationNamespace && namespace != "" && string(n.Value) != namespace:
			return nil, nil, fmt.Errorf("%w: OpenPGP signature made by git-secure for namespace %.64q, want %q", ErrBadSignature, n.Value, namespace)
		case n.IsCritical && n.Name != NotationNamespace && n.Name != NotationKey:
			return nil, nil, fmt.Errorf("%w: OpenPGP signature has unknown critical notation %.64q", ErrBadSignature, n.Name)
		}
	}
	return raw, sig, nil
}
