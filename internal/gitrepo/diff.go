package gitrepo

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unsafe"
)

// Limits for ChangedPaths against hostile trees. A few tiny trees can name
// each other many times over (four trees of 31 entries, each pointing at
// the next level's one tree, list 923 521 paths), and nested long names
// make every path long: so before it lists anything, the differ measures
// the diff (number of paths, their bytes, the longest, the directories to
// walk), reading each distinct pair of subtrees once, and refuses a diff
// beyond these bounds. An honest import of 400 000 files of 100-byte paths
// is 40 MB of names, well within.
const (
	maxChangedPaths     = 1_000_000 // paths in the result
	maxChangedPathBytes = 128 << 20 // bytes of the paths in the result
	maxPathBytes        = 4096      // bytes of one path (PATH_MAX: git cannot check out a longer one)
	maxTreeReads        = 1_000_000 // tree objects read, and directory pairs walked
	maxTreeDepth        = 4096      // nesting of directories
)

// ErrDiffBound: a diff's changed paths exceed one of the bounds above (the
// error names which); the trees are refused, never partly listed.
var ErrDiffBound = errors.New("diff beyond git-secure's bounds")

// Reach is how much of a directory a PathFilter needs.
type Reach uint8

const (
	// ReachAll: any path under the directory may matter, and the filter
	// is not asked about its subdirectories.
	ReachAll Reach = iota
	// ReachSome: some paths under it may matter; the filter is asked
	// about each subdirectory.
	ReachSome
	// ReachNone: no path under the directory matters: the diff skips it.
	ReachNone
)

// PathFilter tells a diff which directories hold paths that matter (the
// path rules' patterns). Reach gets a directory's slash-separated path.
type PathFilter interface {
	Reach(dir string) Reach
}

// ChangedPaths returns every file path (slash-separated, sorted bytewise)
// whose entry differs between oldTree and newTree by mode or hash, or that
// exists in only one of them. Subtrees with equal hashes are not read. A
// zero Hash stands for the empty tree. A path that changes between file and
// directory reports the file and every file under the directory. Renames
// are reported as a deletion and an addition. Gitlinks and symlinks count
// as files. The diff runs in-process through the batch reader. A diff
// beyond the bounds (more than a million paths, 128 MiB of path names, a
// path over 4096 bytes, a million directories) is ErrDiffBound.
func (r *Repo) ChangedPaths(oldTree, newTree Hash) ([]string, error) {
	return r.ChangedPathsUnder(oldTree, newTree, nil)
}

// ChangedPathsUnder is ChangedPaths without the directories f says no path
// of matters (f nil: every directory). Files are listed whatever f says.
func (r *Repo) ChangedPathsUnder(oldTree, newTree Hash, f PathFilter) ([]string, error) {
	paths, _, err := r.ChangedPathsCounted(oldTree, newTree, f)
	return paths, err
}

// ChangedPathsCounted is ChangedPathsUnder, with the work it did.
func (r *Repo) ChangedPathsCounted(oldTree, newTree Hash, f PathFilter) ([]string, DiffStats, error) {
	pd, err := r.MeasureChangedPaths(oldTree, newTree, f)
	if err != nil {
		return nil, pd.Stats(), err
	}
	paths, err := pd.List()
	return paths, pd.Stats(), err
}

// PathDiff is a diff measured within every bound (MeasureChangedPaths):
// its changed paths are counted, not yet listed. A verifier that only
// asks rules about them walks them (Walk) instead of holding a list of up
// to a million paths.
type PathDiff struct {
	d             differ
	oldTree, tree Hash
	reach         Reach
	size          diffSize
}

// MeasureChangedPaths measures the diff ChangedPathsUnder lists, failing
// as it does (ErrDiffBound) on a diff beyond the bounds, without listing
// it. The PathDiff is never nil.
func (r *Repo) MeasureChangedPaths(oldTree, newTree Hash, f PathFilter) (*PathDiff, error) {
	pd := &PathDiff{d: differ{r: r, filter: f, memo: map[[2]Hash]diffSize{}}, oldTree: oldTree, tree: newTree, reach: ReachAll}
	if f != nil {
		pd.reach = f.Reach("")
	}
	if pd.reach == ReachNone {
		return pd, nil
	}
	var err error
	if pd.size, err = pd.d.measure("", 0, oldTree, newTree, pd.reach, 0); err != nil {
		return pd, wrapf(err, "changed paths %s..%s", oldTree, newTree)
	}
	return pd, nil
}

