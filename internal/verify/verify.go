// Package verify decides trust. It replays the Reference State Log from its
// first entry: it checks each entry's signature against the policy in force
// at that entry, each policy change against the one before it (thresholds,
// versions, expiry), each ref update against the rules (distinct persons,
// approvals of exactly that update, protected files), and finally that the
// repository's refs are what the log says. Everything it reads comes from
// the repository and is treated as hostile; nothing is trusted before its
// signature is checked. Verify is safe to call from several goroutines on
// distinct Repos.
package verify

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
)

// Options tune a verification.
type Options struct {
	// Refs limits the check of rules and of current values to these refs
	// (all when empty). Policy entries are always checked.
	Refs []string
	// Now is the reference time for expiry.
	Now time.Time
	// RefValues, when set, replaces the repository's refs (a server hook
	// verifying the state a push would create, a fetch verifying what
	// arrived): the log, the policy, the attestations and every recorded
	// ref are read from it. Keys are full ref names.
	RefValues map[string]gitrepo.Hash
	// LocalAhead accepts a local branch that is a descendant of its
	// recorded value (unpushed work in a working repository that has no
	// remote, so no shared state but its own). Off for servers; clones
	// with a remote use Clone.
	LocalAhead bool
	// IgnoreMissingRefs accepts recorded refs absent from the repository
	// (a working repository without a remote). Off for servers.
	IgnoreMissingRefs bool
	// Clone, when set, makes this the verification of a working clone:
	// the remote's state (remote-tracking refs, recorded tags) is judged
	// strictly and the clone's own branches and tags are only reported
	// (Result.Local). Unset, the repository's refs (or RefValues) are
	// judged strictly, as a server's are. See CloneState.
	Clone *CloneState
	// Progress, when set, is called as entries are checked.
	Progress func(done, total int)
	// Workers bounds signature-checking goroutines (default: GOMAXPROCS).
	Workers int
	// Trace, when set, is told how long each phase took (git secure
	// verify prints it with GIT_SECURE_TRACE=1).
	Trace func(phase string, d time.Duration)
	// Checkpoint, when set, is a previous complete verification: only the
	// entries after it are checked. A checkpoint that does not match the
	// log is ignored (Result.Warnings says so) and everything is checked.
	Checkpoint *Checkpoint
	// RootKeys, when set, pins the root of trust (SSH SHA256 fingerprints)
	// instead of trusting the first policy on first use: some root version
	// of the log must be signed by these keys themselves (see pin.go for
	// the exact rule), and every later one by the rotation's keys.
	RootKeys []string
	// RootThreshold is how many of RootKeys must have signed that root
	// version (0: all of them); never fewer than its own root threshold.
	RootThreshold int
	// Budget, when set, bounds the work of verifying new entries (a
	// server's bound on one push).
	Budget *Budget
	// SkipFreshness does not judge the freshness statement the policy
	// may require (see freshness.go): a server judging a push, an audit
	// of a past state. Everyone else leaves it off.
	SkipFreshness bool
	// RequireFreshness refuses a state whose policy in force sets no
	// freshness (freshness.RequireConfig): a clone that knows the project
	// uses freshness must not take a snapshot from before it was set.
	RequireFreshness bool
	// PolicyOverride, when set, is used as the policy in force at every
	// entry ("what would this policy have refused?"); policy changes in
	// the log are then not checked.
	PolicyOverride *policy.Policy
	// AllowShallow accepts a shallow clone: the checks it cannot make
	// (an object beyond its boundary is absent) become Result.Warnings
	// naming each one, and no checkpoint is saved (see shallow.go).
	AllowShallow bool
	// Org gives the organisation policy versions that the entries of a
	// repository inheriting one name (internal/org.Cache). Without it,
	// such a repository fails verification (fail closed).
	Org OrgSource
	// OrgCurrentFrom, when not 0, requires the entries from this number
	// on (a push's new entries) to name the organisation's latest policy
	// version: a person the organisation removed loses access at once,
	// whatever version their client names.
	OrgCurrentFrom uint64
	// Loaded is a policy the caller read with policy.LoadSigned(repo,
	// LoadedCommit, nil) and no longer uses: a checkpoint made at that
	// policy commit starts from it instead of reading and checking the
	// same commit again (the server's hook loads the proposed policy
	// before it verifies: about 1 ms of every push).
	Loaded       *policy.Policy
	LoadedCommit gitrepo.Hash

	// FindStates are commits the caller asks about: is any of them the
	// old or new state of a ref entry? The replay answers for the entries
	// it reads (Result.FoundStates), so that a fetch checking the keep
	// refs a remote serves (only those for recorded states are taken)
	// need not read the log a second time.
	FindStates map[gitrepo.Hash]bool

	// index, set by WithStore, receives the index records of the
	// entries replayed.
	index *indexWriter
	// memory, set by WithStore, bounds the heap while a long log
	// streams, and through the checkpoint's save (memlimit.go).
	memory *memoryLimit
}

