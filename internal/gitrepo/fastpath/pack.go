package fastpath

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Packed objects are read in-process too, so that a hook or the remote
// helper reading a few objects of a repository whose history git has
// packed starts no cat-file process (a few milliseconds, and a core's
// worth of work, on every push). The reader knows pack index version 2 and
// pack versions 2 and 3 with both kinds of deltas; it checks every object
// it returns against its name, like the loose reader, and answers "not
// here" for anything unusual (another index version, a long delta chain, a
// large base, a damaged entry), after which cat-file reads the object and
// reports any error properly.

const (
	idxHeaderSize = 8 + 256*4 // magic, version, fanout table
	// maxDeltaDepth bounds the delta chains followed in-process (git's
	// default depth for repack and gc is 50).
	maxDeltaDepth = 64
	// maxDeltaBase bounds an object a delta is applied to: a small object
	// may be stored as a delta of a large one.
	maxDeltaBase = 32 << 20
	// maxPacks bounds how many packs of one object directory are opened;
	// a repository with more is left to cat-file.
	maxPacks = 256
)

// Pack object types.
const (
	packCommit   = 1
	packTree     = 2
	packBlob     = 3
	packTag      = 4
	packOfsDelta = 6
	packRefDelta = 7
)

var packTypeNames = [...]string{packCommit: "commit", packTree: "tree", packBlob: "blob", packTag: "tag"}

// packSet is the packs of the repository's object directories, opened on
// the first object read or looked for.
type packSet struct {
	once  sync.Once
	packs []*pack
}

type pack struct {
	idx      *os.File
	fanout   [256]uint32
	n        uint32
	idxSize  int64
	data     *os.File
	dataSize int64
	// finds counts lookups until the sample is made (sampleAfter);
	// sample is every sampleEvery-th name's first 8 bytes, once made.
	finds      atomic.Int64
	sampleOnce sync.Once
	sample     atomic.Pointer[[]uint64]
}

// open lists the packs of dirs (objects directories) in order.
func (s *packSet) open(dirs []string) []*pack {
	s.once.Do(func() {
		for _, dir := range dirs {
			names, err := filepath.Glob(filepath.Join(dir, "pack", "pack-*.idx"))
			if err != nil || len(names) > maxPacks {
				continue
			}
			sort.Strings(names)
			for _, name := range names {
				if p, err := openPack(name); err == nil {
					s.packs = append(s.packs, p)
				}
			}
		}
	})
	return s.packs
}

// close closes the pack files (after Close: no reads are started).
func (s *packSet) close() {
	s.once.Do(func() {}) // none opened later
	for _, p := range s.packs {
		p.idx.Close()
		p.data.Close()
	}
}

var errBadPack = errors.New("fastpath: unusable pack")

