package verify

import (
	"bytes"
	"testing"
)

// The commit arena hands out disjoint byte ranges whose capacity ends
// with them (an append never writes into a neighbour), seals them per
// window, and reuses a window's chunks only once they are given back.
func TestCommitArena(t *testing.T) {
	a := newCommitArena()
	var got [][]byte
	for i := range 200 {
		b := a.alloc(700 + i)
		if len(b) != 700+i || cap(b) != 700+i {
			t.Fatalf("alloc(%d): len %d cap %d", 700+i, len(b), cap(b))
		}
		for j := range b {
			b[j] = byte(i)
		}
		got = append(got, b)
	}
	for i, b := range got {
		if !bytes.Equal(b, bytes.Repeat([]byte{byte(i)}, len(b))) {
			t.Fatalf("allocation %d was overwritten by another", i)
		}
	}
	grown := append(got[0], 'x')
	if &grown[0] == &got[0][0] {
		t.Fatal("appending to an allocation wrote into the chunk")
	}
	first := a.seal()
	if len(first) < 2 {
		t.Fatalf("200 allocations of 700+ bytes in %d chunks", len(first))
	}
	// The next window starts a chunk of its own: nothing of the sealed
	// window is handed out again before it is given back.
	b := a.alloc(10)
	for _, c := range first {
		if &c[:1][0] == &b[0] {
			t.Fatal("a sealed window's chunk was reused before it was given back")
		}
	}
	a.seal()
	a.give(first)
	b = a.alloc(10)
	if &first[0][:1][0] != &b[0] {
		t.Fatal("a chunk given back was not reused")
	}
	if large := a.alloc(arenaLarge + 1); cap(large) != arenaLarge+1 || len(a.used) != 1 {
		t.Fatalf("a large commit was carved from a chunk (cap %d, %d chunks)", cap(large), len(a.used))
	}
	// At most arenaFree chunks are kept.
	var many [][]byte
	for range arenaFree + 10 {
		many = append(many, make([]byte, 0, arenaChunk))
	}
	a.give(many)
	if len(a.free) != arenaFree {
		t.Fatalf("%d chunks kept, want %d", len(a.free), arenaFree)
	}
}