// Paths is the number of changed paths; Bytes is the bytes of their
// names.
func (pd *PathDiff) Paths() int { return int(pd.size.paths) }
func (pd *PathDiff) Bytes() int { return int(pd.size.bytes) }

// Stats is the work done so far.
func (pd *PathDiff) Stats() DiffStats { return DiffStats{Reads: pd.d.reads, Listed: pd.d.listed} }

// List returns the changed paths sorted bytewise (ChangedPaths).
func (pd *PathDiff) List() ([]string, error) {
	if pd.size.paths == 0 {
		return nil, nil
	}
	pd.d.out = make([]string, 0, pd.size.paths)
	err := pd.Walk(func(p string) error {
		pd.d.out = append(pd.d.out, strings.Clone(p))
		return nil
	})
	out := pd.d.out
	pd.d.out = nil
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// Walk calls fn with each changed path, in tree order (not sorted), and
// stops at fn's first error, which it returns as it is. The path is valid
// during the call only: its bytes are reused for the next (as
// bufio.Scanner's Bytes are), so fn must copy it (strings.Clone) to keep
// it; a walk of a tree bomb then allocates nothing per path. Each call walks
// the trees again (those measure read are kept, up to maxKeptEntries
// entries, while pd is).
func (pd *PathDiff) Walk(fn func(path string) error) error {
	return pd.WalkDirs(nil, func(path string, _ int) error { return fn(path) })
}

// WalkDirs is Walk that asks enter (nil: walk every directory) before it
// walks a directory that holds changes (dir: its path, a view as fn's
// path is; depth: 1 for a directory at the top) and skips the directory
// when enter says false; fn also gets the depth of its path's directory
// (0 at the top). A caller that asks rules about the paths can so stop
// descending where no rule it asks may cover a path.
func (pd *PathDiff) WalkDirs(enter func(dir string, depth int) bool, fn func(path string, depth int) error) error {
	if pd.size.paths == 0 {
		return nil
	}
	pd.d.walked, pd.d.emitted = 0, 0
	pd.d.emit, pd.d.enter, pd.d.emitErr = fn, enter, nil
	pd.d.path = pd.d.path[:0]
	err := pd.d.list(pd.oldTree, pd.tree, pd.reach, 0)
	fnErr := pd.d.emitErr
	pd.d.emit, pd.d.enter, pd.d.emitErr = nil, nil, nil
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil:
		return wrapf(err, "changed paths %s..%s", pd.oldTree, pd.tree)
	}
	return nil
}

// DiffStats counts the work of the differ (tests).
type DiffStats struct {
	// Reads counts the trees the measuring pass read (a distinct pair of
	// subtrees is read once however often it occurs).
	Reads int
	// Listed counts the directory pairs the listing pass walked.
	Listed int
}

type differ struct {
	r      *Repo
	filter PathFilter
	out    []string // List's paths
	// emit gets each path list walks; emitErr is its error, which
	// stops the walk. walked and emitted count one walk's directory
	// pairs and paths (its bounds).
	emit            func(path string, depth int) error
	enter           func(dir string, depth int) bool
	path            []byte // the path list is at
	emitErr         error
	walked, emitted int
	// memo keeps the size of each pair of subtrees measured where the
	// filter no longer prunes (ReachAll): it does not depend on where
	// the pair occurs.
	memo   map[[2]Hash]diffSize
	reads  int
	listed int
	// kept holds the trees measure read, for list (up to maxKeptEntries
	// entries in all): the shared tree cache is smaller than a large
	// import, whose trees list would otherwise read and parse again.
	kept        map[Hash][]TreeEntry
	keptEntries int
}

// maxKeptEntries bounds the tree entries a diff keeps between its passes
// (about 60 bytes each).
const maxKeptEntries = 1 << 19

// read reads tree h for the diff.
func (d *differ) read(h Hash) ([]TreeEntry, error) {
	if e, ok := d.kept[h]; ok {
		return e, nil
	}
	e, err := d.r.readTreeCached(h)
	if err != nil || h.IsZero() || d.keptEntries+len(e) > maxKeptEntries {
		return e, err
	}
	if d.kept == nil {
		d.kept = map[Hash][]TreeEntry{}
	}
	d.kept[h] = e
	d.keptEntries += len(e)
	return e, nil
}

