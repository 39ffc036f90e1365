package porcelain

import (
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
)

// The operations the hooks and the remote helper ask of a repository
// beyond recording and verifying: ref snapshots, private namespaces that a
// remote's refs are fetched into, the policy at a commit, and what the
// log records.

// RefValues returns the refs that patterns name (full names, or prefixes
// ending in "/", as gitrepo.ListRefs takes them), by name, read in one
// process.
func (r *Repo) RefValues(patterns ...string) (map[string]gitrepo.Hash, error) {
	refs, err := r.Git.ListRefs(patterns...)
	if err != nil {
		return nil, err
	}
	out := make(map[string]gitrepo.Hash, len(refs))
	for _, x := range refs {
		out[x.Name] = x.Hash
	}
	return out, nil
}

// NamespaceRefs returns the refs fetched into the private namespace ns
// ("refs/..." fetched as ns+"/..."), under their names on the remote.
func (r *Repo) NamespaceRefs(ns string) (map[string]gitrepo.Hash, error) {
	refs, err := r.Git.ListRefs(ns + "/")
	if err != nil {
		return nil, err
	}
	out := make(map[string]gitrepo.Hash, len(refs))
	for _, x := range refs {
		out["refs/"+strings.TrimPrefix(x.Name, ns+"/")] = x.Hash
	}
	return out, nil
}

// DropNamespace deletes every ref of the private namespace ns, each with
// compare-and-swap (its objects stay until git gc). Failing to only
// leaves refs behind that the next run of the same pid replaces.
func (r *Repo) DropNamespace(ns, message string) {
	refs, err := r.Git.ListRefs(ns + "/")
	if err != nil || len(refs) == 0 {
		return
	}
	del := make([]gitrepo.RefUpdate, 0, len(refs))
	for _, x := range refs {
		del = append(del, gitrepo.RefUpdate{Name: x.Name, Old: x.Hash})
	}
	_ = r.Git.UpdateRefs(del, message)
}

// PolicyAt loads the policy of commit h (a refs/secure/policy value).
//
// A policy that inherits an organisation policy is returned combined with
// the organisation's latest version (fetched once per process): the
// policy new entries and pushes are judged by.
func (r *Repo) PolicyAt(h gitrepo.Hash) (*policy.Policy, error) {
	p, err := r.SignedPolicyAt(h)
	if err != nil {
		return nil, err
	}
	return r.Judging(p)
}

// SignedPolicyAt loads the policy of commit h and checks its signatures,
// without the organisation policy it may inherit. It reads only git, not
// the repository's organisation cache (OrgCache, which is not safe for
// concurrent use), so it may run in a goroutine of its own (the remote
// helper's background load); Judging then completes it.
func (r *Repo) SignedPolicyAt(h gitrepo.Hash) (*policy.Policy, error) {
	return policy.LoadSigned(r.Git, h, nil)
}

// Judging returns the policy new entries and pushes are judged by under
// p (from SignedPolicyAt): p itself, or p combined with the latest
// version of the organisation policy it inherits. It uses OrgCache: call
// it from the goroutine that owns the Repo.
func (r *Repo) Judging(p *policy.Policy) (*policy.Policy, error) {
	judging, _, err := r.withOrg(p)
	return judging, err
}

// LatestEntry returns the latest entry for ref in the log at tip (nil if
// it has none), read from the log alone (the checkpoint is not asked).
func (r *Repo) LatestEntry(tip gitrepo.Hash, ref string) (*rsl.Record, error) {
	return rsl.LatestFor(r.Git, tip, ref)
}
