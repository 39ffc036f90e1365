package porcelain

import (
	"fmt"
	"time"

	"github.com/git-secure/git-secure/internal/freshness"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

// TimestampKeyConfig is the git configuration of a server that names the
// private key file its post-receive hook signs freshness statements with.
const TimestampKeyConfig = "secure.timestampKey"

// TimestampOptions says how SignTimestamp signs.
type TimestampOptions struct {
	// KeyFile is the freshness key (empty: git's user.signingkey).
	KeyFile string
	// At dates the statement; it may not be after now by more than
	// freshness.MaxSkew.
	At time.Time
	// AllowRestored signs even though the log does not contain the tip
	// this signer last vouched for (the state file): the administrator
	// restored the repository from a backup on purpose.
	AllowRestored bool
}

// TimestampResult is a signed statement and what the signer had to
// ignore on the way (a stored statement it replaced, a missing state file).
type TimestampResult struct {
	*freshness.Signed
	Warnings []string
}

// SignTimestamp signs a freshness statement of the repository's log tip
// at opts.At, with the key of opts.KeyFile (or git's user.signingkey),
// and moves freshness.Ref to it. It refuses (ErrRefused) when the policy
// in force sets no freshness, when the key is not one of its freshness
// keys, when a newer verified statement is already stored, when the log
// does not extend the one the stored statement vouched for, or when it
// does not contain the tip this signer last signed (its state file, kept
// beside the key: a server restored from a backup must not vouch for the
// old state as current). Usage errors (a date in the future) wrap
// ErrUsage.
func (r *Repo) SignTimestamp(opts TimestampOptions) (*TimestampResult, error) {
	g := r.Git
	now := r.Now().UTC()
	at := opts.At.UTC().Truncate(time.Second)
	if at.After(now.Add(freshness.MaxSkew)) {
		return nil, usage("the statement's time %s is after now (%s) by more than %v: clients would refuse it, and it would block later statements", at.Format(time.RFC3339), now.Format(time.RFC3339), freshness.MaxSkew)
	}
	tip, pol, err := r.timestampState()
	if err != nil {
		return nil, err
	}
	f := pol.Freshness()
	if f == nil {
		return nil, fmt.Errorf("%w: the policy in force sets no freshness (git secure policy set-freshness --key FILE --max-age 24h)", ErrRefused)
	}
	signer, err := r.LoadSigner(opts.KeyFile)
	if err != nil {
		return nil, err
	}
	defer signer.Close()
	fp := sign.Fingerprint(signer.PublicKey())
	if _, ok := pol.LookupFreshnessKey(fp); !ok {
		return nil, fmt.Errorf("%w: %s is not a freshness key of the policy in force (git secure policy list shows them)", ErrRefused, fp)
	}
	res := &TimestampResult{}
	cur, warn, err := r.storedStatement(pol, tip, at, now)
	if err != nil {
		return nil, err
	}
	if warn != "" {
		res.Warnings = append(res.Warnings, warn)
	}
	state, err := r.openSignerState(opts.KeyFile)
	if err != nil {
		return nil, err
	}
	if state == nil {
		res.Warnings = append(res.Warnings, "no signer state file (give --key FILE or git config "+TimestampStateConfig+" PATH): a restore of this repository from a backup would go unnoticed")
	} else if err := state.check(g, tip, at, opts.AllowRestored); err != nil {
		return nil, err
	}
	st := freshness.Statement{Tip: tip, Time: at, Expires: at.Add(f.MaxAge)}
	data, err := freshness.Sign(st, signer)
	if err != nil {
		return nil, err
	}
	commit, err := freshness.Write(g, data, st)
	if err != nil {
		return nil, err
	}
	if err := g.UpdateRefs([]gitrepo.RefUpdate{{Name: freshness.Ref, Old: cur, New: commit}}, "git-secure: timestamp"); err != nil {
		return nil, fmt.Errorf("update %s: %w", freshness.Ref, err)
	}
	if state != nil {
		if err := state.save(tip, at); err != nil {
			return nil, err
		}
	}
	res.Signed, err = freshness.Parse(data)
	return res, err
}

// timestampState is the log tip and the policy in force.
func (r *Repo) timestampState() (gitrepo.Hash, *policy.Policy, error) {
	g := r.Git
	tip, ok, err := g.ResolveRef(rsl.Ref)
	if err != nil {
		return gitrepo.Hash{}, nil, err
	}
	if !ok {
		return gitrepo.Hash{}, nil, usage("this repository has no git-secure log (%s)", rsl.Ref)
	}
	polTip, ok, err := g.ResolveRef(policy.Ref)
	if err != nil {
		return gitrepo.Hash{}, nil, err
	}
	if !ok {
		return gitrepo.Hash{}, nil, usage("this repository has no git-secure policy (%s)", policy.Ref)
	}
	pol, err := policy.LoadSigned(g, polTip, nil)
	return tip, pol, err
}

// storedStatement returns the stored statement commit (the old value of
// the ref update) after judging it: a statement that does not verify
// against pol, or is dated beyond now plus the skew, is replaced with a
// warning (it would otherwise stop the signer until that date); a
// verified one must not be newer than at and must vouch for a tip the
// log contains.
func (r *Repo) storedStatement(pol *policy.Policy, tip gitrepo.Hash, at, now time.Time) (gitrepo.Hash, string, error) {
	g := r.Git
	cur, _, err := g.ResolveRef(freshness.Ref)
	if err != nil || cur.IsZero() {
		return cur, "", err
	}
	old, err := freshness.Read(g, cur)
	if err == nil {
		err = freshness.VerifySignatures(old, pol)
	}
	if err != nil {
		return cur, fmt.Sprintf("replacing the stored statement %s, which does not verify: %v", cur, err), nil
	}
	if old.Time.After(now.Add(freshness.MaxSkew)) {
		return cur, fmt.Sprintf("replacing the stored statement %s, dated %s, in the future", cur, old.Time.Format(time.RFC3339)), nil
	}
	if old.Time.After(at) {
		return cur, "", fmt.Errorf("%w: %s already holds a statement made at %s, after %s", ErrRefused, freshness.Ref, old.Time.Format(time.RFC3339), at.Format(time.RFC3339))
	}
	if ok, err := g.IsAncestor(old.Tip, tip); err != nil || !ok {
		return cur, "", fmt.Errorf("%w: the log's tip %s does not extend %s, which the stored statement vouched for: the log went back or was replaced; refusing to vouch for it", ErrRefused, tip, old.Tip)
	}
	return cur, "", nil
}
