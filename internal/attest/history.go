package attest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// The store is append-only: once an envelope is stored, every later tree
// keeps it byte for byte at the same path. The server hook refuses a push
// that drops or changes one (Dropped), and verification reads approvals as
// the union over the store's history (Store.WithHistory), so that a store
// wiped where no hook guarded it does not turn a verified history into a
// failing one. Union is safe because an envelope proves itself: it counts
// only if its signature verifies under the policy and its statement names
// exactly the update, wherever and whenever it was stored; a forged or
// altered envelope, added at any time, counts for nothing.

// StoredFile is one envelope file of the store: its path
// ("<kind>/<dir>/<signer>.json") and blob; for Dropped, Changed says that
// the newer tree holds other content there (else it holds nothing).
type StoredFile struct {
	Path    string
	Blob    gitrepo.Hash
	Changed bool
}

// Dir returns the directory part of f.Path ("<kind>/<dir>").
func (f StoredFile) Dir() string {
	dir, _, _ := strings.Cut(f.Path, "/")
	if i := strings.LastIndexByte(f.Path, '/'); i >= 0 {
		dir = f.Path[:i]
	}
	return dir
}

// Name returns the file name part of f.Path ("<signer>.json").
func (f StoredFile) Name() string { return f.Path[strings.LastIndexByte(f.Path, '/')+1:] }

// TreeReader reads trees; *gitrepo.Repo is one.
type TreeReader interface {
	ReadTree(h gitrepo.Hash) ([]gitrepo.TreeEntry, error)
}

