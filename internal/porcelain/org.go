package porcelain

import (
	"fmt"

	"github.com/git-secure/git-secure/internal/org"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
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
	o := pol.Org()
	if o == nil {
		return pol, nil, nil
	}
	c := r.OrgCache()
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
