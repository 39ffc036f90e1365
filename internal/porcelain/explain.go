package porcelain

import (
	"fmt"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/verify"
)

// Explanation says which rules apply to a ref and how far an update of it
// is from satisfying them.
type Explanation struct {
	Ref      string       `json:"ref"`
	Recorded gitrepo.Hash `json:"recorded"`        // latest entry's value
	Current  gitrepo.Hash `json:"current"`         // the ref's value here
	Entry    uint64       `json:"entry,omitempty"` // latest entry
	Pending  bool         `json:"pending"`         // Current is not recorded yet
	Old      gitrepo.Hash `json:"old"`             // the update explained
	New      gitrepo.Hash `json:"new"`
	Signer   string       `json:"signer,omitempty"` // who signs (entry signer, or you)
	// Missing: the ref is neither here nor in the log, so there is no
	// update to judge; Rules are the rules that would apply to it.
	Missing bool `json:"missing,omitempty"`
	// SignerKey is the fingerprint of your key when the pending update's
	// signer is no person in the policy.
	SignerKey string   `json:"signerKey,omitempty"`
	Approved  []string `json:"approvedBy"` // valid approvals of that update
	// ViaForge says which approvals came through a forge bridge (a
	// review on GitHub or GitLab recorded by a trusted forge app).
	ViaForge  []verify.ForgeApproval `json:"viaForge,omitempty"`
	Notes     []string               `json:"notes,omitempty"`
	Rules     []ExplainedRule        `json:"rules"`
	Failures  []ExplainedFailure     `json:"failures"`
	Satisfied bool                   `json:"satisfied"`
	Protected bool                   `json:"protected"`
}

// RuleDoc describes a rule for people and machines: policy list --json
// lists it as is, explain and verify --mergeable with what they found.
type RuleDoc struct {
	Name      string   `json:"name"`
	Refs      []string `json:"refs,omitempty"`
	Paths     []string `json:"paths,omitempty"`
	Allow     []string `json:"allow"`
	Threshold int      `json:"threshold"`
	Require   []string `json:"require,omitempty"`
	TestsBy   []string `json:"requireTestsBy,omitempty"`
	// TreeApprovals: approvals bound to the new commit's tree count.
	TreeApprovals bool `json:"treeApprovals,omitempty"`
	// SignedPush: every entry needs a push certificate (git push --signed).
	SignedPush bool `json:"requireSignedPush,omitempty"`
	// EveryRef: an older path rule without ref patterns that covers every
	// ref (policy.Rule.EveryRef).
	EveryRef bool `json:"everyRef,omitempty"`
}

// NewRuleDoc describes r.
func NewRuleDoc(r *policy.Rule) RuleDoc {
	d := RuleDoc{Name: r.Name, Refs: r.Refs, Paths: r.Paths, Allow: r.Allow, Threshold: r.Threshold, TestsBy: r.TestsBy,
		TreeApprovals: r.TreeApprovals, SignedPush: r.SignedPush, EveryRef: r.EveryRef}
	for _, q := range r.Require {
		d.Require = append(d.Require, q.String())
	}
	return d
}

// ExplainedRule is one rule that covers the ref.
type ExplainedRule struct {
	RuleDoc
	Applies bool     `json:"applies"`          // to the update explained (path rules only when protected files change)
	Signed  []string `json:"signed,omitempty"` // persons counted
	Files   []string `json:"files,omitempty"`  // protected files the update changes
	// MoreFiles counts the protected files changed beyond Files: a diff
	// too large to list (a tree bomb) is judged while walked, and only
	// its first files are kept.
	MoreFiles int `json:"moreFiles,omitempty"`
	// Chain names the delegations from the top-level rules down to the
	// rule file that holds the rule (empty for a top-level rule).
	Chain []string `json:"chain,omitempty"`
	// Org says the chain starts at the organisation policy's rules keys
	// (a rule file the repository inherits).
	Org bool `json:"org,omitempty"`
	// Untrusted says why the rule file of a delegation counts for nothing
	// (the rule then fails every update in its namespace).
	Untrusted string `json:"untrusted,omitempty"`
}

// ExplainedFailure is one unmet requirement with what to do about it.
type ExplainedFailure struct {
	Rule   string `json:"rule,omitempty"`
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
	Next   string `json:"next"`
}

// Explain evaluates the update of ref that is pending (its current value
// against its latest entry) or, when none is, the update the latest entry
// recorded.
func (r *Repo) Explain(name, keyFile string) (*Explanation, error) {
	ref, rslTip, pol, err := r.refUnderPolicy(name, "this repository has no git-secure log: run git secure init, or fetch refs/secure/*")
	if err != nil {
		return nil, err
	}
	x := &Explanation{Ref: ref, Approved: []string{}, Rules: []ExplainedRule{}, Failures: []ExplainedFailure{}}
	x.Current, _, err = r.Git.ResolveRef(ref)
	if err != nil {
		return nil, err
	}
	last, err := r.latestFor(rslTip, ref)
	if err != nil {
		return nil, err
	}
	if last == nil && x.Current.IsZero() {
		// No update to judge (an update from nothing to nothing would
		// print an approval of it): only the rules that would apply.
		x.Missing = true
		if pol, _, err = r.withOrg(pol); err != nil {
			return nil, err
		}
		x.Protected = pol.Protected(ref)
		x.Rules = explainedRules(pol, ref, nil)
		return x, nil
	}
	if pol, err = r.explainedUpdate(x, last, pol, keyFile); err != nil {
		return nil, err
	}
	if err := r.evaluate(x, pol, rslTip); err != nil {
		return nil, err
	}
	return x, nil
}

