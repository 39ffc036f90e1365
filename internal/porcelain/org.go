package porcelain

import (
	"fmt"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/org"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// OrgCache is the repository's organisation policy cache (internal/org),
// made on first use: it fetches each organisation policy once per
// process, so that a fetch's verification and the entries a push then
// writes see the same version.
func (r *Repo) OrgCache() *org.Cache {
	if r.orgs == nil {
		r.orgs = &org.Cache{GitDir: r.Git.GitDir(), Env: r.Git.Env(), Now: r.Now()}
	}
	return r.orgs
}

// withOrg returns the policy that judges a new entry under pol, and the
// organisation policy version the entry names: pol and nil when pol
// inherits no organisation policy, else pol combined with the
// organisation's latest version.
func (r *Repo) withOrg(pol *policy.Policy) (*policy.Policy, *rsl.OrgVersion, error) {
	return withOrgFrom(r.OrgCache(), pol)
}

// withOrgFrom is withOrg with the organisation policies of c.
func withOrgFrom(c *org.Cache, pol *policy.Policy) (*policy.Policy, *rsl.OrgVersion, error) {
	o := pol.Org()
	if o == nil {
		return pol, nil, nil
	}
	v, err := c.Latest(o)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: the policy inherits the organisation policy at %s: %v", ErrRefused, o.URL, err)
	}
	if pol.Inherited() {
		return pol, &v, nil // PolicyAt combined it already
	}
	orgPol, err := c.PolicyAt(o, v)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	merged, err := policy.Inherit(orgPol, pol)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	return merged, &v, nil
}

// KeptPolicyAt is PolicyAt for a hook that asks only which refs the
// policy protects, on every ref update: a policy that inherits is
// combined with the organisation policy as last verified and kept, which
// is fetched again only when the log at logTip names a newer version.
func (r *Repo) KeptPolicyAt(polTip, logTip gitrepo.Hash) (*policy.Policy, error) {
	p, err := policy.LoadSigned(r.Git, polTip, nil)
	if err != nil {
		return nil, err
	}
	o := p.Org()
	if o == nil {
		return p, nil
	}
	// A cache of its own: what it keeps is not verified again, and must
	// never serve a verification that uses OrgCache later in the process.
	c := &org.Cache{GitDir: r.Git.GitDir(), Env: r.Git.Env(), Now: r.Now(), Kept: true}
	named, err := r.newestOrgVersion(logTip)
	if err != nil {
		return nil, err
	}
	if named != nil {
		if err := c.Need(o, *named); err != nil {
			return nil, fmt.Errorf("%w: the policy inherits the organisation policy at %s: %v", ErrRefused, o.URL, err)
		}
	}
	judging, _, err := withOrgFrom(c, p)
	return judging, err
}

// newestOrgVersion is the organisation policy version the newest entry
// of the log at tip that names one names (nil: none). Policy entries
// name none; every other entry of an inheriting repository does, so the
// walk ends at once but after policy changes.
func (r *Repo) newestOrgVersion(tip gitrepo.Hash) (*rsl.OrgVersion, error) {
	if tip.IsZero() {
		return nil, nil
	}
	var named *rsl.OrgVersion
	err := rsl.WalkBack(r.Git, tip, func(rec *rsl.Record) (bool, error) {
		named = rec.Entry.Org
		return named == nil && rec.Entry.IsPolicy(), nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the log %s: %w", tip, err)
	}
	return named, nil
}

// checkOrgRevoked refuses a staged change st of a repository that inherits
// an organisation policy when it meets its thresholds only with the
// signatures of keys the organisation's latest policy revokes: such a
// key signs no rules or rule file of an inheriting repository (the
// verification of the log, and so the server, refuse the change), as it
// signs nothing else there. An organisation policy that cannot be read
// leaves the decision to the push's verification.
func (r *Repo) checkOrgRevoked(st *Staged, now time.Time) error {
	o := st.Base.Org()
	if o == nil {
		o = st.Policy.Org()
	}
	if o == nil {
		return nil
	}
	c := r.OrgCache()
	v, err := c.Latest(o)
	if err != nil {
		return nil
	}
	orgPol, err := c.PolicyAt(o, v)
	if err != nil {
		return nil
	}
	own := verify.RevokedIn(st.Base, st.Policy)
	err = verify.CheckPolicyRevoked(st.Base, st.Policy, now, func(fp string) bool { return own(fp) || orgPol.RevokedFrom(fp) != 0 })
	if err == nil {
		return nil
	}
	var keys []string
	for _, rv := range orgPol.Revocations() {
		if !own(rv.Fingerprint) && strings.Contains(err.Error(), rv.Fingerprint) {
			keys = append(keys, rv.Fingerprint)
		}
	}
	return fmt.Errorf("%w: %v; the organisation policy version %d revokes %s, which signed it: a key the organisation revoked signs no policy change of a repository that inherits its policy (have the repository's other keys sign it: git secure policy sign; and take the revoked key out of the repository's policy: git secure trust remove-rules-key, policy remove-key)",
		ErrRefused, err, v.Number, strings.Join(keys, ", "))
}
