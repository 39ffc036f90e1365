package verify

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
)

// ErrBudget: verifying the new entries would cost more than the budget the
// verifier was given (a server's bound on one push).
var ErrBudget = errors.New("verification budget exceeded")

// Budget bounds the work of verifying the entries numbered above After: a
// push's new entries, on a server or in a clone that fetches them. Entries
// up to After were accepted before and are never charged, so that a server
// that lost its checkpoint still verifies its own history.
type Budget struct {
	After uint64
	// MaxPaths bounds the changed paths computed (not served from the
	// cache) for the charged entries; 0: no bound.
	MaxPaths int
	// Deadline is when the charged entries must be verified by; zero: no
	// bound.
	Deadline time.Time
}

// The diff cache is bounded by the bytes of the paths it holds: the
// least recently used diffs go first. A verification flips branches
// between a few trees at a time (consecutive entries share their trees),
// so a bound of 16 MiB (150 000 paths of 90 bytes) keeps what the next
// entries ask for; before, it kept every diff up to 2 million paths
// (about 200 MB) for the whole run, and at a million entries with path
// rules that, not the log, set the peak. A larger diff is computed again
// each time it is asked for (and charged again to a budget).
const (
	// maxCachedBytes bounds the bytes of the cached paths (a string's
	// bytes and header) with each diff's covered-path memos.
	maxCachedBytes = 16 << 20
	// maxCachedDiffs bounds how many diffs are cached (each costs map
	// slots and a list node whatever its size).
	maxCachedDiffs = 4096
)

// diffKey names a diff: its trees (in byte order) and the path scope it
// was restricted to ("" for none).
type diffKey struct {
	a, b  gitrepo.Hash
	scope string
}

// scopeFilter is a policy.PathScope as the differ asks it.
type scopeFilter struct{ scope *policy.PathScope }

func (f scopeFilter) Reach(dir string) gitrepo.Reach {
	switch may, every := f.scope.Reach(dir); {
	case !may:
		return gitrepo.ReachNone
	case every:
		return gitrepo.ReachAll
	}
	return gitrepo.ReachSome
}

// scopedDiffer is a Source that can skip directories (*gitrepo.Repo).
type scopedDiffer interface {
	ChangedPathsUnder(a, b gitrepo.Hash, f gitrepo.PathFilter) ([]string, error)
}

// countedDiffer is a Source that counts its diffs' work (*gitrepo.Repo).
type countedDiffer interface {
	ChangedPathsCounted(a, b gitrepo.Hash, f gitrepo.PathFilter) ([]string, gitrepo.DiffStats, error)
}

// changedPathsIn lists the paths that differ between trees a and b in the
// directories scope may reach (nil: all); a Source that cannot skip
// directories lists them all.
func changedPathsIn(src Source, a, b gitrepo.Hash, scope *policy.PathScope) ([]string, error) {
	if sd, ok := src.(scopedDiffer); ok && scope != nil {
		return sd.ChangedPathsUnder(a, b, scopeFilter{scope})
	}
	return src.ChangedPaths(a, b)
}

// measuringDiffer is a Source that measures a diff before listing it
// (*gitrepo.Repo).
type measuringDiffer interface {
	MeasureChangedPaths(a, b gitrepo.Hash, f gitrepo.PathFilter) (*gitrepo.PathDiff, error)
}

// maxListedBytes bounds the diffs that are listed (their paths' bytes
// and headers, as pathsBytes counts them): a larger one, which the cache
// would not keep either, is walked instead, and only what the path rules
// say about it is kept (changes). A tree bomb within the differ's bounds
// (a million paths, 128 MiB of names) then costs the verifier the depth
// of its trees and a few paths per rule, not a list of 280 MB.
const maxListedBytes = maxCachedBytes

// changes is what one diff changed, as the path rules ask it: its paths,
// listed and sorted bytewise, when they are few; else only, per path rule
// asked, how many of them the rule covers and the first of those.
type changes struct {
	paths []string
	// n is the number of changed paths (len(paths) when listed).
	n int
	// hits holds, for a diff too large to list, each path rule's
	// covered paths (nil: listed).
	hits map[*policy.Rule]*ruleHits
}

// ruleHits is what a walked diff holds for one rule: how many of its
// paths the rule covers, and the maxShownPaths first of them in byte
// order (what a refusal names).
type ruleHits struct {
	n     int
	first []string
}

