package porcelain

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/verify"
)

// FullRefName turns a short name (main, v1.0) into the full ref name that
// exists, preferring branches, then tags; a full name is only validated.
func (r *Repo) FullRefName(name string) (string, error) {
	if strings.HasPrefix(name, "refs/") {
		if err := rsl.ValidateRecordedRef(name); err != nil || name == rsl.PolicyRef {
			return "", usage("cannot record %q: %v", name, errOr(err, "the policy is recorded by git secure policy apply"))
		}
		return name, nil
	}
	if strings.HasPrefix(name, "-") {
		return "", usage("bad ref name %q", name)
	}
	var candidates []string
	for _, prefix := range []string{"refs/heads/", "refs/tags/"} {
		if gitrepo.ValidRefName(prefix+name) == nil {
			candidates = append(candidates, prefix+name)
		}
	}
	if len(candidates) > 0 {
		refs, err := r.Git.ListRefs(candidates...) // one process for both
		if err != nil {
			return "", err
		}
		for _, c := range candidates {
			for _, ref := range refs {
				if ref.Name == c {
					return c, nil
				}
			}
		}
	}
	full := "refs/heads/" + name
	if err := gitrepo.ValidRefName(full); err != nil {
		return "", usage("bad ref name %q: %v", name, err)
	}
	return full, nil
}

func errOr(err error, msg string) string {
	if err != nil {
		return err.Error()
	}
	return msg
}

// RecordResult says what Record did.
type RecordResult struct {
	Entry   uint64       `json:"entry"`
	ID      gitrepo.Hash `json:"id"`
	Ref     string       `json:"ref"`
	Old     gitrepo.Hash `json:"old"`
	New     gitrepo.Hash `json:"new"`
	NoOp    bool         `json:"noop"`
	Pending []string     `json:"pending,omitempty"` // what the entry still needs to verify
}

// Record appends an entry for ref's current value (a deletion when the ref
// is gone) signed with the user's key. It refuses, changing nothing, when
// the signer may not move the ref at all; when the signer is allowed but
// more approvals are needed it records and says who must still approve.
func (r *Repo) Record(name, keyFile string) (*RecordResult, error) {
	ahead := r.readPolicyAhead()
	ref, src, err := r.recordSource(name)
	if err != nil {
		return nil, err
	}
	s, who, err := r.signingAs(keyFile)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	r.Trace.Mark("record: ref and key")
	var res *RecordResult
	lost, err := Retry(func(n int) (bool, error) {
		if n > 1 {
			ahead = nil // read again whatever the log and the policy became
		}
		res, err = r.recordOnce(ref, src, s, who, ahead)
		return false, err
	})
	if lost {
		return nil, fmt.Errorf("%w: the log or %s kept changing while recording; run the command again", ErrRefused, ref)
	}
	return res, err
}

// recordSnapshot is what one attempt of Record reads, in one process.
type recordSnapshot struct {
	rslTip, policyTip, target gitrepo.Hash
	exists                    bool
}

func (r *Repo) snapshotFor(src string) (*recordSnapshot, error) {
	snap, err := r.Git.ListRefs(rsl.Ref, policy.Ref, attest.Ref, src)
	if err != nil {
		return nil, err
	}
	out := &recordSnapshot{}
	r.UseAttestations(gitrepo.ZeroHash) // unless the snapshot has it
	for _, x := range snap {
		switch x.Name {
		case rsl.Ref:
			out.rslTip = x.Hash
		case policy.Ref:
			out.policyTip = x.Hash
		case attest.Ref:
			r.UseAttestations(x.Hash)
		case src:
			out.target, out.exists = x.Hash, true
		}
	}
	if out.rslTip.IsZero() || out.policyTip.IsZero() {
		return nil, usage("this repository is not set up for git-secure: run git secure init, or fetch refs/secure/* from the remote")
	}
	return out, nil
}

// policyAhead is the policy a record reads and checks on another core
// from its start, before its snapshot of the refs says which policy judges
// the entry: the record's own work before the snapshot (the ref, the key,
// the identity) and its search of the log then overlap with it, where the
// log's search alone was shorter than reading the policy and checking its
// signatures, and the record waited. At the snapshot's policy tip it is
// that policy; a policy applied in between is read again (at).
type policyAhead struct {
	done chan struct{}
	tip  gitrepo.Hash
	pol  *policy.Policy
	err  error
}

