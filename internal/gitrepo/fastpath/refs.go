package fastpath

import (
	"bytes"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// Ref is a ref name and the object it points to (not peeled).
type Ref struct {
	Name string
	ID   ID
}

// errRefsFallback sends a listing to git for-each-ref: something in the
// ref store this reader does not handle.
var errRefsFallback = errors.New("fastpath: refs need git for-each-ref")

const (
	maxLooseRef   = 4096     // a loose ref file: a hash or "ref: <name>"
	maxPackedRefs = 64 << 20 // the packed-refs file
	maxLooseRefs  = 100_000  // loose refs read in-process before asking git
	maxSymDepth   = 5
)

// ListRefs lists the refs under the directories dirs (each "refs/" or
// "refs/.../") straight from the files ref store, without a process: the
// hooks and the remote helper list refs on every push. ok is false when
// git for-each-ref must list them: the switch is off, the repository's
// refs are not its own files ref store (Options.FilesRefs), or anything is
// unusual (a broken loose ref, a dangling symbolic ref, an unparsable
// packed-refs line, a name ValidRefName refuses). err is an I/O error.
func (f *Repo) ListRefs(dirs []string) (refs []Ref, ok bool, err error) {
	if f == nil || !f.filesRefs {
		return nil, false, nil
	}
	refs, err = f.readRefsFiles(dirs)
	if errors.Is(err, errRefsFallback) {
		return nil, false, nil
	}
	return refs, err == nil, err
}

// refFiles is what the files ref store holds under some directories.
type refFiles struct {
	loose    map[string]ID
	symbolic map[string]string // name -> target
	packed   map[string]ID
	dirs     Prefixes // the directories read
}

// readRefsFiles lists the refs under dirs. Loose refs are read before
// packed-refs, as git does, so that a concurrent "git pack-refs" (which
// writes packed-refs before deleting the loose files) cannot hide a ref.
func (f *Repo) readRefsFiles(dirs []string) ([]Ref, error) {
	rf := refFiles{loose: map[string]ID{}, symbolic: map[string]string{}, dirs: NewPrefixes(dirs)}
	count := 0
	// A directory inside another is read with it (once).
	for _, dir := range rf.dirs.Minimal() {
		if err := f.walkLooseRefs(dir, &rf, &count); err != nil {
			return nil, err
		}
	}
	packed, err := f.readPackedRefs(filepath.Join(f.gitDir, "packed-refs"))
	if err != nil {
		return nil, err
	}
	rf.packed = packed
	return rf.list()
}

// walkLooseRefs reads the loose refs under dir into rf.
func (f *Repo) walkLooseRefs(dir string, rf *refFiles, count *int) error {
	root := filepath.Join(f.gitDir, filepath.FromSlash(strings.TrimSuffix(dir, "/")))
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // deleted meanwhile, or no such directory
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return errRefsFallback
		}
		rel, err := filepath.Rel(f.gitDir, path)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if strings.HasSuffix(name, ".lock") {
			return nil // an update in progress; the ref itself is beside it
		}
		if f.validName(name) != nil {
			return errRefsFallback
		}
		if *count++; *count > maxLooseRefs {
			return errRefsFallback
		}
		return f.readLooseRef(path, name, rf)
	})
}

// readLooseRef reads one loose ref file: "<hash>\n" or "ref: <target>\n".
func (f *Repo) readLooseRef(path, name string, rf *refFiles) error {
	data, err := readBounded(path, maxLooseRef)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // deleted meanwhile: packed-refs has it, or it is gone
	}
	if errors.Is(err, errTooBig) {
		return errRefsFallback
	}
	if err != nil {
		return err
	}
	line, ok := bytes.CutSuffix(data, []byte("\n"))
	if !ok {
		return errRefsFallback
	}
	if target, isSym := bytes.CutPrefix(line, []byte("ref: ")); isSym {
		if f.validName(string(target)) != nil {
			return errRefsFallback
		}
		rf.symbolic[name] = string(target)
		return nil
	}
	h, ok := parseID(line)
	if !ok || h == (ID{}) {
		// git ignores a ref holding the null name as broken
		// ("ignoring broken ref"): let it list what it lists.
		return errRefsFallback
	}
	rf.loose[name] = h
	return nil
}

// resolve follows name through symbolic refs to a value, loose first.
// Only the loose refs under dirs were read: a target outside them may be
// loose with another value than packed-refs holds (git reads the loose
// one), so it is not resolved here (false: ask git).
func (rf *refFiles) resolve(name string) (ID, bool) {
	// git reads at most SYMREF_MAXDEPTH names (refs.c), the value
	// included: a longer chain is broken to it, and left to it here.
	for depth := 0; depth < maxSymDepth; depth++ {
		if !rf.dirs.Match(name) {
			return ID{}, false
		}
		if h, ok := rf.loose[name]; ok {
			return h, true
		}
		if target, ok := rf.symbolic[name]; ok {
			name = target
			continue
		}
		if h, ok := rf.packed[name]; ok {
			return h, true
		}
		return ID{}, false
	}
	return ID{}, false
}

// list merges loose, symbolic and packed refs under dirs: a loose ref
// hides its packed value.
func (rf *refFiles) list() ([]Ref, error) {
	var out []Ref
	for name, h := range rf.loose {
		out = append(out, Ref{Name: name, ID: h})
	}
	for name := range rf.symbolic {
		h, ok := rf.resolve(name)
		if !ok {
			// Dangling, or pointing outside the refs read: let git
			// decide how to list it.
			return nil, errRefsFallback
		}
		out = append(out, Ref{Name: name, ID: h})
	}
	for name, h := range rf.packed {
		_, isLoose := rf.loose[name]
		_, isSym := rf.symbolic[name]
		if !isLoose && !isSym && rf.dirs.Match(name) {
			out = append(out, Ref{Name: name, ID: h})
		}
	}
	return out, nil
}

// readPackedRefs parses packed-refs ("# pack-refs with: ..." header,
// "<hash> <name>" lines, "^<hash>" peeled lines). A missing file is empty.
func (f *Repo) readPackedRefs(path string) (map[string]ID, error) {
	data, err := readBounded(path, maxPackedRefs)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]ID{}, nil
	}
	if errors.Is(err, errTooBig) {
		return nil, errRefsFallback
	}
	if err != nil {
		return nil, err
	}
	out := map[string]ID{}
	for len(data) > 0 {
		line, rest, ok := bytes.Cut(data, []byte{'\n'})
		if !ok {
			return nil, errRefsFallback
		}
		data = rest
		if len(line) == 0 || line[0] == '#' || line[0] == '^' {
			continue
		}
		hs, name, ok := bytes.Cut(line, []byte{' '})
		if !ok || f.validName(string(name)) != nil {
			return nil, errRefsFallback
		}
		h, ok := parseID(hs)
		if !ok || h == (ID{}) {
			return nil, errRefsFallback
		}
		if _, dup := out[string(name)]; dup {
			// git lists both and resolves one: let it say so (ListRefs
			// refuses a ref listed twice).
			return nil, errRefsFallback
		}
		out[string(name)] = h
	}
	return out, nil
}
