package verify

import (
	"fmt"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
)

// OrgSource answers which organisation policy version v of o is, verified
// from o's pinned root keys (internal/org.Cache). An error names what is
// wrong (the version does not exist, the organisation log went back).
type OrgSource interface {
	PolicyAt(o *policy.Org, v rsl.OrgVersion) (*policy.Policy, error)
	// Latest is the organisation's newest policy version.
	Latest(o *policy.Org) (rsl.OrgVersion, error)
}

// orgTimeline judges the organisation policy versions the entries name:
// while the policy in force inherits an organisation policy, every entry
// but a policy change names one, never older than the one before it, and
// is judged by policy.Inherit(that version, the policy in force).
type orgTimeline struct {
	last   *rsl.OrgVersion
	merged map[orgKey]*policy.Policy
}

type orgKey struct {
	local gitrepo.Hash
	org   uint64
}

// judging returns the policy that judges rec: the policy in force, or
// its combination with the organisation policy version rec names. A
// problem is recorded as one of the policy timeline (errPolicy).
func (t *orgTimeline) judging(v *verifier, rec *rsl.Record) (*policy.Policy, error) {
	cur, e := v.curPolicy, rec.Entry
	o := cur.Org()
	if e.IsPolicy() {
		return cur, nil // judged on its metadata's signatures
	}
	if o == nil {
		if e.Org != nil {
			v.failPolicy(rec, e.Ref, ErrOrgPolicy, "only a repository whose policy inherits an organisation policy (git secure policy inherit) records its versions",
				"the entry names organisation policy version %d, but the policy in force inherits none", e.Org.Number)
			return nil, errPolicy
		}
		return cur, nil
	}
	hint := "record entries with a git-secure that knows organisation policies; fetch so that it knows the organisation's latest version"
	if e.Org == nil {
		v.failPolicy(rec, e.Ref, ErrOrgPolicy, hint, "the policy in force inherits the organisation policy at %s, but the entry names no version of it", o.URL)
		return nil, errPolicy
	}
	if t.last != nil && (e.Org.Number < t.last.Number || e.Org.Number == t.last.Number && e.Org.ID != t.last.ID) {
		v.failPolicy(rec, e.Ref, ErrOrgPolicy, "an entry may not go back to an older organisation policy (one that still lists a person removed since)",
			"the entry names organisation policy version %d (%s), older than or other than version %d (%s) that an earlier entry named", e.Org.Number, short(e.Org.ID), t.last.Number, short(t.last.ID))
		return nil, errPolicy
	}
	ver := *e.Org
	t.last = &ver
	if from := v.opts.OrgCurrentFrom; from != 0 && e.Number >= from && v.opts.Org != nil {
		latest, err := v.opts.Org.Latest(o)
		if err == nil && latest != ver {
			err = fmt.Errorf("the organisation's latest policy is version %d, not %d", latest.Number, ver.Number)
		}
		if err != nil {
			v.failPolicy(rec, e.Ref, ErrOrgPolicy, "fetch (so that your git-secure knows the organisation's latest policy), then push again",
				"a new entry must name the organisation's latest policy version: %v", err)
			return nil, errPolicy
		}
	}
	key := orgKey{local: v.curPolicyCommit, org: ver.Number}
	if p := t.merged[key]; p != nil {
		return p, nil
	}
	if v.opts.Org == nil {
		v.failPolicy(rec, e.Ref, ErrOrgPolicy, "verify with a git-secure that fetches organisation policies (git secure verify, a fetch through git-remote-secure)",
			"the policy in force inherits the organisation policy at %s, which this verification cannot read", o.URL)
		return nil, errPolicy
	}
	orgPol, err := v.opts.Org.PolicyAt(o, ver)
	if err != nil {
		v.failPolicy(rec, e.Ref, ErrOrgPolicy, "the organisation's administrators must restore its policy repository; until then nothing recorded under it verifies",
			"%v", err)
		return nil, errPolicy
	}
	merged, err := policy.Inherit(orgPol, cur)
	if err != nil {
		v.failPolicy(rec, e.Ref, ErrOrgPolicy, "rename the repository's person, team or rule that takes an organisation name (git secure policy list)",
			"the policy in force cannot inherit organisation policy version %d of %s: %v", ver.Number, o.URL, err)
		return nil, errPolicy
	}
	if t.merged == nil {
		t.merged = map[orgKey]*policy.Policy{}
	}
	t.merged[key] = merged
	return merged, nil
}

