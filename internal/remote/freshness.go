package remote

import (
	"errors"
	"time"

	"github.com/git-secure/git-secure/internal/freshness"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/verify"
)

// timestampUpdate is the move of the local freshness statement to the
// remote's, so that git secure verify in this clone judges it. Only a
// statement signed by the freshness keys of the policy in force (the
// remote's, verified by now) is adopted: a mirror could otherwise plant a
// far-future garbage statement that every later verify refuses. A local
// statement is kept over the remote's only when it verifies too and is
// newer; when the policy sets no freshness the local statement is
// dropped (no statement is judged, and none can be trusted).
func (h *Helper) timestampUpdate(remote map[string]gitrepo.Hash) (gitrepo.RefUpdate, bool) {
	g := h.Repo.Git
	want := remote[freshness.Ref]
	have, _, err := g.ResolveRef(freshness.Ref)
	if err != nil {
		return gitrepo.RefUpdate{}, false
	}
	drop := gitrepo.RefUpdate{Name: freshness.Ref, Old: have}
	pol, err := h.Repo.PolicyAt(remote[policy.Ref])
	if err != nil || pol.Freshness() == nil {
		return drop, !have.IsZero()
	}
	now := h.Repo.Now()
	theirs := verifiedStatement(g, pol, want, now)
	ours := verifiedStatement(g, pol, have, now)
	switch {
	case theirs == nil && ours == nil:
		return drop, !have.IsZero()
	case theirs == nil || want == have:
		return gitrepo.RefUpdate{}, false
	case ours != nil && ours.Time.After(theirs.Time):
		return gitrepo.RefUpdate{}, false
	}
	return gitrepo.RefUpdate{Name: freshness.Ref, Old: have, New: want}, true
}

// verifiedStatement is the statement of commit h when it is signed by
// the freshness keys of pol and not dated beyond now plus the skew, else
// nil (also for a zero h): a future-dated statement would be kept over
// every genuine one until its date.
func verifiedStatement(g *gitrepo.Repo, pol *policy.Policy, h gitrepo.Hash, now time.Time) *freshness.Signed {
	if h.IsZero() {
		return nil
	}
	sd, err := freshness.Read(g, h)
	if err != nil || freshness.VerifySignatures(sd, pol) != nil || sd.Time.After(now.Add(freshness.MaxSkew)) {
		return nil
	}
	return sd
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

// staleForPush says whether err, from verifying the remote's state while
// a push brings its metadata in (the caller's to know), fails only on freshness, and warns about
// each such problem. A push only needs the remote's verified log to build
// on: a stopped timestamp job must not stop everyone's pushes. A fetch,
// a clone and git secure verify still refuse the stale state.
func (h *Helper) staleForPush(err error) bool {
	var failed *verify.Failed
	if !errors.As(err, &failed) || len(failed.Problems) == 0 {
		return false
	}
	for _, p := range failed.Problems {
		if !errors.Is(p, verify.ErrStale) {
			return false
		}
	}
	for _, p := range failed.Problems {
		h.logf("warning: %s", p.Error())
	}
	h.logf("warning: pushing anyway: a push only builds on the remote's log, which verifies; git fetch and git secure verify refuse this state until %s is fresh again (ask the server's administrator whether its timestamp job stopped)", freshness.Ref)
	return true
}
