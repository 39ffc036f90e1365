package remote

import (
	"errors"
	"fmt"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/rsl"
)

// replayOwn handles a remote log that forked from the local one. When the
// fork is after the tip this clone last saw on the remote (seen), the
// local entries past it were never published: the remote did not rewrite
// anything, someone pushed between this clone's fetch and its own
// recording. Policy entries (a policy apply) are then signed again on top
// of the remote's log, as a push that lost the race records its ref
// entries again; it returns remote with the replayed log tip and the
// local policy, for the caller to verify and adopt. Anything else is
// refused, saying which case it is.
func (h *Helper) replayOwn(remote, local map[string]gitrepo.Hash, seen string) (map[string]gitrepo.Hash, error) {
	g := h.Repo.Git
	localTip, remoteTip := local[rsl.Ref], remote[rsl.Ref]
	seenTip, perr := gitrepo.ParseHash(seen)
	if perr != nil || !mustAncestor(g, seenTip, remoteTip) || !mustAncestor(g, seenTip, localTip) {
		return nil, h.refuse("the remote's log (%s) and yours (%s) have diverged: the remote rewrote its log or serves different logs to different clients; compare with another clone before trusting it", remoteTip.String()[:12], localTip.String()[:12])
	}
	base, ok, err := g.MergeBase(localTip, remoteTip)
	if err != nil || !ok {
		return nil, h.refuse("the remote's log (%s) and yours (%s) share no entry: %v", remoteTip.String()[:12], localTip.String()[:12], err)
	}
	s, err := h.Repo.LoadSigner("")
	if err != nil {
		return nil, h.refuse("your log has entries the remote lacks, and someone pushed since your last fetch: they must be signed again on top of the remote's log, but %s", keyProblem(err))
	}
	defer s.Close()
	rep, err := h.Repo.ReplayPolicyEntries(base, localTip, remoteTip, s)
	if errors.Is(err, porcelain.ErrNotReplayable) {
		return nil, h.refuse("someone pushed to the remote since your last fetch, and your log has entries the remote lacks (after %s) that cannot be recorded again on top of the remote's log (%s): %v. To drop them and start from the remote's state: git update-ref refs/secure/rsl %s %s && git update-ref refs/secure/policy %s, then make the change again",
			base.String()[:12], remoteTip.String()[:12], err, remoteTip, localTip, remote[policy.Ref])
	}
	if err != nil {
		return nil, fmt.Errorf("git-secure: replay your policy entries on the remote's log: %w", err)
	}
	for _, e := range rep.Entries {
		h.logf("someone pushed since your last fetch; your policy change is recorded again on top of the remote's log as entry #%d", e.Number)
	}
	out := make(map[string]gitrepo.Hash, len(remote))
	for name, v := range remote {
		out[name] = v
	}
	out[rsl.Ref], out[policy.Ref] = rep.Tip, local[policy.Ref]
	return out, nil
}
