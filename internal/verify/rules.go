package verify

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

// Decision is the outcome of checking one ref transition against a policy.
type Decision struct {
	Rules []RuleDecision
}

// RuleDecision is one applicable rule's outcome.
type RuleDecision struct {
	Rule      *policy.Rule
	Signed    []string // persons allowed by the rule who signed or approved
	Missing   int      // how many more persons are needed
	Candidate []string // allowed persons who have not signed yet
	Paths     []string // protected files that changed (path rules)
}

// Satisfied reports whether every applicable rule is met.
func (d *Decision) Satisfied() bool {
	for _, r := range d.Rules {
		if r.Missing > 0 {
			return false
		}
	}
	return true
}

// Transition is one proposed or recorded update of a ref.
type Transition struct {
	Ref      string
	Old, New gitrepo.Hash
	// Signer is the person who signs the entry ("" for none).
	Signer string
	// CheckPaths enables path rules (off for skips, which return a ref to a
	// state that was verified already).
	CheckPaths bool
	// DiffBase, when not zero, replaces Old as the state the changed files
	// are computed from (Old's commits were rewritten away; DiffBase is the
	// newest earlier recorded state still present, a larger, safe diff).
	DiffBase gitrepo.Hash
}

// Source is what Decide reads. *gitrepo.Repo satisfies it.
type Source interface {
	PeelToCommit(h gitrepo.Hash) (gitrepo.Hash, error)
	ReadCommit(h gitrepo.Hash) (*gitrepo.Commit, error)
	ChangedPaths(oldTree, newTree gitrepo.Hash) ([]string, error)
	MergeBase(a gitrepo.Hash, others ...gitrepo.Hash) (gitrepo.Hash, bool, error)
}

// Decide evaluates t under pol. approvers are the persons with valid
// approvals of exactly this transition. recordedTargets returns, for a new
// ref, the recorded targets of the refs a path rule covers (the base its
// changed files are computed against). The error is an I/O error or wraps
// ErrMissingObject.
func Decide(src Source, pol *policy.Policy, t Transition, approvers []string, recordedTargets func(*policy.Rule) []gitrepo.Hash) (*Decision, error) {
	persons := map[string]bool{}
	if t.Signer != "" {
		persons[t.Signer] = true
	}
	for _, a := range approvers {
		persons[a] = true
	}
	d := &Decision{}
	var changed []string
	changedFor := map[gitrepo.Hash][]string{}
	for _, r := range pol.RulesFor(t.Ref) {
		rd := RuleDecision{Rule: r}
		if r.IsPathRule() {
			if !t.CheckPaths || t.New.IsZero() {
				continue
			}
			var err error
			base := t.Old
			if !t.DiffBase.IsZero() {
				base = t.DiffBase
			}
			if base.IsZero() {
				changed, err = changedSinceBase(src, t.New, recordedTargets(r), changedFor)
			} else {
				changed, err = changedBetween(src, base, t.New, changedFor)
			}
			if err != nil {
				return nil, err
			}
			for _, p := range changed {
				if r.CoversPath(p) {
					rd.Paths = append(rd.Paths, p)
				}
			}
			if len(rd.Paths) == 0 {
				continue
			}
		}
		for _, name := range r.Allow {
			if persons[name] {
				rd.Signed = append(rd.Signed, name)
			} else {
				rd.Candidate = append(rd.Candidate, name)
			}
		}
		if len(rd.Signed) < r.Threshold {
			rd.Missing = r.Threshold - len(rd.Signed)
		}
		d.Rules = append(d.Rules, rd)
	}
	return d, nil
}

func treeOf(src Source, h gitrepo.Hash) (gitrepo.Hash, error) {
	c, err := src.PeelToCommit(h)
	if err != nil {
		return gitrepo.ZeroHash, fmt.Errorf("%w: %s: %v", ErrMissingObject, short(h), err)
	}
	commit, err := src.ReadCommit(c)
	if err != nil {
		return gitrepo.ZeroHash, fmt.Errorf("%w: commit %s: %v", ErrMissingObject, short(c), err)
	}
	return commit.Tree, nil
}