// maxShownPaths is how many of a rule's changed files a refusal names.
const maxShownPaths = 5

// add counts p, keeping a copy when it is among the first (a walk reuses
// p's bytes: PathDiff.Walk).
func (h *ruleHits) add(p string) {
	h.n++
	if len(h.first) == maxShownPaths && p >= h.first[maxShownPaths-1] {
		return
	}
	i, _ := slices.BinarySearch(h.first, p)
	if len(h.first) < maxShownPaths {
		h.first = append(h.first, "")
	}
	copy(h.first[i+1:], h.first[i:])
	h.first[i] = strings.Clone(p)
}

// ruleWalk asks, at each directory a walk enters, which rules may cover
// a path below it (each rule's own policy.PathScope, as the differ asks
// their union), so that a path is matched against those only and a
// directory none of them may reach is not walked. It holds a frame of
// rules per directory of the walk's current path: depth x rules.
type ruleWalk struct {
	scopes []*policy.PathScope
	// frames[k] are the rules that may cover a path in the directory
	// at depth k of the current path.
	frames [][]activeRule
}

// activeRule is a rule (its index) that may cover a path in a directory;
// every: in every directory below too (its scope need not be asked).
type activeRule struct {
	rule  int
	every bool
}

func newRuleWalk(rules []*policy.Rule) *ruleWalk {
	w := &ruleWalk{frames: make([][]activeRule, 1)}
	for i, r := range rules {
		s := policy.NewPathScope([]*policy.Rule{r})
		w.scopes = append(w.scopes, s)
		if s == nil {
			// Not a path rule: asked about every path, as a list is.
			w.frames[0] = append(w.frames[0], activeRule{rule: i, every: true})
			continue
		}
		if may, every := s.Reach(""); may {
			w.frames[0] = append(w.frames[0], activeRule{rule: i, every: every})
		}
	}
	return w
}

// enter keeps the rules that may cover a path under dir (at depth) and
// says whether any does.
func (w *ruleWalk) enter(dir string, depth int) bool {
	for len(w.frames) <= depth {
		w.frames = append(w.frames, nil)
	}
	frame := w.frames[depth][:0]
	for _, a := range w.frames[depth-1] {
		if a.every {
			frame = append(frame, a)
			continue
		}
		if may, every := w.scopes[a.rule].Reach(dir); may {
			frame = append(frame, activeRule{rule: a.rule, every: every})
		}
	}
	w.frames[depth] = frame
	return len(frame) > 0
}

// listedChanges is a listed diff's changes.
func listedChanges(paths []string) changes { return changes{paths: paths, n: len(paths)} }

// measuredChanges lists the measured diff pd when its paths take at most
// listBytes, else walks it once and asks each of rules whether it covers
// each path (Rule.CoversPath, as coveredPaths does on a list). Only the
// walk's paths of the moment and a few per rule are held.
func measuredChanges(pd *gitrepo.PathDiff, rules []*policy.Rule, listBytes int) (changes, error) {
	if pd.Bytes()+16*pd.Paths() <= listBytes {
		paths, err := pd.List()
		return listedChanges(paths), err
	}
	c := changes{n: pd.Paths(), hits: make(map[*policy.Rule]*ruleHits, len(rules))}
	var asked []*policy.Rule
	var hits []*ruleHits
	for _, r := range rules {
		if c.hits[r] == nil {
			c.hits[r] = &ruleHits{}
			asked, hits = append(asked, r), append(hits, c.hits[r])
		}
	}
	w := newRuleWalk(asked)
	// p is a view of the walk's buffer: CoversPath keeps nothing of it,
	// add copies what it keeps.
	err := pd.WalkDirs(w.enter, func(p string, depth int) error {
		for _, a := range w.frames[depth] {
			if asked[a.rule].CoversPath(p) {
				hits[a.rule].add(p)
			}
		}
		return nil
	})
	if err != nil {
		return changes{}, err
	}
	return c, nil
}

// cachedDiff is one diff result in the cache's recency list.
type cachedDiff struct {
	key        diffKey
	paths      []string
	bytes      int
	prev, next *cachedDiff // toward the most, the least recently used
	// covered memoizes coveredPaths for this result, per rule.
	covered map[*policy.Rule][]string
}

