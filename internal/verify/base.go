package verify

import (
	"github.com/git-secure/git-secure/internal/gitrepo"
)

// BaseCache keeps, across the new refs one verification or one process
// judges, what choosing the base of a new ref's changed files
// (changedSinceBase) reads about the recorded targets: the commit each
// target peels to, and the targets' independent commits (those no other
// target reaches). A new ref then costs one merge base against those few
// commits instead of a peel of every recorded target and a merge base
// against all of them: a repository with thousands of release tags paid
// both for every new tag (finding 0b of session 14's stranger). The zero
// value is ready; nil caches nothing.
type BaseCache struct {
	// peeled maps a target to its commit; a target that could not be
	// peeled (missing, not a commit) maps to zero and is asked again.
	peeled map[gitrepo.Hash]gitrepo.Hash
	// set and tips: the last commit set reduced and its independent
	// commits (anc(tips) = anc(set)).
	set  map[gitrepo.Hash]bool
	tips []gitrepo.Hash
	// Stats, for tests and traces.
	Peels, Reductions, MergeBases int
}

// maxCachedPeels bounds the targets a BaseCache remembers.
const maxCachedPeels = 1 << 17

// peel returns the commit target peels to, as src.PeelToCommit.
func (b *BaseCache) peel(src Source, target gitrepo.Hash) (gitrepo.Hash, error) {
	if b == nil {
		return src.PeelToCommit(target)
	}
	if c, ok := b.peeled[target]; ok && !c.IsZero() {
		return c, nil
	}
	b.Peels++
	c, err := src.PeelToCommit(target)
	if err != nil {
		return c, err
	}
	if b.peeled == nil || len(b.peeled) >= maxCachedPeels {
		b.peeled = map[gitrepo.Hash]gitrepo.Hash{}
	}
	b.peeled[target] = c
	return c, nil
}

// independentSource is what reduces a commit set; *gitrepo.Repo has it.
type independentSource interface {
	Independent(hs ...gitrepo.Hash) ([]gitrepo.Hash, error)
}

// candidates returns commits that reach exactly what commits reach, as
// few as it can: the merge base of a commit with them is the merge base
// with commits (a best common ancestor is one of the common ancestors,
// which are the same). When the set only grew since the last call (new
// tags recorded one by one), only the new commits are reduced with the
// last tips.
func (b *BaseCache) candidates(src Source, commits []gitrepo.Hash) []gitrepo.Hash {
	if b == nil {
		return commits
	}
	is, ok := unwrapSource(src).(independentSource)
	if !ok {
		return commits
	}
	set := make(map[gitrepo.Hash]bool, len(commits))
	var uniq, added []gitrepo.Hash
	grew := b.set != nil
	for _, c := range commits {
		if set[c] {
			continue
		}
		set[c] = true
		uniq = append(uniq, c)
		if !b.set[c] {
			added = append(added, c)
		}
	}
	if grew {
		for c := range b.set {
			if !set[c] {
				grew = false // a target moved away or went: reduce anew
				break
			}
		}
	}
	if grew && len(added) == 0 {
		return b.tips
	}
	from := uniq
	if grew {
		from = append(append([]gitrepo.Hash(nil), b.tips...), added...)
	}
	b.Reductions++
	tips, err := is.Independent(from...)
	if err != nil || len(tips) == 0 {
		// The reduction is only a saving: ask with every commit.
		b.set, b.tips = nil, nil
		return commits
	}
	b.set, b.tips = set, tips
	return tips
}

// unwrapSource returns the repository under the verifier's caches.
func unwrapSource(src Source) Source {
	if d, ok := src.(*diffCache); ok {
		return d.Source
	}
	return src
}
