package verify

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
)

// ErrPolicyRule is the kind of a violated global rule or of a move of a
// protected tag.
var ErrPolicyRule = errors.New("policy violation")

// ErrNoTests is the kind of an update whose tree lacks a required passing
// test run.
var ErrNoTests = errors.New("missing test attestation")

// Transition is one proposed or recorded update of a ref.
type Transition struct {
	Ref      string
	Old, New gitrepo.Hash
	// Signer is the person who signs the entry ("" for none).
	Signer string
	// CheckPaths enables path rules.
	CheckPaths bool
	// EveryRule judges the path rules even when a rule on the ref itself
	// already fails; otherwise their diff is not computed. explain and a
	// signer's own record or push set it: the refusal then names every
	// rule and person still needed (one round of approvals, not two), at
	// the signer's own cost. The server and verification leave it off, so
	// a push that fails anyway costs them no diff (notes/attacks 04).
	EveryRule bool
	// AllPaths makes every path rule covering the ref apply, whatever the
	// changed files: a skip whose current or restored state is no longer
	// in the repository cannot be diffed, so it must be allowed to change
	// every protected path.
	AllPaths bool
	// DiffBase, when not zero, replaces Old as the state the changed files
	// are computed from (Old's commits were rewritten away; DiffBase is the
	// newest earlier recorded state still present).
	DiffBase gitrepo.Hash
	// Unseen, when set (states between DiffBase and New are missing), says
	// why path rule r applies as if every path it protects changed, or ""
	// when it need not. The diff from DiffBase hides a change that a
	// missing state made and New undoes: a rollback of an authorized
	// change to r's files shows no change to them. So whenever a missing
	// state's entry could have changed r's files (its persons met r), the
	// entry must meet r whatever the diff says.
	Unseen func(r *policy.Rule) string
}

// Source is what Decide reads. *gitrepo.Repo satisfies it.
type Source interface {
	PeelToCommit(h gitrepo.Hash) (gitrepo.Hash, error)
	ReadCommit(h gitrepo.Hash) (*gitrepo.Commit, error)
	ChangedPaths(oldTree, newTree gitrepo.Hash) ([]string, error)
	MergeBase(a gitrepo.Hash, others ...gitrepo.Hash) (gitrepo.Hash, bool, error)
	IsAncestor(a, b gitrepo.Hash) (bool, error)
	HasObject(h gitrepo.Hash) (bool, error)
}

// Inputs are what Decide needs beyond the transition.
type Inputs struct {
	// Approvers are persons with valid approvals of exactly this transition.
	Approvers []string
	// TreeApprovers are persons whose approvals are bound to the new
	// commit's tree; they count only for rules that allow it.
	TreeApprovers []string
	// RecordedTargets returns, for a new ref, the recorded targets of the
	// refs a path rule covers (the base its changed files are computed
	// against).
	RecordedTargets func(*policy.Rule) []gitrepo.Hash
	// Bases, when set, keeps what choosing a new ref's base reads about
	// the recorded targets across calls (BaseCache).
	Bases *BaseCache
	// Tests returns the persons with a valid passing test run on a tree.
	Tests func(tree gitrepo.Hash) (persons, notes []string, err error)
}

// Decision is the outcome of checking one ref transition against a policy.
type Decision struct {
	Persons []string // distinct persons who signed or approved
	Rules   []RuleDecision
	Global  []Failure // violated global rules and tag moves
	// Unchecked names the path rules not judged because a rule on the ref
	// itself, or a global rule, already fails (no diff was computed).
	Unchecked []string
	t         Transition
}

// RuleDecision is one applicable rule's outcome.
type RuleDecision struct {
	Rule      *policy.Rule
	Signed    []string // persons allowed by the rule who signed or approved
	Missing   int      // how many more allowed persons are needed
	Candidate []string // allowed persons who have not signed yet
	// Paths are the protected files that changed (path rules), sorted
	// bytewise: all of them, or, when the diff was too large to list
	// (a tree bomb within the differ's bounds), the first few; PathCount
	// is how many there are.
	Paths     []string
	PathCount int
	// Unmet lists requirements (GROUP=N) not covered by distinct persons.
	Unmet []string
	// TestsMissing names the groups whose passing test run is required but
	// absent; TestNotes says why attestations found did not count.
	TestsMissing []string
	TestNotes    []string
	// AllPaths: the transition could not be diffed (Transition.AllPaths),
	// so the rule applies as if every path it protects changed.
	AllPaths bool
	// Unseen, with AllPaths, says which missing states made the rule
	// apply (Transition.Unseen).
	Unseen string
	// ObjectErr, when set, is why the rule could not be judged: an object
	// it needs is absent (ErrMissingObject) or unreadable (ErrBadObject).
	// The rule is then not met.
	ObjectErr error
}

