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

// SignTimestamp signs a freshness statement of the repository's log tip
// at time at, with the key of keyFile (or git's user.signingkey), and
// moves freshness.Ref to it. It refuses (ErrRefused) when the policy in
// force sets no freshness, when the key is not one of its freshness keys,
// when a newer statement is already stored, or when the log does not
// extend the one the stored statement vouched for (the log went back:
// never vouch for that). Usage errors wrap ErrUsage.
func (r *Repo) SignTimestamp(keyFile string, at time.Time) (*freshness.Signed, error) {
	g := r.Git
	tip, ok, err := g.ResolveRef(rsl.Ref)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, usage("this repository has no git-secure log (%s)", rsl.Ref)
	}
	polTip, ok, err := g.ResolveRef(policy.Ref)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, usage("this repository has no git-secure policy (%s)", policy.Ref)
	}
	pol, err := policy.Load(g, polTip)
	if err != nil {
		return nil, err
	}
	f := pol.Freshness()
	if f == nil {
		return nil, fmt.Errorf("%w: the policy in force sets no freshness (git secure policy set-freshness --key FILE --max-age 24h)", ErrRefused)
	}
	signer, err := r.LoadSigner(keyFile)
	if err != nil {
		return nil, err
	}
	defer signer.Close()
	fp := sign.Fingerprint(signer.PublicKey())
	if _, ok := pol.LookupFreshnessKey(fp); !ok {
		return nil, fmt.Errorf("%w: %s is not a freshness key of the policy in force (git secure policy list shows them)", ErrRefused, fp)
	}
	cur, _, err := g.ResolveRef(freshness.Ref)
	if err != nil {
		return nil, err
	}
	at = at.UTC().Truncate(time.Second)
	if !cur.IsZero() {
		if old, err := freshness.Read(g, cur); err == nil {
			if old.Time.After(at) {
				return nil, fmt.Errorf("%w: %s already holds a statement made at %s, after %s", ErrRefused, freshness.Ref, old.Time.Format(time.RFC3339), at.Format(time.RFC3339))
			}
			if ok, err := g.IsAncestor(old.Tip, tip); err != nil || !ok {
				return nil, fmt.Errorf("%w: the log's tip %s does not extend %s, which the stored statement vouched for: the log went back or was replaced; refusing to vouch for it", ErrRefused, tip, old.Tip)
			}
		} // an unreadable statement is replaced
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
	return freshness.Parse(data)
}
