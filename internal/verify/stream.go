package verify

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
)

// A full verification streams the log instead of holding it: the chain is
// listed (one rev-list, 20 bytes an entry), then read oldest first in
// windows of windowSize entries by one pipelined cat-file. Each window's
// policy step runs in order on the caller's goroutine, its signatures are
// spread over every core, and its replay runs once its signatures are
// known, while the next window is read and checked. What outlives a
// window is small and fixed per entry (entryInfo, each ref's recorded
// states), and kept in spill tables whose older pages are on disk
// (spill.go): memory is bounded by the window and the largest policy, not
// by the commits of the history.

// windowSize is how many entries one window holds. Windows in flight: the
// one being read, the one whose signatures are checked and the one being
// replayed.
var windowSize = defaultWindowSize

// defaultWindowSize is windowSize outside tests.
const defaultWindowSize = 512

// window is a run of consecutive entries, oldest first, with what the
// policy step and the signature checks found for each.
type window struct {
	recs     []*rsl.Record
	policies []*policy.Policy // policy in force at each entry
	// prev is, for the window's policy entries, the policy before the
	// change (its keys may sign the change).
	prev map[uint64]*policy.Policy
	// revoked is the revocation map in force when the signatures were
	// checked (never written once published: see addRevocations).
	revoked map[string]uint64
	signers []string // verified signer of each entry, "" when none
	chunks  [][]byte // the arena chunks holding the entries' commits
	errs    []error
	pending chan struct{} // closed when every signature is checked
	left    int32
}

// entryInfo is what replay needs of an entry once its window is gone: an
// annotation names earlier entries by number and id (their ref and kind
// come from here), and a problem's entry is told apart as a ref entry.
type entryInfo struct {
	id  gitrepo.Hash
	ref uint32 // index into verifier.refNames
	typ uint8
}

const (
	infoRef uint8 = iota
	infoAnnotation
)

// infoRecordSize is an entryInfo in the verifier's infos table: id (20),
// ref (4), type (1).
const infoRecordSize = 25

// addInfo keeps inf as the next entry's; an error is kept in spillErr.
func (v *verifier) addInfo(inf entryInfo) {
	if v.infos == nil {
		v.infos = newSpillTable(infoRecordSize)
	}
	var b [infoRecordSize]byte
	copy(b[:20], inf.id[:])
	binary.BigEndian.PutUint32(b[20:24], inf.ref)
	b[24] = inf.typ
	if _, err := v.infos.add(b[:]); err != nil && v.spillErr == nil {
		v.spillErr = err
	}
}

// infoAt returns what addInfo kept of entry n (base < n).
func (v *verifier) infoAt(n uint64) (entryInfo, error) {
	if v.infos == nil || n <= v.base || n-v.base > uint64(v.infos.n) {
		return entryInfo{}, fmt.Errorf("verify: entry #%d was not read by this verification", n)
	}
	b, err := v.infos.at(int(n - 1 - v.base))
	if err != nil {
		return entryInfo{}, err
	}
	var inf entryInfo
	copy(inf.id[:], b[:20])
	inf.ref = binary.BigEndian.Uint32(b[20:24])
	inf.typ = b[24]
	return inf, nil
}

// stateLog returns the log of recorded states, made on first use.
func (v *verifier) stateLog() *stateLog {
	if v.states == nil {
		v.states = newStateLog()
	}
	return v.states
}

// close removes what the verification kept on disk.
func (v *verifier) close() {
	v.states.close()
	v.infos.close()
}

// policySpan is the policy in force from entry from on, until the next
// span's start (unguardedSince).
type policySpan struct {
	from uint64
	pol  *policy.Policy
}

// errAbort stops the reader when the verification no longer needs it.
var errAbort = errors.New("verify: reading stopped")

// logStream yields the entries to check in windows, oldest first, then
// the error that reading met (nil at the end of a good log). Reading
// errors are the exact errors rsl.ReadLog returns for the same log: a
// verification that meets one reports the log unreadable and nothing else.
type logStream struct {
	windows <-chan batch
	// arena gives the commits' bytes (nil: allocated); release hands a
	// judged window's back.
	arena *commitArena
	done  chan struct{} // closed by the consumer to stop the reader
	err   chan error    // the reader's result, once windows is closed
	total int           // entries the stream yields
	last  *rsl.Record   // set by the consumer: the newest entry seen
}