// Met reports whether the rule is satisfied.
func (rd *RuleDecision) Met() bool {
	return rd.ObjectErr == nil && rd.Missing == 0 && len(rd.Unmet) == 0 && len(rd.TestsMissing) == 0
}

// Failure is one unmet requirement, ready to report.
type Failure struct {
	Rule   string
	Kind   error
	Detail string
	Hint   string
	// Unseen: the rule applied to every path it protects only because
	// states the diff needed are missing (RuleDecision.Unseen).
	Unseen bool
}

// Satisfied reports whether every applicable rule and global rule is met.
func (d *Decision) Satisfied() bool {
	if len(d.Global) > 0 {
		return false
	}
	for i := range d.Rules {
		if !d.Rules[i].Met() {
			return false
		}
	}
	return true
}

// NeedsApprovals reports whether more persons could change the outcome.
func (d *Decision) NeedsApprovals() bool {
	for i := range d.Rules {
		if d.Rules[i].Missing > 0 || len(d.Rules[i].Unmet) > 0 {
			return true
		}
	}
	for _, g := range d.Global {
		if g.Kind == ErrThreshold {
			return true
		}
	}
	return false
}

// Decide evaluates t under pol: every rule covering t.Ref and every global
// rule, each one even when another cannot be judged. An object a rule
// needs that is absent or unreadable makes that rule fail (RuleDecision.
// ObjectErr, a Failure of kind ErrMissingObject or ErrBadObject), never
// the others silently pass. The error is reserved for reading the inputs
// (attestations).
func Decide(src Source, pol *policy.Policy, t Transition, in Inputs) (*Decision, error) {
	d := &Decision{}
	if err := d.decide(src, pol, t, in); err != nil {
		return nil, err
	}
	return d, nil
}

// decide is Decide into d, whose slices are reused: a verifier decides
// every entry of the log with one Decision (a Decision and its rules for
// each entry were an eighth of what a full verification allocated).
// Nothing of the previous decision survives; on an error d is unusable.
func (d *Decision) decide(src Source, pol *policy.Policy, t Transition, in Inputs) error {
	clear(d.Rules[:cap(d.Rules)]) // the previous rules' slices are not kept alive
	*d = Decision{Persons: d.Persons[:0], Rules: d.Rules[:0], Global: d.Global[:0], Unchecked: d.Unchecked[:0], t: t}
	set := map[string]bool{}
	if t.Signer != "" {
		set[t.Signer] = true
	}
	for _, a := range in.Approvers {
		set[a] = true
	}
	for p := range set {
		d.Persons = append(d.Persons, p)
	}
	sort.Strings(d.Persons)
	rules := pol.RulesFor(t.Ref)
	// Rules on the ref itself, global rules and tag moves first: they
	// need no diff. When one fails, the entry fails whatever its files:
	// the path rules' diff is not computed (a person with no right on
	// the ref must not make the server, and every verifier, list the
	// files of a tree of her choosing), unless t.EveryRule.
	paths := false
	for _, r := range rules {
		if r.IsPathRule() {
			paths = true
			continue
		}
		rd, applies, err := decideRule(src, pol, t, in, set, d.Persons, nil, r)
		if err != nil {
			return err
		}
		if applies {
			d.Rules = append(d.Rules, rd)
		}
	}
	d.checkGlobal(src, pol, len(rules) > 0)
	if !paths {
		return nil
	}
	if !t.EveryRule && t.CheckPaths && d.failsAnyway() {
		for _, r := range rules {
			if r.IsPathRule() {
				d.Unchecked = append(d.Unchecked, r.Name)
			}
		}
		return nil
	}
	changed := changeCache{src: src, t: t, in: in, scope: pol.PathScopeFor(t.Ref), rules: pathRules(rules)}
	refRules := len(d.Rules)
	for _, r := range rules {
		if !r.IsPathRule() {
			continue
		}
		rd, applies, err := decideRule(src, pol, t, in, set, d.Persons, &changed, r)
		if err != nil {
			return err
		}
		if applies {
			d.Rules = append(d.Rules, rd)
		}
	}
	if refRules > 0 && len(d.Rules) > refRules {
		// Back to the policy's order.
		pos := func(r *policy.Rule) int { return slices.Index(rules, r) }
		slices.SortStableFunc(d.Rules, func(a, b RuleDecision) int { return pos(a.Rule) - pos(b.Rule) })
	}
	return nil
}

