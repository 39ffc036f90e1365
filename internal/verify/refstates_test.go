package verify

import (
	"errors"
	"testing"
)

// TestRefStates checks two refs' states, interleaved in one stateLog whose
// older pages are on disk, against plain slices through pushes and
// annotations' truncations on and around page boundaries.
func TestRefStates(t *testing.T) {
	setSpill(t, 4, 2)
	var s *refStates
	if s.len() != 0 {
		t.Fatal("nil states not empty")
	}
	if _, ok := s.last(); ok {
		t.Fatal("nil states have a last state")
	}
	l := newStateLog()
	defer l.close()
	refs := []*refStates{{}, {}}
	models := make([][]recorded, 2)
	num := uint64(0)
	push := func(k int) {
		for range k {
			for j, s := range refs {
				num++
				r := recorded{number: num}
				r.target[0], r.id[0] = byte(num), byte(j)
				models[j] = append(models[j], r)
				if err := l.push(s, r); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	check := func(step string) {
		t.Helper()
		for j, s := range refs {
			model := models[j]
			if s.len() != len(model) {
				t.Fatalf("%s: ref %d: len %d, want %d", step, j, s.len(), len(model))
			}
			k := len(model)
			err := l.newestFirst(s, func(r recorded, _ int) bool {
				k--
				if r != model[k] {
					t.Fatalf("%s: ref %d: state %d = %+v, want %+v", step, j, k, r, model[k])
				}
				return true
			})
			if err != nil || k != 0 {
				t.Fatalf("%s: ref %d: walk stopped at %d: %v", step, j, k, err)
			}
			last, ok := s.last()
			if ok != (len(model) > 0) || ok && last != model[len(model)-1] {
				t.Fatalf("%s: ref %d: last = %+v, %v", step, j, last, ok)
			}
		}
	}
	steps := []struct{ push, keep int }{
		{3, 3}, {2, 1}, {9, 9}, {1, 4}, {13, 21}, {0, 8}, {7, 0}, {11, 3}, {1, 5},
	}
	for _, st := range steps {
		push(st.push)
		check("push")
		for j, s := range refs {
			keep := min(st.keep+j, len(models[j]))
			models[j] = models[j][:keep]
			if keep < s.len() {
				if err := l.truncate(s, keep); err != nil {
					t.Fatal(err)
				}
			}
		}
		check("truncate")
		push(2)
		check("push after truncate")
	}
	if l.t.f == nil || l.t.spilt == 0 {
		t.Fatal("no page was written to the file: the test reads nothing back")
	}
}

// TestSpillTampered changes a page of the spill file: reading it back
// fails with errSpill, never returns the changed bytes; a page moved to
// another place fails too.
func TestSpillTampered(t *testing.T) {
	setSpill(t, 2, 1)
	for _, tc := range []struct {
		name   string
		tamper func(tb *spillTable)
	}{
		{"flipped byte", func(tb *spillTable) {
			b := make([]byte, 1)
			tb.f.ReadAt(b, 3)
			b[0] ^= 1
			tb.f.WriteAt(b, 3)
		}},
		{"pages swapped", func(tb *spillTable) {
			n := tb.pageBytes()
			p0, p1 := make([]byte, n), make([]byte, n)
			tb.f.ReadAt(p0, 0)
			tb.f.ReadAt(p1, n)
			tb.f.WriteAt(p1, 0)
			tb.f.WriteAt(p0, n)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := newSpillTable(8)
			defer tb.close()
			for i := range 10 {
				if _, err := tb.add([]byte{byte(i), 1, 2, 3, 4, 5, 6, 7}); err != nil {
					t.Fatal(err)
				}
			}
			if b, err := tb.at(0); err != nil || b[0] != 0 {
				t.Fatalf("before tampering: %v %v", b, err)
			}
			tb.cacheNo = -1
			tc.tamper(tb)
			b, err := tb.at(0)
			if !errors.Is(err, errSpill) {
				t.Fatalf("tampered page read back as %v, err %v; want errSpill", b, err)
			}
			if got := err.Error(); got != "verify: temporary state file changed or unreadable: page 0 does not carry its authentication code" {
				t.Fatalf("error %q", got)
			}
		})
	}
}

// setSpill sets the spill table's page size and resident pages for one
// test.
func setSpill(t *testing.T, page, resident int) {
	p, r := spillPage, spillResident
	spillPage, spillResident = page, resident
	t.Cleanup(func() { spillPage, spillResident = p, r })
}