// batch is one window of entries as read, and the arena chunks holding
// their commits' bytes.
type batch struct {
	recs   []*rsl.Record
	chunks [][]byte
}

// release gives back the bytes of w's commits: w is judged, nothing reads
// its commits any more.
func (s *logStream) release(w *window) {
	if s.arena != nil {
		s.arena.give(w.chunks)
	}
	w.chunks = nil
}

func (s *logStream) stop() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
}

// sliceStream streams records already in memory (a short log, the entries
// after a checkpoint).
func sliceStream(recs []*rsl.Record) *logStream {
	ch := make(chan batch, 1)
	s := &logStream{windows: ch, done: make(chan struct{}), err: make(chan error, 1), total: len(recs)}
	go func() {
		defer close(ch)
		for len(recs) > 0 {
			n := min(len(recs), windowSize)
			select {
			case ch <- batch{recs: recs[:n:n]}:
			case <-s.done:
				s.err <- nil
				return
			}
			recs = recs[n:]
		}
		s.err <- nil
	}()
	return s
}

// bulkReader reads a whole chain fast (*gitrepo.Repo implements it; a
// Repository without it has its log read by rsl.ReadLog).
type bulkReader interface {
	FirstParentsFunc(tip gitrepo.Hash, max int, fn func(gitrepo.Hash) error) error
	ReadCommitsPipelined(hashes []gitrepo.Hash, fn func(*gitrepo.Commit) error) error
}

// intoReader reads commits into bytes the caller recycles
// (*gitrepo.Repo.ReadCommitsInto).
type intoReader interface {
	ReadCommitsInto(hashes []gitrepo.Hash, alloc func(n int) []byte, fn func(*gitrepo.Commit) error) error
}

// inProcessReader lists and reads a chain without git processes where the
// in-process readers can (*gitrepo.Repo): git rev-list and cat-file map
// the pack's whole index and touch most of it over a long chain (112 MiB
// at a million entries, against a verification's own 30-70 MiB).
type inProcessReader interface {
	FirstParentsInProcess(tip gitrepo.Hash, max int, fn func(gitrepo.Hash) error) error
	ReadCommitsInProcess(hashes []gitrepo.Hash, alloc func(n int) []byte, fn func(*gitrepo.Commit) error) error
}

// inProcessChainMin is the log length from which the chain is read
// in-process: below it git's processes are smaller than the verification
// itself, and faster (git's C reads a commit in about half the CPU).
var inProcessChainMin uint64 = 1 << 16

// inProcess reads a chain through an inProcessReader.
type inProcess struct{ r inProcessReader }

func (p inProcess) FirstParentsFunc(tip gitrepo.Hash, max int, fn func(gitrepo.Hash) error) error {
	return p.r.FirstParentsInProcess(tip, max, fn)
}

func (p inProcess) ReadCommitsPipelined(hashes []gitrepo.Hash, fn func(*gitrepo.Commit) error) error {
	return p.r.ReadCommitsInProcess(hashes, nil, fn)
}

func (p inProcess) ReadCommitsInto(hashes []gitrepo.Hash, alloc func(n int) []byte, fn func(*gitrepo.Commit) error) error {
	return p.r.ReadCommitsInProcess(hashes, alloc, fn)
}

// The bytes of the entry commits read (each one's raw object and joined
// signature, a kilobyte and more) are carved from chunks that go back to
// the reader once the window holding them is judged: a full verification
// allocated them afresh for every entry, a third of all it allocated.
// Nothing of a commit's bytes outlives its window: the records kept
// beyond it (the entry replayed last, an error's entry) are read for their
// decoded entry and id only, which are allocated apart.
const (
	arenaChunk = 64 << 10 // bytes of one chunk
	arenaFree  = 64       // chunks kept for reuse at most
	// arenaLarge: a commit larger than this gets its own allocation.
	arenaLarge = arenaChunk / 4
)

// commitArena hands out commit bytes from chunks. alloc runs on the
// reader's goroutine; give (the chunks of a judged window) on the
// consumer's, through the free channel.
type commitArena struct {
	free chan []byte
	cur  []byte   // the chunk being filled (len: bytes handed out)
	used [][]byte // the chunks of the window being read
}

