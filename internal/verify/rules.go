package verify

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

// objectError classifies a failure to read what h leads to. Only an h
// that is itself absent from the repository is ErrMissingObject; a present
// object that cannot be read or parsed, or that names a missing one, is
// ErrBadObject (and so is an absence the repository cannot confirm).
func objectError(src Source, err error, what string, hs ...gitrepo.Hash) error {
	for _, h := range hs {
		if h.IsZero() {
			continue
		}
		if ok, herr := src.HasObject(h); herr == nil && !ok {
			return fmt.Errorf("%w: %s: %s is not in the repository: %v", ErrMissingObject, what, short(h), err)
		}
	}
	return fmt.Errorf("%w: %s: %v", ErrBadObject, what, err)
}

// treeOf returns the tree of the commit h peels to. Through a diffCache
// it is read once per commit: each entry's diff starts from the state the
// previous entry of its ref ended at.
func treeOf(src Source, h gitrepo.Hash) (gitrepo.Hash, error) {
	d, ok := src.(*diffCache)
	if !ok {
		return readTreeOf(src, h)
	}
	if t, ok := d.trees[h]; ok {
		return t, nil
	}
	t, err := readTreeOf(d.Source, h)
	if err != nil {
		return t, err
	}
	if d.trees == nil || len(d.trees) >= maxCachedCommitTrees {
		d.trees = map[gitrepo.Hash]gitrepo.Hash{}
	}
	d.trees[h] = t
	return t, nil
}

// maxCachedCommitTrees bounds the commits whose trees a diffCache keeps.
const maxCachedCommitTrees = 1 << 16

func readTreeOf(src Source, h gitrepo.Hash) (gitrepo.Hash, error) {
	// Most targets are commits: one read. A tag, or anything ReadCommit
	// refuses, goes the long way, which also names the error.
	if commit, err := src.ReadCommit(h); err == nil {
		return commit.Tree, nil
	}
	c, err := src.PeelToCommit(h)
	if err != nil {
		return gitrepo.ZeroHash, objectError(src, err, "commit "+short(h), h)
	}
	commit, err := src.ReadCommit(c)
	if err != nil {
		return gitrepo.ZeroHash, objectError(src, err, "commit "+short(c), c)
	}
	return commit.Tree, nil
}

// changedBetween is what changed from commit old to commit new, for the
// path rules rules (changesIn).
func changedBetween(src Source, old, new gitrepo.Hash, scope *policy.PathScope, rules []*policy.Rule) (changes, error) {
	ot, err := treeOf(src, old)
	if err != nil {
		return changes{}, err
	}
	nt, err := treeOf(src, new)
	if err != nil {
		return changes{}, err
	}
	ch, err := changesIn(src, ot, nt, scope, rules)
	if errors.Is(err, ErrBudget) {
		return changes{}, err // not the trees' fault
	}
	if err != nil {
		// Both commits are present: their trees must be readable.
		return changes{}, fmt.Errorf("%w: diff %s..%s: %w", ErrBadObject, short(old), short(new), err)
	}
	return ch, nil
}

// maxBaseTargets bounds the recorded targets a new ref's files are
// compared with when its merge base with them is none of them.
const maxBaseTargets = 16

// changedSinceBase lists the files a new ref's commit changes from a
// recorded state: its best common ancestor with the given recorded targets
// when that is one of them (a branch off main's tip), else the target
// among the first maxBaseTargets whose tree differs least (the empty tree
// when there are none). The merge base alone is not enough: a commit an
// update went through without being recorded (a crypto change its next
// commit undid) was never judged, and a new ref there would change nothing
// from it. Comparing with any one recorded state is sound: a file no
// change names holds what that verified state holds.
//
// The targets are peeled and reduced to their independent commits through
// bases (BaseCache, nil: none), so that the cost of a new ref does not
// grow with the number of recorded refs; the merge base with those is the
// merge base with all of them, and the base is still looked for among all.
func changedSinceBase(src Source, bases *BaseCache, new gitrepo.Hash, targets []gitrepo.Hash, scope *policy.PathScope, rules []*policy.Rule) (changes, error) {
	nc, err := src.PeelToCommit(new)
	if err != nil {
		return changes{}, objectError(src, err, "commit "+short(new), new)
	}
	nt, err := treeOf(src, nc)
	if err != nil {
		return changes{}, err
	}
	var commits []gitrepo.Hash
	for _, t := range targets {
		if c, err := bases.peel(src, t); err == nil {
			commits = append(commits, c)
		}
	}
	if len(commits) == 0 {
		return diffTrees(src, gitrepo.ZeroHash, nt, gitrepo.ZeroHash, new, scope, rules)
	}
	if bases != nil {
		bases.MergeBases++
	}
	base, ok, err := src.MergeBase(nc, bases.candidates(src, commits)...)
	if err != nil {
		return changes{}, fmt.Errorf("%w: merge base of %s: %v", ErrBadObject, short(new), err)
	}
	if ok && slices.Contains(commits, base) {
		bt, err := treeOf(src, base)
		if err != nil {
			return changes{}, err
		}
		return diffTrees(src, bt, nt, base, new, scope, rules)
	}
	return changedSinceNearest(src, nt, new, commits, scope, rules)
}