// diffCache serves ChangedPaths once per pair of trees within one
// verification (as long as the pair's result stays among the most
// recently used: maxCachedBytes), and charges what it computes to the
// budget. A push that flips a branch between two trees with a huge
// directory costs one diff, not one per entry: the path set of a diff
// does not depend on its direction, so (a, b) and (b, a) share one
// result.
type diffCache struct {
	Source
	budget *Budget
	diffs  map[diffKey]*cachedDiff
	// newest and oldest end the recency list; held is the bytes it holds.
	newest, oldest *cachedDiff
	held           int
	// charged: the entry being verified is charged to the budget.
	charged bool
	paths   int
	// computed counts the diffs actually computed (tests, trace), and
	// treeWork the trees they read and walked.
	computed, treeWork int
	// byFirst finds a cached result by its first element: results are
	// shared slices, so the address names one.
	byFirst map[*string]*cachedDiff
	// covers keeps Rule.CoversPath's answers (matchPaths).
	covers map[coversKey]bool
	// trees keeps the tree of each commit treeOf read (commits are named
	// by their contents: the tree is the commit's whoever asks).
	trees map[gitrepo.Hash]gitrepo.Hash
}

func newDiffCache(src Source, b *Budget) *diffCache {
	return &diffCache{Source: src, budget: b, diffs: map[diffKey]*cachedDiff{}, byFirst: map[*string]*cachedDiff{}}
}

// pathsBytes is what paths costs the cache.
func pathsBytes(paths []string) int {
	n := 0
	for _, p := range paths {
		n += len(p) + 16
	}
	return n
}

// unlink takes c out of the recency list.
func (d *diffCache) unlink(c *cachedDiff) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		d.newest = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		d.oldest = c.prev
	}
	c.prev, c.next = nil, nil
}

// touch makes c the most recently used.
func (d *diffCache) touch(c *cachedDiff) {
	if d.newest == c {
		return
	}
	if c.prev != nil || c.next != nil || d.oldest == c {
		d.unlink(c)
	}
	c.next = d.newest
	if d.newest != nil {
		d.newest.prev = c
	}
	d.newest = c
	if d.oldest == nil {
		d.oldest = c
	}
}

// evict drops the least recently used diffs until the cache is within its
// bounds; keep (just added or used) stays.
func (d *diffCache) evict(keep *cachedDiff) {
	for (d.held > maxCachedBytes || len(d.diffs) > maxCachedDiffs) && d.oldest != nil && d.oldest != keep {
		c := d.oldest
		d.unlink(c)
		delete(d.diffs, c.key)
		delete(d.byFirst, &c.paths[0])
		d.held -= c.bytes
	}
}

// enter is called before entry n is verified; it fails once the budget is
// spent.
func (d *diffCache) enter(n uint64) error {
	d.charged = d.budget != nil && n > d.budget.After
	return d.check()
}

func (d *diffCache) check() error {
	if !d.charged {
		return nil
	}
	if b := d.budget; b.MaxPaths > 0 && d.paths > b.MaxPaths {
		return &budgetSpent{key: "secure.maxPushPaths", what: fmt.Sprintf("the paths budget is spent: the new entries change more than %d paths in all", b.MaxPaths)}
	}
	if b := d.budget; !b.Deadline.IsZero() && time.Now().After(b.Deadline) {
		return &budgetSpent{key: "secure.maxPushSeconds", what: "the time budget is spent: verifying the new entries takes longer than the time allowed"}
	}
	return nil
}

// budgetSpent is an ErrBudget that says which bound was reached and the
// server's git config key that raises it.
type budgetSpent struct{ what, key string }

func (e *budgetSpent) Error() string        { return ErrBudget.Error() + ": " + e.what }
func (e *budgetSpent) Is(target error) bool { return target == ErrBudget }

// budgetDetail and budgetHint describe a spent budget once (err wraps
// ErrBudget) and say what to do, naming the key of the bound reached.
func budgetDetail(err error) string {
	var spent *budgetSpent
	if errors.As(err, &spent) {
		return spent.what
	}
	msg := err.Error()
	for strings.HasPrefix(msg, ErrBudget.Error()+": ") {
		msg = strings.TrimPrefix(msg, ErrBudget.Error()+": ")
	}
	return msg
}

