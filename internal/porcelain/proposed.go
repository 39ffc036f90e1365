package porcelain

import (
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/verify"
)

// VerifyProposed verifies a proposed state of the refs (values: a server's
// refs as a push would leave them, or what a remote serves) against the
// log it holds, under this clone's root key pin, starting from its
// verification checkpoint, and saves the new checkpoint when everything
// verified. It is the one "verify this state" of the server's pre-receive
// hook and of git-remote-secure; opts says what each adds (a budget,
// freshness). A state that does not verify is a *verify.Failed error.
func (r *Repo) VerifyProposed(values map[string]gitrepo.Hash, opts verify.Options) (*verify.Result, error) {
	pin, threshold, err := r.PinnedRoot()
	if err != nil {
		return nil, err
	}
	opts.Now, opts.RefValues = r.Now(), values
	opts.RootKeys, opts.RootThreshold = pin, threshold
	if opts.Org == nil {
		c := r.OrgCache()
		c.SkipFreshness = c.SkipFreshness || opts.SkipFreshness
		opts.Org = c
	}
	return verify.WithStore(r.Git, r.Checkpoints(), opts, false)
}
