package attest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// Repo is the subset of *gitrepo.Repo the store needs.
type Repo interface {
	ReadObject(h gitrepo.Hash, maxSize int64) (typ string, data []byte, err error)
	ReadCommit(h gitrepo.Hash) (*gitrepo.Commit, error)
	WriteObject(typ string, data []byte) (gitrepo.Hash, error)
	WriteTree(entries []gitrepo.TreeEntry) (gitrepo.Hash, error)
	ReadTree(h gitrepo.Hash) ([]gitrepo.TreeEntry, error)
	ResolveRef(name string) (gitrepo.Hash, bool, error)
	UpdateRefs(updates []gitrepo.RefUpdate, reflogMsg string) error
}

var _ Repo = (*gitrepo.Repo)(nil)

// maxAddRetries is how often Add retries after losing the compare-and-swap.
const maxAddRetries = 3

// commitPrefix starts every store commit message.
const commitPrefix = "git-secure: "

// Store is a snapshot of the attestation store on Ref. Reads see the
// snapshot taken by OpenStore (or Refresh, or the last successful Add).
type Store struct {
	r     Repo
	addMu sync.Mutex // serializes Add

	mu    sync.RWMutex // guards tip, tree, index and hist
	tip   gitrepo.Hash
	tree  gitrepo.Hash
	index map[gitrepo.Hash]map[string]gitrepo.TreeEntry
	// junkIndex is index for trees that do not parse (storeEntries).
	junkIndex map[gitrepo.Hash]*junkTree
	// hist indexes what the history of tip dropped (nil: not built yet).
	hist *history
	// replaced is what the last Add replaced as junk.
	replaced []string
	// met is the junk reads met, shared with the views of WithHistory.
	met *junkMet
	// withHistory makes Envelopes read the union over the history: set on
	// the views WithHistory returns.
	withHistory bool
}

// File is one stored envelope: its file name ("<signer>.json"), blob and
// content (nil when it cannot be an envelope: too large, not a blob).
type File struct {
	Name string
	Blob gitrepo.Hash
	Data []byte
	// Junk, when set, says why an entry on the way to or in the
	// directory counts for nothing (Name is then its store path): a tree
	// that does not parse, an entry of the wrong type.
	Junk string
}

// OpenStore returns a store reading the current tip of Ref (zero and empty
// if the ref does not exist).
func OpenStore(r Repo) (*Store, error) {
	s := &Store{r: r}
	if err := s.Refresh(); err != nil {
		return nil, err
	}
	return s, nil
}

// OpenStoreAt returns a read snapshot of the store at commit tip (zero for
// an empty store), for verifying a state that is not (yet) the ref's value,
// such as an incoming push or fetch.
func OpenStoreAt(r Repo, tip gitrepo.Hash) (*Store, error) {
	s := &Store{r: r}
	if tip.IsZero() {
		return s, nil
	}
	c, err := r.ReadCommit(tip)
	if err != nil {
		return nil, fmt.Errorf("attest: read %s commit %s: %w", Ref, tip, err)
	}
	s.tip, s.tree = tip, c.Tree
	return s, nil
}

// readTip resolves Ref and the tree of its commit.
func (s *Store) readTip() (tip, tree gitrepo.Hash, err error) {
	h, ok, err := s.r.ResolveRef(Ref)
	if err != nil {
		return tip, tree, fmt.Errorf("attest: resolve %s: %w", Ref, err)
	}
	if !ok || h.IsZero() {
		return tip, tree, nil
	}
	c, err := s.r.ReadCommit(h)
	if err != nil {
		return tip, tree, fmt.Errorf("attest: read %s commit %s: %w", Ref, h, err)
	}
	return h, c.Tree, nil
}

// Refresh re-reads the tip of Ref.
func (s *Store) Refresh() error {
	tip, tree, err := s.readTip()
	if err != nil {
		return err
	}
	s.setTip(tip, tree)
	return nil
}

// Tip returns the commit the store's snapshot is at (zero if Ref did not
// exist).
func (s *Store) Tip() gitrepo.Hash {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tip
}