// RefStatus is the verified state of one ref.
type RefStatus struct {
	Ref       string       `json:"ref"`
	Target    gitrepo.Hash `json:"target"`
	Entry     uint64       `json:"entry"`
	EntryID   gitrepo.Hash `json:"entryId"`
	Protected bool         `json:"protected"`
	// Tracking is the remote-tracking ref the judged value was read from
	// (a working clone), empty for the ref itself.
	Tracking string `json:"tracking,omitempty"`
	Note     string `json:"note,omitempty"`
}

// Result describes what was verified.
type Result struct {
	// FoundStates are those of Options.FindStates that a ref entry the
	// replay read records as its old or new state. StatesComplete: the
	// replay read every entry of the log (no checkpoint, no early stop),
	// so the log records none of the others.
	FoundStates    map[gitrepo.Hash]bool `json:"-"`
	StatesComplete bool                  `json:"-"`

	Entries        int          `json:"entries"`
	Tip            gitrepo.Hash `json:"tip"`
	PolicyEntry    uint64       `json:"policyEntry"`
	RootVersion    int64        `json:"rootVersion"`
	RulesVersion   int64        `json:"rulesVersion"`
	PolicyExpires  time.Time    `json:"policyExpires"`
	Refs           []RefStatus  `json:"refs"`
	Warnings       []string     `json:"warnings,omitempty"`
	SkippedEntries []uint64     `json:"skippedEntries,omitempty"`
	// RootKeys and RootThreshold are the root of trust in force: what to
	// pin (PinCommand).
	RootKeys      []string `json:"rootKeys,omitempty"`
	RootThreshold int      `json:"rootThreshold,omitempty"`
	// Pin is PinCurrent or PinStale when a root key pin was checked, ""
	// when the first policy was trusted on first use.
	Pin string `json:"pin,omitempty"`
	// StalePin is the warning (also in Warnings) when Pin is PinStale.
	StalePin string `json:"-"`
	// Org is the URL of the organisation policy the policy in force
	// inherits, and OrgVersion the newest version of it an entry names
	// (0: none yet).
	Org        string `json:"org,omitempty"`
	OrgVersion uint64 `json:"orgVersion,omitempty"`
	// Checked is how many entries this run checked (fewer than Entries
	// when it started from a checkpoint).
	Checked int `json:"checked"`
	// Diffs is how many tree diffs this run computed (each pair of trees
	// once).
	Diffs int `json:"diffs"`
	// DiffTrees is how many trees those diffs read and walked in all
	// (gitrepo.DiffStats; tests).
	DiffTrees int `json:"diffTrees"`
	// Judged says which refs were compared with the log: "bare
	// repository refs", "remote NAME" (a working clone: what NAME
	// served), "local refs (no remote)" or "given refs" (a server hook,
	// a fetch).
	Judged string `json:"judged"`
	// Local lists a working clone's own refs that differ from the log:
	// local state, reported and never judged.
	Local []LocalRef `json:"local,omitempty"`
	// Checkpoint is the state after this verification, when it checked
	// every ref and everything verified; save it for the next run.
	Checkpoint *Checkpoint `json:"-"`
	// ValidUntil is when the policy in force first expires (root, rules
	// or a rule file): until then the same refs verify the same way, so
	// a fetch that finds the remote unchanged need not verify again.
	ValidUntil time.Time `json:"-"`
	// Freshness says the policy in force names freshness keys: the age
	// of the freshness statement is judged anew at every fetch.
	Freshness bool `json:"-"`
}