func (r *Repo) readPolicyAhead() *policyAhead {
	a := &policyAhead{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		tip, ok, err := r.Git.ResolveRef(policy.Ref)
		if err != nil || !ok {
			return // the snapshot reports it
		}
		a.tip = tip
		a.pol, a.err = policy.LoadSigned(r.Git, tip, nil)
	}()
	return a
}

// at returns the signed policy at tip: the one read ahead when it is at
// tip, else read now.
func (a *policyAhead) at(r *Repo, tip gitrepo.Hash) (*policy.Policy, error) {
	if a != nil {
		<-a.done
		if !a.tip.IsZero() && a.tip == tip {
			return a.pol, a.err
		}
	}
	return policy.LoadSigned(r.Git, tip, nil)
}

func (r *Repo) recordOnce(ref, src string, s sign.Signer, who gitrepo.Ident, ahead *policyAhead) (*RecordResult, error) {
	// git update-ref starts first and waits for the transaction while the
	// log and the policy are read and the entry is checked, signed and
	// written; when there is nothing to record it is stopped unused.
	tx, err := r.Git.StartUpdateRefs(fmt.Sprintf("git-secure: record %s", ref))
	if err != nil {
		return nil, err
	}
	defer tx.Abort()
	snap, err := r.snapshotFor(src)
	if err != nil {
		return nil, err
	}
	r.Trace.Mark("record: refs read")
	// The policy is read and its signatures checked on the other core
	// (from the record's start: readPolicyAhead) while the log is searched
	// for ref's last entry.
	type loaded struct {
		pol *policy.Policy
		err error
	}
	polc := make(chan loaded, 1)
	go func() {
		pol, err := ahead.at(r, snap.policyTip)
		polc <- loaded{pol, err}
	}()
	last, old, err := r.recordedFor(snap.rslTip, ref)
	r.Trace.Mark("record: last entry found")
	lp := <-polc
	r.Trace.Mark("record: policy loaded")
	if err != nil {
		return nil, err
	}
	if !snap.exists && old.IsZero() {
		return nil, usage("ref %s does not exist%s", ref, r.trackedHint(ref))
	}
	res := &RecordResult{Ref: ref, Old: old, New: snap.target}
	if snap.target == old {
		res.NoOp = true
		if last != nil {
			res.Entry, res.ID = last.Entry.Number, last.ID
		}
		return res, nil
	}
	pol, err := lp.pol, lp.err
	if err != nil {
		return nil, err
	}
	moves := []verify.Transition{{Ref: ref, Old: old, New: snap.target, CheckPaths: true, EveryRule: true}}
	p, err := r.prepareMoves(snap.rslTip, pol, s, who, moves, false)
	if err != nil {
		return nil, err
	}
	if err := r.CommitWith(tx, p); err != nil {
		return nil, err
	}
	r.Trace.Mark("record: log moved")
	res.Entry, res.ID, res.Pending = p.Entries[0].Number, p.Tip, p.Pending
	return res, nil
}

