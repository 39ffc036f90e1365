package verify

import (
	"encoding/binary"
	"fmt"
)

// refStates is one ref's recorded states (its non-skipped entries, oldest
// first), held as a chain in the verifier's stateLog: only the count, the
// newest state and where it is in the log stay in memory per ref, however
// often the ref was recorded. Annotations read the newest few states back;
// a rewritten history walks further back to find a state still present.
type refStates struct {
	n      int
	head   int // index of the newest state in the stateLog
	newest recorded
}

// len is the number of states; a nil refStates has none.
func (s *refStates) len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// last returns the newest state.
func (s *refStates) last() (recorded, bool) {
	if s.len() == 0 {
		return recorded{}, false
	}
	return s.newest, true
}

// stateLog holds every recorded state of every ref in the order replay
// pushed them, each linked to the state before it of its ref (spill.go:
// older pages are on disk, authenticated).
type stateLog struct {
	t   *spillTable
	buf [stateRecordSize]byte
}

// stateRecordSize: number (8), id (20), target (20), the index of the
// ref's previous state plus one (8; 0 for none).
const stateRecordSize = 56

func newStateLog() *stateLog { return &stateLog{t: newSpillTable(stateRecordSize)} }

// push makes r the newest state of s.
func (l *stateLog) push(s *refStates, r recorded) error {
	b := l.buf[:]
	binary.BigEndian.PutUint64(b[0:8], r.number)
	copy(b[8:28], r.id[:])
	copy(b[28:48], r.target[:])
	prev := uint64(0)
	if s.n > 0 {
		prev = uint64(s.head) + 1
	}
	binary.BigEndian.PutUint64(b[48:56], prev)
	i, err := l.t.add(b)
	if err != nil {
		return err
	}
	s.head, s.newest = i, r
	s.n++
	return nil
}

// get returns the state at index i and the index of the state before it
// of the same ref (-1: none).
func (l *stateLog) get(i int) (recorded, int, error) {
	b, err := l.t.at(i)
	if err != nil {
		return recorded{}, -1, err
	}
	var r recorded
	r.number = binary.BigEndian.Uint64(b[0:8])
	copy(r.id[:], b[8:28])
	copy(r.target[:], b[28:48])
	return r, int(binary.BigEndian.Uint64(b[48:56])) - 1, nil
}

// newestFirst calls fn with s's states from the newest back, until fn
// returns false or the states end.
func (l *stateLog) newestFirst(s *refStates, fn func(r recorded, idx int) bool) error {
	i := s.head
	for k := 0; k < s.len(); k++ {
		if i < 0 {
			return fmt.Errorf("%w: a ref's states end early", errSpill)
		}
		r, prev, err := l.get(i)
		if err != nil {
			return err
		}
		if !fn(r, i) {
			return nil
		}
		i = prev
	}
	return nil
}

// truncate keeps the keep oldest states of s (keep < s.len()).
func (l *stateLog) truncate(s *refStates, keep int) error {
	drop := s.len() - keep
	var found bool
	err := l.newestFirst(s, func(r recorded, idx int) bool {
		if drop > 0 {
			drop--
			return true
		}
		s.head, s.newest, found = idx, r, true
		return false
	})
	if err != nil {
		return err
	}
	s.n = keep
	if keep == 0 {
		s.head, s.newest = -1, recorded{}
	} else if !found {
		return fmt.Errorf("%w: a ref's states end early", errSpill)
	}
	return nil
}

func (l *stateLog) close() {
	if l != nil {
		l.t.close()
	}
}