// ErrNoLog is returned when the repository has no refs/secure/rsl.
var ErrNoLog = errors.New("verify: this repository has no git-secure log (refs/secure/rsl); run git secure init, or fetch refs/secure/* from a remote")

// Verify replays the whole log of repo. It returns a *Failed error listing
// every problem when a check fails, another error when verification could
// not run (I/O), and the Result in both cases where it got that far.
func Verify(repo Repository, opts Options) (*Result, error) {
	if opts.Now.IsZero() {
		return nil, errors.New("verify: Options.Now is required")
	}
	var tip gitrepo.Hash
	var ok bool
	var err error
	if opts.RefValues != nil {
		tip, ok = opts.RefValues[rsl.Ref]
		ok = ok && !tip.IsZero()
	} else if tip, ok, err = repo.ResolveRef(rsl.Ref); err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNoLog
	}
	if _, err := newPin(opts.RootKeys, opts.RootThreshold); err != nil {
		return nil, err
	}
	var warnings []string
	if opts.Clone != nil && !opts.Clone.PushedTip.IsZero() && opts.Clone.PushedTip != tip {
		// Unpushed local entries: the remote's state is judged against
		// the log at its tip, which only a full replay passes through.
		opts.Checkpoint = nil
	}
	if cp := opts.Checkpoint; cp != nil {
		res, err := verifyFrom(repo, tip, opts, cp)
		if !errors.Is(err, errStale) {
			return res, err
		}
		warnings = append(warnings, "the saved checkpoint does not match the log (rewritten log, or a tampered checkpoint): verified everything again")
	}
	res, err := verifyFrom(repo, tip, opts, nil)
	if res != nil {
		res.Warnings = append(warnings, res.Warnings...)
	}
	return res, err
}

func verifyFrom(repo Repository, tip gitrepo.Hash, opts Options, cp *Checkpoint) (*Result, error) {
	var since []*rsl.Record // the entries after cp, read once
	var seed map[string]uint64
	for {
		v, err := newVerifier(repo, tip, opts, cp, &since, seed)
		if v == nil {
			return nil, err
		}
		res, err := v.run()
		v.close()
		if !v.retro {
			return res, err
		}
		// A policy revokes a key from an entry an earlier window already
		// judged: judge again, every revocation known from the start.
		// Each pass knows strictly more revocations, so this ends.
		seed = v.revokedFrom
	}
}

// newVerifier prepares a verification of the log up to tip (after cp when
// set), its entries streamed in windows. A nil verifier comes with the
// error to return.
func newVerifier(repo Repository, tip gitrepo.Hash, opts Options, cp *Checkpoint, since *[]*rsl.Record, seed map[string]uint64) (*verifier, error) {
	v := &verifier{repo: repo, opts: opts, res: &Result{Tip: tip}, src: newDiffCache(repo, opts.Budget), seedRevoked: seed, refIndex: map[string]uint32{}}
	pin, err := newPin(opts.RootKeys, opts.RootThreshold)
	if err != nil {
		return nil, err
	}
	if pin != nil {
		v.pin = &pinState{pin: pin, keys: map[string]bool{}}
	}
	if cp != nil {
		t0 := time.Now()
		if *since == nil {
			*since, err = readSince(repo, tip, cp)
			if *since == nil && err == nil {
				*since = []*rsl.Record{}
			}
		}
		if err == nil {
			v.trace("read since checkpoint", t0)
			t0 = time.Now()
			err = v.startFrom(cp)
			v.trace("load checkpoint policy", t0)
		}
		if err == nil {
			v.stream = sliceStream(*since)
		}
	} else {
		start := time.Now()
		v.stream, err = openLog(repo, tip)
		if err == nil && v.stream.total >= int(inProcessChainMin) {
			v.opts.memory.apply()
		}
		v.trace("list log", start)
	}
	if errors.Is(err, errStale) {
		return nil, err
	}
	if err != nil {
		return nil, &Failed{Problems: []*Problem{unreadableLog(repo, err)}}
	}
	opts.index.begin(v.base)
	v.res.Entries = int(v.base) + v.stream.total
	v.res.Checked = v.stream.total
	if len(opts.Refs) > 0 {
		v.only = map[string]bool{}
		for _, r := range opts.Refs {
			v.only[r] = true
		}
	}
	return v, nil
}