// Dropped returns the envelope files of store tree old (zero: empty) that
// store tree new does not hold with the same content at the same path:
// removed or changed, sorted by path. Only what a reader of the store sees
// is compared (regular files named <signer>.json two directories down);
// subtrees with equal hashes are skipped, so the cost is that of what
// changed, not of the store's size.
func Dropped(r TreeReader, old, new gitrepo.Hash) ([]StoredFile, error) {
	var out []StoredFile
	if err := dropped(r, old, new, "", 0, &out); err != nil {
		return nil, fmt.Errorf("attest: compare store trees %s and %s: %w", old, new, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// storeDepth is the depth of envelope files: <kind>/<dir>/<signer>.json.
const storeDepth = 2

func dropped(r TreeReader, old, new gitrepo.Hash, prefix string, depth int, out *[]StoredFile) error {
	if old == new || old.IsZero() {
		return nil
	}
	// Both sides are read as git reads them when they do not parse
	// (readStoreTree): removing junk must not need junk to parse, and an
	// envelope next to junk is compared like any other.
	oldEntries, _, err := readStoreTree(r, old)
	if err != nil {
		return err
	}
	newIndex := map[string][]gitrepo.TreeEntry{}
	if !new.IsZero() {
		entries, _, err := readStoreTree(r, new)
		if err != nil {
			return err
		}
		for _, e := range entries {
			newIndex[e.Name] = append(newIndex[e.Name], e)
		}
	}
	for _, e := range oldEntries {
		ns := newIndex[e.Name]
		if depth < storeDepth {
			if e.Mode != gitrepo.ModeTree {
				continue // no reader looks at it
			}
			sub := gitrepo.ZeroHash
			for _, n := range ns {
				if n.Mode == gitrepo.ModeTree {
					sub = n.Hash
					break
				}
			}
			if err := dropped(r, e.Hash, sub, prefix+e.Name+"/", depth+1, out); err != nil {
				return err
			}
			continue
		}
		if e.Mode != gitrepo.ModeFile || !validSignerFile(e.Name) {
			continue
		}
		kept := false
		for _, n := range ns {
			kept = kept || (n.Mode == gitrepo.ModeFile && n.Hash == e.Hash)
		}
		if !kept {
			*out = append(*out, StoredFile{Path: prefix + e.Name, Blob: e.Hash, Changed: len(ns) > 0})
		}
	}
	return nil
}

// Protected reports whether data, stored at path, is an envelope that
// belongs there (Add's checks: it parses, its file is its signer's, its
// statement is for that directory) and whose signature verifies with the
// key embedded in it. Such an envelope may count under some policy and is
// kept forever. Anything else (garbage, or a replayed envelope, planted at
// a signer's path) may be replaced, so that it cannot keep that signer
// from storing their statement there.
func Protected(path string, data []byte) bool {
	if checkAdd(path, data) != nil {
		return false
	}
	e, err := ParseEnvelope(data)
	if err != nil {
		return false
	}
	blob, _, err := sshsigKey(e.Sig)
	if err != nil {
		return false
	}
	pub, err := ssh.ParsePublicKey(blob)
	if err != nil {
		return false
	}
	_, err = e.Verify(func(string) (ssh.PublicKey, bool) { return pub, true })
	return err == nil
}

// Describe says in a few words what an envelope is for ("approval of
// refs/heads/main 1234abcd..5678ef01 signed by SHA256:..."), for messages;
// what cannot be parsed is described as such.
func Describe(data []byte) string {
	e, err := ParseEnvelope(data)
	if err != nil {
		return "not a valid envelope"
	}
	if a, err := ParseApproval(e.Payload); err == nil {
		to := shortHex(a.To)
		if !a.ToTree.IsZero() {
			to = "tree " + shortHex(a.ToTree)
		}
		return fmt.Sprintf("approval of %s %s..%s signed by %s", a.Ref, shortHex(a.From), to, e.KeyID)
	}
	if f, err := ParseForgeReview(e.Payload); err == nil {
		return fmt.Sprintf("forge review %s %s by %s (%s) of %s %s..%s signed by %s", f.Forge, f.Review, f.Account, f.State, f.Ref, shortHex(f.From), shortHex(f.To), e.KeyID)
	}
	if t, err := ParseTestRun(e.Payload); err == nil {
		return fmt.Sprintf("test run on tree %s signed by %s", shortHex(t.Tree), e.KeyID)
	}
	return "envelope signed by " + e.KeyID
}

func shortHex(h gitrepo.Hash) string {
	if h.IsZero() {
		return "nothing"
	}
	return hexOf(h)[:12]
}

// history is the index of every envelope some commit of the store's
// history dropped or changed, by directory.
type history struct {
	dirs map[string][]StoredFile
	set  map[StoredFile]bool
}

func newHistory() *history {
	return &history{dirs: map[string][]StoredFile{}, set: map[StoredFile]bool{}}
}

func (h *history) add(f StoredFile) {
	k := StoredFile{Path: f.Path, Blob: f.Blob}
	if h.set[k] {
		return
	}
	h.set[k] = true
	h.dirs[k.Dir()] = append(h.dirs[k.Dir()], k)
}

func (h *history) len() int { return len(h.set) }

// buildHistory walks every commit reachable from tip and collects, for
// each commit and each of its parents, the files the parent had that the
// commit dropped or changed. With a flat store tree each comparison costs
// the size of the store, so a walk over n commits costs n times that:
// what an earlier walk found for an ancestor of tip (base, and its files)
// is taken as it is and only the commits since are compared.
//
// limit, when not zero, bounds the tree entries the walk may compare in
// all (ErrHistoryBudget past it): a push of a few hundred kilobytes (a
// history of thousands of commits over a store of tens of thousands of
// planted files) otherwise made a server compare for minutes.
func buildHistory(r Repo, tip, base gitrepo.Hash, known *history, limit int) (*history, error) {
	h := newHistory()
	if tip.IsZero() {
		return h, nil
	}
	trees := map[gitrepo.Hash]gitrepo.Hash{}
	treeOf := func(c gitrepo.Hash) (gitrepo.Hash, []gitrepo.Hash, error) {
		commit, err := r.ReadCommit(c)
		if err != nil {
			return gitrepo.ZeroHash, nil, fmt.Errorf("attest: read %s commit %s: %w", Ref, c, err)
		}
		trees[c] = commit.Tree
		return commit.Tree, commit.Parents, nil
	}
	cache := &treeCache{r: r, trees: map[gitrepo.Hash][]gitrepo.TreeEntry{}, limit: limit}
	seen := map[gitrepo.Hash]bool{}
	reachedBase := false
	if !base.IsZero() {
		seen[base] = true // its history is known: do not walk it again
	}
	stack := []gitrepo.Hash{tip}
	if tip == base {
		stack, reachedBase = nil, true
	}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[c] {
			continue
		}
		seen[c] = true
		tree, parents, err := treeOf(c)
		if err != nil {
			return nil, err
		}
		for _, p := range parents {
			reachedBase = reachedBase || p == base
			pt, ok := trees[p]
			if !ok {
				if pt, _, err = treeOf(p); err != nil {
					return nil, err
				}
			}
			files, err := Dropped(cache, pt, tree)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				h.add(f)
			}
			stack = append(stack, p)
		}
	}
	if base.IsZero() {
		return h, nil
	}
	if !reachedBase {
		// base is not in tip's history: what it knew is not tip's.
		return buildHistory(r, tip, gitrepo.ZeroHash, nil, limit)
	}
	if known != nil {
		for f := range known.set {
			h.add(f)
		}
	}
	return h, nil
}

// historyFile is where a repository keeps what the last walk of the
// store's history found (local state, like the verification checkpoint:
// a lost or damaged file only costs a new walk).
func historyFile(gitDir string) string {
	return filepath.Join(gitDir, "secure", "attestations-history")
}

// maxHistoryFile bounds the history file read back.
const maxHistoryFile = 64 << 20

// loadHistory reads the history file: the store commit it was made for
// and what that commit's history dropped. Anything unreadable gives
// nothing (and a full walk).
func loadHistory(gitDir string) (gitrepo.Hash, *history) {
	f, err := os.Open(historyFile(gitDir))
	if err != nil {
		return gitrepo.ZeroHash, nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxHistoryFile+1))
	if err != nil || len(data) > maxHistoryFile {
		return gitrepo.ZeroHash, nil
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) < 2 || lines[len(lines)-1] != "" || !strings.HasPrefix(lines[0], "tip ") {
		return gitrepo.ZeroHash, nil
	}
	tip, err := gitrepo.ParseHash(strings.TrimPrefix(lines[0], "tip "))
	if err != nil {
		return gitrepo.ZeroHash, nil
	}
	h := newHistory()
	for _, l := range lines[1 : len(lines)-1] {
		blob, path, ok := strings.Cut(l, " ")
		b, err := gitrepo.ParseHash(blob)
		parts := strings.Split(path, "/")
		if !ok || err != nil || len(parts) != 3 || !validSignerFile(parts[2]) {
			return gitrepo.ZeroHash, nil
		}
		h.add(StoredFile{Path: path, Blob: b})
	}
	return tip, h
}