// changedSinceNearest is what tree nt (of new) changes from the
// recorded target, of the first maxBaseTargets commits, that it differs
// from least.
func changedSinceNearest(src Source, nt, new gitrepo.Hash, commits []gitrepo.Hash, scope *policy.PathScope, rules []*policy.Rule) (changes, error) {
	var best changes
	for i, c := range commits[:min(len(commits), maxBaseTargets)] {
		ct, err := treeOf(src, c)
		if err != nil {
			return changes{}, err
		}
		ch, err := diffTrees(src, ct, nt, c, new, scope, rules)
		if err != nil {
			return changes{}, err
		}
		if i == 0 || ch.n < best.n {
			best = ch
		}
		if best.n == 0 {
			break
		}
	}
	return best, nil
}

// diffTrees lists the files that differ between trees from and to, the
// trees of commits base (zero: none) and new.
func diffTrees(src Source, from, to, base, new gitrepo.Hash, scope *policy.PathScope, rules []*policy.Rule) (changes, error) {
	ch, err := changesIn(src, from, to, scope, rules)
	if errors.Is(err, ErrBudget) {
		return changes{}, err // not the trees' fault
	}
	if err != nil {
		return changes{}, fmt.Errorf("%w: diff %s..%s: %w", ErrBadObject, shortOrNone(base), short(new), err)
	}
	return ch, nil
}

// Approvers returns the persons with a valid approval, under pol, of
// exactly ref moving from old to new (their own, or a forge review a
// trusted forge app recorded: ForgeApprovers), and notes about approvals
// that did not count.
func Approvers(store *attest.Store, pol *policy.Policy, ref string, old, new gitrepo.Hash, revoked func(fp string) bool) ([]string, []string, error) {
	if store == nil {
		return nil, nil, nil
	}
	files, err := store.Envelopes(attest.ApprovalDir(ref, old, new))
	if err != nil {
		return nil, nil, fmt.Errorf("verify: read approvals of %s %s..%s: %w", ref, short(old), short(new), err)
	}
	persons, notes := attestedPersons(pol, files, revoked, "approval", func(payload []byte) error {
		a, err := attest.ParseApproval(payload)
		if err != nil {
			return err
		}
		if err := a.Matches(ref, old, new); err != nil {
			return err
		}
		if !a.ToTree.IsZero() {
			return errors.New("tree-bound approvals are not accepted by this version")
		}
		return nil
	})
	// Reviews on a forge, recorded by a forge app the policy trusts, are
	// approvals of the persons their accounts map to (forge.go).
	forge, _, more, err := ForgeApprovers(store, pol, ref, old, new, revoked)
	return withForge(persons, notes, forge, more, err)
}

// TreeApprovers returns the persons with a valid approval, under pol, of
// ref moving from old to a commit whose tree is tree, for rules that allow
// tree-bound approvals.
func TreeApprovers(store *attest.Store, pol *policy.Policy, ref string, old, tree gitrepo.Hash, revoked func(fp string) bool) ([]string, []string, error) {
	if store == nil {
		return nil, nil, nil
	}
	files, err := store.Envelopes(attest.ApprovalTreeDir(ref, old, tree))
	if err != nil {
		return nil, nil, fmt.Errorf("verify: read tree-bound approvals of %s from %s: %w", ref, short(old), err)
	}
	persons, notes := attestedPersons(pol, files, revoked, "tree-bound approval", func(payload []byte) error {
		a, err := attest.ParseApproval(payload)
		if err != nil {
			return err
		}
		if a.Ref != ref || a.From != old || a.ToTree != tree {
			return fmt.Errorf("%w: it approves %s from %s to tree %s", attest.ErrMismatch, a.Ref, short(a.From), short(a.ToTree))
		}
		return nil
	})
	// Tree-bound forge reviews (the commit a forge's merge button made).
	forge, _, more, err := ForgeTreeApprovers(store, pol, ref, old, tree, revoked)
	return withForge(persons, notes, forge, more, err)
}