type recorded struct {
	number uint64
	id     gitrepo.Hash
	target gitrepo.Hash
}

type verifier struct {
	// values: what one walk of the log found about the values refs were
	// observed at instead of their latest entry (current.go mismatch);
	// classified counts the protected refs whose mismatch asked the
	// commit graph.
	values     *recordedValues
	classified int
	// bases: what choosing new refs' bases read (BaseCache); covered:
	// the recorded refs each path rule covers (coveredRefs).
	bases   BaseCache
	covered map[*policy.Rule]*coveredCache
	// reviews are the remote's review branches judged in a clone
	// (clonecheck.go), summarised once.
	reviews []TrackedRef
	// shallowAllowed is set when AllowShallow accepted a shallow clone;
	// shallowSkipped counts the checks it could not make (shallow.go).
	shallowAllowed bool
	shallowSkipped int

	repo Repository
	src  *diffCache // repo, with each tree diff computed once and charged to the budget
	opts Options
	// stream yields the entries to check (numbers base+1, base+2, ...)
	// in windows; records, policies and signers are those of the window
	// being replayed (index = position in the window).
	stream  *logStream
	records []*rsl.Record
	base    uint64 // entries up to base were verified before (checkpoint)
	// statesThrough is the last entry of an unbroken run from entry 1
	// searched for Options.FindStates.
	statesThrough uint64
	only          map[string]bool
	res           *Result

	// count entries went through the policy step; last is the newest.
	count   int
	lastID  gitrepo.Hash
	lastNum uint64
	prevRec *rsl.Record // the entry replayed before the current one
	// decision is the one Decision replay decides every entry into.
	decision Decision
	// infos holds every entry checked (entryInfo; index = number-1-base);
	// spillErr is the first error keeping it (the run fails with it).
	infos    *spillTable
	spillErr error
	refNames []string
	refIndex map[string]uint32
	spans    []policySpan // the policies in force, oldest first
	// curPolicy is the policy in force after the entries the policy step
	// has seen.
	curPolicy       *policy.Policy
	curPolicyCommit gitrepo.Hash
	// policyProblems are the problems of the policy timeline: with any,
	// nothing else is judged. sigProblems are the signature problems, in
	// entry order, reported before replay's as a whole-log pass would.
	policyProblems []*Problem
	sigProblems    []*Problem
	// seedRevoked holds revocations known before the first entry (a
	// repeated pass); retro is set when a policy revokes a key from an
	// entry an earlier window already judged (verifyFrom runs again).
	seedRevoked map[string]uint64
	retro       bool
	// replayErr stopped replay (a *budgetError, or an error to return).
	replayErr error

	startPolicy       *policy.Policy // policy in force at base (checkpoint)
	startPolicyCommit gitrepo.Hash
	startPolicyEntry  uint64
	finalPolicy       *policy.Policy
	policyCommit      gitrepo.Hash

	// pushCerts is the push certificate store, read when a rule first
	// requires signed pushes (pushcert.go).
	pushCerts *pushCerts
	// orgs is the organisation policy timeline (org.go).
	orgs orgTimeline

	policies []*policy.Policy // policy in force at each entry of the window
	signers  []string         // fingerprint of the verified signer of each entry of the window

	state   map[string]*refStates // non-skipped entries per ref, oldest first
	states  *stateLog             // where state's entries are kept
	skipped map[uint64]bool
	// gone holds, per entry whose new state is missing, what a later
	// entry diffing past it needs (goneState).
	gone map[uint64]goneState
	// pushed is each ref's latest entry as of Options.Clone.PushedTip
	// (the remote's log), when replay passed through it.
	pushed   map[string]recorded
	problems []*Problem
	used     map[usedDigest]uint64 // approval transitions already counted
	// revokedFrom maps a key fingerprint to the first entry from which it
	// is revoked, over every policy seen. A map once stored here is never
	// written again (addRevocations copies): signature workers read it.
	revokedFrom map[string]uint64
	store       *attest.Store
	pin         *pinState // nil: the first policy is trusted on first use
	// storeHistory is set once store reads the union over the store's
	// history (useStoreHistory), or that was found to change nothing.
	storeHistory bool
}

