package porcelain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
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
//
// Nothing pushed is decoded before it has to be: the signatures are counted
// over the raw signed parts (policy.StagedRaw), by the keys of the policy
// in force alone; old is decoded only when it holds a signature next
// drops (a change that does not decode keeps nothing), and next only when
// it keeps every signature old holds (a pusher without a key must not put
// an unusable copy of a co-signed change in its place) and holds at most
// policy.MaxUnsignedReplacement bytes that no key of the policy in force
// signed (policy.StagedRaw.Unsigned; beyond, it is refused
// undecoded: a copy of a co-signed change with a large unsigned file
// cost a full decode a push, 95-370 MB). A change that
// holds no signature by a trusted key, such as one a pusher without a key
// planted, however large, is replaced without decoding either.
func StagingReplaceable(g *gitrepo.Repo, old, next, polTip gitrepo.Hash) (string, error) {
	if polTip.IsZero() {
		return "there is no policy in force", nil
	}
	nextRaw, why, err := stagedRawOn(g, next, polTip)
	if err != nil || why != "" {
		return "the new one " + why, err
	}
	oldRaw, why, err := stagedRawOn(g, old, polTip)
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
	baseRaw, err := policy.ReadStagedRaw(g, polTip)
	if err != nil {
		return "", fmt.Errorf("read the policy in force %s: %w", polTip, err)
	}
	oldSigned := oldRaw.TrustedSigners(base, baseRaw)
	if len(oldSigned) == 0 {
		return "", nil
	}
	nextSigned := nextRaw.TrustedSigners(base, baseRaw)
	var dropped []string
	for _, s := range oldSigned {
		if !slices.Contains(nextSigned, s) {
			dropped = append(dropped, s)
		}
	}
	if len(dropped) > 0 {
		if _, err := policy.Load(g, old); err != nil {
			return "", nil // not a policy: its signatures keep nothing
		}
		return fmt.Sprintf("the staged change it holds (%s) is signed by %s, and the new one is not signed by them", old.String()[:12], strings.Join(dropped, ", ")), nil
	}
	// next is decoded below; what nobody the policy in force trusts
	// signed in it may exceed old's by little, or a copy of a signed
	// change with junk added costs the server a full decode a push.
	// The bound is absolute, measured against the policy in force: one
	// relative to old let anyone ratchet it, each accepted copy growing
	// by a little less than the bound, until a copy full of junk was
	// within it and decoded on every push (attack review, session 14).
	if nextU, names := nextRaw.Unsigned(base, baseRaw); nextU > policy.MaxUnsignedReplacement {
		list := strings.Join(names, ", ")
		if len(names) > 5 {
			list = strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
		}
		return fmt.Sprintf("the new one (%s) keeps the signatures of the staged change it replaces (%s) but holds %d bytes that no key of the policy in force signed (%s): a replacement may hold at most %d such bytes, so the server does not decode it; sign what it adds with a key of the policy in force (git secure policy sign --staged), or apply what is signed first",
			next.String()[:12], old.String()[:12], nextU, list, policy.MaxUnsignedReplacement), nil
	}
	if _, err := policy.Load(g, next); err != nil {
		return fmt.Sprintf("the new one (%s) keeps the signatures of the staged change it replaces (%s) but is not a policy: %v", next.String()[:12], old.String()[:12], err), nil
	}
	return "", nil
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

// stagedShapeOn returns why h is not a staged change of polTip, without
// decoding it: the commit's only parent is polTip and its files pass
// policy.CheckStaged, whose cost is linear in their size. A server runs it
// on every staged change pushed, by anyone; it never decodes one (go-tuf
// spends some 100 bytes a byte on a file of small values). A change that
// passes and does not decode is refused by every client that reads it
// (policy.Load), and keeps no signature, so the next push may replace it
// (StagingReplaceable).
func stagedShapeOn(g *gitrepo.Repo, h, polTip gitrepo.Hash) (string, error) {
	_, why, err := stagedRawOn(g, h, polTip)
	return why, err
}

// stagedRawOn reads h as a staged change of polTip without decoding it
// (stagedShapeOn), keeping its files' envelopes. why says what it is not.
func stagedRawOn(g *gitrepo.Repo, h, polTip gitrepo.Hash) (*policy.StagedRaw, string, error) {
	c, err := g.ReadCommit(h)
	if err != nil {
		return nil, fmt.Sprintf("(%s) cannot be read as a commit", h.String()[:12]), nil
	}
	if len(c.Parents) != 1 || c.Parents[0] != polTip {
		return nil, fmt.Sprintf("(%s) is not a staged change of the policy in force (%s)", h.String()[:12], polTip.String()[:12]), nil
	}
	raw, err := policy.ReadStagedRaw(g, h)
	if err != nil {
		return nil, fmt.Sprintf("(%s) is not a policy: %v", h.String()[:12], err), nil
	}
	return raw, "", nil
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
// it, which a fetch takes in place of the local one. next, from a remote,
// is read raw (policy.StagedRaw): the same signed parts as have's, and
// every signature it holds valid, by a key of have or of the policy in
// force, at most one a key; only then is it decoded (it costs what have
// cost, whatever the remote pushed).
func StagingAddsSignatures(g *gitrepo.Repo, have, next, polTip gitrepo.Hash) bool {
	haveRaw, why1, err1 := stagedRawOn(g, have, polTip)
	nextRaw, why2, err2 := stagedRawOn(g, next, polTip)
	if err1 != nil || err2 != nil || why1 != "" || why2 != "" || !haveRaw.SameSigned(nextRaw) {
		return false
	}
	a, err := policy.Load(g, have)
	if err != nil {
		return false
	}
	base, err := policy.LoadSigned(g, polTip, nil)
	if err != nil {
		return false
	}
	keys := append(base.MetadataKeys(), a.MetadataKeys()...)
	sa, _ := haveRaw.SignedBy(keys)
	sb, all := nextRaw.SignedBy(keys)
	if !all || count(sb) <= count(sa) {
		return false
	}
	for file, fps := range sa {
		for _, fp := range fps {
			if !slices.Contains(sb[file], fp) {
				return false
			}
		}
	}
	_, err = policy.Load(g, next)
	return err == nil
}

// count is the number of (file, key) signatures in signed.
func count(signed map[string][]string) int {
	n := 0
	for _, fps := range signed {
		n += len(fps)
	}
	return n
}

// NoteStagedAdopted records that a fetch replaced the clone's own staged
// change by a co-signed version of it (StagingAddsSignatures): still the
// clone's own change.
func (r *Repo) NoteStagedAdopted(h gitrepo.Hash) error { return r.noteOwnStaged(h) }
