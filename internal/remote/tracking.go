package remote

import (
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/verify"
)

// catchUpTracking moves the remote-tracking refs of the refs a push's
// metadata sync verified, as a git fetch would have. The sync fetched the
// remote's whole state and verified it, but git updates only the refs it
// pushes: a log that arrives with entries for branches fetched earlier
// would leave those remote-tracking refs behind their entries, and
// verification would take them for a rollback. Only values the verified
// log records are moved; a move that is not a fast-forward is left to
// git fetch unless the refspec forces.
// res is the result of a verification that passed.
func (h *Helper) catchUpTracking(remote map[string]gitrepo.Hash, res *verify.Result) {
	if h.Remote == "" || h.Remote == h.URL {
		return
	}
	specs := h.fetchRefspecs()
	if len(specs) == 0 {
		return
	}
	g := h.Repo.Git
	refs, err := g.ListRefs("refs/")
	if err != nil {
		return
	}
	local := make(map[string]gitrepo.Hash, len(refs))
	for _, r := range refs {
		local[r.Name] = r.Hash
	}
	var updates []gitrepo.RefUpdate
	for _, st := range res.Refs {
		if st.Target.IsZero() || remote[st.Ref] != st.Target || strings.HasPrefix(st.Ref, "refs/secure/") {
			continue
		}
		dst, force, ok := specs.Map(st.Ref)
		if !ok {
			continue
		}
		have := local[dst]
		if have == st.Target {
			continue
		}
		if !have.IsZero() && !force {
			if ff, err := g.IsAncestor(have, st.Target); err != nil || !ff {
				continue
			}
		}
		updates = append(updates, gitrepo.RefUpdate{Name: dst, Old: have, New: st.Target})
	}
	if len(updates) == 0 {
		return
	}
	if err := g.UpdateRefs(updates, "git-secure: push to "+h.Remote+" brought its verified log"); err != nil {
		h.logf("note: the remote-tracking refs of %s are behind its log (%v); git fetch brings them", h.Remote, err)
	}
}

// fetchRefspecs are the remote's fetch refspecs; nil when one does not
// parse (git fetch will say what is wrong with it, and move the refs).
func (h *Helper) fetchRefspecs() gitrepo.Refspecs {
	vals, err := h.Repo.Git.ConfigAll(h.configKey("fetch"))
	if err != nil {
		return nil
	}
	specs := make(gitrepo.Refspecs, 0, len(vals))
	for _, v := range vals {
		s, err := gitrepo.ParseFetchRefspec(v)
		if err != nil {
			return nil
		}
		specs = append(specs, s)
	}
	return specs
}
