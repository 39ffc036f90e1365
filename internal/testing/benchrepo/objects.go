package benchrepo

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// ObjectWriter stores git objects without running git. It satisfies the
// Writer interfaces of internal/rsl and internal/policy, so entries and
// policies are encoded by the project's own code. Objects become visible
// to git when Finish returns.
type ObjectWriter interface {
	WriteObject(typ string, data []byte) (gitrepo.Hash, error)
	WriteTree(entries []gitrepo.TreeEntry) (gitrepo.Hash, error)
	// Finish flushes everything; it returns the number of distinct objects
	// and the bytes written.
	Finish() (objects int, size int64, err error)
}

// Writer strategies, for Options.Writer.
const (
	WriterPack  = "pack"  // one pack and its .idx, written in-process
	WriterLoose = "loose" // one zlib file per object under objects/xx/
)

// NewObjectWriter returns a writer of the given kind (WriterPack or
// WriterLoose) for the repository whose git directory is gitDir.
func NewObjectWriter(kind, gitDir string) (ObjectWriter, error) {
	switch kind {
	case WriterPack, "":
		return newPackWriter(gitDir), nil
	case WriterLoose:
		return &looseWriter{objDir: filepath.Join(gitDir, "objects")}, nil
	}
	return nil, fmt.Errorf("benchrepo: unknown object writer %q", kind)
}

// ObjectID is git's SHA-1 object name of data stored as type typ.
func ObjectID(typ string, data []byte) gitrepo.Hash {
	h := sha1.New()
	var hdr [32]byte
	b := append(hdr[:0], typ...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(data)), 10)
	b = append(b, 0)
	h.Write(b)
	h.Write(data)
	var id gitrepo.Hash
	h.Sum(id[:0])
	return id
}

func typeCode(typ string) (byte, error) {
	switch typ {
	case "commit":
		return 1, nil
	case "tree":
		return 2, nil
	case "blob":
		return 3, nil
	case "tag":
		return 4, nil
	}
	return 0, fmt.Errorf("benchrepo: invalid object type %q", typ)
}

// packWriter writes one version 2 pack of undeltified objects and its
// version 2 index at Finish, as git index-pack would for such a pack.
// Objects are compressed by background goroutines (one per CPU) while the
// caller signs the next entry. Duplicate objects are stored once.
type packWriter struct {
	packDir string
	objs    []*packObj
	seen    map[gitrepo.Hash]struct{}
	work    chan *packObj
	wg      sync.WaitGroup
}

type packObj struct {
	id   gitrepo.Hash
	code byte
	data []byte // until compressed
	z    []byte // type and size header, then the zlib stream
	off  uint64
	crc  uint32
}

func newPackWriter(gitDir string) *packWriter {
	p := &packWriter{packDir: filepath.Join(gitDir, "objects", "pack"), seen: map[gitrepo.Hash]struct{}{}}
	p.work = make(chan *packObj, 1024)
	for range runtime.GOMAXPROCS(0) {
		p.wg.Add(1)
		go p.compress(p.work)
	}
	return p
}

func (p *packWriter) compress(work <-chan *packObj) {
	defer p.wg.Done()
	var zbuf bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&zbuf, zlib.BestSpeed)
	for o := range work {
		// Header: type and size, 4 bits then 7 bits per byte, low bits first.
		var hdr [16]byte
		size := uint64(len(o.data))
		n := 0
		c := o.code<<4 | byte(size&0x0f)
		size >>= 4
		for size > 0 {
			hdr[n] = c | 0x80
			n++
			c = byte(size & 0x7f)
			size >>= 7
		}
		hdr[n] = c
		n++
		zbuf.Reset()
		zbuf.Write(hdr[:n])
		zw.Reset(&zbuf)
		_, _ = zw.Write(o.data) // writes to a bytes.Buffer cannot fail
		_ = zw.Close()
		o.z = bytes.Clone(zbuf.Bytes())
		o.crc = crc32.ChecksumIEEE(o.z)
		o.data = nil
	}
}

func (p *packWriter) WriteTree(entries []gitrepo.TreeEntry) (gitrepo.Hash, error) {
	raw, err := gitrepo.EncodeTree(entries)
	if err != nil {
		return gitrepo.ZeroHash, err
	}
	return p.WriteObject("tree", raw)
}

// WriteObject queues data (which the caller must not change afterwards).
func (p *packWriter) WriteObject(typ string, data []byte) (gitrepo.Hash, error) {
	code, err := typeCode(typ)
	if err != nil {
		return gitrepo.ZeroHash, err
	}
	if p.work == nil {
		return gitrepo.ZeroHash, errors.New("benchrepo: pack writer is finished")
	}
	id := ObjectID(typ, data)
	if _, dup := p.seen[id]; dup {
		return id, nil
	}
	p.seen[id] = struct{}{}
	o := &packObj{id: id, code: code, data: data}
	p.objs = append(p.objs, o)
	p.work <- o
	return id, nil
}

