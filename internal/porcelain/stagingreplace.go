package porcelain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/verify"
)

// StagingReplaceable decides whether a remote's staged policy change old
// may be replaced by next, a staged change of the policy commit polTip
// (the policy in force once the push lands), when next does not descend
// from old. Every staged commit's parent is the policy it changes, so a
// co-signer's signed version never descends from the version they signed,
// and a server that only let the staged change grow kept the first one
// pushed for ever: no later change (nor any signature on it) could be
// shared, and a pusher without a key who planted one blocked the workflow
// for good. What the rule protects is co-signatures, so old may go when
// it holds none worth keeping:
//
//   - it is not a staged change of polTip (made on an older policy, or not
//     a staged change at all): it can never be applied;
//   - no key that the policy in force trusts with its metadata (its root
//     and rules keys, and the signers of its rule files) signed it: a key
//     the staged change itself brings in proves nothing, or anyone could
//     plant a change signed by a key of their own and keep every real
//     co-signer's change out; nor do the signatures on rules the change
//     leaves as they are, carried from the policy in force (every change
//     that leaves them has those);
//   - every key that signed old also signed next: a co-signer's version
//     of the same change, or the proposer's own new change in place of
//     one only they had signed.
//
// next itself must be a staged change of polTip. It returns "" when old
// may be replaced, else why not.
func StagingReplaceable(g *gitrepo.Repo, old, next, polTip gitrepo.Hash) (string, error) {
	if polTip.IsZero() {
		return "there is no policy in force", nil
	}
	nextPol, why, err := stagedOn(g, next, polTip)
	if err != nil || why != "" {
		return "the new one " + why, err
	}
	oldPol, why, err := stagedOn(g, old, polTip)
	if err != nil {
		return "", err
	}
	if why != "" {
		return "", nil // obsolete or not a staged change: nothing to keep
	}
	base, err := policy.LoadSigned(g, polTip, nil)
	if err != nil {
		return "", fmt.Errorf("load the policy in force %s: %w", polTip, err)
	}
	oldSigned, err := keptSigners(base, oldPol)
	if err != nil {
		return "", nil // not a change that could be applied
	}
	if len(oldSigned) == 0 {
		return "", nil
	}
	nextSigned, err := keptSigners(base, nextPol)
	if err != nil {
		return "", nil
	}
	var dropped []string
	for _, s := range oldSigned {
		if !slices.Contains(nextSigned, s) {
			dropped = append(dropped, s)
		}
	}
	if len(dropped) == 0 {
		return "", nil
	}
	return fmt.Sprintf("the staged change it holds (%s) is signed by %s, and the new one is not signed by them", old.String()[:12], strings.Join(dropped, ", ")), nil
}

// StagedOnPolicy returns "" when h is a staged change of polTip (the policy
// in force once the push lands), else why not: the only thing the staged
// slot may take, created or grown, since a commit on top of a staged
// change, one on an older policy or one of unrelated history can never be
// applied and only keeps a real change from being shared.
func StagedOnPolicy(g *gitrepo.Repo, h, polTip gitrepo.Hash) (string, error) {
	if polTip.IsZero() {
		return "there is no policy in force", nil
	}
	why, err := stagedShapeOn(g, h, polTip)
	if why != "" {
		why = "the new one " + why
	}
	return why, err
}

// stagedShapeOn is stagedOn without decoding h: the commit's only parent
// is polTip and its files pass policy.CheckStaged, whose cost is linear in
// their size. A server runs it on every staged change pushed, by anyone;
// it never decodes one (go-tuf spends some 100 bytes a byte on a file of
// small values). A change that passes and does not decode is refused by
// every client that reads it (policy.Load), and counts no signature, so
// the next push may replace it (StagingReplaceable).
func stagedShapeOn(g *gitrepo.Repo, h, polTip gitrepo.Hash) (string, error) {
	c, err := g.ReadCommit(h)
	if err != nil {
		return fmt.Sprintf("(%s) cannot be read as a commit", h.String()[:12]), nil
	}
	if len(c.Parents) != 1 || c.Parents[0] != polTip {
		return fmt.Sprintf("(%s) is not a staged change of the policy in force (%s)", h.String()[:12], polTip.String()[:12]), nil
	}
	if err := policy.CheckStaged(g, h); err != nil {
		return fmt.Sprintf("(%s) is not a policy: %v", h.String()[:12], err), nil
	}
	return "", nil
}

// stagedOn loads h as a staged change of polTip: a commit whose only
// parent is polTip and whose tree is a policy. why says what it is not.
func stagedOn(g *gitrepo.Repo, h, polTip gitrepo.Hash) (*policy.Policy, string, error) {
	c, err := g.ReadCommit(h)
	if err != nil {
		return nil, fmt.Sprintf("(%s) cannot be read as a commit", h.String()[:12]), nil
	}
	if len(c.Parents) != 1 || c.Parents[0] != polTip {
		return nil, fmt.Sprintf("(%s) is not a staged change of the policy in force (%s)", h.String()[:12], polTip.String()[:12]), nil
	}
	p, err := policy.Load(g, h)
	if err != nil {
		return nil, fmt.Sprintf("(%s) is not a policy: %v", h.String()[:12], err), nil
	}
	return p, "", nil
}