// openPack opens an index and its pack, checking their headers and that
// the index is as long as its object count says.
func openPack(idxPath string) (*pack, error) {
	idx, err := os.Open(idxPath)
	if err != nil {
		return nil, err
	}
	p := &pack{idx: idx}
	ok := false
	defer func() {
		if !ok {
			idx.Close()
			if p.data != nil {
				p.data.Close()
			}
		}
	}()
	var head [idxHeaderSize]byte
	if _, err := io.ReadFull(idx, head[:]); err != nil {
		return nil, errBadPack
	}
	if !bytes.Equal(head[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return nil, errBadPack
	}
	prev := uint32(0)
	for i := range p.fanout {
		v := binary.BigEndian.Uint32(head[8+4*i:])
		if v < prev {
			return nil, errBadPack
		}
		p.fanout[i], prev = v, v
	}
	p.n = p.fanout[255]
	st, err := idx.Stat()
	if err != nil {
		return nil, err
	}
	p.idxSize = st.Size()
	if p.idxSize < idxHeaderSize+28*int64(p.n)+40 {
		return nil, errBadPack
	}
	p.data, err = os.Open(strings.TrimSuffix(idxPath, ".idx") + ".pack")
	if err != nil {
		return nil, err
	}
	var ph [12]byte
	if _, err := io.ReadFull(p.data, ph[:]); err != nil {
		return nil, errBadPack
	}
	if v := binary.BigEndian.Uint32(ph[4:]); string(ph[:4]) != "PACK" || (v != 2 && v != 3) || binary.BigEndian.Uint32(ph[8:]) != p.n {
		return nil, errBadPack
	}
	if st, err = p.data.Stat(); err != nil {
		return nil, err
	}
	p.dataSize = st.Size()
	ok = true
	return p, nil
}

// findWindow: a run of at most this many sorted names is read from the
// index in one pread and searched in memory (5 KiB); a longer run is first
// narrowed by binary search, one 20-byte read per step. A verification
// reads tens of thousands of small objects: one read per step cost a
// system call per name compared (nine per object in a 45 000-object pack).
const findWindow = 256

// A pack of millions of objects (a log of a million entries is 4 million)
// has fanout buckets of 16 000 names: find narrows one by six reads of a
// name before the run it reads whole, and a verification listing and
// reading a million commits spent a third of its time in those system
// calls. A pack asked for many names (sampleAfter) keeps every
// sampleEvery-th name's first 8 bytes (0.5 MiB for 4 million objects,
// read once from the index in 64 KiB reads): a lookup narrows to a run of
// at most sampleEvery names in memory, and reads that run and the offset.
// Mapping the index instead, as git does, keeps what is touched of it
// resident: 117 MB for a million entries.
const (
	sampleEvery = 64
	sampleMin   = 1 << 16 // smaller packs: a bucket is a run or two
	sampleAfter = 4096
)

// find returns the offset of h in the pack, by binary search of the
// index's sorted names within h's fanout bucket.
func (p *pack) find(h ID) (int64, bool) {
	if s := p.sampled(); s != nil {
		return p.findSampled(h, *s, findWindow)
	}
	return p.findIn(h, findWindow)
}

// sampled returns the sample, making it once the pack was asked for
// sampleAfter names (nil: not made, or the pack is small).
func (p *pack) sampled() *[]uint64 {
	if s := p.sample.Load(); s != nil {
		return s
	}
	if p.n < sampleMin || p.finds.Add(1) < sampleAfter {
		return nil
	}
	p.sampleOnce.Do(func() {
		if s, ok := p.readSample(); ok {
			p.sample.Store(&s)
		}
	})
	return p.sample.Load()
}

// readSample reads the first 8 bytes of names 0, sampleEvery, 2 *
// sampleEvery... of the index.
func (p *pack) readSample() ([]uint64, bool) {
	const name = 20
	const stride = name * sampleEvery
	s := make([]uint64, 0, (p.n+sampleEvery-1)/sampleEvery)
	buf := make([]byte, (64<<10)/stride*stride)
	for i := uint32(0); i < p.n; {
		off := idxHeaderSize + name*int64(i)
		n := min(int64(len(buf)), name*int64(p.n-i))
		if _, err := p.idx.ReadAt(buf[:n], off); err != nil {
			return nil, false
		}
		for j := int64(0); j < n; j += stride {
			s = append(s, binary.BigEndian.Uint64(buf[j:j+8]))
		}
		i += uint32(n / name)
		if n%stride != 0 {
			break // the last, partial stride was sampled
		}
	}
	return s, true
}

// findSampled is find narrowing h's bucket with the sample s first: the
// name at index k * sampleEvery has first 8 bytes s[k], so h lies after
// every sampled name below it and before every one above it. Names
// sharing h's first 8 bytes widen the run; findRange narrows it as
// before.
func (p *pack) findSampled(h ID, s []uint64, window uint32) (int64, bool) {
	lo, hi, ok := p.bucket(h)
	if !ok {
		return 0, false
	}
	key := binary.BigEndian.Uint64(h[:8])
	if k := sort.Search(len(s), func(k int) bool { return s[k] >= key }); k > 0 {
		lo = max(lo, uint32(k-1)*sampleEvery+1)
	}
	if k := sort.Search(len(s), func(k int) bool { return s[k] > key }); k < len(s) {
		hi = min(hi, uint32(k)*sampleEvery)
	}
	if lo >= hi {
		return 0, false
	}
	return p.findRange(h, lo, hi, window)
}

// bucket returns h's fanout bucket [lo, hi).
func (p *pack) bucket(h ID) (lo, hi uint32, ok bool) {
	if h[0] > 0 {
		lo = p.fanout[h[0]-1]
	}
	hi = p.fanout[h[0]]
	return lo, hi, lo <= hi && hi <= p.n
}

// findIn is find reading runs of at most window names at once (tests try
// small windows: the narrowing steps need buckets larger than a test pack
// holds).
func (p *pack) findIn(h ID, window uint32) (int64, bool) {
	lo, hi, ok := p.bucket(h)
	if !ok {
		return 0, false
	}
	return p.findRange(h, lo, hi, window)
}

// findRange looks for h among names [lo, hi) of the index.
func (p *pack) findRange(h ID, lo, hi, window uint32) (int64, bool) {
	window = min(max(window, 1), findWindow)
	var name [20]byte
	for hi-lo > window {
		mid := lo + (hi-lo)/2
		if _, err := p.idx.ReadAt(name[:], idxHeaderSize+20*int64(mid)); err != nil {
			return 0, false
		}
		switch c := bytes.Compare(name[:], h[:]); {
		case c == 0:
			return p.offset(mid)
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	var buf [20 * findWindow]byte
	names := buf[:20*(hi-lo)]
	if _, err := p.idx.ReadAt(names, idxHeaderSize+20*int64(lo)); err != nil {
		return 0, false
	}
	for a, b := 0, int(hi-lo); a < b; {
		mid := a + (b-a)/2
		switch c := bytes.Compare(names[20*mid:20*mid+20], h[:]); {
		case c == 0:
			return p.offset(lo + uint32(mid))
		case c < 0:
			a = mid + 1
		default:
			b = mid
		}
	}
	return 0, false
}

// offset reads object i's pack offset (4 bytes, or an index into the
// table of 8-byte offsets when the high bit is set).
func (p *pack) offset(i uint32) (int64, bool) {
	var b [8]byte
	base := idxHeaderSize + 24*int64(p.n)
	if _, err := p.idx.ReadAt(b[:4], base+4*int64(i)); err != nil {
		return 0, false
	}
	off := int64(binary.BigEndian.Uint32(b[:4]))
	if off&0x80000000 != 0 {
		pos := base + 4*int64(p.n) + 8*(off&0x7fffffff)
		if pos+8 > p.idxSize-40 {
			return 0, false
		}
		if _, err := p.idx.ReadAt(b[:], pos); err != nil {
			return 0, false
		}
		u := binary.BigEndian.Uint64(b[:])
		if u > 1<<62 {
			return 0, false
		}
		off = int64(u)
	}
	if off < 12 || off >= p.dataSize-20 {
		return 0, false
	}
	return off, true
}

// ReadPacked reads h from the repository's packs; ok is false when it is
// not found there, or not read exactly (see the comment above).
func (f *Repo) ReadPacked(h ID, maxSize int64) (typ string, data []byte, ok bool) {
	return f.readPackedInto(h, maxSize, nil)
}

// readPackedInto is ReadPacked with the object's bytes taken from alloc
// (nil: allocated; see ReadObjectInto).
func (f *Repo) readPackedInto(h ID, maxSize int64, alloc func(n int) []byte) (typ string, data []byte, ok bool) {
	if f == nil {
		return "", nil, false
	}
	p, off, found := f.findPacked(h)
	if !found {
		return "", nil, false
	}
	t, body, err := f.unpack(p, off, maxSize, 0, alloc)
	if err != nil {
		return "", nil, false
	}
	in := f.inflater()
	id := in.objectID(packTypeNames[t], body)
	f.inflaters.Put(in)
	if id != h {
		return "", nil, false
	}
	return packTypeNames[t], body, true
}

// unpack reads the object at off, applying deltas; size limits and depth
// are checked before anything large is allocated. alloc (nil: make) gives
// the bytes of the object returned, not those of its delta bases.
func (f *Repo) unpack(p *pack, off int64, maxSize int64, depth int, alloc func(n int) []byte) (int, []byte, error) {
	var head [32]byte
	n, err := p.data.ReadAt(head[:], off)
	if n == 0 {
		return 0, nil, err
	}
	typ, size, used, err := parsePackHeader(head[:n])
	if err != nil {
		return 0, nil, err
	}
	pos := off + int64(used)
	switch typ {
	case packCommit, packTree, packBlob, packTag:
		if size > maxSize {
			return 0, nil, errBadPack
		}
		data, err := f.inflateAt(p, pos, size, alloc)
		return typ, data, err
	case packOfsDelta, packRefDelta:
	default:
		return 0, nil, errBadPack
	}
	if depth >= maxDeltaDepth || size > maxDeltaBase {
		return 0, nil, errBadPack
	}
	var baseType int
	var base []byte
	if typ == packOfsDelta {
		dist, m, err := parseOfsDistance(head[used:n])
		if err != nil || dist >= off {
			return 0, nil, errBadPack
		}
		pos += int64(m)
		if baseType, base, err = f.unpack(p, off-dist, maxDeltaBase, depth+1, nil); err != nil {
			return 0, nil, err
		}
	} else {
		var bh ID
		if _, err := p.data.ReadAt(bh[:], pos); err != nil {
			return 0, nil, errBadPack
		}
		pos += int64(len(bh))
		bp, boff, found := f.findPacked(bh)
		if !found {
			return 0, nil, errBadPack // a thin pack's base: leave it to git
		}
		if baseType, base, err = f.unpack(bp, boff, maxDeltaBase, depth+1, nil); err != nil {
			return 0, nil, err
		}
	}
	delta, err := f.inflateAt(p, pos, size, nil)
	if err != nil {
		return 0, nil, err
	}
	out, err := applyDelta(base, delta, maxSize)
	if err != nil {
		return 0, nil, err
	}
	if alloc != nil && len(out) <= inflateChunk {
		out = append(alloc(len(out))[:0], out...)
	}
	return baseType, out, nil
}

// findPacked finds h in any pack.
func (f *Repo) findPacked(h ID) (*pack, int64, bool) {
	for _, p := range f.packs.open(f.looseDirs) {
		if off, ok := p.find(h); ok {
			return p, off, true
		}
	}
	return nil, 0, false
}

// inflateChunk bounds what inflateAt allocates before data arrives.
const inflateChunk = 64 << 10

// inflateAt inflates exactly size bytes from the zlib stream at pos, into
// alloc(size) when alloc is set and size is at most inflateChunk.
func (f *Repo) inflateAt(p *pack, pos, size int64, alloc func(n int) []byte) ([]byte, error) {
	in := f.inflater()
	defer f.inflaters.Put(in)
	zr, err := in.reset(in.section(p.data, pos, p.dataSize-20))
	if err != nil {
		return nil, errBadPack
	}
	// Allocated from the header's size only up to inflateChunk, then grown
	// as data arrives: a damaged or hostile header costs at most
	// inflateChunk more than the data it comes with, and the small objects
	// a verification reads by the thousand are read into one exact buffer.
	var body []byte
	if alloc != nil && size <= inflateChunk {
		body = alloc(int(size))[:0:size]
	} else {
		body = make([]byte, 0, min(size, inflateChunk))
	}
	for int64(len(body)) < size {
		if len(body) == cap(body) {
			body = slices.Grow(body, int(min(size-int64(len(body)), int64(cap(body)))))
		}
		m, err := zr.Read(body[len(body):min(int64(cap(body)), size)])
		body = body[:len(body)+m]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, errBadPack
		}
	}
	if int64(len(body)) != size {
		return nil, errBadPack
	}
	var extra [1]byte
	if m, err := zr.Read(extra[:]); m != 0 || err != io.EOF {
		return nil, errBadPack // more than announced, or a bad checksum
	}
	return body, nil
}

// parsePackHeader parses an entry's type and size: 3 type bits and 4 size
// bits, then 7 size bits per byte while the high bit is set.
func parsePackHeader(b []byte) (typ int, size int64, used int, err error) {
	if len(b) == 0 {
		return 0, 0, 0, errBadPack
	}
	c := b[0]
	typ = int(c>>4) & 7
	size = int64(c & 15)
	shift := uint(4)
	used = 1
	for c&0x80 != 0 {
		if used >= len(b) || shift > 56 {
			return 0, 0, 0, errBadPack
		}
		c = b[used]
		used++
		size |= int64(c&0x7f) << shift
		shift += 7
	}
	return typ, size, used, nil
}

// parseOfsDistance parses an OFS_DELTA's distance back to its base (git's
// offset encoding: each continuation adds one before shifting).
func parseOfsDistance(b []byte) (int64, int, error) {
	if len(b) == 0 {
		return 0, 0, errBadPack
	}
	c := b[0]
	dist := int64(c & 0x7f)
	used := 1
	for c&0x80 != 0 {
		if used >= len(b) || dist > 1<<48 {
			return 0, 0, errBadPack
		}
		c = b[used]
		used++
		dist = ((dist + 1) << 7) | int64(c&0x7f)
	}
	return dist, used, nil
}

// deltaVarint reads a delta header size (7 bits per byte, little end
// first).
func deltaVarint(d []byte) (int64, int, error) {
	var v int64
	shift := uint(0)
	for i, c := range d {
		if shift > 56 {
			break
		}
		v |= int64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, i + 1, nil
		}
		shift += 7
	}
	return 0, 0, errBadPack
}

// applyDelta applies a git delta to base: its header names the base's size
// and the result's, then copy (from base) and insert (literal)
// instructions. Every bound is checked; the result must be exactly the
// announced size, at most maxSize.
func applyDelta(base, delta []byte, maxSize int64) ([]byte, error) {
	srcSize, n, err := deltaVarint(delta)
	if err != nil || srcSize != int64(len(base)) {
		return nil, errBadPack
	}
	delta = delta[n:]
	dstSize, n, err := deltaVarint(delta)
	if err != nil || dstSize > maxSize {
		return nil, errBadPack
	}
	delta = delta[n:]
	out := make([]byte, 0, dstSize)
	for len(delta) > 0 {
		c := delta[0]
		delta = delta[1:]
		switch {
		case c&0x80 != 0:
			var off, size int64
			for i := uint(0); i < 7; i++ {
				if c&(1<<i) == 0 {
					continue
				}
				if len(delta) == 0 {
					return nil, errBadPack
				}
				if i < 4 {
					off |= int64(delta[0]) << (8 * i)
				} else {
					size |= int64(delta[0]) << (8 * (i - 4))
				}
				delta = delta[1:]
			}
			if size == 0 {
				size = 0x10000
			}
			if off+size > int64(len(base)) || int64(len(out))+size > dstSize {
				return nil, errBadPack
			}
			out = append(out, base[off:off+size]...)
		case c != 0:
			if int(c) > len(delta) || int64(len(out))+int64(c) > dstSize {
				return nil, errBadPack
			}
			out = append(out, delta[:c]...)
			delta = delta[c:]
		default:
			return nil, errBadPack // reserved instruction
		}
	}
	if int64(len(out)) != dstSize {
		return nil, errBadPack
	}
	return out, nil
}
