package porcelain

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

// A forge's merge button (and a squash or rebase merge, or an edit in
// the web page) moves a protected branch with no log entry: the forge
// runs no hook. RecordForgeMerge is what the CI job that the push
// triggers runs with the forge app key (a bridge the root trusts): it
// records the move, signed by the bridge, if and only if the policy
// allows it with the approvals recorded for it. The bridge is no person:
// it never counts toward a threshold, so every approval must come from
// persons, signed with their own keys or through forge reviews the
// bridge recorded before the merge (tree-bound: the commit the forge made
// has the tree of the reviewed result; docs/format.md, "Forge merges").

// maxForgeMergeWalk bounds the first-parent commits between the recorded
// tip and the forge's value that RecordForgeMerge tries as steps.
const maxForgeMergeWalk = 1000

// ForgeMergeResult says what RecordForgeMerge recorded.
type ForgeMergeResult struct {
	Ref     string            `json:"ref"`
	App     string            `json:"app"`
	Old     gitrepo.Hash      `json:"old"` // the recorded tip before
	New     gitrepo.Hash      `json:"new"` // the forge's value
	Entries []ForgeMergeEntry `json:"entries"`
	NoOp    string            `json:"noop,omitempty"` // why nothing was needed
	Tip     gitrepo.Hash      `json:"rsl"`            // the log's tip after
	// Reviews are the reviews of merged pull requests the forge listed
	// for the steps (ForgeLookup), recorded before judging them.
	Reviews []*ForgeRecorded `json:"reviews,omitempty"`
	// Notes say why a listed pull request's reviews were not recorded.
	Notes []string     `json:"notes,omitempty"`
	Store gitrepo.Hash `json:"store,omitzero"` // the store's tip after, when reviews were recorded
}

// ForgeLookup returns the pull (merge) requests the forge lists for
// commit c, with their reviews: those merged as c, or whose commits c
// is. RecordForgeMerge asks it about a step it cannot record with the
// approvals already recorded, records the reviews of the ones merged
// into the ref, and judges the step again: two pull requests merged
// before the job ran then both record without anyone running
// record-approvals for the second.
type ForgeLookup func(c gitrepo.Hash) ([]ForgePullRequest, error)

// ForgeMergeEntry is one entry recorded.
type ForgeMergeEntry struct {
	Entry     uint64       `json:"entry"`
	ID        gitrepo.Hash `json:"id"`
	Old       gitrepo.Hash `json:"old"`
	New       gitrepo.Hash `json:"new"`
	Approvers []string     `json:"approvedBy"`
}

// ForgeMergeRefused is the error of a forge move the policy does not
// allow with the approvals recorded: what was recorded before the step
// that failed, and why it failed. It wraps ErrRefused (exit 1).
type ForgeMergeRefused struct {
	Result *ForgeMergeResult
	Step   *Explanation // the step that failed, nil for a rewrite
	Reason string
}

func (e *ForgeMergeRefused) Error() string { return e.Reason }
func (e *ForgeMergeRefused) Unwrap() error { return ErrRefused }

// RecordForgeMerge records, signed with the forge app key keyFile, the
// forge's move of ref to to. The move is tried as steps along to's
// first-parent chain from the recorded tip (two merges made before the
// job ran are two steps, each approved for its own pull request): at
// each commit of the chain, oldest first, the move from the last
// recorded value to it is recorded when the rules are met by approvals
// alone; the move must end at to. A move that never gets there is
// refused (*ForgeMergeRefused) after recording the steps that were
// allowed, naming who must still approve, or saying the move rewrote
// history and must be reverted. A to that the log already records, or
// that is an ancestor of the recorded tip (a job of an earlier push that
// ran late), records nothing. With lookup, a step the approvals recorded
// do not allow is judged again after recording the reviews of the pull
// requests the forge lists for it. The caller pushes the store and the
// log.
func (r *Repo) RecordForgeMerge(name string, to gitrepo.Hash, keyFile string, lookup ForgeLookup) (*ForgeMergeResult, error) {
	ref, err := r.FullRefName(name)
	if err != nil {
		return nil, err
	}
	if ref == rsl.PolicyRef || strings.HasPrefix(ref, "refs/secure/") {
		return nil, usage("%s is git-secure's own ref: a forge app records only branch and tag moves", ref)
	}
	if err := rsl.ValidateRecordedRef(ref); err != nil {
		return nil, usage("%s: %v", ref, err)
	}
	s, err := r.LoadSigner(keyFile)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	who, err := r.Ident()
	if err != nil {
		return nil, err
	}
	var res *ForgeMergeResult
	lost, err := Retry(func(int) (bool, error) {
		res, err = r.recordForgeMergeOnce(ref, to, s, who, lookup)
		return false, err
	})
	if lost {
		return nil, fmt.Errorf("%w: the log kept changing while recording the forge's move of %s; run the job again", ErrRefused, ref)
	}
	return res, err
}

