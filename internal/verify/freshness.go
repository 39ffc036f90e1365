package verify

import (
	"github.com/git-secure/git-secure/internal/freshness"
	"github.com/git-secure/git-secure/internal/gitrepo"
)

// checkFreshness judges the freshness statement when the policy in force
// at the tip requires one (its timestamp role): TUF's timestamp check,
// which bounds how long a frozen server or an old snapshot passes for the
// current state. A failure is a Problem of kind ErrStale.
func (v *verifier) checkFreshness() {
	if v.opts.SkipFreshness || v.finalPolicy == nil {
		return
	}
	if v.finalPolicy.Freshness() == nil {
		if v.opts.RequireFreshness {
			v.fail(nil, freshness.Ref, "", ErrStale, requiredHint, "this clone requires freshness (git config %s true), but the policy in force at the log tip sets none: an old snapshot, from before the project set freshness, would pass for the current state", freshness.RequireConfig)
		}
		return
	}
	stmt, err := v.statementRef()
	if err == nil {
		err = freshness.Judge(v.repo, v.finalPolicy, v.res.Tip, stmt, v.opts.Now)
	}
	if err != nil {
		v.fail(nil, freshness.Ref, "", ErrStale, freshness.Hint, "%v", err)
	}
}

const requiredHint = "compare with another clone or ask the project: if it has set freshness, this server (or mirror) serves a snapshot from before; if it never did (or removed it), git config --unset " + freshness.RequireConfig

func (v *verifier) statementRef() (gitrepo.Hash, error) {
	if v.opts.RefValues != nil {
		return v.opts.RefValues[freshness.Ref], nil
	}
	h, _, err := v.repo.ResolveRef(freshness.Ref)
	return h, err
}