// precheckMove refuses move t when its signer (fingerprint fp) may not make
// it under pol, and returns what an allowed move still needs (t.Signer is
// filled in from fp).
func (r *Repo) precheckMove(pol *policy.Policy, rslTip gitrepo.Hash, t verify.Transition, fp string) ([]string, error) {
	ref, old, new := t.Ref, t.Old, t.New
	if pol.RevokedByOrg(fp) {
		return nil, fmt.Errorf("%w: your key %s is revoked by the organisation policy, so nothing it signs counts in a repository that inherits it; use your new key", ErrRefused, fp)
	}
	if _, ok := pol.LookupKey(fp); !ok {
		return nil, fmt.Errorf("%w: your key %s is not in the policy, so your entries would not verify; ask a rules key holder to run: git secure policy add-person NAME --key YOUR.pub", ErrRefused, fp)
	}
	if from := pol.RevokedFrom(fp); from != 0 {
		return nil, fmt.Errorf("%w: your key %s is revoked (from entry #%d): nothing it signs counts; use your new key", ErrRefused, fp, from)
	}
	if !pol.Protected(ref) && len(pol.GlobalRules()) == 0 {
		return nil, nil
	}
	signer := ""
	if p, ok := pol.PersonByFingerprint(fp); ok {
		signer = p.Name
	}
	store, err := r.attestations()
	if err != nil {
		return nil, err
	}
	revoked := func(fp string) bool { return pol.RevokedFrom(fp) != 0 }
	approvers, ignored, err := verify.Approvers(store, pol, ref, old, new, revoked)
	if err != nil {
		return nil, err
	}
	if len(approvers) > 0 {
		// Approvals count once: if this exact update was recorded before,
		// they were used up there.
		again, err := r.transitionRecorded(rslTip, ref, old, new)
		if err != nil {
			return nil, err
		}
		if again {
			approvers = nil
		}
	}
	t.Signer = signer
	in, err := r.decisionInputs(store, pol, rslTip, t, approvers)
	if err != nil {
		return nil, err
	}
	d, err := verify.Decide(r.Git, pol, t, in)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	var pending []string
	for _, f := range d.Failures() {
		switch {
		case errors.Is(f.Kind, verify.ErrPolicyRule):
			return nil, fmt.Errorf("%w: %s: %s; %s", ErrRefused, ruleOrPolicy(f.Rule), f.Detail, f.Hint)
		case errors.Is(f.Kind, verify.ErrMissingObject) || errors.Is(f.Kind, verify.ErrBadObject):
			return nil, fmt.Errorf("%w: rule %s: %s; %s", ErrRefused, orPolicy(f.Rule), f.Detail, f.Hint)
		case errors.Is(f.Kind, verify.ErrNoTests):
			pending = append(pending, fmt.Sprintf("rule %s %s; %s", f.Rule, f.Detail, f.Hint))
		default:
			rule, isRule := pol.Rule(f.Rule)
			if isRule && (signer == "" || !signerCounts(pol, rule, signer)) {
				return nil, fmt.Errorf("%w: rule %s protects %s and you (%s) cannot sign for it: %s; ask one of its persons to record it, or to approve it: %s",
					ErrRefused, f.Rule, ref, orKey(signer, fp), f.Detail, f.Hint)
			}
			pending = append(pending, fmt.Sprintf("rule %s: %s; %s", orPolicy(f.Rule), f.Detail, f.Hint))
		}
	}
	if len(pending) > 0 {
		// Say why an approval the user can see does not count (one made
		// with a revoked key reads as missing otherwise).
		pending = append(pending, ignored...)
	}
	return pending, nil
}

// decisionInputs is what verify.Decide needs to judge move t under pol
// besides its approvers: the tree-bound approvers, the recorded targets
// of a rule's refs (in the log at rslTip) and the testers in store.
func (r *Repo) decisionInputs(store *attest.Store, pol *policy.Policy, rslTip gitrepo.Hash, t verify.Transition, approvers []string) (verify.Inputs, error) {
	revoked := func(fp string) bool { return pol.RevokedFrom(fp) != 0 }
	treeApprovers, err := r.treeApprovers(store, pol, t.Ref, t.Old, t.New, revoked)
	if err != nil {
		return verify.Inputs{}, err
	}
	return verify.Inputs{
		Approvers:       approvers,
		TreeApprovers:   treeApprovers,
		RecordedTargets: func(rule *policy.Rule) []gitrepo.Hash { return r.recordedTargets(rslTip, pol, rule) },
		Bases:           &r.bases,
		Tests: func(tree gitrepo.Hash) ([]string, []string, error) {
			return verify.Testers(store, pol, tree, revoked)
		},
	}, nil
}

func ruleOrPolicy(rule string) string {
	if rule == "" {
		return "the policy"
	}
	return "global rule " + rule
}

func orPolicy(rule string) string {
	if rule == "" {
		return "(global)"
	}
	return rule
}

// signerCounts reports whether signer can count toward rule (allowed, or
// in one of its requirement groups).
func signerCounts(pol *policy.Policy, rule *policy.Rule, signer string) bool {
	if pol.RuleAllows(rule, signer) {
		return true
	}
	for _, q := range rule.Require {
		if m, ok := pol.Members(q.Group); ok && slices.Contains(m, signer) {
			return true
		}
	}
	return false
}

// maxPrecheckWalk bounds how far back recording looks for an earlier
// entry of the same update (whose approvals would be used up). It is a
// courtesy check, to say before signing that approvals will not count: the
// verifier (and a server's pre-receive hook) refuses a replayed approval
// whatever recording decided. Without the bound a record in a long log
// never verified here would read every entry (1.4 s at 10 000 entries).
const maxPrecheckWalk = 128