func newCommitArena() *commitArena {
	return &commitArena{free: make(chan []byte, arenaFree)}
}

// alloc returns n bytes of the current chunk, capacity n.
func (a *commitArena) alloc(n int) []byte {
	if n > arenaLarge {
		return make([]byte, n)
	}
	if cap(a.cur)-len(a.cur) < n {
		select {
		case c := <-a.free:
			a.cur = c[:0]
		default:
			a.cur = make([]byte, 0, arenaChunk)
		}
		a.used = append(a.used, a.cur)
	}
	l := len(a.cur)
	a.cur = a.cur[:l+n]
	return a.cur[l : l+n : l+n]
}

// seal ends the window being read: its chunks are returned, and the next
// window starts a chunk of its own.
func (a *commitArena) seal() [][]byte {
	used := a.used
	a.used, a.cur = nil, nil
	return used
}

// give takes back the chunks of a window nothing reads any more.
func (a *commitArena) give(chunks [][]byte) {
	for _, c := range chunks {
		select {
		case a.free <- c:
		default:
			return // enough kept: the rest is garbage
		}
	}
}

// listingChunk is how many listed entries one "git cat-file --batch"
// reads: the listing is handed to it a chunk at a time, from the spill
// table that keeps it (tests make it tiny).
var listingChunk = 1 << 14

// openLog streams the whole log up to tip, read from repo. A log shorter
// than rsl's pipelined threshold, or a repository that cannot read a
// chain in bulk, is read at once with rsl.ReadLog.
func openLog(repo Repository, tip gitrepo.Hash) (*logStream, error) {
	c, err := repo.ReadCommit(tip)
	if err != nil {
		return nil, rsl.ReadEntryError(tip, err)
	}
	br, bulk := repo.(bulkReader)
	e, err := rsl.FromCommit(c)
	if !bulk || err != nil || e.Number < rsl.PipelineMin || e.Number > rsl.MaxEntries {
		recs, err := rsl.ReadLog(repo, tip)
		if err != nil {
			return nil, err
		}
		return sliceStream(recs), nil
	}
	if ip, ok := repo.(inProcessReader); ok && e.Number >= inProcessChainMin {
		br = inProcess{ip}
	}
	listing, err := listChain(br, tip, int(e.Number)+1)
	if err != nil {
		return nil, rsl.Context("list entries", err)
	}
	return chainStream(br, listing, tip, e.Number), nil
}

// listChain lists tip and its first-parent ancestors, newest first, at
// most max of them, into a spill table: 20 bytes an entry, on disk past
// its newest pages. One "git rev-list" lists listingChunk commits and the
// next one starts again from the last commit listed: git's own memory for
// the walk (a commit struct per commit, and the pack windows it maps:
// 200 MB for a million entries in one process) stays that of a chunk.
func listChain(br bulkReader, tip gitrepo.Hash, max int) (*spillTable, error) {
	listing := newSpillTable(len(gitrepo.Hash{}))
	start := tip
	for {
		got := 0
		err := br.FirstParentsFunc(start, listingChunk+1, func(h gitrepo.Hash) error {
			got++
			if listing.n > 0 && got == 1 {
				if h != start {
					return fmt.Errorf("the listing from %s starts at %s", start, h)
				}
				return nil // listed by the chunk before
			}
			if listing.n == max {
				return fmt.Errorf("more than %d commits listed", max)
			}
			start = h
			_, err := listing.add(h[:])
			return err
		})
		if err != nil {
			listing.close()
			return nil, err
		}
		if got <= listingChunk {
			return listing, nil // the chain ends in this chunk
		}
	}
}

