package policy

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/secure-systems-lab/go-securesystemslib/cjson"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/git-secure/git-secure/internal/sign"
)

// Person keys may be security keys (sk-ssh-ed25519@openssh.com,
// sk-ecdsa-sha2-nistp256@openssh.com) or OpenPGP keys as well as SSH keys:
// see internal/sign (tufkinds.go) for how they are stored. Root, rules and
// timestamp keys stay keys that go-tuf verifies itself, because
// go-tuf's own threshold check must agree with git-secure's on them.

// checkRoleKeyKind refuses a security key or OpenPGP key as a root role
// key.
func checkRoleKeyKind(k *metadata.Key, fp string) error {
	if sign.IsTUFNative(k) {
		return nil
	}
	return fmt.Errorf("key %s is a %s key: root, rules and timestamp keys must be ed25519 or ecdsa-sha2-nistp256 SSH keys (security keys and OpenPGP keys can be person keys: git secure policy add-person NAME --key FILE)", fp, k.Type)
}

// signMetaKind adds (or replaces) the signature of a security key or
// OpenPGP key, which go-tuf's Metadata.Sign cannot make: it cannot derive
// their key IDs.
func signMetaKind[T metadata.Roles](m *metadata.Metadata[T], s signature.Signer, kh sign.TUFKeyHolder) error {
	_, id, err := kh.TUFKey()
	if err != nil {
		return err
	}
	payload, err := cjson.EncodeCanonical(m.Signed)
	if err != nil {
		return fmt.Errorf("policy: sign: %w", err)
	}
	sig, err := s.SignMessage(bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("policy: sign: %w", err)
	}
	m.Signatures = slices.DeleteFunc(m.Signatures, func(x metadata.Signature) bool { return x.KeyID == id })
	m.Signatures = append(m.Signatures, metadata.Signature{KeyID: id, Signature: sig})
	return nil
}

// verifyKindTUF verifies a metadata signature by a security key or an
// OpenPGP key; handled is false for the keys go-tuf verifies itself.
func verifyKindTUF(k *metadata.Key, payload, sig []byte) (ok, handled bool) {
	if sign.IsTUFNative(k) {
		return false, false
	}
	return sign.VerifyTUFSignature(k, payload, sig) == nil, true
}
