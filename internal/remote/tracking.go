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
func (h *Helper) catchUpTracking(remote map[string]gitrepo.Hash, res *verify.Result) {
	if res == nil || h.Remote == "" || h.Remote == h.URL {
		return
	}
	specs := h.fetchRefspecs()
	if len(specs) == 0 {
		return
	}
	g := h.Repo.Git
	var updates []gitrepo.RefUpdate
	for _, st := range res.Refs {
		if st.Target.IsZero() || remote[st.Ref] != st.Target || strings.HasPrefix(st.Ref, "refs/secure/") {
			continue
		}
		dst, force, ok := mapFetched(specs, st.Ref)
		if !ok {
			continue
		}
		have, _, err := g.ResolveRef(dst)
		if err != nil || have == st.Target {
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

// fetchRefspecs are the remote's fetch refspecs; one that does not parse
// is left out (git fetch will say what is wrong with it).
func (h *Helper) fetchRefspecs() []gitrepo.Refspec {
	vals, err := h.Repo.Git.ConfigAll(h.configKey("fetch"))
	if err != nil {
		return nil
	}
	var specs []gitrepo.Refspec
	for _, v := range vals {
		if s, err := gitrepo.ParseFetchRefspec(v); err == nil {
			specs = append(specs, s)
		}
	}
	return specs
}

// mapFetched is where a fetch with specs stores the remote ref name: the
// first refspec that maps it, unless a negative refspec excludes it.
func mapFetched(specs []gitrepo.Refspec, name string) (dst string, force, ok bool) {
	for _, s := range specs {
		if s.Negative && s.MatchSrc(name) {
			return "", false, false
		}
	}
	for _, s := range specs {
		if d, ok := s.DstOf(name); ok {
			return d, s.Force, true
		}
	}
	return "", false, false
}