// decideRule judges one rule covering t. applies is false for a path rule
// whose protected files t does not touch.
func decideRule(src Source, pol *policy.Policy, t Transition, in Inputs, set map[string]bool, persons []string, changed *changeCache, r *policy.Rule) (rd RuleDecision, applies bool, err error) {
	rd = RuleDecision{Rule: r}
	if r.IsPathRule() {
		// A deletion changes every file of the ref: a path rule
		// applies when the deleted tree holds a file it protects
		// (before, it never applied, so anyone in the policy deleted
		// a ref that only a path rule covers, and recreated it
		// without the protected files).
		if !t.CheckPaths {
			return rd, false, nil
		}
		if t.AllPaths {
			rd.AllPaths = true
		} else if why := unseen(t, r); why != "" {
			rd.AllPaths, rd.Unseen = true, why
			// The files the diff does show changed, to name them.
			if ch, err := changed.files(r); err == nil {
				rd.Paths, rd.PathCount = coveredIn(src, r, ch)
			}
		} else if ch, err := changed.files(r); errors.Is(err, ErrBudget) {
			return rd, true, err // the replay stops (budgetError)
		} else if err != nil {
			// Whether the rule applies is unknown: it fails on the
			// object alone (an absent commit of a superseded entry
			// is then forgiven, not a threshold it may not have).
			rd.ObjectErr = err
			return rd, true, nil
		} else {
			rd.Paths, rd.PathCount = coveredIn(src, r, ch)
			if rd.PathCount == 0 {
				return rd, false, nil
			}
		}
	}
	if r.Untrusted != "" {
		// A delegation whose rule file counts for nothing: no
		// signature meets it (fail closed).
		rd.Unmet = []string{"rule file " + r.File + " counts for nothing: " + r.Untrusted}
		return rd, true, nil
	}
	if r.TreeApprovals && len(in.TreeApprovers) > 0 {
		set, persons = withTreeApprovers(set, in.TreeApprovers)
	}
	for _, name := range pol.AllowedPersons(r) {
		if set[name] {
			rd.Signed = append(rd.Signed, name)
		} else {
			rd.Candidate = append(rd.Candidate, name)
		}
	}
	if len(rd.Signed) < r.Threshold {
		rd.Missing = r.Threshold - len(rd.Signed)
	}
	rd.Unmet = unmetRequirements(pol, r.Require, persons)
	if len(r.TestsBy) > 0 && !t.New.IsZero() {
		missing, notes, err := missingTests(src, pol, r.TestsBy, t.New, in.Tests)
		switch {
		case errors.Is(err, ErrMissingObject) || errors.Is(err, ErrBadObject):
			rd.ObjectErr = errors.Join(rd.ObjectErr, err)
		case err != nil:
			return rd, false, err
		}
		rd.TestsMissing, rd.TestNotes = missing, notes
	}
	return rd, true, nil
}

func unseen(t Transition, r *policy.Rule) string {
	if t.Unseen == nil {
		return ""
	}
	return t.Unseen(r)
}

// withTreeApprovers is set plus the persons who approved the tree, and
// the sorted names of that union (a copy: set is shared by every rule).
func withTreeApprovers(set map[string]bool, tree []string) (map[string]bool, []string) {
	out := make(map[string]bool, len(set)+len(tree))
	for p := range set {
		out[p] = true
	}
	for _, p := range tree {
		out[p] = true
	}
	names := slices.AppendSeq(make([]string, 0, len(out)), maps.Keys(out))
	slices.Sort(names)
	return out, names
}