func (r *Repo) recordForgeMergeOnce(ref string, to gitrepo.Hash, s sign.Signer, who gitrepo.Ident, lookup ForgeLookup) (*ForgeMergeResult, error) {
	snap, err := r.snapshotFor(ref)
	if err != nil {
		return nil, err
	}
	pol, err := policy.LoadSigned(r.Git, snap.policyTip, nil)
	if err != nil {
		return nil, err
	}
	app, err := forgeAppOf(pol, sign.Fingerprint(s.PublicKey()))
	if err != nil {
		return nil, err
	}
	// The forge app is the repository's own (root.json); the rules that
	// judge the move, and the version each entry names, include the
	// organisation's when the policy inherits one.
	pol, orgV, err := r.withOrg(pol)
	if err != nil {
		return nil, err
	}
	_, old, err := r.recordedFor(snap.rslTip, ref)
	if err != nil {
		return nil, err
	}
	res := &ForgeMergeResult{Ref: ref, App: app.Name, Old: old, New: to, Entries: []ForgeMergeEntry{}, Tip: snap.rslTip}
	if done, err := r.checkForgeMove(res, ref, old, to); err != nil {
		return nil, err
	} else if done {
		return res, nil
	}
	chain, err := r.forgeSteps(old, to)
	if err != nil {
		return nil, err
	}
	base, tip, cur := snap.rslTip, snap.rslTip, old
	number, err := r.nextNumber(base)
	if err != nil {
		return nil, err
	}
	var failed *Explanation
	for _, c := range chain {
		x, err := r.judgeForgeStep(res, pol, s, app, tip, cur, c, lookup)
		if err != nil {
			return nil, err
		}
		if !x.Satisfied {
			failed = x
			continue
		}
		e := &rsl.Entry{Number: number, Type: rsl.TypeRef, Ref: ref, Old: cur, New: c, Org: orgV}
		if tip, err = rsl.Write(r.Git, e, tip, who, signEntry(s)); err != nil {
			return nil, err
		}
		number++
		approvers := slices.Clone(x.Approved)
		slices.Sort(approvers)
		res.Entries = append(res.Entries, ForgeMergeEntry{Entry: e.Number, ID: tip, Old: cur, New: c, Approvers: slices.Compact(approvers)})
		cur, failed = c, nil
	}
	if tip != base {
		if err := r.Commit(&Prepared{Base: base, Tip: tip}, fmt.Sprintf("git-secure: forge app %s records %s", app.Name, ref)); err != nil {
			return nil, err
		}
		res.Tip = tip
	}
	if cur != to {
		if failed == nil || failed.Old != cur {
			// No step from cur was even tried against to (cannot happen:
			// to is the last step), say it plainly all the same.
			return nil, &ForgeMergeRefused{Result: res, Reason: fmt.Sprintf("the forge's move of %s from %s to %s is not allowed by the policy", ref, shortHex(cur), shortHex(to))}
		}
		return nil, &ForgeMergeRefused{Result: res, Step: failed, Reason: forgeRefusal(failed, len(res.Entries))}
	}
	return res, nil
}

// forgeAppOf returns the forge app of pol whose key has fingerprint fp,
// refusing a key that is no forge app's or is revoked: nothing it signed
// (entries, review records) would count.
func forgeAppOf(pol *policy.Policy, fp string) (*policy.ForgeApp, error) {
	app, ok := pol.ForgeAppByFingerprint(fp)
	if !ok {
		return nil, fmt.Errorf("%w: key %s is not a forge app of the policy in force, so its entries would not verify; a root key holder runs: git secure trust add-forge-app NAME --key BRIDGE.pub --forge FORGE --repository REPOSITORY", ErrRefused, fp)
	}
	if from := pol.RevokedFrom(fp); from != 0 {
		return nil, fmt.Errorf("%w: forge app %s's key %s is revoked (from entry #%d): nothing it signs counts; a root key holder adds a new one (git secure trust add-forge-app)", ErrRefused, app.Name, fp, from)
	}
	return app, nil
}

