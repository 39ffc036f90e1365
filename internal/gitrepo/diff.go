package gitrepo

import (
	"fmt"
	"sort"
)

// Limits for ChangedPaths against hostile trees.
const (
	maxChangedPaths = 1_000_000 // paths in the result
	maxTreeReads    = 1_000_000 // tree objects read
	maxTreeDepth    = 4096      // nesting of directories
)

// ChangedPaths returns every file path (slash-separated, sorted bytewise)
// whose entry differs between oldTree and newTree by mode or hash, or that
// exists in only one of them. Subtrees with equal hashes are not read. A
// zero Hash stands for the empty tree. A path that changes between file and
// directory reports the file and every file under the directory. Renames
// are reported as a deletion and an addition. Gitlinks and symlinks count
// as files. The diff runs in-process through the batch reader.
func (r *Repo) ChangedPaths(oldTree, newTree Hash) ([]string, error) {
	d := differ{r: r}
	if err := d.diff("", oldTree, newTree); err != nil {
		return nil, fmt.Errorf("gitrepo: changed paths %s..%s: %w", oldTree, newTree, err)
	}
	sort.Strings(d.out)
	return d.out, nil
}

type differ struct {
	r     *Repo
	out   []string
	reads int
	depth int
}

func (d *differ) add(p string) error {
	if len(d.out) >= maxChangedPaths {
		return fmt.Errorf("more than %d changed paths", maxChangedPaths)
	}
	d.out = append(d.out, p)
	return nil
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "/" + name
}

func normTree(h Hash) Hash {
	if h == emptyTree {
		return ZeroHash
	}
	return h
}

func (d *differ) diff(prefix string, a, b Hash) error {
	a, b = normTree(a), normTree(b)
	if a == b {
		return nil
	}
	d.reads += 2
	if d.reads > maxTreeReads {
		return fmt.Errorf("more than %d tree reads", maxTreeReads)
	}
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxTreeDepth {
		return fmt.Errorf("trees nested deeper than %d at %q", maxTreeDepth, truncate(prefix, 200))
	}
	ea, err := d.r.readTreeCached(a)
	if err != nil {
		return err
	}
	eb, err := d.r.readTreeCached(b)
	if err != nil {
		return err
	}
	byName := make(map[string]TreeEntry, len(eb))
	for _, e := range eb {
		byName[e.Name] = e
	}
	for _, x := range ea {
		p := join(prefix, x.Name)
		y, ok := byName[x.Name]
		delete(byName, x.Name)
		xt := x.Mode == ModeTree
		switch {
		case !ok:
			if err := d.side(p, x); err != nil {
				return err
			}
		case x.Mode == y.Mode && x.Hash == y.Hash:
		case xt && y.Mode == ModeTree:
			if err := d.diff(p, x.Hash, y.Hash); err != nil {
				return err
			}
		default:
			// Differing leaves, or file <-> directory.
			if err := d.side(p, x); err != nil {
				return err
			}
			if xt || y.Mode == ModeTree {
				if err := d.side(p, y); err != nil {
					return err
				}
			}
		}
	}
	for _, y := range eb {
		if _, ok := byName[y.Name]; ok {
			if err := d.side(join(prefix, y.Name), y); err != nil {
				return err
			}
		}
	}
	return nil
}

// side reports e (present on one side only): a leaf itself, or every leaf
// under a tree.
func (d *differ) side(p string, e TreeEntry) error {
	if e.Mode != ModeTree {
		return d.add(p)
	}
	return d.diff(p, e.Hash, ZeroHash)
}