// evaluate decides x's update (x.Ref from x.Old to x.New, signed by
// x.Signer) under pol with the approvals stored here, and fills in the
// rules, who counted and what is missing.
func (r *Repo) evaluate(x *Explanation, pol *policy.Policy, rslTip gitrepo.Hash) error {
	ref := x.Ref
	x.Protected = pol.Protected(ref)
	d, err := r.explainDecision(x, pol, rslTip)
	if err != nil {
		return err
	}
	applied := map[string]verify.RuleDecision{}
	for _, rd := range d.Rules {
		applied[rd.Rule.Name] = rd
	}
	x.Rules = explainedRules(pol, ref, applied)
	for _, rule := range x.Rules {
		if rule.SignedPush && rule.Applies && x.Pending {
			// Not judged here: the certificate exists only once the
			// server has accepted the push.
			x.Notes = append(x.Notes, fmt.Sprintf("rule %s also needs the update pushed with a push certificate: git push through git-secure signs it (git push --signed) when the server accepts signed pushes; the server refuses it otherwise", rule.Name))
		}
	}
	for _, f := range d.Failures() {
		x.Failures = append(x.Failures, ExplainedFailure{Rule: f.Rule, Kind: f.Kind.Error(), Detail: f.Detail, Next: f.Hint})
	}
	x.Satisfied = d.Satisfied()
	return nil
}

// explainedRules lists the rules of pol that apply to ref, with who
// counted toward each under the decision's rules applied (nil: no update
// was judged).
func explainedRules(pol *policy.Policy, ref string, applied map[string]verify.RuleDecision) []ExplainedRule {
	out := []ExplainedRule{}
	for _, rule := range pol.RulesFor(ref) {
		er := ExplainedRule{RuleDoc: NewRuleDoc(rule), Chain: rule.Chain, Org: rule.Org, Untrusted: rule.Untrusted}
		if rd, ok := applied[rule.Name]; ok {
			er.Applies, er.Signed, er.Files = true, rd.Signed, rd.Paths
			er.MoreFiles = max(rd.PathCount-len(rd.Paths), 0)
		}
		out = append(out, er)
	}
	return out
}

// explainedUpdate fills in the update x explains: the pending one, signed
// by the user's key, or else the one the latest entry (last) recorded,
// judged under the policy in force then (returned; else pol).
func (r *Repo) explainedUpdate(x *Explanation, last *rsl.Record, pol *policy.Policy, keyFile string) (*policy.Policy, error) {
	if last != nil {
		x.Recorded, x.Entry = last.Entry.New, last.Entry.Number
	}
	x.Pending = x.Current != x.Recorded
	if x.Pending {
		x.Old, x.New = x.Recorded, x.Current
		// Judged as the push will be: with the organisation's latest
		// policy when the policy inherits one.
		pol, _, err := r.withOrg(pol)
		if err != nil {
			return nil, err
		}
		if s, err := r.LoadSigner(keyFile); err == nil {
			fp := sign.Fingerprint(s.PublicKey())
			if p, ok := pol.PersonByFingerprint(fp); ok {
				x.Signer = p.Name
			} else {
				x.SignerKey = fp
			}
			s.Close()
		}
		return pol, nil
	}
	if last == nil {
		return pol, nil
	}
	x.Old, x.New = last.Entry.Old, last.Entry.New
	// A recorded update is judged as verification judged it: under
	// the policy in force when it was recorded, not today's (a rule
	// added since would otherwise fail every earlier entry).
	if then, n, err := r.policyBefore(last); err != nil {
		return nil, err
	} else if then != nil {
		pol = then
		x.Notes = append(x.Notes, fmt.Sprintf("entry #%d is judged under the policy in force when it was recorded (policy entry #%d)", last.Entry.Number, n))
	}
	// and with the organisation policy version the entry names, as
	// verification combined them.
	if o := pol.Org(); o != nil && last.Entry.Org != nil && !last.Entry.IsPolicy() {
		orgPol, err := r.OrgCache().PolicyAt(o, *last.Entry.Org)
		if err != nil {
			return nil, fmt.Errorf("explain: entry #%d: %w", last.Entry.Number, err)
		}
		if pol, err = policy.Inherit(orgPol, pol); err != nil {
			return nil, fmt.Errorf("explain: entry #%d: %w", last.Entry.Number, err)
		}
		x.Notes = append(x.Notes, fmt.Sprintf("entry #%d is judged with organisation policy version %d, which it names", last.Entry.Number, last.Entry.Org.Number))
	}
	if fp, err := sign.SignatureFingerprint(last.Commit.Signature); err == nil {
		if p, ok := pol.PersonByFingerprint(fp); ok {
			x.Signer = p.Name
		}
	}
	return pol, nil
}