// allowsTreeApprovals reports whether a rule covering ref lets tree-bound
// approvals count.
func allowsTreeApprovals(pol *policy.Policy, ref string) bool {
	for _, r := range pol.RulesFor(ref) {
		if r.TreeApprovals {
			return true
		}
	}
	return false
}

// attestedPersons checks every stored envelope (in file order) with
// attestedBy and returns the distinct persons, and a note for each
// envelope that did not count.
func attestedPersons(pol *policy.Policy, files []attest.File, revoked func(string) bool, what string, check func(payload []byte) error) (persons, notes []string) {
	seen := map[string]bool{}
	ignored := 0
	for _, f := range files {
		if f.Junk != "" {
			// Not signed by anyone (attest.File.Junk): counts for nothing.
			if ignored++; ignored <= maxNotes {
				notes = append(notes, f.Junk)
			}
			continue
		}
		who, err := attestedBy(pol, f.Name, f.Data, revoked, check)
		if err != nil {
			// A hostile store may hold thousands: say a few, count the rest.
			if ignored++; ignored <= maxNotes {
				notes = append(notes, fmt.Sprintf("%s %s ignored: %v", what, f.Name, err))
			}
			continue
		}
		if !seen[who] {
			seen[who] = true
			persons = append(persons, who)
		}
	}
	if ignored > maxNotes {
		notes = append(notes, fmt.Sprintf("and %d more %ss ignored", ignored-maxNotes, what))
	}
	return persons, notes
}

// maxNotes bounds the notes about ignored attestations in one problem.
const maxNotes = 5

// attestedBy verifies one stored envelope: strict decoding, a file named
// for its signer, a signature by a person's key that is not revoked, and
// check on the statement. It returns the person.
func attestedBy(pol *policy.Policy, file string, data []byte, revoked func(string) bool, check func(payload []byte) error) (string, error) {
	env, err := attest.ParseEnvelope(data)
	if err != nil {
		return "", err
	}
	if err := attest.CheckSignerFile(file, env); err != nil {
		return "", err
	}
	key, err := env.Verify(pol.LookupPersonKey)
	if err != nil {
		return "", err
	}
	if err := check(env.Payload); err != nil {
		return "", err
	}
	fp := sign.Fingerprint(key)
	if revoked != nil && revoked(fp) {
		return "", fmt.Errorf("signed by %s, a revoked key", fp)
	}
	person, ok := pol.PersonByFingerprint(fp)
	if !ok {
		return "", errors.New("signer is not a person in the policy")
	}
	return person.Name, nil
}