// failsAnyway reports whether the rules on the ref itself or the global
// rules already fail the transition for good: a threshold, a requirement
// or a test run not met, an unreadable object, a violated global rule.
// An absent object (ErrMissingObject) does not count: an entry a later
// one superseded is forgiven that, so its path rules must still be judged.
func (d *Decision) failsAnyway() bool {
	for _, g := range d.Global {
		if g.Kind != ErrMissingObject {
			return true
		}
	}
	for i := range d.Rules {
		rd := &d.Rules[i]
		if rd.Missing > 0 || len(rd.Unmet) > 0 || len(rd.TestsMissing) > 0 || errors.Is(rd.ObjectErr, ErrBadObject) {
			return true
		}
	}
	return false
}

// changeCache computes the transition's changed files once, or once per
// rule for a new ref (whose base depends on the refs each rule covers).
type changeCache struct {
	src Source
	t   Transition
	in  Inputs
	// scope: the directories the path rules' patterns may reach (the
	// diff lists no others).
	scope *policy.PathScope
	// rules are the path rules covering the ref: a diff too large to
	// list is walked once for all of them.
	rules []*policy.Rule
	done  bool
	ch    changes
	err   error
	// byTargets keeps a new ref's changed files per set of recorded
	// targets: rules that cover the same refs (many, with rule files)
	// share one merge base and one diff.
	byTargets map[string]changed
	// targets keeps each rule's recorded targets (new ref).
	targets map[*policy.Rule]ruleTargets
}

type changed struct {
	ch  changes
	err error
}

// pathRules are the path rules among rules.
func pathRules(rules []*policy.Rule) []*policy.Rule {
	var out []*policy.Rule
	for _, r := range rules {
		if r.IsPathRule() {
			out = append(out, r)
		}
	}
	return out
}

func (c *changeCache) files(r *policy.Rule) (changes, error) {
	newRef := c.t.Old.IsZero() && c.t.DiffBase.IsZero()
	if c.done && !newRef {
		return c.ch, c.err
	}
	if newRef {
		targets, key := c.targetsOf(r)
		if x, ok := c.byTargets[key]; ok {
			return x.ch, x.err
		}
		// The rules that cover the same refs share this diff: one too
		// large to list is walked for them, not for every path rule of
		// the ref once per set of targets.
		var share []*policy.Rule
		for _, o := range c.rules {
			if _, k := c.targetsOf(o); k == key {
				share = append(share, o)
			}
		}
		if !slices.Contains(share, r) {
			share = append(share, r)
		}
		ch, err := changedFiles(c.src, c.in.Bases, c.t, targets, c.scope, share)
		if c.byTargets == nil {
			c.byTargets = map[string]changed{}
		}
		c.byTargets[key] = changed{ch, err}
		return ch, err
	}
	c.ch, c.err = changedFiles(c.src, c.in.Bases, c.t, nil, c.scope, c.rules)
	c.done = true
	return c.ch, c.err
}

// targetsOf is, for a new ref, the recorded targets its rule r's changed
// files are computed against and their key, asked once per rule.
func (c *changeCache) targetsOf(r *policy.Rule) ([]gitrepo.Hash, string) {
	if t, ok := c.targets[r]; ok {
		return t.hashes, t.key
	}
	var targets []gitrepo.Hash
	if c.in.RecordedTargets != nil {
		targets = c.in.RecordedTargets(r)
	}
	var key strings.Builder
	for _, h := range targets {
		key.Write(h[:]) // raw: hex cost a tenth of the replay at 3 000 tags
	}
	if c.targets == nil {
		c.targets = map[*policy.Rule]ruleTargets{}
	}
	c.targets[r] = ruleTargets{targets, key.String()}
	return targets, key.String()
}

// ruleTargets is targetsOf's answer for one rule.
type ruleTargets struct {
	hashes []gitrepo.Hash
	key    string
}