func (v *verifier) wanted(ref string) bool {
	return v.only == nil || v.only[ref] || ref == rsl.PolicyRef
}

// judged reports whether the entries of ref are judged (signature, chain,
// rules) under pol, the policy of the entry. A run limited to named refs
// (Options.Refs) judges the named refs and the policy, and also every ref
// that a path rule covering a named ref covers: a new named ref's files
// are compared with those refs' recorded states (recordedTargetsExcept),
// and an unjudged entry there (a forged state holding the protected
// change) would hide the change from the named ref's check.
func (v *verifier) judged(pol *policy.Policy, ref string) bool {
	if v.wanted(ref) {
		return true
	}
	if pol == nil {
		return false
	}
	for _, r := range pol.RulesFor(ref) {
		if !r.IsPathRule() {
			continue
		}
		for named := range v.only {
			if pol.Covers(r, named) {
				return true
			}
		}
	}
	return false
}

func (v *verifier) fail(rec *rsl.Record, ref, rule string, kind error, hint, format string, args ...any) {
	p := &Problem{Ref: ref, Rule: rule, Kind: kind, Detail: fmt.Sprintf(format, args...), Hint: hint}
	if rec != nil {
		p.Entry, p.EntryID = rec.Entry.Number, rec.ID
	}
	v.problems = append(v.problems, p)
}

func (v *verifier) trace(phase string, start time.Time) {
	if v.opts.Trace != nil {
		v.opts.Trace(phase, time.Since(start))
	}
}

// StoreJunkWarning starts the warnings about junk met in the approvals
// store (attest.Store.Junk).
const StoreJunkWarning = attest.Ref + ": store entry "