func budgetHint(err error) string {
	var spent *budgetSpent
	key := "secure.maxPushStoreCommits"
	if errors.As(err, &spent) {
		key = spent.key
	}
	return "split the push into smaller ones, or ask the server's administrator to raise the bound (git config " + key + " on the server)"
}

func (d *diffCache) ChangedPaths(a, b gitrepo.Hash) ([]string, error) {
	return d.changedPaths(a, b, nil)
}

// ChangedPathsUnder is ChangedPaths without the directories f skips.
func (d *diffCache) ChangedPathsUnder(a, b gitrepo.Hash, f gitrepo.PathFilter) ([]string, error) {
	s, _ := f.(scopeFilter)
	return d.changedPaths(a, b, s.scope)
}

// keyOf is the cache's key of the diff of a and b under scope.
func keyOf(a, b gitrepo.Hash, scope *policy.PathScope) diffKey {
	key := diffKey{a: a, b: b}
	if bytes.Compare(b[:], a[:]) < 0 {
		key = diffKey{a: b, b: a}
	}
	if scope != nil {
		key.scope = scope.Key()
	}
	return key
}

func (d *diffCache) changedPaths(a, b gitrepo.Hash, scope *policy.PathScope) ([]string, error) {
	key := keyOf(a, b, scope)
	if c, ok := d.diffs[key]; ok {
		d.touch(c)
		return c.paths, nil
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	var p []string
	var err error
	if cd, ok := d.Source.(countedDiffer); ok {
		var st gitrepo.DiffStats
		p, st, err = cd.ChangedPathsCounted(a, b, filterOf(scope))
		d.treeWork += st.Reads + st.Listed
	} else {
		p, err = changedPathsIn(d.Source, a, b, scope)
	}
	if err != nil {
		return nil, err
	}
	d.computed++
	if err := d.charge(len(p)); err != nil {
		return nil, err
	}
	d.keep(key, p)
	return p, nil
}

// changes is changesIn through the cache: a listed diff is cached as
// changedPaths caches it; a walked one (larger than the cache) is
// measured and walked again, and charged again, each time it is asked
// for, as a list that large was listed again.
func (d *diffCache) changes(a, b gitrepo.Hash, scope *policy.PathScope, rules []*policy.Rule) (changes, error) {
	m, ok := d.Source.(measuringDiffer)
	if !ok {
		p, err := d.changedPaths(a, b, scope)
		return listedChanges(p), err
	}
	key := keyOf(a, b, scope)
	if c, ok := d.diffs[key]; ok {
		d.touch(c)
		return listedChanges(c.paths), nil
	}
	if err := d.check(); err != nil {
		return changes{}, err
	}
	pd, err := m.MeasureChangedPaths(a, b, filterOf(scope))
	// The work is counted when it fails too (the trees read).
	defer func() { st := pd.Stats(); d.treeWork += st.Reads + st.Listed }()
	if err != nil {
		return changes{}, err
	}
	// Charged before the paths are listed or walked: a push past its
	// budget pays for no more than measuring.
	if d.charged {
		d.paths += pd.Paths()
		if err := d.check(); err != nil {
			return changes{}, err
		}
	}
	c, err := measuredChanges(pd, rules, maxListedBytes)
	if err != nil {
		return changes{}, err
	}
	d.computed++
	if c.hits == nil {
		d.keep(key, c.paths)
	}
	return c, nil
}

// charge charges n computed paths to the budget of a charged entry.
func (d *diffCache) charge(n int) error {
	if !d.charged {
		return nil
	}
	d.paths += n
	return d.check()
}

// keep caches paths, the diff named key, unless it is empty or larger
// than the whole cache.
func (d *diffCache) keep(key diffKey, p []string) {
	n := pathsBytes(p)
	if len(p) == 0 || n > maxCachedBytes {
		return
	}
	c := &cachedDiff{key: key, paths: p, bytes: n}
	d.diffs[key] = c
	d.byFirst[&p[0]] = c
	d.held += n
	d.touch(c)
	d.evict(c)
}

// filterOf is scope as a differ's filter (nil: none).
func filterOf(scope *policy.PathScope) gitrepo.PathFilter {
	if scope == nil {
		return nil
	}
	return scopeFilter{scope}
}

// changesIn is what changed between trees a and b in the directories
// scope may reach (nil: all), as the path rules among rules ask it
// (changes): a Source that measures its diffs (*gitrepo.Repo) walks one
// too large to list; any other lists it.
func changesIn(src Source, a, b gitrepo.Hash, scope *policy.PathScope, rules []*policy.Rule) (changes, error) {
	if d, ok := src.(*diffCache); ok {
		return d.changes(a, b, scope, rules)
	}
	if m, ok := src.(measuringDiffer); ok {
		pd, err := m.MeasureChangedPaths(a, b, filterOf(scope))
		if err != nil {
			return changes{}, err
		}
		return measuredChanges(pd, rules, maxListedBytes)
	}
	p, err := changedPathsIn(src, a, b, scope)
	return listedChanges(p), err
}

// coveredIn returns the files of ch that rule r covers (all of them, or
// for a walked diff the first maxShownPaths) and how many there are.
func coveredIn(src Source, r *policy.Rule, ch changes) ([]string, int) {
	if ch.hits == nil {
		p := coveredPaths(src, r, ch.paths)
		return p, len(p)
	}
	h := ch.hits[r]
	if h == nil {
		// Not asked: never so (changeCache asks every path rule of the
		// ref); fail closed, as if every path changed were the rule's.
		return nil, max(ch.n, 1)
	}
	return h.first, h.n
}

// cachedOf returns the cached diff whose result changed is (nil when it is
// not one, or no longer cached).
func (d *diffCache) cachedOf(changed []string) *cachedDiff {
	if len(changed) == 0 {
		return nil
	}
	return d.byFirst[&changed[0]]
}

// budgetError stops the replay at the entry that spent the budget.
type budgetError struct {
	rec *rsl.Record
	err error
}

func (e *budgetError) Error() string { return e.err.Error() }
func (e *budgetError) Unwrap() error { return e.err }

// coveredPaths returns the paths of changed that rule r covers. Through a
// diffCache it is computed once per rule and diff result: matching a
// million changed paths against a rule at every entry that flips a branch
// between the same two trees cost more than the diffs themselves.
func coveredPaths(src Source, r *policy.Rule, changed []string) []string {
	if d, ok := src.(*diffCache); ok && len(changed) >= minCoveredMemo {
		if c := d.cachedOf(changed); c != nil && len(c.paths) == len(changed) {
			if p, ok := c.covered[r]; ok {
				return p
			}
			p := matchPaths(r, changed)
			if c.covered == nil {
				c.covered = map[*policy.Rule][]string{}
			}
			// The memo shares the paths' strings: its slice headers
			// count against the cache.
			c.covered[r] = p
			c.bytes += 16*len(p) + 16
			d.held += 16*len(p) + 16
			d.touch(c)
			d.evict(c)
			return p
		}
	}
	if d, ok := src.(*diffCache); ok {
		return d.matchPaths(r, changed)
	}
	return matchPaths(r, changed)
}

// maxCoversMemo bounds the (rule, path) answers a diffCache keeps.
const maxCoversMemo = 1 << 16

// coversKey is one rule and one changed path.
type coversKey struct {
	rule *policy.Rule
	path string
}

// matchPaths is matchPaths with each rule's answer for each path kept:
// consecutive entries change the same few files, and with rule files
// every entry asks tens of rules, each clipped to a chain of delegated
// namespaces, about them (matching with case folding cost more than the
// diffs). A rule is immutable and the key keeps it alive, so the answer
// stays its.
func (d *diffCache) matchPaths(r *policy.Rule, changed []string) []string {
	var out []string
	for _, p := range changed {
		key := coversKey{r, p}
		covers, ok := d.covers[key]
		if !ok {
			covers = r.CoversPath(p)
			if d.covers == nil || len(d.covers) >= maxCoversMemo {
				d.covers = map[coversKey]bool{}
			}
			d.covers[key] = covers
		}
		if covers {
			out = append(out, p)
		}
	}
	return out
}

// minCoveredMemo: shorter lists are matched again (cheaper than the map).
const minCoveredMemo = 256

func matchPaths(r *policy.Rule, changed []string) []string {
	var out []string
	for _, p := range changed {
		if r.CoversPath(p) {
			out = append(out, p)
		}
	}
	return out
}