func (s *Store) snapshot() gitrepo.Hash {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tree
}

// Approvals returns every envelope stored for exactly (ref, from, to), raw
// bytes keyed by file name ("<S>.json"). It reads only ApprovalDir(ref,
// from, to); a missing directory gives an empty map. Entries that are not
// regular files named by 64 lowercase hex digits and ".json" are ignored.
// Nothing returned is verified.
func (s *Store) Approvals(ref string, from, to gitrepo.Hash) (map[string][]byte, error) {
	return s.readDir(ApprovalDir(ref, from, to))
}

// TreeApprovals returns every envelope stored for approvals of ref moving
// from from to a commit whose tree is tree, like Approvals.
func (s *Store) TreeApprovals(ref string, from, tree gitrepo.Hash) (map[string][]byte, error) {
	return s.readDir(ApprovalTreeDir(ref, from, tree))
}

// TestRuns returns every test-run envelope stored for tree, like Approvals.
func (s *Store) TestRuns(tree gitrepo.Hash) (map[string][]byte, error) {
	return s.readDir(TestRunDir(tree))
}

func (s *Store) readDir(dir string) (map[string][]byte, error) {
	files, err := s.readFiles(dir)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(files))
	for _, f := range files {
		if f.Junk != "" {
			continue
		}
		out[f.Name] = f.Data
	}
	return out, nil
}