func (v *verifier) run() (*Result, error) {
	start := time.Now()
	if err := v.stream.run(v); err != nil {
		return v.res, err
	}
	if v.spillErr != nil {
		return nil, v.spillErr
	}
	if len(v.policyProblems) > 0 {
		// Without a trustworthy policy timeline nothing else can be judged.
		return v.res, &Failed{Problems: v.policyProblems}
	}
	v.problems = append(v.sigProblems, v.problems...)
	if v.replayErr != nil {
		var over *budgetError
		if !errors.As(v.replayErr, &over) {
			return nil, v.replayErr
		}
		// Nothing after the entry that spent the budget was judged: fail
		// closed with what was found so far and why it stopped.
		v.fail(over.rec, over.rec.Entry.Ref, "", ErrBudget, budgetHint(over.err), "%s", budgetDetail(over.err))
		return v.res, &Failed{Problems: v.problems}
	}
	v.trace("log: policies, signatures, replay", start)
	v.res.StatesComplete = len(v.opts.FindStates) > 0 && v.base == 0 && v.statesThrough == uint64(v.res.Entries)
	v.res.Diffs, v.res.DiffTrees = v.src.computed, v.src.treeWork
	start = time.Now()
	defer v.trace("current refs", start)
	if err := v.checkCurrent(); err != nil {
		return v.res, err
	}
	if err := v.checkReadRewrites(); err != nil {
		return v.res, err
	}
	// Problems of entries an authorized annotation skipped do not count.
	// Nor do missing commits of ref entries a later entry of the same ref
	// superseded: history was rewritten and the current state, checked from
	// the newest state still present, does not depend on them. Only
	// commits truly absent are forgiven (ErrMissingObject): an object that
	// is present but unreadable (ErrBadObject) fails its entry, always, and
	// so does any problem of an annotation.
	latest := map[uint64]bool{}
	for _, st := range v.state {
		if r, ok := st.last(); ok {
			latest[r.number] = true
		}
	}
	v.checkFreshness()
	kept := v.problems[:0]
	for _, p := range v.problems {
		switch {
		case p.Entry != 0 && v.skipped[p.Entry]:
		case v.forgiveShallow(p):
		case p.Entry != 0 && p.Kind == ErrMissingObject && !latest[p.Entry] && v.isRefEntry(p.Entry):
			v.res.Warnings = append(v.res.Warnings, fmt.Sprintf("entry #%d (%s): its commits are no longer in the repository (history rewritten); the later state was checked instead", p.Entry, p.Ref))
		default:
			kept = append(kept, p)
		}
	}
	v.problems = kept
	v.shallowSummary()
	if v.store != nil {
		for _, j := range v.store.Junk() {
			v.res.Warnings = append(v.res.Warnings, fmt.Sprintf("%s: %s (not made by git-secure; anyone with push access to a server without the git-secure hook could put it there): push a commit of the store without it", attest.Ref, j))
		}
	}
	for n := range v.skipped {
		v.res.SkippedEntries = append(v.res.SkippedEntries, n)
	}
	sort.Slice(v.res.SkippedEntries, func(i, j int) bool { return v.res.SkippedEntries[i] < v.res.SkippedEntries[j] })
	if len(v.problems) == 0 && v.only == nil && v.opts.PolicyOverride == nil && v.shallowSkipped == 0 && (v.base > 0 || v.count > 0) {
		if v.count == 0 {
			v.res.Checkpoint = v.opts.Checkpoint
		} else {
			v.res.Checkpoint = v.checkpoint()
		}
	}
	if len(v.problems) > 0 {
		sort.SliceStable(v.problems, func(i, j int) bool {
			a, b := v.problems[i].Entry, v.problems[j].Entry
			if a == 0 || b == 0 {
				return a != 0 && b == 0
			}
			return a < b
		})
		return v.res, &Failed{Problems: v.problems}
	}
	return v.res, nil
}

func kindOf(err error) error {
	for _, k := range []error{ErrThreshold, ErrRollback, ErrExpired, ErrMalformed, ErrSignature} {
		if errors.Is(err, k) {
			return k
		}
	}
	return ErrPolicyKind
}

// ErrPolicyKind classifies policy errors no other kind fits.
var ErrPolicyKind = errors.New("policy violation")

func describe(e *rsl.Entry) string {
	if e.Type == rsl.TypeAnnotation {
		return "an annotation"
	}
	return e.Ref
}

func shortOrNone(h gitrepo.Hash) string {
	if h.IsZero() {
		return "none"
	}
	return short(h)
}

func (v *verifier) latest(ref string) (recorded, bool) {
	return v.state[ref].last()
}

// notePushed keeps each ref's latest entry once replay has applied the
// entry that is the remote's log tip (Options.Clone.PushedTip).
func (v *verifier) notePushed(rec *rsl.Record) {
	if c := v.opts.Clone; c == nil || rec.ID != c.PushedTip {
		return
	}
	v.pushed = make(map[string]recorded, len(v.state))
	for ref, st := range v.state {
		if r, ok := st.last(); ok {
			v.pushed[ref] = r
		}
	}
}

