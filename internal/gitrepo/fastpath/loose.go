package fastpath

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/adler32"
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
	if d, _ := LookupEnv(env, "GIT_OBJECT_DIRECTORY"); d != "" {
		if filepath.IsAbs(d) {
			dirs = append(dirs, d)
		}
	} else {
		dirs = append(dirs, filepath.Join(commonDir, "objects"))
	}
	alternates, _ := LookupEnv(env, "GIT_ALTERNATE_OBJECT_DIRECTORIES")
	for _, d := range strings.Split(alternates, ":") {
		if d != "" && filepath.IsAbs(d) && !strings.HasPrefix(d, `"`) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// ReadObject reads h from a pack, else loose (ReadPacked, ReadLoose).
// Packs first, as git looks: most objects a verification reads are
// packed, and a packed object is then found without a failed open per
// object directory first (an index miss costs one read or none).
func (f *Repo) ReadObject(h ID, maxSize int64) (typ string, data []byte, ok bool) {
	return f.ReadObjectInto(h, maxSize, nil)
}

// ReadObjectInto is ReadObject with the object's bytes taken from
// alloc(n), which must return n bytes the caller owns (nil: allocated): a
// reader of many small objects recycles them. Objects over inflateChunk
// are allocated whatever alloc is, so that a header's claimed size costs
// at most that before the data arrives.
func (f *Repo) ReadObjectInto(h ID, maxSize int64, alloc func(n int) []byte) (typ string, data []byte, ok bool) {
	if typ, data, ok = f.readPackedInto(h, maxSize, alloc); ok {
		return typ, data, ok
	}
	return f.readLooseInto(h, maxSize, alloc)
}

// HasObject reports whether h is a loose object or in a pack (without
// checking its contents, as git's existence checks do not).
func (f *Repo) HasObject(h ID) bool {
	if f == nil {
		return false
	}
	if _, _, ok := f.findPacked(h); ok {
		return true
	}
	for _, dir := range f.looseDirs {
		if _, err := os.Stat(loosePath(dir, h)); err == nil {
			return true
		}
	}
	return false
}

// loosePath is where h is stored loose in the object directory dir.
func loosePath(dir string, h ID) string {
	name := hex.EncodeToString(h[:])
	return filepath.Join(dir, name[:2], name[2:])
}

// ReadLoose reads h from a loose object file, without a process: the
// objects a push just brought (loose in the quarantine) and those
// git-secure just wrote are read on every push. ok is false whenever the
// object is not there as a well-formed loose object whose contents hash to
// h, or is larger than maxSize; the caller then asks cat-file, which also
// reports the error properly.
func (f *Repo) ReadLoose(h ID, maxSize int64) (typ string, data []byte, ok bool) {
	return f.readLooseInto(h, maxSize, nil)
}

// readLooseInto is ReadLoose with the bytes from alloc (ReadObjectInto).
func (f *Repo) readLooseInto(h ID, maxSize int64, alloc func(n int) []byte) (typ string, data []byte, ok bool) {
	if f == nil {
		return "", nil, false
	}
	for _, dir := range f.looseDirs {
		file, err := os.Open(loosePath(dir, h))
		if err != nil {
			continue
		}
		in := f.inflater()
		typ, data, ok = in.inflate(file, h, maxSize, alloc)
		f.inflaters.Put(in)
		file.Close()
		return typ, data, ok
	}
	return "", nil, false
}

// inflater is a reusable zlib reader with its input buffer: a new one per
// object costs about 45 KB, which adds up over thousands of reads.
type inflater struct {
	br *bufio.Reader
	zr io.ReadCloser
	// What a chain of thousands of reads would otherwise allocate for
	// each: the pack section read, the SHA-1 state and sum of the name
	// check, FirstParent's bytes.
	sec  sectionReader
	sha  hash.Hash
	sum  []byte
	peek [firstParentPeek]byte
}

// sectionReader is io.SectionReader's Read, kept in the inflater.
type sectionReader struct {
	r        io.ReaderAt
	off, end int64
}

func (s *sectionReader) Read(p []byte) (int, error) {
	if s.off >= s.end {
		return 0, io.EOF
	}
	if max := s.end - s.off; int64(len(p)) > max {
		p = p[:max]
	}
	n, err := s.r.ReadAt(p, s.off)
	s.off += int64(n)
	return n, err
}

// section points the inflater's section reader at r's bytes [off, end).
func (in *inflater) section(r io.ReaderAt, off, end int64) io.Reader {
	in.sec = sectionReader{r: r, off: off, end: end}
	return &in.sec
}

// objectID is ObjectID with the inflater's SHA-1 state.
func (in *inflater) objectID(typ string, data []byte) ID {
	if in.sha == nil {
		in.sha = sha1.New()
	}
	in.sha.Reset()
	var head [32]byte
	b := append(head[:0], typ...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(data)), 10)
	in.sha.Write(append(b, 0))
	in.sha.Write(data)
	in.sum = in.sha.Sum(in.sum[:0])
	return ID(in.sum)
}