func changedBetween(src Source, old, new gitrepo.Hash, cache map[gitrepo.Hash][]string) ([]string, error) {
	ot, err := treeOf(src, old)
	if err != nil {
		return nil, err
	}
	nt, err := treeOf(src, new)
	if err != nil {
		return nil, err
	}
	paths, err := src.ChangedPaths(ot, nt)
	if err != nil {
		return nil, fmt.Errorf("%w: diff %s..%s: %v", ErrMissingObject, short(old), short(new), err)
	}
	return paths, nil
}

// changedSinceBase diffs a new ref's commit against its best common
// ancestor with the given recorded targets (the empty tree when none).
func changedSinceBase(src Source, new gitrepo.Hash, targets []gitrepo.Hash, _ map[gitrepo.Hash][]string) ([]string, error) {
	nc, err := src.PeelToCommit(new)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMissingObject, short(new), err)
	}
	var commits []gitrepo.Hash
	for _, t := range targets {
		if c, err := src.PeelToCommit(t); err == nil {
			commits = append(commits, c)
		}
	}
	base := gitrepo.ZeroHash
	if len(commits) > 0 {
		b, ok, err := src.MergeBase(nc, commits...)
		if err != nil {
			return nil, fmt.Errorf("%w: merge base of %s: %v", ErrMissingObject, short(new), err)
		}
		if ok {
			base = b
		}
	}
	nt, err := treeOf(src, nc)
	if err != nil {
		return nil, err
	}
	bt := gitrepo.ZeroHash
	if !base.IsZero() {
		if bt, err = treeOf(src, base); err != nil {
			return nil, err
		}
	}
	return src.ChangedPaths(bt, nt)
}