// chainStream reads the listed chain (newest first, as listed) oldest
// first and checks what rsl.ReadLog checks: every commit an entry,
// numbers descending by one from n to 1, each entry's parent the next one
// listed, the newest tip. ReadLog stops at the newest fault; reading
// oldest first, the stream keeps reading after a fault and reports the
// newest one, so both name the same entry. The stream owns listing.
func chainStream(br bulkReader, listing *spillTable, tip gitrepo.Hash, n uint64) *logStream {
	ch := make(chan batch, 1)
	total := listing.n
	s := &logStream{windows: ch, done: make(chan struct{}), err: make(chan error, 1), total: total}
	if _, ok := br.(intoReader); ok {
		s.arena = newCommitArena()
	}
	go func() {
		defer close(ch)
		defer listing.close()
		c := &chainCheck{n: n, total: total, cur: make([]*rsl.Record, 0, windowSize), ch: ch, done: s.done, arena: s.arena}
		err := c.readAll(br, listing)
		switch {
		case errors.Is(err, errAbort):
			s.err <- nil
			return
		case err != nil:
			s.err <- rsl.Context("read entries", err)
			return
		case c.fault != nil:
			s.err <- rsl.Context("", c.fault)
			return
		}
		if c.j != total || !c.firstOK || c.prev != tip {
			s.err <- fmt.Errorf("%w: the log does not go back to entry 1", rsl.ErrNotEntry)
			return
		}
		if c.send() != nil {
			s.err <- nil
			return
		}
		s.err <- nil
	}()
	return s
}

// chainCheck is the state of chainStream's reading.
type chainCheck struct {
	n     uint64
	total int
	j     int          // commits read, oldest first
	prev  gitrepo.Hash // the last commit read
	// firstOK: the oldest commit read has no parent and is entry 1 (its
	// bytes are recycled with its window: only the answer is kept).
	firstOK bool
	fault   error
	cur     []*rsl.Record
	ch      chan<- batch
	done    <-chan struct{}
	arena   *commitArena // nil: the commits' bytes are allocated
}

// readAll reads the listing oldest first, listingChunk entries per
// cat-file.
func (c *chainCheck) readAll(br bulkReader, listing *spillTable) error {
	buf := make([]gitrepo.Hash, 0, min(listingChunk, c.total))
	for k := 0; k < c.total; k += len(buf) {
		buf = buf[:0]
		for j := k; j < c.total && len(buf) < listingChunk; j++ {
			b, err := listing.at(c.total - 1 - j)
			if err != nil {
				return err
			}
			buf = append(buf, gitrepo.Hash(b))
		}
		var err error
		if ir, ok := br.(intoReader); ok && c.arena != nil {
			err = ir.ReadCommitsInto(buf, c.arena.alloc, c.commit)
		} else {
			err = br.ReadCommitsPipelined(buf, c.commit)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// commit checks the next commit, oldest first, and queues its record.
func (c *chainCheck) commit(cm *gitrepo.Commit) error {
	i := c.total - 1 - c.j // index in ReadLog's newest-first order
	if c.j == 0 {
		c.firstOK = len(cm.Parents) == 0 && startsAtOne(cm)
	}
	e, err := rsl.FromCommit(cm)
	switch {
	case err != nil:
		c.fault = err
	case e.Number != c.n-uint64(i):
		c.fault = fmt.Errorf("%w %s: number %d where %d was expected (entries removed or reordered)", rsl.ErrNotEntry, cm.Hash, e.Number, c.n-uint64(i))
	case c.j > 0 && (len(cm.Parents) != 1 || cm.Parents[0] != c.prev):
		// ReadLog checks this on cm too, naming cm.
		c.fault = fmt.Errorf("%w %s: its parent is not the entry before it", rsl.ErrNotEntry, cm.Hash)
	}
	c.j++
	c.prev = cm.Hash
	if c.fault == nil {
		c.cur = append(c.cur, &rsl.Record{ID: cm.Hash, Entry: e, Commit: cm})
		if len(c.cur) == windowSize {
			return c.send()
		}
	}
	return nil
}

// send hands the window read so far to the consumer.
func (c *chainCheck) send() error {
	var chunks [][]byte
	if c.arena != nil {
		chunks = c.arena.seal()
	}
	if c.fault != nil || len(c.cur) == 0 {
		c.cur = c.cur[:0]
		return nil
	}
	select {
	case c.ch <- batch{recs: c.cur, chunks: chunks}:
	case <-c.done:
		return errAbort
	}
	c.cur = make([]*rsl.Record, 0, windowSize)
	return nil
}

func startsAtOne(c *gitrepo.Commit) bool {
	e, err := rsl.FromCommit(c)
	return err == nil && e.Number == 1
}
