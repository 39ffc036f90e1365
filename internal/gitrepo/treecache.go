package gitrepo

import "sync"

// maxCachedTreeEntries bounds the entries the tree cache holds in all
// (about 80 bytes each, names included); a tree larger than a quarter of
// it is not kept.
const maxCachedTreeEntries = 1 << 16

// treeCache keeps the trees ChangedPaths read, by name, for the next
// diffs: a verification diffs each entry of a ref from the tree the
// previous entry diffed to, and consecutive states share most subtrees.
// A tree is named by its contents (and read checked against its name), so
// a kept tree is that tree whoever asks. Callers must not modify what get
// returns. Safe for concurrent use; the zero value is empty.
type treeCache struct {
	mu    sync.Mutex
	trees map[Hash][]TreeEntry
	held  int
}

func (c *treeCache) get(h Hash) ([]TreeEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.trees[h]
	return e, ok
}

// put keeps entries as tree h; when full, it starts over (the next diffs
// mostly need the trees just read, which put keeps).
func (c *treeCache) put(h Hash, entries []TreeEntry) {
	n := len(entries) + 1
	if n > maxCachedTreeEntries/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.trees == nil || c.held+n > maxCachedTreeEntries {
		c.trees, c.held = map[Hash][]TreeEntry{}, 0
	}
	if _, ok := c.trees[h]; !ok {
		c.trees[h] = entries
		c.held += n
	}
}

// readTreeCached is ReadTree through the tree cache, for the differ
// (which only reads the entries).
func (r *Repo) readTreeCached(h Hash) ([]TreeEntry, error) {
	if e, ok := r.trees.get(h); ok {
		return e, nil
	}
	e, err := r.ReadTree(h)
	if err != nil {
		return nil, err
	}
	r.trees.put(h, e)
	return e, nil
}