// saveHistory writes the history file for tip, atomically; failing to
// write it only costs a walk next time.
func saveHistory(gitDir string, tip gitrepo.Hash, h *history) {
	var b strings.Builder
	fmt.Fprintf(&b, "tip %s\n", tip)
	dirs := make([]string, 0, len(h.dirs))
	for d := range h.dirs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		for _, f := range h.dirs[d] {
			fmt.Fprintf(&b, "%s %s\n", f.Blob, f.Path)
		}
	}
	path := historyFile(gitDir)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".attestations-history-*")
	if err != nil {
		return
	}
	_, werr := tmp.WriteString(b.String())
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}

// treeCache keeps the trees read while walking the history: a commit's
// trees are its parent's "new" side right after being its own "old" side.
type treeCache struct {
	r     TreeReader
	trees map[gitrepo.Hash][]gitrepo.TreeEntry
	// read counts the entries handed out, which the comparisons then go
	// through; limit bounds it (0: no bound).
	read, limit int
}

// ErrHistoryBudget: walking the store's history would compare more tree
// entries than the caller allows.
var ErrHistoryBudget = errors.New("attest: the store's history is too costly to walk")

// maxCachedTrees bounds the walk's tree cache.
const maxCachedTrees = 256

// ReadObject reads a raw object (a junk tree read as git reads it).
func (c *treeCache) ReadObject(h gitrepo.Hash, maxSize int64) (string, []byte, error) {
	or, ok := c.r.(objectReader)
	if !ok {
		return "", nil, errors.New("attest: cannot read raw objects")
	}
	return or.ReadObject(h, maxSize)
}

func (c *treeCache) ReadTree(h gitrepo.Hash) ([]gitrepo.TreeEntry, error) {
	t, ok := c.trees[h]
	if !ok {
		var err error
		if t, err = c.r.ReadTree(h); err != nil {
			return nil, err
		}
	}
	if c.read += len(t); c.limit > 0 && c.read > c.limit {
		return nil, fmt.Errorf("%w (more than %d tree entries to compare)", ErrHistoryBudget, c.limit)
	}
	if ok {
		return t, nil
	}
	if len(c.trees) >= maxCachedTrees {
		clear(c.trees)
	}
	c.trees[h] = t
	return t, nil
}
