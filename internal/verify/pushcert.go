package verify

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/pushcert"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

// ErrUnsignedPush is the kind of an entry that a rule requiring signed
// pushes covers and for which no valid push certificate is stored.
var ErrUnsignedPush = errors.New("no valid push certificate")

// SignedPushHint says how to push so that the server stores a
// certificate.
const SignedPushHint = "push with git push --signed (or once: git config push.gpgSign if-asked), signing with a key of a person of the policy (SSH: git config gpg.format ssh; git config user.signingkey KEY.pub; OpenPGP: git config gpg.format openpgp; git config user.signingkey FINGERPRINT); the server must set receive.certNonceSeed (git secure server install does)"

// pushCerts is what the check of push certificates reads once per
// verification.
type pushCerts struct {
	store   gitrepo.Hash // refs/secure/pushcerts
	logTip  gitrepo.Hash // refs/secure/rsl
	pending bool         // the tip is the clone's, with unpushed entries
}

// checkSignedPush records a problem when a rule of d requires signed
// pushes and entry rec (ref from old to new) has no valid certificate: a
// certificate stored for rec in refs/secure/pushcerts, signed by a key of
// a person of pol not revoked at rec, with a pushee and nonce, that states
// exactly ref old..new and a move of the log that brought rec.
func (v *verifier) checkSignedPush(i int, rec *rsl.Record, pol *policy.Policy, ref string, old, new gitrepo.Hash, d *Decision) error {
	var rules []string
	for _, rd := range d.Rules {
		if rd.Rule.SignedPush {
			rules = append(rules, rd.Rule.Name)
		}
	}
	if len(rules) == 0 {
		return nil
	}
	pc, err := v.pushCertState()
	if err != nil {
		return err
	}
	if v.opts.LocalAhead {
		// A working repository without a remote: nothing of it was pushed.
		return nil
	}
	if pc.pending {
		// A clone's own entries after the remote's tip are not pushed yet.
		if ok, err := v.repo.IsAncestor(rec.ID, v.opts.Clone.PushedTip); err != nil {
			return fmt.Errorf("verify: is entry #%d pushed: %w", rec.Entry.Number, err)
		} else if !ok {
			return nil
		}
	}
	why, err := v.pushCertProblem(pc, i, rec, pol, ref, old, new)
	if err != nil || why == "" {
		return err
	}
	v.problems = append(v.problems, &Problem{
		Entry: rec.Entry.Number, EntryID: rec.ID, Ref: ref, Rule: strings.Join(rules, ", "), Kind: ErrUnsignedPush,
		Detail: "the rule requires a signed push: " + why, Hint: SignedPushHint,
	})
	return nil
}

func (v *verifier) pushCertState() (*pushCerts, error) {
	if v.pushCerts != nil {
		return v.pushCerts, nil
	}
	pc := &pushCerts{}
	if v.opts.RefValues != nil {
		pc.store, pc.logTip = v.opts.RefValues[pushcert.Ref], v.opts.RefValues[rsl.Ref]
	} else {
		var err error
		if pc.store, _, err = v.repo.ResolveRef(pushcert.Ref); err != nil {
			return nil, fmt.Errorf("verify: resolve %s: %w", pushcert.Ref, err)
		}
		if pc.logTip, _, err = v.repo.ResolveRef(rsl.Ref); err != nil {
			return nil, fmt.Errorf("verify: resolve %s: %w", rsl.Ref, err)
		}
	}
	pc.pending = v.opts.Clone != nil && !v.opts.Clone.PushedTip.IsZero() && v.opts.Clone.PushedTip != pc.logTip
	v.pushCerts = pc
	return pc, nil
}

// pushCertProblem is "" when a valid certificate is stored for rec, else
// why none counts (every stored one's reason).
func (v *verifier) pushCertProblem(pc *pushCerts, i int, rec *rsl.Record, pol *policy.Policy, ref string, old, new gitrepo.Hash) (string, error) {
	raws, err := pushcert.Lookup(v.repo, pc.store, rec.ID)
	if err != nil {
		return "", fmt.Errorf("verify: entry #%d: %w", rec.Entry.Number, err)
	}
	if len(raws) == 0 {
		return fmt.Sprintf("%s holds no push certificate for this entry (it was pushed without git push --signed, or not through a git-secure server)", pushcert.Ref), nil
	}
	revoked := v.revokedAt(rec.Entry.Number)
	var whys []string
	for _, raw := range raws {
		why, err := v.certFor(pc, i, raw, rec, pol, ref, old, new, revoked)
		if err != nil {
			return "", err
		}
		if why == "" {
			return "", nil
		}
		whys = append(whys, why)
	}
	return strings.Join(whys, "; "), nil
}

// certFor judges one stored certificate for rec, the window's entry i:
// "" when it counts.
func (v *verifier) certFor(pc *pushCerts, i int, raw []byte, rec *rsl.Record, pol *policy.Policy, ref string, old, new gitrepo.Hash, revoked func(string) bool) (string, error) {
	c, err := pushcert.Parse(raw)
	if err != nil {
		return fmt.Sprintf("stored certificate: %v", err), nil
	}
	if err := c.CheckSession(); err != nil {
		return fmt.Sprintf("certificate by %s: %v", c.Pusher, err), nil
	}
	key, err := c.VerifyWith(func(fp string) (ssh.PublicKey, bool) {
		if revoked(fp) {
			return nil, false
		}
		return pol.LookupPersonKey(fp)
	}, pol.OpenPGPSubkeyOwner)
	if err != nil {
		fp := c.SignerFingerprintWith(pol.OpenPGPSubkeyOwner)
		switch {
		case revoked(fp):
			return fmt.Sprintf("certificate signed by %s, a key revoked at this entry", fp), nil
		case errors.Is(err, sign.ErrUnknownKey):
			return fmt.Sprintf("certificate signed by %s, which is no key of a person of the policy in force", fp), nil
		}
		return fmt.Sprintf("certificate by %s: %v", fp, err), nil
	}
	person, _ := pol.PersonByFingerprint(sign.Fingerprint(key))
	l, err := c.CheckEntry(rsl.Ref, ref, old, new)
	if err != nil {
		return fmt.Sprintf("certificate by %s: %v", person.Name, err), nil
	}
	// The entry lies in the log move the certificate states (after its
	// old tip, up to its new one), and that move is this log's. Both
	// walks are as long as the push (the log is one chain, checked by
	// now); the new tip is looked up in the window before asking git.
	in, err := v.repo.IsAncestor(rec.ID, l.New)
	if err == nil && in && !l.Old.IsZero() {
		in = l.Old != rec.ID
		if in {
			in, err = v.repo.IsAncestor(l.Old, rec.ID)
		}
	}
	if err == nil && in && !v.inWindow(i, l.New) && !pc.logTip.IsZero() {
		in, err = v.repo.IsAncestor(l.New, pc.logTip)
	}
	if err != nil {
		return fmt.Sprintf("certificate by %s: cannot place its log move %s..%s: %v", person.Name, shortOrNone(l.Old), shortOrNone(l.New), err), nil
	}
	if !in {
		return fmt.Sprintf("certificate by %s: %v: its log move %s..%s does not bring this entry", person.Name, pushcert.ErrMismatch, shortOrNone(l.Old), shortOrNone(l.New)), nil
	}
	return "", nil
}

// inWindow reports whether entry id is the window's entry i or a later
// one.
func (v *verifier) inWindow(i int, id gitrepo.Hash) bool {
	for _, r := range v.records[min(i, len(v.records)):] {
		if r.ID == id {
			return true
		}
	}
	return false
}