// changedFiles is what differs between the transition's base and its new
// target, for the path rules rules (changes). A new ref with no base is
// compared with a recorded state of targets (changedSinceBase).
func changedFiles(src Source, bases *BaseCache, t Transition, targets []gitrepo.Hash, scope *policy.PathScope, rules []*policy.Rule) (changes, error) {
	base := t.Old
	if !t.DiffBase.IsZero() {
		base = t.DiffBase
	}
	if t.New.IsZero() {
		return deletedFiles(src, base, scope, rules)
	}
	if base.IsZero() {
		return changedSinceBase(src, bases, t.New, targets, scope, rules)
	}
	return changedBetween(src, base, t.New, scope, rules)
}

// deletedFiles is every file of old's tree: what deleting a ref at old
// removes from it.
func deletedFiles(src Source, old gitrepo.Hash, scope *policy.PathScope, rules []*policy.Rule) (changes, error) {
	if old.IsZero() {
		return changes{}, nil
	}
	ot, err := treeOf(src, old)
	if err != nil {
		return changes{}, err
	}
	ch, err := changesIn(src, ot, gitrepo.ZeroHash, scope, rules)
	if errors.Is(err, ErrBudget) {
		return changes{}, err // not the tree's fault
	}
	if err != nil {
		return changes{}, fmt.Errorf("%w: files of %s: %w", ErrBadObject, short(old), err)
	}
	return ch, nil
}

// unmetRequirements assigns distinct persons to requirement slots (a
// person fills one slot at most) and returns what stays unmet.
func unmetRequirements(pol *policy.Policy, reqs []policy.Requirement, persons []string) []string {
	if len(reqs) == 0 {
		return nil
	}
	var slots []int // requirement index per slot
	for i, q := range reqs {
		for k := 0; k < q.N; k++ {
			slots = append(slots, i)
		}
	}
	eligible := func(person string, req int) bool {
		m, _ := pol.Members(reqs[req].Group)
		for _, x := range m {
			if x == person {
				return true
			}
		}
		return false
	}
	// Bipartite matching, slots to persons (Kuhn's algorithm; sizes are small).
	owner := make(map[string]int) // person -> slot
	var try func(slot int, seen map[string]bool) bool
	try = func(slot int, seen map[string]bool) bool {
		for _, p := range persons {
			if seen[p] || !eligible(p, slots[slot]) {
				continue
			}
			seen[p] = true
			if prev, taken := owner[p]; !taken || try(prev, seen) {
				owner[p] = slot
				return true
			}
		}
		return false
	}
	filled := make([]int, len(reqs))
	for slot := range slots {
		if try(slot, map[string]bool{}) {
			continue
		}
	}
	for _, slot := range owner {
		filled[slots[slot]]++
	}
	var unmet []string
	for i, q := range reqs {
		if filled[i] < q.N {
			unmet = append(unmet, fmt.Sprintf("%s needs %d more", q.Group, q.N-filled[i]))
		}
	}
	return unmet
}

func missingTests(src Source, pol *policy.Policy, groups []string, target gitrepo.Hash, tests func(gitrepo.Hash) ([]string, []string, error)) ([]string, []string, error) {
	tree, err := treeOf(src, target)
	if err != nil {
		return nil, nil, err
	}
	var testers, notes []string
	if tests != nil {
		if testers, notes, err = tests(tree); err != nil {
			return nil, nil, err
		}
	}
	var missing []string
	for _, g := range groups {
		members, _ := pol.Members(g)
		found := false
		for _, m := range members {
			for _, t := range testers {
				found = found || m == t
			}
		}
		if !found {
			missing = append(missing, g)
		}
	}
	return missing, notes, nil
}