// readFiles reads the envelope files of dir at the snapshot's tree, sorted
// by name. Junk on the way (a tree that does not parse, an entry of the
// wrong type: see junk.go) counts for nothing: it gives a File with Junk
// set and no content, for the caller's notes, and the rest is still read,
// so that junk next to an envelope cannot hide it.
func (s *Store) readFiles(dir string) ([]File, error) {
	var out []File
	root := s.snapshot()
	if root.IsZero() {
		return out, nil
	}
	junk := func(path string, format string, args ...any) {
		if path == "" {
			path = "(the root tree)"
		}
		f := File{Name: path, Junk: fmt.Sprintf("store entry %s: %s; it counts for nothing", path, fmt.Sprintf(format, args...))}
		s.junkMet().add(f.Junk)
		out = append(out, f)
	}
	curs := []gitrepo.Hash{root}
	path := ""
	for _, name := range strings.Split(dir, "/") {
		var next []gitrepo.Hash
		for _, cur := range curs {
			entries, bad, err := s.storeEntries(cur, name)
			if err != nil {
				return nil, fmt.Errorf("attest: read %s: %w", dir, err)
			}
			if bad != nil {
				junk(strings.TrimSuffix(path, "/"), "%v", bad)
			}
			for _, e := range entries {
				if e.Name != name {
					continue
				}
				if e.Mode != gitrepo.ModeTree {
					junk(path+name, "mode %o where a directory goes", e.Mode)
					continue
				}
				if !slices.Contains(next, e.Hash) {
					next = append(next, e.Hash)
				}
			}
		}
		if len(next) > maxJunkCandidates {
			junk(path+name, "%d different trees under one name; the first %d are read", len(next), maxJunkCandidates)
			next = next[:maxJunkCandidates]
		}
		curs, path = next, path+name+"/"
	}
	seen := map[StoredFile]bool{}
	for _, cur := range curs {
		entries, bad, err := readStoreTree(s.r, cur)
		if err != nil {
			return nil, fmt.Errorf("attest: read %s: %w", dir, err)
		}
		if bad != nil {
			junk(dir, "%v", bad)
		}
		for _, e := range entries {
			if !validSignerFile(e.Name) {
				continue
			}
			if e.Mode != gitrepo.ModeFile {
				junk(dir+"/"+e.Name, "mode %o where a regular file goes", e.Mode)
				continue
			}
			if k := (StoredFile{Path: e.Name, Blob: e.Hash}); seen[k] {
				continue
			} else {
				seen[k] = true
			}
			data, err := s.readEnvelope(e.Hash)
			if err != nil {
				return nil, fmt.Errorf("attest: read %s/%s: %w", dir, e.Name, err)
			}
			out = append(out, File{Name: e.Name, Blob: e.Hash, Data: data})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// storeEntries returns the entries of tree h that may be named name: the
// one of the (cached) index when h parses, else every entry git would
// read in it, with why it is junk.
func (s *Store) storeEntries(h gitrepo.Hash, name string) ([]gitrepo.TreeEntry, error, error) {
	s.mu.RLock()
	j, ok := s.junkIndex[h]
	s.mu.RUnlock()
	if ok {
		return j.byName[name], j.bad, nil
	}
	idx, err := s.treeIndex(h)
	if err == nil {
		if e, ok := idx[name]; ok {
			return []gitrepo.TreeEntry{e}, nil, nil
		}
		return nil, nil, nil
	}
	entries, bad, err := readStoreTree(s.r, h)
	if err != nil {
		return nil, nil, err
	}
	// Kept like the index: a junk root is read as git reads it once per
	// snapshot, not once per lookup.
	j = &junkTree{byName: map[string][]gitrepo.TreeEntry{}, bad: bad}
	for _, e := range entries {
		j.byName[e.Name] = append(j.byName[e.Name], e)
	}
	s.mu.Lock()
	if s.junkIndex == nil || len(s.junkIndex) >= maxIndexedTrees {
		s.junkIndex = map[gitrepo.Hash]*junkTree{}
	}
	s.junkIndex[h] = j
	s.mu.Unlock()
	return j.byName[name], j.bad, nil
}

// junkTree is a tree that does not parse, read as git reads it.
type junkTree struct {
	byName map[string][]gitrepo.TreeEntry
	bad    error
}

// readEnvelope reads one envelope blob. What cannot be a valid envelope
// (too large, not a blob) gives nil content and no error, so that callers
// count it as malformed, and one planted file does not turn a
// verification into an I/O failure.
func (s *Store) readEnvelope(h gitrepo.Hash) ([]byte, error) {
	typ, data, err := s.r.ReadObject(h, MaxEnvelopeSize)
	if errors.Is(err, gitrepo.ErrTooLarge) || (err == nil && (typ != "blob" || len(data) > MaxEnvelopeSize)) {
		return nil, nil
	}
	return data, err
}

// Envelopes returns the envelope files of dir (ApprovalDir, ApprovalTreeDir
// or TestRunDir) sorted by name: those of the snapshot's tree and, on a
// view from WithHistory, every other version the store's history held
// there (a name may then appear more than once, with different blobs).
// Nothing returned is verified.
func (s *Store) Envelopes(dir string) ([]File, error) {
	files, err := s.readFiles(dir)
	if err != nil || !s.withHistory {
		return files, err
	}
	have := map[StoredFile]bool{}
	for _, f := range files {
		have[StoredFile{Path: dir + "/" + f.Name, Blob: f.Blob}] = true
	}
	s.mu.RLock()
	var old []StoredFile
	if s.hist != nil {
		old = s.hist.dirs[dir]
	}
	s.mu.RUnlock()
	for _, f := range old {
		k := StoredFile{Path: f.Path, Blob: f.Blob}
		if have[k] {
			continue
		}
		have[k] = true
		// An earlier version that cannot be read (gone from a partial
		// clone, or named by a damaged history file) counts for nothing:
		// that can only make a verification fail.
		data, err := s.readEnvelope(f.Blob)
		if err != nil {
			data = nil
		}
		files = append(files, File{Name: f.Name(), Blob: f.Blob, Data: data})
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, nil
}

// WithHistory returns a read view of the store's snapshot whose Envelopes
// also return every envelope an earlier commit of the store held and a
// later one dropped or changed (see Dropped), and whether there is any.
// The history is walked once per store (every commit, comparing each with
// its parents by tree, skipping equal subtrees), and what it found is kept in the repository (secure/attestations-history), so that
// the next walk compares only the commits since; verification calls it
// only when approvals from the tip do not suffice, so an intact store
// costs nothing more.
func (s *Store) WithHistory() (*Store, bool, error) { return s.WithHistoryLimit(0) }

// WithHistoryLimit is WithHistory with a bound on the tree entries the walk
// may compare (0: none); past it the error wraps ErrHistoryBudget.
func (s *Store) WithHistoryLimit(limit int) (*Store, bool, error) {
	s.mu.RLock()
	tip, tree, h := s.tip, s.tree, s.hist
	s.mu.RUnlock()
	if h == nil {
		var err error
		if h, err = s.walkHistory(tip, limit); err != nil {
			return nil, false, err
		}
		s.mu.Lock()
		if s.tip == tip {
			s.hist = h
		}
		s.mu.Unlock()
	}
	return &Store{r: s.r, tip: tip, tree: tree, hist: h, withHistory: true, met: s.junkMet()}, h.len() > 0, nil
}

// junkMet collects the junk a store's reads met (junk.go), for one warning.
type junkMet struct {
	mu   sync.Mutex
	seen map[string]bool
	list []string
}

// maxJunkMet bounds the junk remembered for the warning.
const maxJunkMet = 5

func (j *junkMet) add(what string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.seen[what] || len(j.list) >= maxJunkMet {
		return
	}
	if j.seen == nil {
		j.seen = map[string]bool{}
	}
	j.seen[what] = true
	j.list = append(j.list, what)
}

func (s *Store) junkMet() *junkMet {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.met == nil {
		s.met = &junkMet{}
	}
	return s.met
}

// Junk returns the junk the store's reads met so far (at most a few), each
// naming its store path: what no git-secure writer makes and counts for
// nothing, for a warning.
func (s *Store) Junk() []string {
	j := s.junkMet()
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.list)
}

func validSignerFile(name string) bool {
	h, ok := strings.CutSuffix(name, ".json")
	return ok && isHexName(h, 64)
}

// checkAdd validates path and envelope for Add: path is
// "approvals/<A>/<S>.json" or "tests/<tree>/<S>.json", the envelope parses,
// S belongs to its signer, and its statement is for that directory.
func checkAdd(path string, envelope []byte) error {
	parts := strings.Split(path, "/")
	if len(parts) != 3 || !validSignerFile(parts[2]) {
		return malformed("store path %q is not <kind>/<dir>/<signer>.json", path)
	}
	e, err := ParseEnvelope(envelope)
	if err != nil {
		return err
	}
	dir := parts[0] + "/" + parts[1]
	if parts[0] == "forge-reviews" || parts[0] == "forge-reviews-tree" {
		// One file per bridge, review and state, not per signer.
		_, err := CheckForgeReviewFile(dir, parts[2], e)
		return err
	}
	if err := CheckSignerFile(parts[2], e); err != nil {
		return err
	}
	switch parts[0] {
	case "approvals":
		if !isHexName(parts[1], 64) {
			return malformed("store path %q: bad approval directory", path)
		}
		a, err := ParseApproval(e.Payload)
		if err != nil {
			return err
		}
		if !a.ToTree.IsZero() {
			return fmt.Errorf("%w: a tree-bound approval belongs in %s", ErrMismatch, ApprovalTreeDir(a.Ref, a.From, a.ToTree))
		}
		if want := ApprovalDir(a.Ref, a.From, a.To); want != dir {
			return fmt.Errorf("%w: approval belongs in %s, not %s", ErrMismatch, want, dir)
		}
	case "approvals-tree":
		if !isHexName(parts[1], 64) {
			return malformed("store path %q: bad approval directory", path)
		}
		a, err := ParseApproval(e.Payload)
		if err != nil {
			return err
		}
		if a.ToTree.IsZero() {
			return fmt.Errorf("%w: an approval bound to a commit belongs in %s", ErrMismatch, ApprovalDir(a.Ref, a.From, a.To))
		}
		if want := ApprovalTreeDir(a.Ref, a.From, a.ToTree); want != dir {
			return fmt.Errorf("%w: approval belongs in %s, not %s", ErrMismatch, want, dir)
		}
	case "tests":
		if !isHexName(parts[1], 40) {
			return malformed("store path %q: bad tree directory", path)
		}
		t, err := ParseTestRun(e.Payload)
		if err != nil {
			return err
		}
		if want := TestRunDir(t.Tree); want != dir {
			return fmt.Errorf("%w: test run belongs in %s, not %s", ErrMismatch, want, dir)
		}
	default:
		return malformed("store path %q: unknown kind %q", path, parts[0])
	}
	return nil
}

// Add stores envelope at path ("approvals/<A>/<S>.json" or
// "tests/<tree>/<S>.json"), replacing a file already there that cannot
// count (see Protected), commits the
// new tree on top of the tip with who as author and committer (When zero
// means now) and moves Ref by compare-and-swap. On gitrepo.ErrRefChanged it
// re-reads the tip and retries up to 3 times. message describes what was
// added; "git-secure: " is prepended unless already present.
//
// Add checks that the envelope parses, that S belongs to its signer and
// that its statement belongs in that directory (ErrMalformed or
// ErrMismatch), but does not verify the signature. If the file already has
// exactly this content, or holds an envelope that belongs there with a
// valid signature by that signer (the store is append-only: see
// Protected), nothing is committed and the tip is returned. On
// success the store's snapshot moves to the new commit, which is returned.
func (s *Store) Add(path string, envelope []byte, who gitrepo.Ident, message string) (gitrepo.Hash, error) {
	if len(envelope) > MaxEnvelopeSize {
		return gitrepo.ZeroHash, malformed("envelope is %d bytes, limit %d", len(envelope), MaxEnvelopeSize)
	}
	if err := checkAdd(path, envelope); err != nil {
		return gitrepo.ZeroHash, err
	}
	if message == "" {
		message = "add " + path
	}
	if !strings.HasPrefix(message, commitPrefix) {
		message = commitPrefix + message
	}
	if !strings.HasSuffix(message, "\n") {
		message += "\n"
	}
	if who.When.IsZero() {
		who.When = time.Now()
	}

	s.addMu.Lock()
	defer s.addMu.Unlock()

	blob, err := s.r.WriteObject("blob", envelope)
	if err != nil {
		return gitrepo.ZeroHash, fmt.Errorf("attest: write envelope: %w", err)
	}
	parts := strings.Split(path, "/")
	s.mu.RLock()
	tip, tree := s.tip, s.tree
	s.mu.RUnlock()
	for attempt := 0; ; attempt++ {
		var replaced []string
		newTree, err := s.put(tree, parts, blob, "", &replaced)
		if err != nil {
			return gitrepo.ZeroHash, err
		}
		s.mu.Lock()
		s.replaced = replaced
		s.mu.Unlock()
		if newTree == tree && !tip.IsZero() {
			s.setTip(tip, tree)
			return tip, nil
		}
		if keep, err := s.keepsExisting(path, tree, newTree); err != nil {
			return gitrepo.ZeroHash, err
		} else if keep {
			s.setTip(tip, tree)
			return tip, nil
		}
		var parents []gitrepo.Hash
		if !tip.IsZero() {
			parents = []gitrepo.Hash{tip}
		}
		c, err := s.r.WriteObject("commit", gitrepo.EncodeCommit(newTree, parents, who, who, message))
		if err != nil {
			return gitrepo.ZeroHash, fmt.Errorf("attest: write commit: %w", err)
		}
		err = s.r.UpdateRefs([]gitrepo.RefUpdate{{Name: Ref, Old: tip, New: c}}, strings.TrimSuffix(message, "\n"))
		if err == nil {
			s.setTip(c, newTree)
			return c, nil
		}
		if !errors.Is(err, gitrepo.ErrRefChanged) || attempt >= maxAddRetries {
			return gitrepo.ZeroHash, fmt.Errorf("attest: update %s: %w", Ref, err)
		}
		// A lost race is often a lock held by a writer that is about to
		// land; give it time so the re-read sees its commit.
		time.Sleep(time.Duration(attempt+1) * (10*time.Millisecond + rand.N(20*time.Millisecond)))
		if tip, tree, err = s.readTip(); err != nil {
			return gitrepo.ZeroHash, err
		}
	}
}

// walkHistory builds the history index of tip, starting from what the
// repository's history file knows (when the store's repository is a
// *gitrepo.Repo) and saving what it found when tip is the ref's value.
func (s *Store) walkHistory(tip gitrepo.Hash, limit int) (*history, error) {
	gd, ok := s.r.(interface{ GitDir() string })
	if !ok || gd.GitDir() == "" {
		return buildHistory(s.r, tip, gitrepo.ZeroHash, nil, limit)
	}
	base, known := loadHistory(gd.GitDir())
	h, err := buildHistory(s.r, tip, base, known, limit)
	if err != nil || tip.IsZero() || tip == base {
		return h, err
	}
	// Kept only for the ref's own value: a store commit that may never
	// land (an incoming push or fetch) must not displace it, or each
	// refused push would cost a whole walk again.
	if cur, ok, err := s.r.ResolveRef(Ref); err == nil && ok && cur == tip {
		saveHistory(gd.GitDir(), tip, h)
	}
	return h, nil
}

// keepsExisting reports whether writing newTree would replace an envelope
// of tree that the store must keep (Protected): the store is append-only,
// and the server refuses a push that changes one. The one at path is the
// same signer's statement about the same thing, so nothing is lost; one
// elsewhere (a rewritten junk tree held it) is an error, not a silent
// drop.
func (s *Store) keepsExisting(path string, tree, newTree gitrepo.Hash) (bool, error) {
	replaced, err := Dropped(s.r, tree, newTree)
	if err != nil {
		return false, err
	}
	for _, f := range replaced {
		data, err := s.readEnvelope(f.Blob)
		if err != nil {
			return false, fmt.Errorf("attest: read %s: %w", f.Path, err)
		}
		if !Protected(f.Path, data) {
			continue
		}
		if f.Path == path {
			return true, nil
		}
		return false, fmt.Errorf("attest: storing %s would drop the stored envelope %s (%s) from a junk tree; the store must keep it: ask the administrator to repair %s", path, f.Path, Describe(data), Ref)
	}
	return false, nil
}

// Replaced returns what the last Add replaced as junk (see put), for a
// warning.
func (s *Store) Replaced() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.replaced)
}

func (s *Store) setTip(tip, tree gitrepo.Hash) {
	s.mu.Lock()
	if s.tip != tip {
		s.hist = nil
	}
	s.tip, s.tree = tip, tree
	s.mu.Unlock()
}

// put writes blob at parts below tree (zero = empty), rewriting only the
// trees along the path, and returns the new tree. Junk on the path (a tree
// that does not parse, an entry of the wrong type where a directory or the
// file goes) is replaced, and noted in replaced: it counts for nothing,
// and it must not keep anyone from storing their statement.
func (s *Store) put(tree gitrepo.Hash, parts []string, blob gitrepo.Hash, prefix string, replaced *[]string) (gitrepo.Hash, error) {
	var entries []gitrepo.TreeEntry
	if !tree.IsZero() {
		got, bad, err := readStoreTree(s.r, tree)
		if err != nil {
			return gitrepo.ZeroHash, fmt.Errorf("attest: read tree %s: %w", tree, err)
		}
		if bad != nil {
			*replaced = append(*replaced, fmt.Sprintf("store entry %s: %v; rewritten without its junk", strings.TrimSuffix(prefix, "/"), bad))
			if got, err = s.cleanJunk(got, prefix, storeDepth+1-len(parts)); err != nil {
				return gitrepo.ZeroHash, err
			}
		}
		entries = slices.Clone(got)
	}
	name := parts[0]
	i := slices.IndexFunc(entries, func(e gitrepo.TreeEntry) bool { return e.Name == name })
	var entry gitrepo.TreeEntry
	if len(parts) == 1 {
		if i >= 0 && entries[i].Mode != gitrepo.ModeFile {
			*replaced = append(*replaced, fmt.Sprintf("store entry %s%s: mode %o where a regular file goes; replaced", prefix, name, entries[i].Mode))
		}
		entry = gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: name, Hash: blob}
	} else {
		var sub gitrepo.Hash
		if i >= 0 {
			if entries[i].Mode != gitrepo.ModeTree {
				*replaced = append(*replaced, fmt.Sprintf("store entry %s%s: mode %o where a directory goes; replaced", prefix, name, entries[i].Mode))
			} else {
				sub = entries[i].Hash
			}
		}
		h, err := s.put(sub, parts[1:], blob, prefix+name+"/", replaced)
		if err != nil {
			return gitrepo.ZeroHash, err
		}
		entry = gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: name, Hash: h}
	}
	if i >= 0 {
		entries[i] = entry
	} else {
		entries = append(entries, entry)
	}
	h, err := s.r.WriteTree(entries)
	if err != nil {
		return gitrepo.ZeroHash, fmt.Errorf("attest: write tree: %w", err)
	}
	return h, nil
}