// authorize checks one transition of ref at entry i and records a problem
// for every requirement that is not met. A skip (an annotation moving ref
// back from old to new) needs exactly what moving the ref there needs,
// path rules included; when either state is no longer in the repository
// the diff is unknown, so every path rule applies.
func (v *verifier) authorize(i int, rec *rsl.Record, ref string, old, new gitrepo.Hash, skip bool) error {
	pol := v.policies[i]
	if len(pol.RulesFor(ref)) == 0 && !hasGlobal(pol, ref) {
		return nil
	}
	signer := ""
	if p, ok := pol.PersonByFingerprint(v.signers[i]); ok {
		signer = p.Name
	}
	t := Transition{Ref: ref, Old: old, New: new, Signer: signer, CheckPaths: true}
	switch {
	case !hasPathRule(pol, ref):
	case skip:
		t.AllPaths = !v.present(old) || !v.present(new)
	case !old.IsZero():
		var gone []recorded
		if t.DiffBase, gone = v.diffBase(ref, old); len(gone) > 0 {
			t.Unseen = v.unseen(ref, t.DiffBase, gone)
		}
	}
	// A new ref's own value is not a base for its changed files.
	targets := func(r *policy.Rule) []gitrepo.Hash { return v.recordedTargetsExcept(pol, r, ref) }
	in := Inputs{RecordedTargets: targets, Bases: &v.bases, Tests: v.testers(pol, rec.Entry.Number)}
	d, notes, counted, err := v.decide(rec, pol, t, in)
	if d == nil || err != nil {
		return err
	}
	if len(d.Failures()) > 0 {
		// Approvals and test runs a store commit dropped still count
		// (the store is append-only): only a failing decision pays for
		// reading the store's history.
		again, err := v.useStoreHistory()
		if errors.Is(err, attest.ErrHistoryBudget) {
			return &budgetError{rec: rec, err: fmt.Errorf("%w: %v", ErrBudget, err)}
		}
		if err != nil {
			return err
		}
		if again {
			if d, notes, counted, err = v.decide(rec, pol, t, in); d == nil || err != nil {
				return err
			}
		}
	}
	for _, key := range counted {
		v.used[key] = rec.Entry.Number
	}
	if !skip && !new.IsZero() && missingPathRule(d) && !v.present(new) {
		// A later entry's diff may have to skip this state: note which
		// rules this entry could not have changed the files of.
		if err := v.noteGone(rec, pol, ref, old, new, signer); err != nil {
			return err
		}
	}
	if app, ok := pol.ForgeAppByFingerprint(v.signers[i]); ok && len(d.Failures()) > 0 {
		notes = append([]string{fmt.Sprintf("the entry is signed by forge app %s (a move the forge made): the bridge is no person and never counts, so approvals by persons, their own or recorded forge reviews, must meet the rule", app.Name)}, notes...)
	}
	if !skip {
		if err := v.checkSignedPush(i, rec, pol, ref, old, new, d); err != nil {
			return err
		}
	}
	for _, f := range d.Failures() {
		v.problems = append(v.problems, &Problem{
			Entry: rec.Entry.Number, EntryID: rec.ID, Ref: ref, Rule: f.Rule, Kind: f.Kind,
			Detail: f.Detail + noteText(notes), Hint: f.Hint, unseen: f.Unseen,
		})
	}
	return nil
}

// decide decides transition t at rec under pol, reading approvals from
// the store when the signer alone does not meet the rules. It returns the
// decision (nil when an object problem was recorded instead), notes about
// approvals that did not count, and the keys of v.used to mark if this
// decision stands.
func (v *verifier) decide(rec *rsl.Record, pol *policy.Policy, t Transition, in Inputs) (*Decision, []string, []usedDigest, error) {
	// One Decision serves every entry: what authorize reads of it is
	// read before the next entry is decided.
	d := &v.decision
	if err := d.decide(v.src, pol, t, in); err != nil {
		return nil, nil, nil, v.objectProblem(rec, t.Ref, err)
	}
	if !d.NeedsApprovals() {
		return d, nil, nil, nil
	}
	// Only now read approvals: most entries are met by their signer.
	ref, old, new := t.Ref, t.Old, t.New
	var notes []string
	var counted []usedDigest
	key := usedDigestOf(ref, old, new)
	if n, dup := v.used[key]; dup {
		return d, []string{fmt.Sprintf("approvals of this exact update were already counted for entry #%d", n)}, nil, nil
	}
	store, err := v.attestations()
	if err != nil {
		return nil, nil, nil, err
	}
	in.Approvers, notes, err = Approvers(store, pol, ref, old, new, v.revokedAt(rec.Entry.Number))
	if err != nil {
		return nil, nil, nil, err
	}
	if store, in.Approvers, notes, err = v.forgeHistoryRecount(rec, store, pol, ref, old, new, in.Approvers, notes); err != nil {
		return nil, nil, nil, err
	}
	if len(in.Approvers) > 0 {
		counted = append(counted, key)
	}
	var more []string
	var treeCounted []usedDigest
	if in.TreeApprovers, more, treeCounted, err = v.treeApprovers(rec, store, pol, ref, old, new); err != nil {
		return nil, nil, nil, err
	}
	notes, counted = append(notes, more...), append(counted, treeCounted...)
	if len(in.Approvers) > 0 || len(in.TreeApprovers) > 0 {
		if err = d.decide(v.src, pol, t, in); err != nil {
			return nil, nil, nil, v.objectProblem(rec, ref, err)
		}
	}
	return d, notes, counted, nil
}