// Approvers returns the persons with a valid approval, under pol, of
// exactly ref moving from old to new, and notes about approvals that did
// not count.
func Approvers(store *attest.Store, pol *policy.Policy, ref string, old, new gitrepo.Hash) ([]string, []string, error) {
	if store == nil {
		return nil, nil, nil
	}
	files, err := store.Approvals(ref, old, new)
	if err != nil {
		return nil, nil, fmt.Errorf("verify: read approvals of %s %s..%s: %w", ref, short(old), short(new), err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var persons, notes []string
	seen := map[string]bool{}
	for _, name := range names {
		who, err := approver(pol, name, files[name], ref, old, new)
		if err != nil {
			notes = append(notes, fmt.Sprintf("approval %s ignored: %v", name, err))
			continue
		}
		if !seen[who] {
			seen[who] = true
			persons = append(persons, who)
		}
	}
	return persons, notes, nil
}

func approver(pol *policy.Policy, file string, data []byte, ref string, old, new gitrepo.Hash) (string, error) {
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
	a, err := attest.ParseApproval(env.Payload)
	if err != nil {
		return "", err
	}
	if err := a.Matches(ref, old, new); err != nil {
		return "", err
	}
	if !a.ToTree.IsZero() {
		return "", errors.New("tree-bound approvals are not accepted by this version")
	}
	person, ok := pol.PersonByFingerprint(sign.Fingerprint(key))
	if !ok {
		return "", errors.New("signer is not a person in the policy")
	}
	return person.Name, nil
}

// authorize checks one transition of ref at entry i and records a problem
// when a rule is not met.
func (v *verifier) authorize(i int, rec *rsl.Record, ref string, old, new gitrepo.Hash, checkPaths bool) error {
	pol := v.policies[i]
	rules := pol.RulesFor(ref)
	if len(rules) == 0 {
		return nil
	}
	signer := ""
	if p, ok := pol.PersonByFingerprint(v.signers[i]); ok {
		signer = p.Name
	}
	t := Transition{Ref: ref, Old: old, New: new, Signer: signer, CheckPaths: checkPaths}
	if checkPaths && !old.IsZero() {
		t.DiffBase = v.diffBase(ref, old)
	}
	d, err := Decide(v.repo, pol, t, nil, v.recordedTargets)
	if err != nil {
		return v.objectProblem(rec, ref, err)
	}
	if d.Satisfied() {
		return nil
	}
	// Only now read approvals: most entries are met by their signer.
	key := usedKey(ref, old, new)
	var approvers, notes []string
	if n, dup := v.used[key]; dup {
		notes = append(notes, fmt.Sprintf("approvals of this exact update were already counted for entry #%d", n))
	} else {
		if v.store == nil {
			if v.opts.RefValues != nil {
				v.store, err = attest.OpenStoreAt(v.repo, v.opts.RefValues[attest.Ref])
			} else {
				v.store, err = attest.OpenStore(v.repo)
			}
			if err != nil {
				return err
			}
		}
		approvers, notes, err = Approvers(v.store, pol, ref, old, new)
		if err != nil {
			return err
		}
		if len(approvers) > 0 {
			v.used[key] = rec.Entry.Number
		}
	}
	if len(approvers) > 0 {
		if d, err = Decide(v.repo, pol, t, approvers, v.recordedTargets); err != nil {
			return v.objectProblem(rec, ref, err)
		}
	}
	for _, rd := range d.Rules {
		if rd.Missing == 0 {
			continue
		}
		kind := ErrThreshold
		if len(rd.Signed) == 0 && signer != "" && !rd.Rule.Allows(signer) && len(approvers) == 0 {
			kind = ErrUnauthorized
		}
		v.problems = append(v.problems, &Problem{
			Entry: rec.Entry.Number, EntryID: rec.ID, Ref: ref, Rule: rd.Rule.Name, Kind: kind,
			Detail: describeDecision(rd, signer, notes),
			Hint:   approveHint(rd, ref, old, new),
		})
	}
	return nil
}

func (v *verifier) objectProblem(rec *rsl.Record, ref string, err error) error {
	if !errors.Is(err, ErrMissingObject) {
		return err
	}
	v.fail(rec, ref, "", ErrMissingObject, "fetch the missing commits (git fetch); if they were rewritten away, record the ref's current value", "%v", err)
	v.missing[rec.Entry.Number] = true
	return nil
}

// diffBase returns, when old's commit is no longer in the repository (a
// rebase or force push rewrote it away and it was garbage-collected), the
// newest earlier recorded target of ref that is still present, or zero to
// diff as for a new ref. It returns zero when old is present.
func (v *verifier) diffBase(ref string, old gitrepo.Hash) gitrepo.Hash {
	if ok, err := v.repo.HasObject(old); err != nil || ok {
		return gitrepo.ZeroHash
	}
	st := v.state[ref]
	for i := len(st) - 2; i >= 0; i-- { // st[len-1] is the entry being checked
		t := st[i].target
		if t.IsZero() {
			break
		}
		if ok, err := v.repo.HasObject(t); err == nil && ok {
			return t
		}
	}
	return gitrepo.ZeroHash
}

func (v *verifier) recordedTargets(r *policy.Rule) []gitrepo.Hash {
	var out []gitrepo.Hash
	refs := make([]string, 0, len(v.state))
	for ref := range v.state {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	for _, ref := range refs {
		if ref == rsl.PolicyRef || !r.CoversRef(ref) {
			continue
		}
		if last, ok := v.latest(ref); ok && !last.target.IsZero() {
			out = append(out, last.target)
		}
	}
	return out
}

func describeDecision(rd RuleDecision, signer string, notes []string) string {
	var b strings.Builder
	who := "nobody allowed"
	if len(rd.Signed) > 0 {
		who = strings.Join(rd.Signed, ", ")
	}
	fmt.Fprintf(&b, "needs %d of %s, has %d (%s); %d more needed", rd.Rule.Threshold, strings.Join(rd.Rule.Allow, ", "), len(rd.Signed), who, rd.Missing)
	if signer == "" {
		b.WriteString("; the entry's signer is not a person in the policy")
	} else if !rd.Rule.Allows(signer) {
		fmt.Fprintf(&b, "; signer %s is not allowed by this rule", signer)
	}
	if len(rd.Paths) > 0 {
		shown := rd.Paths
		if len(shown) > 5 {
			shown = shown[:5]
		}
		fmt.Fprintf(&b, "; protected files changed: %s", strings.Join(shown, ", "))
		if len(rd.Paths) > 5 {
			fmt.Fprintf(&b, " and %d more", len(rd.Paths)-5)
		}
	}
	for _, n := range notes {
		b.WriteString("; " + n)
	}
	return b.String()
}

func approveHint(rd RuleDecision, ref string, old, new gitrepo.Hash) string {
	if len(rd.Candidate) == 0 {
		return "no allowed person is left to approve: the rule's threshold cannot be met"
	}
	return fmt.Sprintf("%s can approve with: git secure attest approve %s --from %s --to %s",
		strings.Join(rd.Candidate, " or "), ref, old, new)
}