// cleanJunk returns the entries of a junk tree at depth (0: the root;
// storeDepth: a directory of envelopes), read as git reads it, that a tree
// written again may hold: one entry per name, names git-secure can write,
// of the type the layout puts there.
// Nothing stored next to the junk is lost: directories given twice are
// merged, and of an envelope file given twice a kept one (Protected) is
// preferred.
func (s *Store) cleanJunk(entries []gitrepo.TreeEntry, prefix string, depth int) ([]gitrepo.TreeEntry, error) {
	var out []gitrepo.TreeEntry
	at := map[string]int{}
	var merge []string // names given twice as directories
	for _, e := range entries {
		want := uint32(gitrepo.ModeTree)
		if depth == storeDepth {
			want = gitrepo.ModeFile
		}
		if gitrepo.ValidEntryName(e.Name) != nil || e.Mode != want {
			continue // junk of the wrong type goes with its tree
		}
		j, dup := at[e.Name]
		if !dup {
			at[e.Name] = len(out)
			out = append(out, e)
			continue
		}
		switch {
		case depth == storeDepth:
			if !s.protectedAt(prefix+out[j].Name, out[j]) && s.protectedAt(prefix+e.Name, e) {
				out[j] = e
			}
		case e.Hash != out[j].Hash:
			merge = append(merge, e.Name)
		}
	}
	for _, name := range merge {
		var all []gitrepo.TreeEntry
		for _, e := range entries {
			if e.Name != name || e.Mode != gitrepo.ModeTree {
				continue
			}
			sub, _, err := readStoreTree(s.r, e.Hash)
			if err != nil {
				return nil, fmt.Errorf("attest: read %s%s: %w", prefix, name, err)
			}
			all = append(all, sub...)
		}
		clean, err := s.cleanJunk(all, prefix+name+"/", depth+1)
		if err != nil {
			return nil, err
		}
		h, err := s.r.WriteTree(clean)
		if err != nil {
			return nil, fmt.Errorf("attest: write tree: %w", err)
		}
		out[at[name]] = gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: name, Hash: h}
	}
	return out, nil
}

