package gitrepo

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// errRefsFallback sends a listing to git for-each-ref: something in the
// ref store this reader does not handle.
var errRefsFallback = errors.New("gitrepo: refs need git for-each-ref")

const (
	maxLooseRef   = 4096     // a loose ref file: a hash or "ref: <name>"
	maxPackedRefs = 64 << 20 // the packed-refs file
	maxLooseRefs  = 100_000  // loose refs read in-process before asking git
	maxSymDepth   = 5
)

// readRefsFiles lists the refs under the directories dirs (each "refs/" or
// "refs/.../") straight from the files ref store, without a process: the
// hooks and the remote helper list refs on every push. It is used only for
// repositories OpenGitDir accepted (their own ref store, no reftable).
// Loose refs are read before packed-refs, as git does, so that a
// concurrent "git pack-refs" (which writes packed-refs before deleting the
// loose files) cannot hide a ref. Anything unusual (a broken loose ref, a
// dangling symbolic ref, an unparsable packed-refs line) returns
// errRefsFallback.
func readRefsFiles(gitDir string, dirs []string) ([]Ref, error) {
	loose := map[string]Hash{}
	symbolic := map[string]string{}
	count := 0
	for _, dir := range dirs {
		root := filepath.Join(gitDir, filepath.FromSlash(strings.TrimSuffix(dir, "/")))
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
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
			rel, err := filepath.Rel(gitDir, path)
			if err != nil {
				return err
			}
			name := filepath.ToSlash(rel)
			if strings.HasSuffix(name, ".lock") {
				return nil // an update in progress; the ref itself is beside it
			}
			if ValidRefName(name) != nil {
				return errRefsFallback
			}
			if count++; count > maxLooseRefs {
				return errRefsFallback
			}
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
				if ValidRefName(string(target)) != nil {
					return errRefsFallback
				}
				symbolic[name] = string(target)
				return nil
			}
			h, err := parseHashBytes(line)
			if err != nil {
				return errRefsFallback
			}
			loose[name] = h
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	packed, err := readPackedRefs(filepath.Join(gitDir, "packed-refs"))
	if err != nil {
		return nil, err
	}
	in := func(name string) bool {
		for _, dir := range dirs {
			if strings.HasPrefix(name, dir) {
				return true
			}
		}
		return false
	}
	resolve := func(name string) (Hash, bool) {
		for depth := 0; depth <= maxSymDepth; depth++ {
			if h, ok := loose[name]; ok {
				return h, true
			}
			if target, ok := symbolic[name]; ok {
				name = target
				continue
			}
			if h, ok := packed[name]; ok {
				return h, true
			}
			return ZeroHash, false
		}
		return ZeroHash, false
	}
	var out []Ref
	for name, h := range loose {
		out = append(out, Ref{Name: name, Hash: h})
	}
	for name := range symbolic {
		h, ok := resolve(name)
		if !ok {
			return nil, errRefsFallback // dangling: let git decide how to list it
		}
		out = append(out, Ref{Name: name, Hash: h})
	}
	for name, h := range packed {
		if _, ok := loose[name]; ok {
			continue
		}
		if _, ok := symbolic[name]; ok {
			continue
		}
		if in(name) {
			out = append(out, Ref{Name: name, Hash: h})
		}
	}
	return out, nil
}

// readPackedRefs parses packed-refs ("# pack-refs with: ..." header,
// "<hash> <name>" lines, "^<hash>" peeled lines). A missing file is empty.
func readPackedRefs(path string) (map[string]Hash, error) {
	data, err := readBounded(path, maxPackedRefs)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Hash{}, nil
	}
	if errors.Is(err, errTooBig) {
		return nil, errRefsFallback
	}
	if err != nil {
		return nil, err
	}
	out := map[string]Hash{}
	for len(data) > 0 {
		line, rest, ok := bytes.Cut(data, []byte{'\n'})
		if !ok {
			return nil, errRefsFallback
		}
		data = rest
		switch {
		case len(line) == 0:
		case line[0] == '#' || line[0] == '^':
		default:
			hs, name, ok := bytes.Cut(line, []byte{' '})
			if !ok || ValidRefName(string(name)) != nil {
				return nil, errRefsFallback
			}
			h, err := parseHashBytes(hs)
			if err != nil {
				return nil, errRefsFallback
			}
			out[string(name)] = h
		}
	}
	return out, nil
}

// errTooBig is returned by readBounded for a file over its bound.
var errTooBig = errors.New("gitrepo: file too large")

// readBounded reads a whole small file of the repository, refusing one
// larger than max bytes.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, errTooBig
	}
	return data, nil
}