// diffSize measures the changed paths under a pair of trees, relative to
// their directory: how many, their bytes, the longest, and the directory
// pairs the listing walks. Sums saturate.
type diffSize struct {
	paths, bytes, longest, walks uint64
	// height is how deep the directories below go.
	height int
}

func sat(a, b uint64) uint64 {
	if a+b < a {
		return ^uint64(0)
	}
	return a + b
}

func satMul(a, b uint64) uint64 {
	if a != 0 && b > ^uint64(0)/a {
		return ^uint64(0)
	}
	return a * b
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

// boundErr is an ErrDiffBound naming the bound and where it was hit.
func boundErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrDiffBound}, args...)...)
}

// where names dir (of dirLen bytes; dir may be "" where the filter no
// longer asks) in a bound's message.
func where(dir string, dirLen int) string {
	if dirLen == 0 {
		return "at the top"
	}
	if dir == "" {
		return fmt.Sprintf("in a directory %d bytes deep", dirLen)
	}
	return fmt.Sprintf("under %q", truncate(dir, 200))
}

// eachChange calls fn for each difference between the entries of two
// trees: a file (leaf) or a pair of subtrees to compare (a zero hash for
// a side that has none). A file that became a directory, or the other
// way, is both.
func eachChange(ea, eb []TreeEntry, fn func(name string, leaf bool, a, b Hash) error) error {
	byName := make(map[string]TreeEntry, len(eb))
	for _, e := range eb {
		byName[e.Name] = e
	}
	side := func(e TreeEntry) error {
		if e.Mode != ModeTree {
			return fn(e.Name, true, ZeroHash, ZeroHash)
		}
		return fn(e.Name, false, e.Hash, ZeroHash)
	}
	for _, x := range ea {
		y, ok := byName[x.Name]
		delete(byName, x.Name)
		xt := x.Mode == ModeTree
		switch {
		case !ok:
			if err := side(x); err != nil {
				return err
			}
		case x.Mode == y.Mode && x.Hash == y.Hash:
		case xt && y.Mode == ModeTree:
			if err := fn(x.Name, false, x.Hash, y.Hash); err != nil {
				return err
			}
		default:
			// Differing leaves, or file <-> directory.
			if err := side(x); err != nil {
				return err
			}
			if xt || y.Mode == ModeTree {
				if err := side(y); err != nil {
					return err
				}
			}
		}
	}
	for _, y := range eb {
		if _, ok := byName[y.Name]; ok {
			if err := side(y); err != nil {
				return err
			}
		}
	}
	return nil
}

// below is the bytes a directory of dirLen bytes adds to the paths under
// it (its name and a slash; nothing at the top).
func below(dirLen int) int {
	if dirLen == 0 {
		return 0
	}
	return dirLen + 1
}

// childReach is the filter's answer for subdirectory name of dir.
func (d *differ) childReach(dir, name string, reach Reach) (string, Reach) {
	if reach != ReachSome {
		return "", reach
	}
	child := join(dir, name)
	return child, d.filter.Reach(child)
}

