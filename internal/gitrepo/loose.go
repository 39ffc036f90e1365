package gitrepo

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxLooseHeader bounds "<type> <size>\x00" at the start of a loose object.
const maxLooseHeader = 32

// looseObjectDirs returns the object directories git would search for
// loose objects, in its order: the object directory (GIT_OBJECT_DIRECTORY,
// the quarantine during a push, or commonDir/objects) and the absolute
// entries of GIT_ALTERNATE_OBJECT_DIRECTORIES (quoted entries are left to
// git). Objects found nowhere here are read through cat-file, which knows
// packs and every other kind of alternate.
func looseObjectDirs(commonDir string, env []string) []string {
	var dirs []string
	if d := envValue(env, "GIT_OBJECT_DIRECTORY"); d != "" {
		if filepath.IsAbs(d) {
			dirs = append(dirs, d)
		}
	} else {
		dirs = append(dirs, filepath.Join(commonDir, "objects"))
	}
	for _, d := range strings.Split(envValue(env, "GIT_ALTERNATE_OBJECT_DIRECTORIES"), ":") {
		if d != "" && filepath.IsAbs(d) && !strings.HasPrefix(d, `"`) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// readLoose reads h from a loose object file, without a process: the
// objects a push just brought (loose in the quarantine) and those
// git-secure just wrote are read on every push. ok is false whenever the
// object is not there as a well-formed loose object whose contents hash to
// h, or is larger than maxSize; the caller then asks cat-file, which also
// reports the error properly.
func (r *Repo) readLoose(h Hash, maxSize int64) (typ string, data []byte, ok bool) {
	hexName := h.String()
	for _, dir := range r.looseDirs {
		f, err := os.Open(filepath.Join(dir, hexName[:2], hexName[2:]))
		if err != nil {
			continue
		}
		in := r.inflater()
		typ, data, ok = in.inflate(f, h, maxSize)
		r.inflaters.Put(in)
		f.Close()
		return typ, data, ok
	}
	return "", nil, false
}

// inflater is a reusable zlib reader with its input buffer: a new one per
// object costs about 45 KB, which adds up over thousands of reads.
type inflater struct {
	br *bufio.Reader
	zr io.ReadCloser
}

// inflater takes a reusable inflater from the pool (Put it back).
func (r *Repo) inflater() *inflater {
	if in, ok := r.inflaters.Get().(*inflater); ok {
		return in
	}
	return &inflater{}
}

// reset points the inflater at the zlib stream src and returns the reader
// of its inflated bytes.
func (in *inflater) reset(src io.Reader) (io.Reader, error) {
	if in.br == nil {
		in.br = bufio.NewReaderSize(src, 4096)
	} else {
		in.br.Reset(src)
	}
	if in.zr == nil {
		zr, err := zlib.NewReader(in.br)
		if err != nil {
			return nil, err
		}
		in.zr = zr
	} else if err := in.zr.(zlib.Resetter).Reset(in.br, nil); err != nil {
		return nil, err
	}
	return in.zr, nil
}

func (in *inflater) inflate(f io.Reader, h Hash, maxSize int64) (string, []byte, bool) {
	zr, err := in.reset(f)
	if err != nil {
		return "", nil, false
	}
	return readLooseBody(zr, h, maxSize)
}

// inflateLoose reads one loose object from f (for tests and fuzzing).
func inflateLoose(f io.Reader, h Hash, maxSize int64) (string, []byte, bool) {
	var in inflater
	return in.inflate(f, h, maxSize)
}

// readLooseBody reads "<type> <size>\x00<contents>" from the inflated
// stream into a buffer of exactly the announced size.
func readLooseBody(zr io.Reader, h Hash, maxSize int64) (string, []byte, bool) {
	var head [maxLooseHeader + 1]byte
	n := 0
	for n < len(head) {
		m, err := zr.Read(head[n:])
		n += m
		if bytes.IndexByte(head[:n], 0) >= 0 || err != nil || m == 0 {
			break
		}
	}
	nul := bytes.IndexByte(head[:n], 0)
	if nul < 0 {
		return "", nil, false
	}
	typ, sizeStr, found := strings.Cut(string(head[:nul]), " ")
	size, err := strconv.ParseInt(sizeStr, 10, 64)
	if !found || err != nil || size < 0 || size > maxSize {
		return "", nil, false
	}
	switch typ {
	case "blob", "tree", "commit", "tag":
	default:
		return "", nil, false
	}
	rest := head[nul+1 : n]
	if int64(len(rest)) > size {
		return "", nil, false
	}
	body := make([]byte, size)
	copy(body, rest)
	if _, err := io.ReadFull(zr, body[len(rest):]); err != nil {
		return "", nil, false
	}
	var extra [1]byte
	if m, err := zr.Read(extra[:]); m != 0 || err != io.EOF {
		return "", nil, false // more than announced, or a bad checksum
	}
	if hashObject(typ, body) != h {
		return "", nil, false // damaged, or not what its name says: let git say so
	}
	return typ, body, true
}