// signedBy lists the fingerprints of the keys with a valid signature on
// staged that counts for the change from base (in any role).
func signedBy(base, staged *policy.Policy) ([]string, error) {
	sts, err := verify.PolicyStatus(base, staged)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, st := range sts {
		for _, fp := range st.SignedBy {
			if !slices.Contains(out, fp) {
				out = append(out, fp)
			}
		}
	}
	return out, nil
}

// keptSigners lists, sorted, the signatures on staged that a replacement
// must keep: valid ones that count for the change from base, by keys base
// trusts with its metadata (trustedKeys), leaving out the signatures on
// rules the change leaves as they are that it carries from base
// (carriedRules).
func keptSigners(base, staged *policy.Policy) ([]string, error) {
	sts, err := verify.PolicyStatus(base, staged)
	if err != nil {
		return nil, err
	}
	carried, err := carriedRules(base, staged)
	if err != nil {
		return nil, err
	}
	trusted := trustedKeys(base)
	var out []string
	for _, st := range sts {
		for _, fp := range signerKeys(staged, st) {
			if trusted[fp] && !(st.Role == metadata.TARGETS && carried[fp]) && !slices.Contains(out, fp) {
				out = append(out, fp)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// carriedRules returns the fingerprints of the keys whose signature on
// staged's rules (targets.json) is the one base's rules carry, byte for
// byte on the same content: every change that leaves the rules alone has
// it, so it is nobody's signature on this change.
func carriedRules(base, staged *policy.Policy) (map[string]bool, error) {
	a, err1 := json.Marshal(base.Targets.Signed)
	b, err2 := json.Marshal(staged.Targets.Signed)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	if !bytes.Equal(a, b) {
		return nil, nil
	}
	had := map[string]string{}
	for _, s := range base.Targets.Signatures {
		had[s.KeyID] = string(s.Signature)
	}
	keys, _ := staged.RoleKeys(metadata.TARGETS)
	out := map[string]bool{}
	for _, s := range staged.Targets.Signatures {
		if sig, ok := had[s.KeyID]; !ok || sig != string(s.Signature) {
			continue
		}
		for _, k := range keys {
			if k.ID == s.KeyID {
				out[k.Fingerprint] = true
			}
		}
	}
	return out, nil
}

// signerKeys returns the fingerprints behind st.SignedBy: keys for root and
// rules, each person's signing keys for a rule file.
func signerKeys(staged *policy.Policy, st verify.RoleStatus) []string {
	name, ok := strings.CutPrefix(st.Role, verify.RuleFileRole)
	if !ok {
		return st.SignedBy
	}
	f, ok := staged.RuleFile(name)
	if !ok {
		return nil
	}
	var out []string
	for _, person := range st.SignedBy {
		out = append(out, f.SignedKeys[person]...)
	}
	return out
}

// trustedKeys returns the fingerprints of the keys p trusts with its
// metadata: its root and rules keys, and the keys of its rule files'
// signers.
func trustedKeys(p *policy.Policy) map[string]bool {
	out := map[string]bool{}
	for _, role := range []string{metadata.ROOT, metadata.TARGETS} {
		keys, _ := p.RoleKeys(role)
		for _, k := range keys {
			out[k.Fingerprint] = true
		}
	}
	for _, f := range p.RuleFiles() {
		d, ok := p.Delegation(f.Name)
		if !ok {
			continue
		}
		for _, name := range p.AllowedPersons(&policy.Rule{Allow: d.Signers}) {
			if person, ok := p.Person(name); ok {
				for _, k := range person.Keys {
					out[k.Fingerprint] = true
				}
			}
		}
	}
	return out
}

// sameContent reports whether a and b hold the same signed content
// (signatures may differ).
func sameContent(a, b *policy.Policy) (bool, error) {
	a1, err1 := json.Marshal(a.Root.Signed)
	a2, err2 := json.Marshal(a.Targets.Signed)
	b1, err3 := json.Marshal(b.Root.Signed)
	b2, err4 := json.Marshal(b.Targets.Signed)
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			return false, err
		}
	}
	// The rule files too: a version that changes a team's rule file is
	// another change, however many signatures it carries.
	return bytes.Equal(a1, b1) && bytes.Equal(a2, b2) && sameRuleFiles(a, b, true), nil
}

// StagingAddsSignatures reports whether next is the staged change have of
// polTip with every signature have holds and more: a co-signer's version of
// it, which a fetch takes in place of the local one.
func StagingAddsSignatures(g *gitrepo.Repo, have, next, polTip gitrepo.Hash) bool {
	a, why1, err1 := stagedOn(g, have, polTip)
	b, why2, err2 := stagedOn(g, next, polTip)
	if err1 != nil || err2 != nil || why1 != "" || why2 != "" {
		return false
	}
	if same, err := sameContent(a, b); err != nil || !same {
		return false
	}
	base, err := policy.LoadSigned(g, polTip, nil)
	if err != nil {
		return false
	}
	sa, err1 := signedBy(base, a)
	sb, err2 := signedBy(base, b)
	if err1 != nil || err2 != nil || len(sb) <= len(sa) {
		return false
	}
	for _, s := range sa {
		if !slices.Contains(sb, s) {
			return false
		}
	}
	return true
}

// NoteStagedAdopted records that a fetch replaced the clone's own staged
// change by a co-signed version of it (StagingAddsSignatures): still the
// clone's own change.
func (r *Repo) NoteStagedAdopted(h gitrepo.Hash) error { return r.noteOwnStaged(h) }