// checkGlobal applies global rules and tag immutability to a protected ref.
// A rule that cannot be judged (its commits cannot be read) is violated.
func (d *Decision) checkGlobal(src Source, pol *policy.Policy, protected bool) {
	t := d.t
	if protected && strings.HasPrefix(t.Ref, "refs/tags/") && !t.Old.IsZero() {
		verb := "moved"
		if t.New.IsZero() {
			verb = "deleted"
		}
		d.Global = append(d.Global, Failure{Kind: ErrPolicyRule,
			Detail: fmt.Sprintf("protected tag %s was %s: a protected tag is created once and never moved or deleted", t.Ref, verb),
			Hint:   "make a new tag instead"})
	}
	for _, g := range pol.GlobalRules() {
		if !g.CoversRef(t.Ref) {
			continue
		}
		switch g.Type {
		case policy.GlobalNoForcePush:
			if t.Old.IsZero() {
				continue
			}
			ff := false
			if !t.New.IsZero() {
				ok, err := src.IsAncestor(t.Old, t.New)
				if err != nil {
					// On a ref that only fast-forwards every recorded state
					// stays reachable from the next: one that is gone was
					// rewritten away, a violation, never a superseded
					// entry's missing object.
					err = objectError(src, err, "ancestry of "+short(t.New), t.Old, t.New)
					kind := ErrPolicyRule
					if errors.Is(err, ErrBadObject) {
						kind = ErrBadObject
					}
					d.Global = append(d.Global, Failure{Rule: g.Name, Kind: kind,
						Detail: fmt.Sprintf("%s may only fast-forward, but whether %s contains %s cannot be shown (history rewritten away?): %v", t.Ref, short(t.New), short(t.Old), err),
						Hint:   "fetch the complete history (a shallow clone cannot show it); if it was rewritten, the rule was broken"})
					continue
				}
				ff = ok
			}
			if !ff {
				d.Global = append(d.Global, Failure{Rule: g.Name, Kind: ErrPolicyRule,
					Detail: fmt.Sprintf("%s may only fast-forward, but %s does not contain %s (force push or deletion)", t.Ref, shortOrNone(t.New), short(t.Old)),
					Hint:   "merge or rebase onto the recorded commit instead of rewriting it"})
			}
		case policy.GlobalMinPersons:
			if protected && len(d.Persons) < g.N {
				d.Global = append(d.Global, Failure{Rule: g.Name, Kind: ErrThreshold,
					Detail: fmt.Sprintf("every protected update needs %d distinct persons; has %d (%s)", g.N, len(d.Persons), strings.Join(d.Persons, ", ")),
					Hint:   fmt.Sprintf("another person approves with: git secure attest approve %s --from %s --to %s", t.Ref, t.Old, t.New)})
			}
		}
	}
}

// objectHint says what to do about an object that cannot be read.
const objectHint = "fetch the missing commits (git fetch); an object that is present but unreadable (see git fsck) fails the entry: rewrite the commits that hold it"

// objectKind is ErrMissingObject or ErrBadObject, whichever err wraps.
func objectKind(err error) error {
	if errors.Is(err, ErrBadObject) {
		return ErrBadObject
	}
	return ErrMissingObject
}

// Failures lists every unmet requirement of d.
func (d *Decision) Failures() []Failure {
	out := append([]Failure(nil), d.Global...)
	t := d.t
	for _, rd := range d.Rules {
		if rd.Met() {
			continue
		}
		if rd.ObjectErr != nil {
			hint := objectHint
			if errors.Is(rd.ObjectErr, gitrepo.ErrDiffBound) {
				hint = boundHint
			}
			out = append(out, Failure{Rule: rd.Rule.Name, Kind: objectKind(rd.ObjectErr),
				Detail: fmt.Sprintf("the rule cannot be checked on %s..%s: %v", shortOrNone(t.Old), shortOrNone(t.New), rd.ObjectErr),
				Hint:   hint})
		}
		if rd.Missing > 0 || len(rd.Unmet) > 0 {
			kind := ErrThreshold
			if len(d.Persons) > 0 && len(rd.Signed) == 0 && t.Signer != "" && len(d.Persons) == 1 {
				kind = ErrUnauthorized
			}
			out = append(out, Failure{Rule: rd.Rule.Name, Kind: kind, Detail: describeRule(rd, t.Signer), Hint: approveHint(rd, t), Unseen: rd.Unseen != ""})
		}
		if len(rd.TestsMissing) > 0 {
			detail := fmt.Sprintf("needs a passing test run on the tree of %s attested by %s", shortOrNone(t.New), strings.Join(rd.TestsMissing, ", "))
			if len(rd.TestNotes) > 0 {
				detail += "; " + strings.Join(rd.TestNotes, "; ")
			}
			out = append(out, Failure{Rule: rd.Rule.Name, Kind: ErrNoTests, Detail: detail,
				Hint: "a member of " + strings.Join(rd.TestsMissing, " or ") + " runs the tests on that commit: git secure attest run -- <test command>"})
		}
	}
	if len(d.Unchecked) > 0 && len(out) > 0 {
		out[0].Detail += fmt.Sprintf("; path rule %s not checked: the entry fails already, so the files it changes were not compared (they will be once this is met)", strings.Join(d.Unchecked, ", "))
	}
	return out
}