// forgeHistoryRecount reads the store's history (once) before a forge
// review counts, and recounts the approvals when that history can change
// them. A forge review counts only while no record withdraws it, and a
// store commit that drops the withdrawal (pushed where no hook guards the
// store) must not bring it back: the union of the store's history holds
// every withdrawal ever stored.
func (v *verifier) forgeHistoryRecount(rec *rsl.Record, store *attest.Store, pol *policy.Policy, ref string, old, new gitrepo.Hash, approvers, notes []string) (*attest.Store, []string, []string, error) {
	if v.storeHistory {
		return store, approvers, notes, nil
	}
	revoked := v.revokedAt(rec.Entry.Number)
	forge, _, _, err := ForgeApprovers(store, pol, ref, old, new, revoked)
	if err != nil || len(forge) == 0 {
		return store, approvers, notes, err
	}
	again, err := v.useStoreHistory()
	if errors.Is(err, attest.ErrHistoryBudget) {
		return nil, nil, nil, &budgetError{rec: rec, err: fmt.Errorf("%w: %v", ErrBudget, err)}
	}
	if err != nil || !again {
		return store, approvers, notes, err
	}
	if store, err = v.attestations(); err != nil {
		return nil, nil, nil, err
	}
	approvers, notes, err = Approvers(store, pol, ref, old, new, revoked)
	return store, approvers, notes, err
}

// treeApprovers reads the approvals bound to new's tree when a rule on ref
// lets them count, unless they were counted for an earlier entry. counted
// is the key of v.used to mark if the decision stands.
func (v *verifier) treeApprovers(rec *rsl.Record, store *attest.Store, pol *policy.Policy, ref string, old, new gitrepo.Hash) (approvers, notes []string, counted []usedDigest, err error) {
	if new.IsZero() || !allowsTreeApprovals(pol, ref) {
		return nil, nil, nil, nil
	}
	tree, err := treeOf(v.repo, new)
	if err != nil {
		// Without the tree no tree-bound approval counts; the problem is
		// reported with every other one.
		return nil, nil, nil, v.objectProblem(rec, ref, err)
	}
	if tree.IsZero() {
		return nil, nil, nil, nil
	}
	treeKey := usedDigestOf(ref+"\x00tree", old, tree)
	if n, dup := v.used[treeKey]; dup {
		return nil, []string{fmt.Sprintf("tree-bound approvals of this update were already counted for entry #%d", n)}, nil, nil
	}
	approvers, notes, err = TreeApprovers(store, pol, ref, old, tree, v.revokedAt(rec.Entry.Number))
	if err != nil {
		return nil, nil, nil, err
	}
	if len(approvers) > 0 {
		counted = []usedDigest{treeKey}
	}
	return approvers, notes, counted, nil
}

// useStoreHistory switches the verification to the union of the
// attestation store over its history, once, and reports whether that can
// change anything (some store commit dropped or changed an envelope).
func (v *verifier) useStoreHistory() (bool, error) {
	if v.storeHistory {
		return false, nil
	}
	v.storeHistory = true
	store, err := v.attestations()
	if err != nil {
		return false, err
	}
	// For an entry charged to a budget (a push's), the walk's comparisons
	// count against the budget's paths: a store history built to be
	// costly must not make the server work without bound.
	limit := 0
	if b := v.opts.Budget; b != nil && v.src.charged {
		limit = b.MaxPaths
	}
	view, dropped, err := store.WithHistoryLimit(limit)
	if err != nil {
		return false, fmt.Errorf("verify: read the history of %s: %w", attest.Ref, err)
	}
	if dropped {
		v.store = view
		if v.res != nil {
			v.res.Warnings = append(v.res.Warnings, fmt.Sprintf("%s: a commit of its history removed or changed stored approvals or test runs; they count as stored (the store is append-only), but someone rewrote it: fetch it from a server with the git-secure hook", attest.Ref))
		}
	}
	return dropped, nil
}

func noteText(notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	return "; " + strings.Join(notes, "; ")
}

// attestations opens the attestation store the verification reads.
func (v *verifier) attestations() (*attest.Store, error) {
	if v.store != nil {
		return v.store, nil
	}
	var err error
	if v.opts.RefValues != nil {
		v.store, err = attest.OpenStoreAt(v.repo, v.opts.RefValues[attest.Ref])
	} else {
		v.store, err = attest.OpenStore(v.repo)
	}
	return v.store, err
}

// testers returns the lookup of persons who attested a passing test run on
// a tree, under pol, as of entry n.
func (v *verifier) testers(pol *policy.Policy, n uint64) func(tree gitrepo.Hash) ([]string, []string, error) {
	return func(tree gitrepo.Hash) ([]string, []string, error) {
		store, err := v.attestations()
		if err != nil {
			return nil, nil, err
		}
		return Testers(store, pol, tree, v.revokedAt(n))
	}
}

