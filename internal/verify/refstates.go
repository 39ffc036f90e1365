package verify

// refStates is one ref's recorded states, oldest first, in chunks of
// stateChunk: a ref recorded a million times grows by one chunk at a time,
// never by copying all its states into a slice a quarter larger (which
// held both copies at once: tens of MiB at the peak of a long log).
type refStates struct {
	chunks [][]recorded
	n      int
}

// stateChunk is how many states one chunk holds (48 bytes each).
const stateChunk = 4096

// newRefStates returns the states holding only r (a checkpoint's).
func newRefStates(r recorded) *refStates {
	s := &refStates{}
	s.push(r)
	return s
}

// len is the number of states; a nil refStates has none.
func (s *refStates) len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// at returns state i, 0 <= i < len.
func (s *refStates) at(i int) recorded { return s.chunks[i/stateChunk][i%stateChunk] }

// last returns the newest state.
func (s *refStates) last() (recorded, bool) {
	if s.len() == 0 {
		return recorded{}, false
	}
	return s.at(s.n - 1), true
}

func (s *refStates) push(r recorded) {
	i := s.n / stateChunk
	if i == len(s.chunks) {
		// Small refs stay small: the first chunk grows as a slice does,
		// the others are allocated whole.
		var c []recorded
		if i > 0 {
			c = make([]recorded, 0, stateChunk)
		}
		s.chunks = append(s.chunks, c)
	}
	s.chunks[i] = append(s.chunks[i], r)
	s.n++
}

// truncate keeps the n oldest states.
func (s *refStates) truncate(n int) {
	s.n = n
	s.chunks = s.chunks[:(n+stateChunk-1)/stateChunk]
	if n%stateChunk != 0 {
		last := &s.chunks[len(s.chunks)-1]
		*last = (*last)[:n%stateChunk]
	}
}
