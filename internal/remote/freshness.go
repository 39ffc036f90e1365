package remote

import (
	"github.com/git-secure/git-secure/internal/freshness"
	"github.com/git-secure/git-secure/internal/gitrepo"
)

// timestampUpdate is the move of the local freshness statement to the
// remote's verified one, so that git secure verify in this clone judges
// it: only to a statement no older than the local one (an older one
// verified as fresh enough, but keeps nothing better).
func (h *Helper) timestampUpdate(remote map[string]gitrepo.Hash) (gitrepo.RefUpdate, bool) {
	g := h.Repo.Git
	want := remote[freshness.Ref]
	have, _, err := g.ResolveRef(freshness.Ref)
	if err != nil || want.IsZero() || want == have {
		return gitrepo.RefUpdate{}, false
	}
	theirs, err := freshness.Read(g, want)
	if err != nil {
		return gitrepo.RefUpdate{}, false
	}
	if !have.IsZero() {
		if ours, err := freshness.Read(g, have); err == nil && ours.Time.After(theirs.Time) {
			return gitrepo.RefUpdate{}, false
		}
	}
	return gitrepo.RefUpdate{Name: freshness.Ref, Old: have, New: want}, true
}

// notCarried says why the helper does not push dst itself: a freshness
// statement is signed where the key is and pushed with plain git (the
// helper sends the metadata of its own state, never this ref); answering
// "ok" would tell a bot its statement landed when it did not.
func notCarried(dst string) (string, bool) {
	if dst != freshness.Ref {
		return "", false
	}
	return "git-remote-secure does not carry " + freshness.Ref + ": push it with plain git to the server's URL (git push URL +" + freshness.Ref + ":" + freshness.Ref + ")", true
}
