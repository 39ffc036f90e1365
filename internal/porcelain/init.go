package porcelain

import (
	"fmt"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/verify"
)

// InitResult says what Init did.
type InitResult struct {
	Fingerprint  string        `json:"fingerprint"`
	PolicyCommit gitrepo.Hash  `json:"policyCommit"`
	Entries      int           `json:"entries"`
	Refs         []gitrepo.Ref `json:"refs"`
	// Remote names the remote whose branches were recorded although no
	// local branch of that name exists (a fresh clone has one local
	// branch); RemoteOnly lists them, under their refs/heads/ names.
	Remote     string        `json:"remote,omitempty"`
	RemoteOnly []gitrepo.Ref `json:"remoteOnly,omitempty"`
}

// Init sets a repository up: the signer's key becomes the root key and the
// rules key (threshold 1), the first policy is written and recorded as
// entry 1, and every existing branch and tag is recorded as it stands, so
// history before Init is the accepted starting point.
func (r *Repo) Init(keyFile string) (*InitResult, error) {
	rslTip, policyTip, err := r.tips()
	if err != nil {
		return nil, err
	}
	if !rslTip.IsZero() || !policyTip.IsZero() {
		return nil, usage("this repository is already set up for git-secure (refs/secure/rsl or refs/secure/policy exists); see git secure policy list and git secure verify")
	}
	s, who, err := r.signingAs(keyFile)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	now := r.Now()
	p, err := policy.New(s.PublicKey(), now)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	ts, err := sign.TUFSigner(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if err := p.SignRoot(ts); err != nil {
		return nil, err
	}
	if err := p.SignTargets(ts); err != nil {
		return nil, err
	}
	if err := verify.CheckPolicy(nil, p, now); err != nil {
		return nil, fmt.Errorf("init: the new policy does not verify: %w", err)
	}
	pc, err := policy.Save(r.Git, p, gitrepo.ZeroHash, who, "git-secure policy: root v1, rules v1")
	if err != nil {
		return nil, err
	}
	refs, err := r.Git.ListRefs("refs/heads/", "refs/tags/")
	if err != nil {
		return nil, err
	}
	remote, remoteOnly := r.remoteOnlyBranches(refs)
	refs = append(refs, remoteOnly...)
	entries := []*rsl.Entry{{Number: 1, Type: rsl.TypeRef, Ref: rsl.PolicyRef, New: pc}}
	for _, ref := range refs {
		if err := rsl.ValidateRecordedRef(ref.Name); err != nil {
			continue // git accepts a few names we do not record; they stay unprotected
		}
		entries = append(entries, &rsl.Entry{Number: uint64(len(entries) + 1), Type: rsl.TypeRef, Ref: ref.Name, New: ref.Hash})
	}
	tip := gitrepo.ZeroHash
	if r.InitProgress != nil {
		r.InitProgress(0, len(entries))
	}
	for i, e := range entries {
		if tip, err = rsl.Write(r.Git, e, tip, who, signEntry(s)); err != nil {
			return nil, err
		}
		if r.InitProgress != nil && ((i+1)%100 == 0 || i+1 == len(entries)) {
			r.InitProgress(i+1, len(entries))
		}
	}
	updates := []gitrepo.RefUpdate{{Name: policy.Ref, New: pc}, {Name: rsl.Ref, New: tip}}
	if err := r.Git.UpdateRefs(updates, "git-secure: init"); err != nil {
		if isRefChanged(err) {
			return nil, usage("another git-secure init ran at the same time; run git secure verify to see its result")
		}
		return nil, err
	}
	res := &InitResult{Fingerprint: sign.Fingerprint(s.PublicKey()), PolicyCommit: pc, Entries: len(entries), Refs: refs[:len(refs)-len(remoteOnly)]}
	if len(remoteOnly) > 0 {
		res.Remote, res.RemoteOnly = remote, remoteOnly
	}
	return res, nil
}

// remoteOnlyBranches lists the branches of the remote a verification
// judges (verify.ChooseRemote: the current branch's, else origin, else the
// only one) that have no local branch of the same name, as its fetch
// refspecs map them back. In a fresh clone only the default branch is
// local; the project's other branches would otherwise stay unrecorded,
// and a rule added for them later would find no entry to judge. A clone
// without a remote, or whose remote cannot be chosen or mapped, has none.
func (r *Repo) remoteOnlyBranches(local []gitrepo.Ref) (string, []gitrepo.Ref) {
	remote, err := verify.ChooseRemote(r.Git, "")
	if err != nil {
		return "", nil
	}
	st, err := verify.LoadCloneState(r.Git, remote)
	if err != nil {
		return "", nil
	}
	have := make(map[string]bool, len(local))
	for _, ref := range local {
		have[ref.Name] = true
	}
	// A remote-tracking ref that more than one fetch refspec writes (the
	// common +refs/pull/*/head:refs/remotes/origin/pr/* next to the
	// default refspec makes origin/pr/1 either the branch pr/1 or the
	// pull request refs/pull/1/head) cannot be mapped back without asking
	// the remote: it is not taken for a branch. Recording it made init
	// invent branches the remote never had, which the first push then
	// created on the server.
	source, ambiguous := map[string]string{}, map[string]bool{}
	for _, t := range st.Tracked {
		if src, ok := source[t.Tracking]; ok && src != t.Ref {
			ambiguous[t.Tracking] = true
		}
		source[t.Tracking] = t.Ref
	}
	var out []gitrepo.Ref
	for _, t := range st.Tracked {
		if !strings.HasPrefix(t.Ref, "refs/heads/") || have[t.Ref] || ambiguous[t.Tracking] {
			continue
		}
		have[t.Ref] = true
		out = append(out, gitrepo.Ref{Name: t.Ref, Hash: t.Hash})
	}
	return remote, out
}