// explainDecision decides x's update under pol as verification would, and
// notes in x who approved it.
func (r *Repo) explainDecision(x *Explanation, pol *policy.Policy, rslTip gitrepo.Hash) (*verify.Decision, error) {
	store, err := attest.OpenStore(r.Git)
	if err != nil {
		return nil, err
	}
	revoked := func(fp string) bool { return pol.RevokedFrom(fp) != 0 }
	t := verify.Transition{Ref: x.Ref, Old: x.Old, New: x.New, Signer: x.Signer, CheckPaths: true, EveryRule: true}
	decide := func(store *attest.Store) (*verify.Decision, []string, []string, error) {
		approvers, notes, err := verify.Approvers(store, pol, x.Ref, x.Old, x.New, revoked)
		if err != nil {
			return nil, nil, nil, err
		}
		// Approvers counts forge reviews too; this says which came so.
		_, via, _, err := verify.ForgeApprovers(store, pol, x.Ref, x.Old, x.New, revoked)
		if err != nil {
			return nil, nil, nil, err
		}
		x.ViaForge = via
		// Tree-bound forge reviews (a merge button's commit), where a rule
		// counts tree-bound approvals.
		if !x.New.IsZero() && allowsTreeApprovals(pol, x.Ref) {
			if tree, err := r.treeOf(x.New); err == nil {
				_, tvia, _, err := verify.ForgeTreeApprovers(store, pol, x.Ref, x.Old, tree, revoked)
				if err != nil {
					return nil, nil, nil, err
				}
				x.ViaForge = append(x.ViaForge, tvia...)
				// Why tree-bound approvals did not count (decisionInputs
				// counts them).
				_, more, err := verify.TreeApprovers(store, pol, x.Ref, x.Old, tree, revoked)
				if err != nil {
					return nil, nil, nil, err
				}
				notes = append(notes, more...)
			}
		}
		in, err := r.decisionInputs(store, pol, rslTip, t, approvers)
		if err != nil {
			return nil, nil, nil, err
		}
		d, err := verify.Decide(r.Git, pol, t, in)
		return d, append(approvers, in.TreeApprovers...), notes, err
	}
	d, approved, notes, err := decide(store)
	if err != nil {
		return nil, err
	}
	if !d.Satisfied() || len(x.ViaForge) > 0 {
		// As verification does: approvals a store commit dropped still
		// count (the store is append-only), and so do withdrawals of
		// forge reviews (a dropped one must not bring a review back).
		view, dropped, err := store.WithHistory()
		if err != nil {
			return nil, err
		}
		if dropped {
			if d, approved, notes, err = decide(view); err != nil {
				return nil, err
			}
		}
	}
	x.Approved = append(x.Approved, approved...)
	x.Notes = append(x.Notes, notes...)
	return d, nil
}

// policyBefore returns the policy recorded by the newest policy entry
// before rec, the policy rec was verified under (an entry of the policy
// itself is also accepted under its own policy, which explain does not
// judge), and that entry's number. Nil when no policy entry precedes rec.
func (r *Repo) policyBefore(rec *rsl.Record) (*policy.Policy, uint64, error) {
	if rec.Entry.IsPolicy() || len(rec.Commit.Parents) == 0 {
		return nil, 0, nil
	}
	pe, err := r.latestFor(rec.Commit.Parents[0], rsl.PolicyRef)
	if err != nil || pe == nil {
		return nil, 0, err
	}
	pol, err := policy.LoadSigned(r.Git, pe.Entry.New, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("explain: the policy of entry #%d: %w", pe.Entry.Number, err)
	}
	return pol, pe.Entry.Number, nil
}

// refUnderPolicy resolves name to a full ref and reads the log's tip and
// the policy in force; noLog is the error's text when there is no log.
func (r *Repo) refUnderPolicy(name, noLog string) (string, gitrepo.Hash, *policy.Policy, error) {
	ref, err := r.FullRefName(name)
	if err != nil {
		return "", gitrepo.Hash{}, nil, err
	}
	rslTip, _, err := r.tips()
	if err != nil {
		return "", gitrepo.Hash{}, nil, err
	}
	if rslTip.IsZero() {
		return "", gitrepo.Hash{}, nil, usage("%s", noLog)
	}
	pol, _, err := r.CurrentPolicy()
	if err != nil {
		return "", gitrepo.Hash{}, nil, err
	}
	return ref, rslTip, pol, nil
}

// allowsTreeApprovals reports whether a rule covering ref counts
// tree-bound approvals.
func allowsTreeApprovals(pol *policy.Policy, ref string) bool {
	for _, rule := range pol.RulesFor(ref) {
		if rule.TreeApprovals {
			return true
		}
	}
	return false
}