// measure sizes the diff of a and b in directory dir (its path is dirLen
// bytes; dir itself is kept only while the filter asks, ReachSome),
// failing as soon as a bound is exceeded. Pairs measured where the filter
// no longer prunes are read once and remembered.
func (d *differ) measure(dir string, dirLen int, a, b Hash, reach Reach, depth int) (diffSize, error) {
	a, b = normTree(a), normTree(b)
	if a == b {
		return diffSize{}, nil
	}
	if depth >= maxTreeDepth {
		return diffSize{}, boundErr("trees nested deeper than %d %s", maxTreeDepth, where(dir, dirLen))
	}
	key := [2]Hash{a, b}
	if reach == ReachAll {
		if s, ok := d.memo[key]; ok {
			if depth+s.height >= maxTreeDepth {
				return diffSize{}, boundErr("trees nested deeper than %d %s", maxTreeDepth, where(dir, dirLen))
			}
			return s, nil
		}
	}
	d.reads += 2
	if d.reads > maxTreeReads {
		return diffSize{}, boundErr("more than %d trees to read", maxTreeReads)
	}
	ea, err := d.read(a)
	if err != nil {
		return diffSize{}, err
	}
	eb, err := d.read(b)
	if err != nil {
		return diffSize{}, err
	}
	s := diffSize{walks: 1}
	err = eachChange(ea, eb, func(name string, leaf bool, x, y Hash) error {
		n := uint64(len(name))
		if below(dirLen)+len(name) > maxPathBytes {
			return boundErr("a path longer than %d bytes %s (name of %d bytes)", maxPathBytes, where(dir, dirLen), len(name))
		}
		if leaf {
			s.paths, s.bytes, s.longest = sat(s.paths, 1), sat(s.bytes, n), max(s.longest, n)
			return nil
		}
		child, r := d.childReach(dir, name, reach)
		if r == ReachNone {
			return nil
		}
		c, err := d.measure(child, below(dirLen)+len(name), x, y, r, depth+1)
		if err != nil {
			return err
		}
		s.paths = sat(s.paths, c.paths)
		s.bytes = sat(s.bytes, sat(c.bytes, satMul(c.paths, n+1)))
		if c.paths > 0 {
			s.longest = max(s.longest, n+1+c.longest)
		}
		s.walks = sat(s.walks, c.walks)
		s.height = max(s.height, c.height+1)
		return s.check(dir, dirLen)
	})
	if err != nil {
		return diffSize{}, err
	}
	if err := s.check(dir, dirLen); err != nil {
		return diffSize{}, err
	}
	if reach == ReachAll {
		d.memo[key] = s
	}
	return s, nil
}

// check fails when the paths under one directory already exceed a bound
// of the whole diff.
func (s diffSize) check(dir string, dirLen int) error {
	switch {
	case s.paths > maxChangedPaths:
		return boundErr("more than %d changed paths (%d %s)", maxChangedPaths, s.paths, where(dir, dirLen))
	case sat(s.bytes, satMul(s.paths, uint64(below(dirLen)))) > maxChangedPathBytes:
		return boundErr("more than %d MiB of changed path names (%d paths %s)", maxChangedPathBytes>>20, s.paths, where(dir, dirLen))
	case s.paths > 0 && uint64(below(dirLen))+s.longest > maxPathBytes:
		return boundErr("a path longer than %d bytes %s", maxPathBytes, where(dir, dirLen))
	case s.walks > maxTreeReads:
		return boundErr("more than %d directories to compare %s", maxTreeReads, where(dir, dirLen))
	}
	return nil
}

// list walks the changed paths under the directory d.path names, giving
// each to d.emit; measure has bounded them. The paths are built in
// d.path, whose bytes are reused: a path handed to emit is a view of
// them (Walk), so that walking a million paths does not allocate a
// million strings.
func (d *differ) list(a, b Hash, reach Reach, depth int) error {
	a, b = normTree(a), normTree(b)
	if a == b {
		return nil
	}
	if depth >= maxTreeDepth {
		return boundErr("trees nested deeper than %d under %q", maxTreeDepth, truncate(string(d.path), 200))
	}
	d.listed++
	if d.walked++; d.walked > maxTreeReads {
		return boundErr("more than %d directories to compare", maxTreeReads)
	}
	ea, err := d.read(a)
	if err != nil {
		return err
	}
	eb, err := d.read(b)
	if err != nil {
		return err
	}
	return eachChange(ea, eb, func(name string, leaf bool, x, y Hash) error {
		n := len(d.path)
		if n > 0 {
			d.path = append(d.path, '/')
		}
		d.path = append(d.path, name...)
		defer func() { d.path = d.path[:n] }()
		if leaf {
			if d.emitted >= maxChangedPaths {
				return boundErr("more than %d changed paths", maxChangedPaths)
			}
			d.emitted++
			if err := d.emit(unsafe.String(&d.path[0], len(d.path)), depth); err != nil {
				d.emitErr = err
				return err
			}
			return nil
		}
		r := reach
		if reach == ReachSome {
			r = d.filter.Reach(string(d.path))
		}
		if r == ReachNone {
			return nil
		}
		if r == ReachAll {
			// A pair measured to change no file (empty trees named
			// a million times) is not walked again.
			if s, ok := d.memo[[2]Hash{normTree(x), normTree(y)}]; ok && s.paths == 0 {
				return nil
			}
		}
		if d.enter != nil && normTree(x) != normTree(y) && !d.enter(unsafe.String(&d.path[0], len(d.path)), depth+1) {
			return nil
		}
		return d.list(x, y, r, depth+1)
	})
}
