package verify

import (
	"bytes"
	"errors"
	"fmt"
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

// maxCachedPaths bounds the paths the diff cache holds in all (about 100
// bytes each).
const maxCachedPaths = 2_000_000

// diffCache serves ChangedPaths once per pair of trees within one
// verification, and charges what it computes to the budget. A push that
// flips a branch between two trees with a huge directory costs one diff,
// not one per entry: the path set of a diff does not depend on its
// direction, so (a, b) and (b, a) share one result.
type diffCache struct {
	Source
	budget *Budget
	diffs  map[[2]gitrepo.Hash][]string
	held   int
	// charged: the entry being verified is charged to the budget.
	charged bool
	paths   int
	// computed counts the diffs actually computed (tests, trace).
	computed int
	// covered memoizes coveredPaths for cached diff results, which
	// byFirst finds by their first element.
	covered map[coveredKey][]string
	byFirst map[*string][2]gitrepo.Hash
	// covers keeps Rule.CoversPath's answers (matchPaths).
	covers map[coversKey]bool
	// trees keeps the tree of each commit treeOf read (commits are named
	// by their contents: the tree is the commit's whoever asks).
	trees map[gitrepo.Hash]gitrepo.Hash
}

func newDiffCache(src Source, b *Budget) *diffCache {
	return &diffCache{Source: src, budget: b, diffs: map[[2]gitrepo.Hash][]string{}}
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
		return fmt.Errorf("%w: the new entries change more than %d paths in all", ErrBudget, b.MaxPaths)
	}
	if b := d.budget; !b.Deadline.IsZero() && time.Now().After(b.Deadline) {
		return fmt.Errorf("%w: the new entries take longer to verify than the time allowed", ErrBudget)
	}
	return nil
}

func (d *diffCache) ChangedPaths(a, b gitrepo.Hash) ([]string, error) {
	key := [2]gitrepo.Hash{a, b}
	if bytes.Compare(b[:], a[:]) < 0 {
		key = [2]gitrepo.Hash{b, a}
	}
	if p, ok := d.diffs[key]; ok {
		return p, nil
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	p, err := d.Source.ChangedPaths(a, b)
	if err != nil {
		return nil, err
	}
	d.computed++
	if d.charged {
		d.paths += len(p)
		if err := d.check(); err != nil {
			return nil, err
		}
	}
	if len(p) > 0 && d.held+len(p) <= maxCachedPaths {
		d.diffs[key] = p
		d.held += len(p)
		if d.byFirst == nil {
			d.byFirst = map[*string][2]gitrepo.Hash{}
		}
		d.byFirst[&p[0]] = key
	}
	return p, nil
}

// keyOf returns the pair of trees whose cached diff result changed is
// (the zero pair when it is not a cached result).
func (d *diffCache) keyOf(changed []string) [2]gitrepo.Hash {
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
	if d, ok := src.(*diffCache); ok && len(changed) >= minCoveredMemo && d.diffs[d.keyOf(changed)] != nil {
		key := coveredKey{rule: r, first: &changed[0], n: len(changed)}
		if p, ok := d.covered[key]; ok {
			return p
		}
		p := matchPaths(r, changed)
		if d.covered == nil {
			d.covered = map[coveredKey][]string{}
		}
		d.covered[key] = p
		return p
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

// coveredKey names one diff result (cached results are shared slices, so
// the first element's address and the length identify it) and one rule.
type coveredKey struct {
	rule  *policy.Rule
	first *string
	n     int
}

func matchPaths(r *policy.Rule, changed []string) []string {
	var out []string
	for _, p := range changed {
		if r.CoversPath(p) {
			out = append(out, p)
		}
	}
	return out
}
