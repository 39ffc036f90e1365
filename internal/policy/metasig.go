package policy

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/git-secure/git-secure/internal/sign"
)

// VerifyMetadata reports whether sig is key's signature over payload (the
// canonical JSON of signed policy metadata: root.json, targets.json, a
// rule file). The key's scheme must match its type: an ed25519 key
// listed as ECDSA (or the reverse) verifies nothing.
func (key *Key) VerifyMetadata(payload, sig []byte) bool {
	k := key.TUF
	if _, ok := key.Public.(*sign.SigstoreKey); ok {
		// With the pinned Sigstore instance the policy attached.
		return sign.VerifyTUFSignatureKey(key.Public, payload, sig) == nil
	}
	if ok, handled := verifyKindTUF(k, payload, sig); handled {
		return ok // a security key or an OpenPGP key (keykinds.go)
	}
	pub, err := k.ToPublicKey()
	if err != nil {
		return false
	}
	var v signature.Verifier
	switch pub := pub.(type) {
	case ed25519.PublicKey:
		// What sigstore's ed25519 verifier decides, without first copying
		// the payload (up to MaxTargetsSize) through io.ReadAll, nor
		// building crypto/ed25519's table for the few signatures of a
		// policy (sign.VerifyEd25519).
		return k.Scheme == metadata.KeySchemeEd25519 && len(pub) == ed25519.PublicKeySize && sign.VerifyEd25519(pub, payload, sig)
	case *ecdsa.PublicKey:
		if k.Scheme != metadata.KeySchemeECDSA_SHA2_P256 {
			return false
		}
		v, err = signature.LoadECDSAVerifier(pub, crypto.SHA256)
	default:
		return false
	}
	if err != nil {
		return false
	}
	return v.VerifySignature(bytes.NewReader(sig), bytes.NewReader(payload)) == nil
}
