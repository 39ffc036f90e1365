package verify

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

// A full verification keeps a few facts of every entry it has seen (each
// ref's recorded states, for annotations and rewritten history; each
// entry's id, ref and kind, for annotations): tens of bytes an entry, a
// hundred MiB at a million entries. spillTable keeps them in pages, the
// newest in memory and the older ones in a temporary file that only this
// process knows (removed as soon as it is opened). What is read back must
// be what was written: every page carries an HMAC-SHA256 under a key drawn
// from crypto/rand for this table and never written anywhere, bound to the
// page's number, so a page changed, swapped or truncated on disk is
// refused (errSpill), never used. Recent pages, which replay reads most,
// stay in memory.

// spillPage is how many records one page holds, and spillResident how
// many of the newest pages stay in memory (tests make both tiny, so that
// every scenario reads states back from the file).
var (
	spillPage     = 1024
	spillResident = 4
)

// errSpill says a page read back from the spill file was not the page
// written: the verification stops, it does not judge with it.
var errSpill = errors.New("verify: temporary state file changed or unreadable")

// spillTable is an append-only table of fixed-size records. Not safe for
// concurrent use.
type spillTable struct {
	size  int      // bytes per record
	pages [][]byte // nil once written to the file
	free  []byte   // the last page written out, to fill again
	n     int      // records appended
	spilt int      // pages 0..spilt-1 are in the file
	f     *os.File // nil until the first page is written; or noFile
	key   []byte
	// cache is the last page read back from the file (cacheNo).
	cache   []byte
	cacheNo int
	noFile  bool // no temporary file could be made: every page stays in memory
}

func newSpillTable(size int) *spillTable {
	return &spillTable{size: size, cacheNo: -1}
}

// add appends rec (size bytes) and returns its index.
func (t *spillTable) add(rec []byte) (int, error) {
	p := t.n / spillPage
	if p == len(t.pages) {
		t.pages = append(t.pages, t.newPage())
		if err := t.spillOld(); err != nil {
			return 0, err
		}
	}
	t.pages[p] = append(t.pages[p], rec...)
	t.n++
	return t.n - 1, nil
}

// spillOld writes the full pages beyond the resident ones to the file.
func (t *spillTable) spillOld() error {
	for !t.noFile && len(t.pages)-t.spilt > spillResident {
		if t.f == nil {
			if err := t.open(); err != nil {
				return err
			}
			if t.noFile {
				return nil
			}
		}
		page := t.pages[t.spilt]
		page = append(page, t.mac(t.spilt, page)...)
		if _, err := t.f.WriteAt(page, int64(t.spilt)*t.pageBytes()); err != nil {
			return fmt.Errorf("%w: %v", errSpill, err)
		}
		t.free = page[:0]
		t.pages[t.spilt] = nil
		t.spilt++
	}
	return nil
}

// open makes the temporary file and the key. A file that cannot be made
// only costs memory: the pages stay resident.
func (t *spillTable) open() error {
	t.key = make([]byte, 32)
	if _, err := rand.Read(t.key); err != nil {
		return fmt.Errorf("verify: key for the temporary state file: %w", err)
	}
	f, err := os.CreateTemp("", "git-secure-verify-*")
	if err != nil {
		t.noFile = true
		return nil
	}
	// Unlinked at once where the system allows it (close removes it
	// elsewhere): nothing else finds it by name.
	if os.Remove(f.Name()) == nil {
		t.f = f
		return nil
	}
	t.f = f
	return nil
}

// newPage returns an empty page, reusing the last one written out.
func (t *spillTable) newPage() []byte {
	if p := t.free; p != nil {
		t.free = nil
		return p
	}
	// Room for the authentication code, appended when the page is written.
	return make([]byte, 0, spillPage*t.size+sha256.Size)
}

func (t *spillTable) pageBytes() int64 { return int64(spillPage*t.size + sha256.Size) }

func (t *spillTable) mac(no int, page []byte) []byte {
	m := hmac.New(sha256.New, t.key)
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(no))
	binary.BigEndian.PutUint64(b[8:], uint64(t.size))
	m.Write(b[:])
	m.Write(page)
	return m.Sum(nil)
}

// at returns record i (0 <= i < n): in memory, or read back from the file
// and checked. The slice is valid until the next call.
func (t *spillTable) at(i int) ([]byte, error) {
	if i < 0 || i >= t.n {
		return nil, fmt.Errorf("verify: state record %d out of range (%d)", i, t.n)
	}
	p, off := i/spillPage, (i%spillPage)*t.size
	if page := t.pages[p]; page != nil {
		return page[off : off+t.size], nil
	}
	if t.cacheNo != p {
		if err := t.readPage(p); err != nil {
			return nil, err
		}
	}
	return t.cache[off : off+t.size], nil
}

func (t *spillTable) readPage(p int) error {
	n := spillPage * t.size
	if cap(t.cache) < n+sha256.Size {
		t.cache = make([]byte, n+sha256.Size)
	}
	buf := t.cache[:n+sha256.Size]
	t.cacheNo = -1
	if _, err := t.f.ReadAt(buf, int64(p)*t.pageBytes()); err != nil {
		return fmt.Errorf("%w: page %d: %v", errSpill, p, err)
	}
	if !hmac.Equal(buf[n:], t.mac(p, buf[:n])) {
		return fmt.Errorf("%w: page %d does not carry its authentication code", errSpill, p)
	}
	t.cache, t.cacheNo = buf[:n], p
	return nil
}

// close removes the file.
func (t *spillTable) close() {
	if t == nil || t.f == nil {
		return
	}
	name := t.f.Name()
	t.f.Close()
	_ = os.Remove(name) // already gone where it could be unlinked at once
	t.f = nil
}
