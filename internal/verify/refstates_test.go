package verify

import "testing"

// TestRefStates checks the chunked states against a plain slice through
// pushes and annotations' truncations on and around chunk boundaries.
func TestRefStates(t *testing.T) {
	var s *refStates
	if s.len() != 0 {
		t.Fatal("nil states not empty")
	}
	if _, ok := s.last(); ok {
		t.Fatal("nil states have a last state")
	}
	s = &refStates{}
	var model []recorded
	push := func(k int) {
		for range k {
			r := recorded{number: uint64(len(model) + 1)}
			r.target[0] = byte(len(model))
			model = append(model, r)
			s.push(r)
		}
	}
	check := func(step string) {
		t.Helper()
		if s.len() != len(model) {
			t.Fatalf("%s: len %d, want %d", step, s.len(), len(model))
		}
		for i, want := range model {
			if got := s.at(i); got != want {
				t.Fatalf("%s: state %d = %+v, want %+v", step, i, got, want)
			}
		}
		last, ok := s.last()
		if ok != (len(model) > 0) || ok && last != model[len(model)-1] {
			t.Fatalf("%s: last = %+v, %v", step, last, ok)
		}
	}
	steps := []struct {
		push, keep int
	}{
		{3, 3}, {2, 1}, {stateChunk, stateChunk}, {1, stateChunk}, {stateChunk + 5, 2*stateChunk + 1},
		{0, 2 * stateChunk}, {7, 0}, {2*stateChunk + 3, stateChunk - 1}, {1, stateChunk + 1},
	}
	for _, st := range steps {
		push(st.push)
		check("push")
		model = model[:min(st.keep, len(model))]
		s.truncate(len(model))
		check("truncate")
		push(2)
		check("push after truncate")
	}
}