// revokerFor returns the organisation policy whose revocations judge
// policy change rec (next) of a repository that inherits one (the policy
// in force does, or else next): a key it revokes signs no rules or rule
// file the change writes, as it signs no entry, approval or test run
// there (policy.Policy.RevokedByOrg); without this a key the
// organisation revoked as compromised still changed the rules of every
// repository that kept it as a rules key. The version is the newest an
// earlier entry named or, for an entry that must be current
// (OrgCurrentFrom: the server's check of a push), the organisation's
// latest. It returns nil when neither policy inherits, no version is
// known yet, or this verification reads no organisation policy (every
// later entry then fails, judging); a version it cannot read is recorded
// as a problem (errPolicy).
func (t *orgTimeline) revokerFor(v *verifier, rec *rsl.Record, next *policy.Policy) (*policy.Policy, uint64, error) {
	var o *policy.Org
	if v.curPolicy != nil {
		o = v.curPolicy.Org()
	}
	if o == nil {
		o = next.Org()
	}
	if o == nil || v.opts.Org == nil {
		return nil, 0, nil
	}
	ver := t.last
	if from := v.opts.OrgCurrentFrom; from != 0 && rec.Entry.Number >= from {
		latest, err := v.opts.Org.Latest(o)
		if err != nil {
			v.failPolicy(rec, rec.Entry.Ref, ErrOrgPolicy, "fetch (so that your git-secure knows the organisation's latest policy), then push again",
				"a policy change is judged by the organisation's latest policy, whose revoked keys sign none of it: %v", err)
			return nil, 0, errPolicy
		}
		ver = &latest
	}
	if ver == nil {
		return nil, 0, nil
	}
	orgPol, err := v.opts.Org.PolicyAt(o, *ver)
	if err != nil {
		v.failPolicy(rec, rec.Entry.Ref, ErrOrgPolicy, "the organisation's administrators must restore its policy repository; until then nothing recorded under it verifies",
			"%v", err)
		return nil, 0, errPolicy
	}
	return orgPol, ver.Number, nil
}

// final is the policy that judges the refs' final state: the policy in
// force combined with the newest organisation policy version an entry
// named; nil when the policy inherits none or no entry named one yet.
func (t *orgTimeline) final(v *verifier) *policy.Policy {
	o := v.curPolicy.Org()
	if o == nil {
		return nil
	}
	v.res.Org = o.URL
	if v.opts.Org == nil {
		v.failPolicy(nil, rsl.PolicyRef, ErrOrgPolicy, "verify with a git-secure that fetches organisation policies (git secure verify, a fetch through git-remote-secure)",
			"the policy in force inherits the organisation policy at %s, which this verification cannot read", o.URL)
		return nil
	}
	var err error
	ver := t.last
	if ver == nil {
		// No entry named a version yet: the refs are judged by the
		// organisation's latest, as the next entry will be.
		var latest rsl.OrgVersion
		if latest, err = v.opts.Org.Latest(o); err == nil {
			ver = &latest
		}
	}
	var orgPol *policy.Policy
	if err == nil {
		v.res.OrgVersion = ver.Number
		if p := t.merged[orgKey{local: v.curPolicyCommit, org: ver.Number}]; p != nil {
			return p
		}
		orgPol, err = v.opts.Org.PolicyAt(o, *ver)
	}
	if err == nil {
		var merged *policy.Policy
		if merged, err = policy.Inherit(orgPol, v.curPolicy); err == nil {
			return merged
		}
	}
	v.failPolicy(nil, rsl.PolicyRef, ErrOrgPolicy, "the organisation's administrators must restore its policy repository, or the repository's root keys stop inheriting it",
		"the policy in force cannot inherit the organisation policy at %s: %v", o.URL, err)
	return nil
}

// startFrom seeds the timeline with the version a checkpoint names; pol
// is the policy in force at the checkpoint. A checkpoint that does not
// say which version the entries before it named, for a policy that
// inherits, cannot serve (errStale).
func (t *orgTimeline) startFrom(pol *policy.Policy, cp *CheckpointOrg) error {
	o := pol.Org()
	if o == nil {
		return nil
	}
	if cp == nil || cp.URL != o.URL {
		return errStale
	}
	if cp.Number != 0 {
		t.last = &rsl.OrgVersion{Number: cp.Number, ID: cp.ID}
	}
	return nil
}

// checkpoint is what a checkpoint keeps of the timeline under pol, the
// policy in force at its entry.
func (t *orgTimeline) checkpoint(pol *policy.Policy) *CheckpointOrg {
	o := pol.Org()
	if o == nil {
		return nil
	}
	cp := &CheckpointOrg{URL: o.URL}
	if t.last != nil {
		cp.Number, cp.ID = t.last.Number, t.last.ID
	}
	return cp
}