// transitionRecorded reports whether the log already records ref moving
// from old to new.
// It walks back to the verification checkpoint, whose digests of counted
// approvals answer for the older entries, or maxPrecheckWalk entries.
func (r *Repo) transitionRecorded(tip gitrepo.Hash, ref string, old, new gitrepo.Hash) (bool, error) {
	cp := r.checkpoint()
	found, atCheckpoint := false, false
	walked := 0
	err := rsl.WalkBack(r.Git, tip, func(rec *rsl.Record) (bool, error) {
		if walked++; walked > maxPrecheckWalk {
			return false, nil
		}
		e := rec.Entry
		if cp.IsEntry(e.Number, rec.ID) {
			atCheckpoint = true
			return false, nil
		}
		found = e.Type == rsl.TypeRef && e.Ref == ref && e.Old == old && e.New == new
		return !found, nil
	})
	if err != nil || found || !atCheckpoint {
		return found, err
	}
	return cp.Counted(ref, old, new), nil
}

func orKey(person, fp string) string {
	if person != "" {
		return person
	}
	return fp
}

// recordedTargets returns the latest recorded targets of the refs rule
// covers (for the base of a new ref's changed files).
func (r *Repo) recordedTargets(rslTip gitrepo.Hash, pol *policy.Policy, rule *policy.Rule) []gitrepo.Hash {
	refs, err := r.Git.ListRefs("refs/heads/", "refs/tags/")
	if err != nil {
		return nil
	}
	latest, err := r.latestTargets(rslTip)
	if err != nil {
		return nil
	}
	var out []gitrepo.Hash
	for _, ref := range refs {
		if pol.Covers(rule, ref.Name) {
			if h := latest[ref.Name]; !h.IsZero() {
				out = append(out, h)
			}
		}
	}
	return out
}

// treeApprovers returns the tree-bound approvers of ref's update to new
// when a rule covering ref counts them.
func (r *Repo) treeApprovers(store *attest.Store, pol *policy.Policy, ref string, old, new gitrepo.Hash, revoked func(string) bool) ([]string, error) {
	allowed := false
	for _, rule := range pol.RulesFor(ref) {
		allowed = allowed || rule.TreeApprovals
	}
	if !allowed || new.IsZero() {
		return nil, nil
	}
	tree, err := r.treeOf(new)
	if err != nil {
		return nil, nil // not present here: nothing to count
	}
	persons, _, err := verify.TreeApprovers(store, pol, ref, old, tree, revoked)
	return persons, err
}

func (r *Repo) treeOf(h gitrepo.Hash) (gitrepo.Hash, error) {
	c, err := r.Git.PeelToCommit(h)
	if err != nil {
		return gitrepo.ZeroHash, err
	}
	commit, err := r.Git.ReadCommit(c)
	if err != nil {
		return gitrepo.ZeroHash, err
	}
	return commit.Tree, nil
}

// recordSource resolves what git secure rsl record NAME records: the ref
// (FullRefName) and the ref its value is read from, the same one but for
// REMOTE/BRANCH, a branch that exists here only as the remote-tracking
// ref refs/remotes/REMOTE/BRANCH (an existing branch being protected,
// never checked out in this clone): its entry records refs/heads/BRANCH
// at the value REMOTE serves, as fetched.
func (r *Repo) recordSource(name string) (ref, src string, err error) {
	remote, branch, ok := strings.Cut(name, "/")
	if ok && !strings.HasPrefix(name, "refs/") {
		tracking := "refs/remotes/" + name
		refs, err := r.Git.ListRefs(tracking, "refs/heads/"+name)
		if err != nil {
			return "", "", err
		}
		found := map[string]bool{}
		for _, x := range refs {
			found[x.Name] = true
		}
		if found[tracking] && !found["refs/heads/"+name] {
			if _, isRemote, _ := r.Git.Config("remote." + remote + ".url"); isRemote && gitrepo.ValidRefName("refs/heads/"+branch) == nil {
				return "refs/heads/" + branch, tracking, nil
			}
		}
	}
	ref, err = r.FullRefName(name)
	return ref, ref, err
}

// trackedHint says how to record the branch ref when it exists here only
// as a remote-tracking ref.
func (r *Repo) trackedHint(ref string) string {
	branch, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok {
		return ""
	}
	refs, err := r.Git.ListRefs("refs/remotes/")
	if err != nil {
		return ""
	}
	for _, x := range refs {
		if remote, ok := strings.CutSuffix(strings.TrimPrefix(x.Name, "refs/remotes/"), "/"+branch); ok && !strings.Contains(remote, "/") {
			return fmt.Sprintf(" here, but %s/%s does: to record the value %s serves, run git secure rsl record %s/%s", remote, branch, remote, remote, branch)
		}
	}
	return ""
}
