package attest

import "github.com/git-secure/git-secure/internal/sign"

// validateOpenPGP is validate's check of an envelope signed with an
// OpenPGP key: the signature (a binary OpenPGP signature) names the key
// of keyid and the attestation namespace in its notations. As for SSHSIG,
// nothing is verified here.
func (e *Envelope) validateOpenPGP() error {
	fp, ns, err := sign.OpenPGPSignatureKey(e.Sig)
	if err != nil {
		return malformed("%v", err)
	}
	if ns != sign.NamespaceAttestation {
		return malformed("signature namespace %q is not %q", ns, sign.NamespaceAttestation)
	}
	if fp != e.KeyID {
		return malformed("keyid %s does not match the key in the signature", e.KeyID)
	}
	return nil
}

// validateKeyless is validate's check of an envelope signed by a keyless
// identity: the signature (DER CMS) names the identity of keyid. Its
// namespace is bound by what it signs, checked when it is verified.
func (e *Envelope) validateKeyless() error {
	fp, err := sign.KeylessSignatureKey(e.Sig)
	if err != nil {
		return malformed("%v", err)
	}
	if fp != e.KeyID {
		return malformed("keyid %s does not match the identity in the signature", e.KeyID)
	}
	return nil
}