func (s *Store) protectedAt(path string, e gitrepo.TreeEntry) bool {
	if e.Mode != gitrepo.ModeFile {
		return false
	}
	data, err := s.readEnvelope(e.Hash)
	return err == nil && Protected(path, data)
}

// maxIndexedTrees bounds the tree index cache of one Store.
const maxIndexedTrees = 64

// treeIndex returns the entries of tree h by name. The store's upper trees
// (the root, approvals/, tests/) are read once per snapshot, not once per
// lookup: with thousands of approvals that is the difference between a
// linear and a quadratic verification.
func (s *Store) treeIndex(h gitrepo.Hash) (map[string]gitrepo.TreeEntry, error) {
	s.mu.RLock()
	idx, ok := s.index[h]
	s.mu.RUnlock()
	if ok {
		return idx, nil
	}
	entries, err := s.r.ReadTree(h)
	if err != nil {
		return nil, err
	}
	idx = make(map[string]gitrepo.TreeEntry, len(entries))
	for _, e := range entries {
		idx[e.Name] = e
	}
	if len(entries) > 16 { // small leaf trees are cheap to re-read
		s.mu.Lock()
		if s.index == nil || len(s.index) >= maxIndexedTrees {
			s.index = map[gitrepo.Hash]map[string]gitrepo.TreeEntry{}
		}
		s.index[h] = idx
		s.mu.Unlock()
	}
	return idx, nil
}