// inflater takes a reusable inflater from the pool (Put it back).
func (f *Repo) inflater() *inflater {
	if in, ok := f.inflaters.Get().(*inflater); ok {
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

func (in *inflater) inflate(f io.Reader, h ID, maxSize int64, alloc func(n int) []byte) (string, []byte, bool) {
	zr, err := in.reset(f)
	if err != nil {
		return "", nil, false
	}
	return readLooseBody(in, zr, h, maxSize, alloc)
}

// inflateLoose reads one loose object from f (for tests and fuzzing).
func inflateLoose(f io.Reader, h ID, maxSize int64) (string, []byte, bool) {
	var in inflater
	return in.inflate(f, h, maxSize, nil)
}

// readLooseBody reads "<type> <size>\x00<contents>" from the inflated
// stream into a buffer of exactly the announced size.
func readLooseBody(in *inflater, zr io.Reader, h ID, maxSize int64, alloc func(n int) []byte) (string, []byte, bool) {
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
	var body []byte
	if alloc != nil && size <= inflateChunk {
		body = alloc(int(size))[:size:size]
	} else {
		body = make([]byte, size)
	}
	copy(body, rest)
	if _, err := io.ReadFull(zr, body[len(rest):]); err != nil {
		return "", nil, false
	}
	var extra [1]byte
	if m, err := zr.Read(extra[:]); m != 0 || err != io.EOF {
		return "", nil, false // more than announced, or a bad checksum
	}
	if in.objectID(typ, body) != h {
		return "", nil, false // damaged, or not what its name says: let git say so
	}
	return typ, body, true
}

// WriteLoose writes the object h (typ, data) loose into the repository's
// object directory the way git does: zlib-compressed "<type>
// <size>\x00<data>" in objects/xx/yyyy…, through a temporary file linked
// into place, read-only. It saves the hash-object process per object
// written. false means nothing was written (no object directory of its
// own, the switch off, anything unusual such as permissions or a shared
// repository): git hash-object writes it. Small objects are stored
// uncompressed (storedMax); larger ones at git's default level for loose
// objects (core.looseCompression unset: 1, best speed).
func (f *Repo) WriteLoose(h ID, typ string, data []byte) bool {
	return f != nil && f.objectsDir != "" && writeLoose(f.objectsDir, h, typ, data) == nil
}

// storedMax is the largest object writeLoose stores uncompressed (zlib
// stored blocks, what git writes with core.looseCompression 0): setting up
// a compressor costs 0.2-0.4 ms in a fresh process (its 640 KB of tables),
// more than a log entry's whole write, for a few hundred bytes saved until
// git gc packs it. Larger objects are compressed.
const storedMax = 16 << 10

// zlibStored appends to buf the zlib stream (RFC 1950) of header followed
// by data in stored deflate blocks (RFC 1951, 3.2.4): no compression,
// readable by every zlib reader.
func zlibStored(buf *bytes.Buffer, header, data []byte) {
	buf.Write([]byte{0x78, 0x01}) // deflate, 32 KiB window, fastest; a multiple of 31
	sum := adler32.New()
	sum.Write(header)
	sum.Write(data)
	all := append(header[:len(header):len(header)], data...)
	for {
		n := min(len(all), 0xffff)
		final := byte(0)
		if n == len(all) {
			final = 1
		}
		buf.Write([]byte{final, byte(n), byte(n >> 8), ^byte(n), ^byte(n >> 8)})
		buf.Write(all[:n])
		all = all[n:]
		if final == 1 {
			break
		}
	}
	buf.Write(sum.Sum(nil)) // big-endian, as zlib wants
}

func writeLoose(objectsDir string, h ID, typ string, data []byte) error {
	final := loosePath(objectsDir, h)
	dir := filepath.Dir(final)
	if _, err := os.Stat(final); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var buf bytes.Buffer
	if len(data) <= storedMax {
		zlibStored(&buf, fmt.Appendf(nil, "%s %d\x00", typ, len(data)), data)
	} else {
		zw, err := zlib.NewWriterLevel(&buf, zlib.BestSpeed)
		if err != nil {
			return err
		}
		fmt.Fprintf(zw, "%s %d\x00", typ, len(data))
		zw.Write(data) // a bytes.Buffer does not fail
		if err := zw.Close(); err != nil {
			return err
		}
	}
	tmp, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o444); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), final); err != nil && !os.IsExist(err) {
		// Filesystems without hard links: rename (replacing a racing
		// writer's identical object is harmless).
		return os.Rename(tmp.Name(), final)
	}
	return nil
}