// annotation applies a skip annotation: the skipped entries must be the
// latest entries of their refs, and moving each ref back must be authorized.
func (v *verifier) annotation(i int, rec *rsl.Record) error {
	e := rec.Entry
	byRef := map[string]map[uint64]bool{}
	for _, s := range e.Skips {
		if s.Number <= v.base {
			return errStale // reaches before the checkpoint: verify everything
		}
		target, err := v.infoAt(s.Number)
		if err != nil {
			return err
		}
		if target.id != s.ID {
			v.fail(rec, "", "", ErrChain, "", "skips entry #%d as %s, but that entry is %s", s.Number, short(s.ID), short(target.id))
			return nil
		}
		ref := v.refNames[target.ref]
		if target.typ != infoRef || ref == rsl.PolicyRef {
			v.fail(rec, ref, "", ErrChain, "policy entries and annotations cannot be skipped", "skips entry #%d", s.Number)
			return nil
		}
		if v.skipped[s.Number] {
			continue
		}
		if byRef[ref] == nil {
			byRef[ref] = map[uint64]bool{}
		}
		byRef[ref][s.Number] = true
	}
	if v.signers[i] == "" {
		return nil // signature problem already reported
	}
	refs := make([]string, 0, len(byRef))
	for ref := range byRef {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	for _, ref := range refs {
		if done, err := v.skipRef(i, rec, ref, byRef[ref]); done || err != nil {
			return err
		}
	}
	return nil
}

// skipRef moves ref back over the entries of set, which must be its
// newest states; done is set when a problem was recorded (the annotation
// is judged no further).
func (v *verifier) skipRef(i int, rec *rsl.Record, ref string, set map[uint64]bool) (done bool, err error) {
	st := v.state[ref]
	// The skipped entries must be the newest of this ref.
	if v.base > 0 && len(set) >= st.len() {
		return true, errStale // rewinds to a state before the checkpoint
	}
	if len(set) > st.len() {
		v.fail(rec, ref, "", ErrChain, "", "skips entries that are not recorded for %s", ref)
		return true, nil
	}
	keep := st.len() - len(set)
	// The oldest of the newest len(set) states that set does not name is
	// the one reported, as a walk from the oldest would find it first.
	var builds, seen uint64
	var back gitrepo.Hash
	err = v.states.newestFirst(st, func(r recorded, _ int) bool {
		if seen == uint64(len(set)) {
			back = r.target
			return false
		}
		seen++
		if !set[r.number] {
			builds = r.number
		}
		return true
	})
	if err != nil {
		return true, err
	}
	if builds != 0 {
		v.fail(rec, ref, "", ErrChain, "skip the newest entries of the ref, newest included",
			"skips entries of %s that later entry #%d builds on", ref, builds)
		return true, nil
	}
	cur := st.newest.target
	if v.judged(v.policies[i], ref) {
		if err := v.authorize(i, rec, ref, cur, back, true); err != nil {
			return true, err
		}
	}
	if err := v.states.truncate(st, keep); err != nil {
		return true, err
	}
	for n := range set {
		v.skipped[n] = true
	}
	return false, nil
}

// isRefEntry reports whether entry n, checked by this run, records a ref
// update (not an annotation).
func (v *verifier) isRefEntry(n uint64) bool {
	if n <= v.base {
		return false
	}
	inf, err := v.infoAt(n)
	return err == nil && inf.typ == infoRef
}

// addRevocations adds p's revocations to revokedFrom, in a copy when any
// is new: the map in place may be in use by signature workers.
func (v *verifier) addRevocations(p *policy.Policy) {
	var next map[string]uint64
	for _, r := range p.Revocations() {
		if from, ok := v.revokedFrom[r.Fingerprint]; !ok || r.FromEntry < from {
			if next == nil {
				next = make(map[string]uint64, len(v.revokedFrom)+1)
				for k, n := range v.revokedFrom {
					next[k] = n
				}
			}
			if from, ok := next[r.Fingerprint]; !ok || r.FromEntry < from {
				next[r.Fingerprint] = r.FromEntry
			}
		}
	}
	if next != nil {
		v.revokedFrom = next
	}
}

// revokedAt returns whether a key was revoked at entry n.
func (v *verifier) revokedAt(n uint64) func(fp string) bool {
	return func(fp string) bool {
		from := v.revokedFrom[fp]
		return from != 0 && from <= n
	}
}