func (v *verifier) objectProblem(rec *rsl.Record, ref string, err error) error {
	if errors.Is(err, ErrBudget) {
		// Not the object's fault: the replay stops here (budgetError).
		return &budgetError{rec: rec, err: err}
	}
	if !errors.Is(err, ErrMissingObject) && !errors.Is(err, ErrBadObject) {
		return err
	}
	v.fail(rec, ref, "", objectKind(err), objectHint, "%v", err)
	return nil
}

// present reports whether h is zero or in the repository (an error counts
// as absent: the caller then assumes the worst).
func (v *verifier) present(h gitrepo.Hash) bool {
	if h.IsZero() {
		return true
	}
	ok, err := v.repo.HasObject(h)
	return err == nil && ok
}

// diffBase returns, when old's commit is no longer in the repository (a
// rebase or force push rewrote it away and it was garbage-collected), the
// newest earlier recorded target of ref that is still present (zero when
// none is: the diff then fails on old, closed) and the recorded states in
// between, newest first, that are missing. It returns zero and no states
// when old is present.
func (v *verifier) diffBase(ref string, old gitrepo.Hash) (base gitrepo.Hash, gone []recorded) {
	if _, read := v.src.trees[old]; read {
		return gitrepo.ZeroHash, nil // read before: present (a stat saved per entry)
	}
	if ok, err := v.repo.HasObject(old); err != nil || ok {
		return gitrepo.ZeroHash, nil
	}
	newest := true // the newest state is the entry being checked
	err := v.stateLog().newestFirst(v.state[ref], func(r recorded, _ int) bool {
		if newest {
			newest = false
			return true
		}
		if r.target.IsZero() {
			return false
		}
		if ok, err := v.repo.HasObject(r.target); err == nil && ok {
			base = r.target
			return false
		}
		gone = append(gone, r)
		return true
	})
	if err != nil && v.spillErr == nil {
		v.spillErr = err // the run fails with it
	}
	if len(gone) == 0 {
		// old is missing but no recorded state is: never forgive.
		gone = append(gone, recorded{target: old})
	}
	return base, gone
}

// goneState is what replay decided about an entry whose new state is not
// in the repository: its signer, and the path rules (ruleKey) covering its
// ref that its persons, signer and approvers, did not meet. Only such an
// entry cannot have changed those rules' files (it would have failed
// them), so only for those may a later entry's diff skip its state.
type goneState struct {
	signer string
	unmet  map[string]bool
}

// ruleKey identifies a path rule across policies: the same name, rule
// file and protected paths.
func ruleKey(r *policy.Rule) string {
	return r.Name + "\x00" + r.File + "\x00" + strings.Join(r.Paths, "\x00")
}

// noteGone records, for entry rec (ref old -> new, new missing), which
// path rules its persons did not meet (goneState). A rule allowing
// tree-bound approvals counts as met: new's tree, which they bind to, is
// missing. Tests are not required: they may have passed.
func (v *verifier) noteGone(rec *rsl.Record, pol *policy.Policy, ref string, old, new gitrepo.Hash, signer string) error {
	persons := []string{}
	if signer != "" {
		persons = append(persons, signer)
	}
	store, err := v.attestations()
	if err != nil {
		return err
	}
	approvers, _, err := Approvers(store, pol, ref, old, new, v.revokedAt(rec.Entry.Number))
	if err != nil {
		return err
	}
	for _, a := range approvers {
		if !slices.Contains(persons, a) {
			persons = append(persons, a)
		}
	}
	g := goneState{signer: signer, unmet: map[string]bool{}}
	for _, r := range pol.RulesFor(ref) {
		if r.IsPathRule() && !r.TreeApprovals && !personsMeet(pol, r, persons) {
			g.unmet[ruleKey(r)] = true
		}
	}
	if v.gone == nil {
		v.gone = map[uint64]goneState{}
	}
	v.gone[rec.Entry.Number] = g
	return nil
}

// personsMeet reports whether persons meet r's threshold and requirements.
func personsMeet(pol *policy.Policy, r *policy.Rule, persons []string) bool {
	if r.Untrusted != "" {
		return false
	}
	n := 0
	for _, name := range pol.AllowedPersons(r) {
		if slices.Contains(persons, name) {
			n++
		}
	}
	return n >= r.Threshold && len(unmetRequirements(pol, r.Require, persons)) == 0
}

