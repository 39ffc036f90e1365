package policy

import (
	"fmt"
	"time"

	"github.com/git-secure/git-secure/internal/keyless"
	"github.com/git-secure/git-secure/internal/sign"
)

// Persons may have keyless Sigstore identities (sigstore-oidc ISSUER
// SUBJECT, gitsign) as keys. Their signatures verify against the one
// Sigstore instance the root keys pin in root.json (fieldSigstore: the
// Fulcio root and intermediate certificates and the Rekor key, PEM), so
// that only the root keys decide which certificate authority and which
// log vouch for identities.
const fieldSigstore = "x-git-secure-sigstore"

// Sigstore returns the pinned Fulcio certificates and Rekor key (PEM), if
// any.
func (p *Policy) Sigstore() (fulcioPEM, rekorPEM string, ok bool) {
	m, _ := p.Root.Signed.UnrecognizedFields[fieldSigstore].(map[string]any)
	f, okF := m["fulcio"].(string)
	r, okR := m["rekor"].(string)
	return f, r, okF && okR
}

// parseSigstoreField decodes the stored form {"fulcio": PEM, "rekor":
// PEM} strictly; nil, nil when v is absent.
func parseSigstoreField(v any) (*keyless.Trust, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok || len(m) != 2 {
		return nil, fmt.Errorf("must be an object with exactly fulcio and rekor")
	}
	f, okF := m["fulcio"].(string)
	r, okR := m["rekor"].(string)
	if !okF || !okR {
		return nil, fmt.Errorf("must be an object with exactly fulcio and rekor (PEM strings)")
	}
	return keyless.NewTrust([]byte(f), []byte(r))
}

// attachSigstore gives every keyless person key the pinned Sigstore
// instance (a policy that pins none leaves them verifying nothing).
func (p *Policy) attachSigstore(keys map[string]*Key) error {
	trust, err := parseSigstoreField(p.Root.Signed.UnrecognizedFields[fieldSigstore])
	if err != nil {
		return fmt.Errorf("%w: root.json: %s: %v", ErrMalformed, fieldSigstore, err)
	}
	for _, k := range keys {
		if sk, ok := k.Public.(*sign.SigstoreKey); ok && trust != nil {
			k.Public = sk.WithTrust(trust)
		}
	}
	return nil
}

// SetSigstore pins the Sigstore instance (Fulcio certificates and Rekor
// key, PEM) that keyless identities verify against, replacing any
// earlier one. It is a root change.
func (p *Policy) SetSigstore(base *Policy, fulcioPEM, rekorPEM []byte, now time.Time) error {
	if _, err := keyless.NewTrust(fulcioPEM, rekorPEM); err != nil {
		return invalid("%v", err)
	}
	p.Root.Signed.UnrecognizedFields[fieldSigstore] = map[string]any{"fulcio": string(fulcioPEM), "rekor": string(rekorPEM)}
	return p.reindexRoot(base, now)
}

// RemoveSigstore unpins the Sigstore instance: keyless identities then
// verify nothing. It is a root change.
func (p *Policy) RemoveSigstore(base *Policy, now time.Time) error {
	if _, _, ok := p.Sigstore(); !ok {
		return invalid("the policy pins no Sigstore instance")
	}
	delete(p.Root.Signed.UnrecognizedFields, fieldSigstore)
	return p.reindexRoot(base, now)
}