// judgeForgeStep judges the move of res.Ref from cur to c with the
// approvals recorded; when they do not allow it and lookup is given, it
// records (signed by forge app app's key s) the reviews of the pull
// requests the forge lists for c, merged into the ref, and judges again.
func (r *Repo) judgeForgeStep(res *ForgeMergeResult, pol *policy.Policy, s sign.Signer, app *policy.ForgeApp, tip, cur, c gitrepo.Hash, lookup ForgeLookup) (*Explanation, error) {
	judge := func() (*Explanation, error) {
		x := &Explanation{Ref: res.Ref, Old: cur, New: c, Current: res.New, Recorded: res.Old, Pending: true, Approved: []string{}, Rules: []ExplainedRule{}, Failures: []ExplainedFailure{}}
		return x, r.evaluate(x, pol, tip)
	}
	x, err := judge()
	if err != nil || x.Satisfied || lookup == nil {
		return x, err
	}
	prs, err := lookup(c)
	if err != nil {
		return nil, err
	}
	recorded := false
	for _, pr := range prs {
		if !pr.Merged || "refs/heads/"+pr.BaseRef != res.Ref {
			continue
		}
		to, err := r.forgeTarget(pr, res.Ref, cur)
		if err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("%s pull request %s merged as %s: reviews not recorded: %v", pr.Forge, pr.Number, shortHex(c), err))
			continue
		}
		rec, err := r.recordReviews(pol, s, app, pr, res.Ref, cur, to)
		if err != nil {
			return nil, err
		}
		res.Reviews = append(res.Reviews, rec)
		res.Store, recorded = rec.Store, true
	}
	if !recorded {
		return x, nil
	}
	// Judge with the store as it is now.
	r.UseAttestations(res.Store)
	return judge()
}

// checkForgeMove settles the moves a forge app never records or that need
// no entry: a deletion, a value not here, the recorded value, one the log
// already passed, a move that does not contain the recorded tip. done
// says res (or the error) is the answer.
func (r *Repo) checkForgeMove(res *ForgeMergeResult, ref string, old, to gitrepo.Hash) (done bool, err error) {
	if to.IsZero() {
		return true, &ForgeMergeRefused{Result: res, Reason: fmt.Sprintf("the forge deleted %s: a forge app records no deletion; a person with the right to delete it records it (git secure rsl record %s), or the branch is pushed back", ref, ref)}
	}
	if ok, err := r.Git.HasObject(to); err != nil || !ok {
		return true, usage("the forge's value %s of %s is not here: fetch it first (git fetch origin %s)", to, ref, ref)
	}
	if to == old {
		res.NoOp = fmt.Sprintf("the log already records %s at %s", ref, shortHex(to))
		return true, nil
	}
	if !old.IsZero() {
		if ok, err := r.Git.IsAncestor(to, old); err == nil && ok {
			res.NoOp = fmt.Sprintf("the log records %s at %s, which contains %s (a later move, already recorded)", ref, shortHex(old), shortHex(to))
			return true, nil
		}
		if ok, err := r.Git.IsAncestor(old, to); err != nil || !ok {
			return true, &ForgeMergeRefused{Result: res, Reason: fmt.Sprintf("the forge moved %s from its recorded tip %s to %s, which does not contain it (a force push or history rewrite): a forge app never records that; revert it (push %s back to %s), or a person allowed to rewrite it records it (git secure rsl record %s)", ref, shortHex(old), shortHex(to), ref, old, ref)}
		}
	}
	return false, nil
}

// forgeSteps returns the first-parent commits after old up to to, oldest
// first (only to when old is not on to's first-parent chain, or is zero).
func (r *Repo) forgeSteps(old, to gitrepo.Hash) ([]gitrepo.Hash, error) {
	if old.IsZero() {
		return []gitrepo.Hash{to}, nil
	}
	fps, err := r.Git.FirstParents(to, maxForgeMergeWalk+1)
	if err != nil {
		return nil, err
	}
	var steps []gitrepo.Hash
	for _, h := range fps {
		if h == old {
			for i, j := 0, len(steps)-1; i < j; i, j = i+1, j-1 {
				steps[i], steps[j] = steps[j], steps[i]
			}
			return steps, nil
		}
		steps = append(steps, h)
	}
	if len(fps) > maxForgeMergeWalk {
		return nil, errors.Join(ErrRefused, fmt.Errorf("the forge's move to %s adds more than %d first-parent commits: record it as a person (git secure rsl record)", shortHex(to), maxForgeMergeWalk))
	}
	return []gitrepo.Hash{to}, nil
}

// forgeRefusal says, in one line, why step x was refused and what to do
// (ForgeMergeRefused.Step has the details: who can approve, notes).
func forgeRefusal(x *Explanation, recorded int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the forge moved %s from %s to %s without the approvals the policy needs", x.Ref, shortOrNone(x.Old), shortHex(x.New))
	if recorded > 0 {
		fmt.Fprintf(&b, " (the %d earlier step(s) of the move are recorded)", recorded)
	}
	for i, f := range x.Failures {
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%srule %s: %s", sep, orPolicy(f.Rule), f.Detail)
	}
	fmt.Fprintf(&b, "; the bridge never counts as a person: have the persons named approve on the forge, record their reviews again (git secure forge record-approvals --pr N; for a merged pull request it binds them to the commit the forge made) and run this job again, or revert the move (push %s back to %s)", x.Ref, x.Old)
	return b.String()
}
