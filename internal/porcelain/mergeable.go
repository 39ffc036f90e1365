package porcelain

import (
	"fmt"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// Mergeable explains the update that merging head into base would make:
// base's ref moving from the value its latest log entry records to head
// (the commit that would land: a fast-forward head, or the merge commit a
// forge prepares, such as GitHub's refs/pull/N/merge, which CI checks
// out). signer is the person who would sign the entry ("" for none: a
// forge's merge button is no person, so every approval must come from the
// approvers). It answers "would this satisfy the policy, and who must
// still approve?" without recording anything.
func (r *Repo) Mergeable(base, head, signer string) (*Explanation, error) {
	ref, rslTip, pol, err := r.refUnderPolicy(base, "this repository has no git-secure log: fetch refs/secure/* (git fetch origin '+refs/secure/*:refs/secure/*')")
	if err != nil {
		return nil, err
	}
	to, err := r.Git.ResolveRevision(head)
	if err != nil {
		return nil, usage("unknown commit %q: fetch it first", head)
	}
	if signer != "" {
		if _, ok := pol.Person(signer); !ok {
			return nil, usage("--signer %s is not a person of the policy in force (git secure policy list)", signer)
		}
	}
	x := &Explanation{Ref: ref, Approved: []string{}, Rules: []ExplainedRule{}, Failures: []ExplainedFailure{}, Signer: signer}
	last, err := r.latestFor(rslTip, ref)
	if err != nil {
		return nil, err
	}
	if last != nil {
		x.Recorded, x.Entry = last.Entry.New, last.Entry.Number
	}
	x.Current = to
	x.Old, x.New = x.Recorded, to
	x.Pending = x.Old != x.New
	if !x.Pending {
		x.Notes = append(x.Notes, fmt.Sprintf("%s already records %s: merging changes nothing", ref, shortHex(to)))
		x.Satisfied = true
		x.Protected = pol.Protected(ref)
		for _, rule := range pol.RulesFor(ref) {
			x.Rules = append(x.Rules, ExplainedRule{RuleDoc: RuleDoc{Name: rule.Name, Refs: rule.Refs, Paths: rule.Paths, Allow: rule.Allow, Threshold: rule.Threshold, TestsBy: rule.TestsBy, EveryRef: rule.EveryRef}})
		}
		return x, nil
	}
	if !x.Old.IsZero() {
		if ok, err := r.Git.IsAncestor(x.Old, to); err == nil && !ok {
			x.Notes = append(x.Notes, fmt.Sprintf("%s does not contain %s's recorded tip %s: the update is not a fast-forward (update the branch, or check the forge's merge commit)", shortHex(to), ref, shortHex(x.Old)))
		}
	}
	if err := r.evaluate(x, pol, rslTip); err != nil {
		return nil, err
	}
	return x, nil
}

func shortHex(h gitrepo.Hash) string { return h.String()[:12] }