// unseen returns Transition.Unseen for an entry of ref whose diff starts
// at base because the states gone (newest first) are missing.
func (v *verifier) unseen(ref string, base gitrepo.Hash, gone []recorded) func(*policy.Rule) string {
	return func(r *policy.Rule) string {
		var why []string
		for _, g := range gone {
			if g.number == 0 {
				why = append(why, fmt.Sprintf("its previous state %s (no earlier recorded state is present)", short(g.target)))
				continue
			}
			info, judged := v.gone[g.number]
			switch {
			case !judged:
				why = append(why, fmt.Sprintf("state %s of entry #%d (not judged in this run)", short(g.target), g.number))
			case !info.unmet[ruleKey(r)]:
				who := info.signer
				if who == "" {
					who = "a signer who is not a person in the policy"
				}
				why = append(why, fmt.Sprintf("state %s of entry #%d (signed by %s, who with its approvals met this rule)", short(g.target), g.number, who))
			}
		}
		if len(why) == 0 {
			return ""
		}
		from := "no recorded state is present to diff from"
		if !base.IsZero() {
			from = "the diff from " + short(base) + ", the newest recorded state still present, cannot show whether this entry undoes that"
		}
		return fmt.Sprintf("missing from the repository: %s of %s, which could have changed the files this rule protects; %s, so every path the rule protects counts as changed (fetch the missing state: git-secure keeps it under refs/secure/keep/ when it pushes a rewrite)",
			strings.Join(why, ", "), ref, from)
	}
}

// missingPathRule reports whether a path rule of d could not be judged
// for a missing object.
func missingPathRule(d *Decision) bool {
	for i := range d.Rules {
		if d.Rules[i].Rule.IsPathRule() && errors.Is(d.Rules[i].ObjectErr, ErrMissingObject) {
			return true
		}
	}
	return false
}

func hasGlobal(pol *policy.Policy, ref string) bool {
	for _, g := range pol.GlobalRules() {
		if g.CoversRef(ref) {
			return true
		}
	}
	return false
}

func (v *verifier) recordedTargetsExcept(pol *policy.Policy, r *policy.Rule, except string) []gitrepo.Hash {
	var out []gitrepo.Hash
	for _, ref := range v.coveredRefs(pol, r) {
		if ref == except {
			continue
		}
		if last, ok := v.latest(ref); ok && !last.target.IsZero() {
			out = append(out, last.target)
		}
	}
	return out
}

// coveredRefs is what the refs of v.state that rule r of pol covers are
// (the policy's log excepted), sorted. It is kept per rule and extended
// with the refs added since (refs are only ever added to v.state, which is
// replaced whole when it is rebuilt): asking pol.Covers of every recorded
// ref for every new tag was a third of the replay's CPU at 3 000 tags.
func (v *verifier) coveredRefs(pol *policy.Policy, r *policy.Rule) []string {
	c := v.covered[r]
	if c == nil || c.pol != pol || reflect.ValueOf(c.state).Pointer() != reflect.ValueOf(v.state).Pointer() || len(c.seen) > len(v.state) {
		c = &coveredCache{pol: pol, state: v.state, seen: map[string]bool{}}
		if v.covered == nil || len(v.covered) >= 1024 {
			v.covered = map[*policy.Rule]*coveredCache{}
		}
		v.covered[r] = c
	}
	if len(c.seen) == len(v.state) {
		return c.refs
	}
	for ref := range v.state {
		if c.seen[ref] {
			continue
		}
		c.seen[ref] = true
		if ref != rsl.PolicyRef && pol.Covers(r, ref) {
			i, _ := slices.BinarySearch(c.refs, ref)
			c.refs = slices.Insert(c.refs, i, ref)
		}
	}
	return c.refs
}

// coveredCache is coveredRefs' answer for one rule: the policy and the
// state map it was computed over, the refs of it seen, those covered.
type coveredCache struct {
	pol   *policy.Policy
	state map[string]*refStates // held: its address names it
	seen  map[string]bool
	refs  []string
}

// hasPathRule reports whether a path rule covers ref (only then do an
// entry's commits need to be present).
func hasPathRule(pol *policy.Policy, ref string) bool {
	for _, r := range pol.RulesFor(ref) {
		if r.IsPathRule() {
			return true
		}
	}
	return false
}