func (p *packWriter) Finish() (int, int64, error) {
	if p.work == nil {
		return 0, 0, errors.New("benchrepo: pack writer is finished")
	}
	close(p.work)
	p.work = nil
	p.wg.Wait()
	if len(p.objs) == 0 {
		return 0, 0, nil
	}
	if len(p.objs) > 1<<32-1 {
		return 0, 0, errors.New("benchrepo: too many objects for one pack")
	}
	var head [12]byte
	copy(head[:], "PACK")
	binary.BigEndian.PutUint32(head[4:], 2)
	binary.BigEndian.PutUint32(head[8:], uint32(len(p.objs)))
	h := sha1.New()
	h.Write(head[:])
	off := uint64(len(head))
	for _, o := range p.objs {
		o.off = off
		off += uint64(len(o.z))
		h.Write(o.z)
	}
	sum := h.Sum(nil)
	idx := p.index(sum)
	if err := os.MkdirAll(p.packDir, 0o755); err != nil {
		return 0, 0, err
	}
	base := filepath.Join(p.packDir, "pack-"+hex.EncodeToString(sum))
	f, err := os.OpenFile(base+".pack", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o444)
	if err != nil {
		return 0, 0, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	bw.Write(head[:])
	for _, o := range p.objs {
		bw.Write(o.z)
	}
	bw.Write(sum)
	if err := errors.Join(bw.Flush(), f.Close()); err != nil {
		return 0, 0, err
	}
	// The index last: git only looks at packs that have one.
	if err := os.WriteFile(base+".idx", idx, 0o444); err != nil {
		return 0, 0, err
	}
	n := len(p.objs)
	p.objs, p.seen = nil, nil
	return n, int64(off) + int64(len(sum)+len(idx)), nil
}

// index encodes the version 2 .idx of the pack whose checksum is sum.
func (p *packWriter) index(sum []byte) []byte {
	objs := slices.Clone(p.objs)
	slices.SortFunc(objs, func(a, b *packObj) int { return bytes.Compare(a.id[:], b.id[:]) })
	var b bytes.Buffer
	b.Grow(8 + 256*4 + len(objs)*(20+4+4) + 40)
	b.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	var fan [256]uint32
	for _, o := range objs {
		fan[o.id[0]]++
	}
	var total uint32
	var u4 [4]byte
	var u8 [8]byte
	for i := range fan {
		total += fan[i]
		binary.BigEndian.PutUint32(u4[:], total)
		b.Write(u4[:])
	}
	for _, o := range objs {
		b.Write(o.id[:])
	}
	for _, o := range objs {
		binary.BigEndian.PutUint32(u4[:], o.crc)
		b.Write(u4[:])
	}
	var large []uint64
	for _, o := range objs {
		v := uint32(o.off)
		if o.off >= 1<<31 {
			v = 1<<31 | uint32(len(large))
			large = append(large, o.off)
		}
		binary.BigEndian.PutUint32(u4[:], v)
		b.Write(u4[:])
	}
	for _, off := range large {
		binary.BigEndian.PutUint64(u8[:], off)
		b.Write(u8[:])
	}
	b.Write(sum)
	idxSum := sha1.Sum(b.Bytes())
	b.Write(idxSum[:])
	return b.Bytes()
}

// looseWriter writes each object as objects/xx/<38 hex>, zlib-compressed
// "type size\0data", as git hash-object -w does.
type looseWriter struct {
	objDir string
	made   [256]bool
	n      int
	size   int64
	zbuf   bytes.Buffer
	zw     *zlib.Writer
}

func (l *looseWriter) WriteTree(entries []gitrepo.TreeEntry) (gitrepo.Hash, error) {
	raw, err := gitrepo.EncodeTree(entries)
	if err != nil {
		return gitrepo.ZeroHash, err
	}
	return l.WriteObject("tree", raw)
}

func (l *looseWriter) WriteObject(typ string, data []byte) (gitrepo.Hash, error) {
	if _, err := typeCode(typ); err != nil {
		return gitrepo.ZeroHash, err
	}
	id := ObjectID(typ, data)
	name := id.String()
	dir := filepath.Join(l.objDir, name[:2])
	path := filepath.Join(dir, name[2:])
	if _, err := os.Stat(path); err == nil {
		return id, nil
	}
	if !l.made[id[0]] {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return gitrepo.ZeroHash, err
		}
		l.made[id[0]] = true
	}
	if l.zw == nil {
		l.zw, _ = zlib.NewWriterLevel(&l.zbuf, zlib.BestSpeed)
	}
	l.zbuf.Reset()
	l.zw.Reset(&l.zbuf)
	fmt.Fprintf(l.zw, "%s %d\x00", typ, len(data))
	if _, err := l.zw.Write(data); err != nil {
		return gitrepo.ZeroHash, err
	}
	if err := l.zw.Close(); err != nil {
		return gitrepo.ZeroHash, err
	}
	if err := os.WriteFile(path, l.zbuf.Bytes(), 0o444); err != nil {
		return gitrepo.ZeroHash, err
	}
	l.n++
	l.size += int64(l.zbuf.Len())
	return id, nil
}

func (l *looseWriter) Finish() (int, int64, error) { return l.n, l.size, nil }
