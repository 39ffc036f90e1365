package sign

import (
	"bytes"
	"crypto"
	"errors"
	"fmt"
	"io"

	"github.com/ProtonMail/go-crypto/openpgp"
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
// fingerprint of the OpenPGP key the issuer fingerprint names; when that
// is a signing subkey, subkeyOwner (nil: none) names the git-secure
// fingerprint of the primary key that holds it, lookup is asked for that,
// and the trusted key must hold the subkey (whose binding and validity
// go-crypto checks). lookup decides alone which keys count (revocations
// included): subkeyOwner only finds a name to ask it. A
// signature that carries git-secure's namespace notation must carry
// namespace in it (a git-secure signature for another purpose is not
// taken for this one). Validity and revocations are judged as for
// git-secure's own OpenPGP signatures (verifyOpenPGP). Errors wrap
// ErrUnknownKey or ErrBadSignature.
func VerifyOpenPGPDetached(armored, data []byte, namespace string, lookup func(fingerprint string) (ssh.PublicKey, bool), subkeyOwner func(subkey []byte) (string, bool)) (ssh.PublicKey, error) {
	if lookup == nil {
		return nil, errors.New("sign: verify: no key lookup")
	}
	raw, sig, err := parseDetachedOpenPGP(armored, namespace)
	if err != nil {
		return nil, err
	}
	fp := openPGPFingerprintOf(sig.IssuerFingerprint)
	trusted, ok := lookup(fp)
	bySubkey := false
	if !ok && subkeyOwner != nil {
		if owner, found := subkeyOwner(sig.IssuerFingerprint); found && owner != fp {
			fp, bySubkey = owner, true
			trusted, ok = lookup(fp)
		}
	}
	if !ok || trusted == nil {
		if bySubkey {
			return nil, fmt.Errorf("%w: %s (the primary key of OpenPGP signing subkey %X)", ErrUnknownKey, fp, sig.IssuerFingerprint)
		}
		return nil, fmt.Errorf("%w: %s (OpenPGP key %X, neither a primary key nor a signing subkey of a trusted key)", ErrUnknownKey, fp, sig.IssuerFingerprint)
	}
	k, ok := trusted.(*OpenPGPKey)
	if !ok {
		return nil, fmt.Errorf("%w: %s (the trusted key with that fingerprint is not an OpenPGP key)", ErrUnknownKey, fp)
	}
	name := fmt.Sprintf("OpenPGP key %s (%s)", k.OpenPGPFingerprint(), fp)
	if len(k.entity.Revocations) > 0 {
		return nil, fmt.Errorf("%w: %s is revoked (an OpenPGP revocation is in the policy's copy of the key)", ErrBadSignature, name)
	}
	var signer *packet.PublicKey
	if bytes.Equal(k.entity.PrimaryKey.Fingerprint, sig.IssuerFingerprint) {
		signer = k.entity.PrimaryKey
	} else if sub := k.subkeyByFingerprint(sig.IssuerFingerprint); sub != nil {
		if len(sub.Revocations) > 0 {
			return nil, fmt.Errorf("%w: %s: signing subkey %X is revoked", ErrBadSignature, name, sub.PublicKey.Fingerprint)
		}
		signer = sub.PublicKey
	} else {
		return nil, fmt.Errorf("%w: %s: signed by OpenPGP key %X, which is not part of it", ErrUnknownKey, name, sig.IssuerFingerprint)
	}
	if sig.IssuerKeyId != nil && *sig.IssuerKeyId != signer.KeyId {
		return nil, fmt.Errorf("%w: %s: the signature's issuer key ID %016X is not its issuer fingerprint's", ErrBadSignature, name, *sig.IssuerKeyId)
	}
	if err := k.verifyDetached(name, fmt.Sprintf("%X", sig.IssuerFingerprint), sig.CreationTime, data, raw); err != nil {
		return nil, err
	}
	return k, nil
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

// OpenPGPDetachedIssuer returns the issuer fingerprint (of the primary key
// or subkey that signed) of an armored detached OpenPGP signature, without
// verifying anything: for messages only.
func OpenPGPDetachedIssuer(armored []byte) ([]byte, error) {
	_, sig, err := parseDetachedOpenPGP(armored, "")
	if err != nil {
		return nil, err
	}
	return sig.IssuerFingerprint, nil
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

// subkeyByFingerprint returns the subkey with OpenPGP fingerprint fpr, or
// nil.
func (k *OpenPGPKey) subkeyByFingerprint(fpr []byte) *openpgp.Subkey {
	for i := range k.entity.Subkeys {
		if bytes.Equal(k.entity.Subkeys[i].PublicKey.Fingerprint, fpr) {
			return &k.entity.Subkeys[i]
		}
	}
	return nil
}

// HasSigningSubkey reports whether fpr is the OpenPGP fingerprint of a
// subkey of k that its binding signature lets sign (whether that binding
// is valid at a given time is for verification to judge).
func (k *OpenPGPKey) HasSigningSubkey(fpr []byte) bool {
	s := k.subkeyByFingerprint(fpr)
	return s != nil && s.Sig != nil && s.Sig.FlagsValid && s.Sig.FlagSign
}