// boundHint says what to do about a diff beyond the differ's bounds.
const boundHint = "the commits' trees change more than git-secure compares in one entry (bounds: docs/scaling.md, \"Tree diffs\"): record the change as several entries of smaller diffs (push it in steps), or rewrite the commits without the oversized, deeply nested or repeated directories"

func describeRule(rd RuleDecision, signer string) string {
	var b strings.Builder
	if rd.Rule.Untrusted != "" {
		b.WriteString(strings.Join(rd.Unmet, "; "))
		describePaths(&b, rd)
		return b.String()
	}
	who := "nobody allowed"
	if len(rd.Signed) > 0 {
		who = strings.Join(rd.Signed, ", ")
	}
	fmt.Fprintf(&b, "needs %d of %s, has %d (%s)", rd.Rule.Threshold, strings.Join(rd.Rule.Allow, ", "), len(rd.Signed), who)
	if rd.Missing > 0 {
		fmt.Fprintf(&b, "; %d more needed", rd.Missing)
	}
	for _, u := range rd.Unmet {
		b.WriteString("; " + u)
	}
	if signer == "" {
		b.WriteString("; the entry's signer is not a person in the policy")
	} else if len(rd.Signed) == 0 || !contains(rd.Signed, signer) {
		fmt.Fprintf(&b, "; signer %s is not allowed by this rule", signer)
	}
	describePaths(&b, rd)
	return b.String()
}

// describePaths adds the protected files a rule decision is about.
func describePaths(b *strings.Builder, rd RuleDecision) {
	switch {
	case rd.Unseen != "":
		b.WriteString("; " + rd.Unseen)
	case rd.AllPaths:
		b.WriteString("; the states it moves between are not all in the repository, so every path the rule protects counts as changed")
	}
	if len(rd.Paths) > 0 {
		shown := rd.Paths
		if len(shown) > maxShownPaths {
			shown = shown[:maxShownPaths]
		}
		show := make([]string, len(shown))
		for i, p := range shown {
			show[i] = policy.ShowPath(p)
		}
		fmt.Fprintf(b, "; protected files changed: %s", strings.Join(show, ", "))
		if n := max(rd.PathCount, len(rd.Paths)); n > len(shown) {
			fmt.Fprintf(b, " and %d more", n-len(shown))
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func approveHint(rd RuleDecision, t Transition) string {
	if rd.Rule.Untrusted != "" {
		return fmt.Sprintf("the signers of rule file %s sign it (git secure policy sign --file %s, then git secure policy apply), or the file above it removes the delegation", rd.Rule.File, rd.Rule.File)
	}
	if len(rd.Candidate) == 0 {
		return "no allowed person is left to approve: the rule's threshold cannot be met"
	}
	return fmt.Sprintf("%s can approve with: git secure attest approve %s --from %s --to %s",
		strings.Join(rd.Candidate, " or "), t.Ref, t.Old, t.New)
}

// Testers returns the persons with a valid passing test-run attestation on
// tree under pol, and notes about attestations that did not count.
func Testers(store *attest.Store, pol *policy.Policy, tree gitrepo.Hash, revoked func(string) bool) ([]string, []string, error) {
	if store == nil {
		return nil, nil, nil
	}
	files, err := store.Envelopes(attest.TestRunDir(tree))
	if err != nil {
		return nil, nil, fmt.Errorf("verify: read test runs of tree %s: %w", short(tree), err)
	}
	persons, notes := attestedPersons(pol, files, revoked, "test run", func(payload []byte) error {
		run, err := attest.ParseTestRun(payload)
		if err != nil {
			return err
		}
		if run.Tree != tree {
			return fmt.Errorf("it is for tree %s", short(run.Tree))
		}
		if run.ExitCode != 0 {
			return fmt.Errorf("the command exited with %d", run.ExitCode)
		}
		return nil
	})
	return persons, notes, nil
}
