package fastpath

import (
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// The index lookup finds every object of a pack at the offset git's
// verify-pack lists, and no absent name, whatever run of names it reads
// at once (a window of 1 is the plain binary search, 256 the default,
// which reads a test pack's buckets whole).
func TestFindMatchesVerifyPack(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 1)
	for i := range 150 {
		s.Commit(dir, fmt.Sprintf("d%d/f.txt", i%7), fmt.Sprintf("content %d\n", i), fmt.Sprintf("c%d", i))
	}
	s.Git(dir, "repack", "-a", "-d", "-q")
	idx, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	if err != nil || len(idx) != 1 {
		t.Fatalf("glob: %v %v", idx, err)
	}
	want := map[ID]int64{}
	for _, line := range strings.Split(s.Git(dir, "verify-pack", "-v", idx[0]), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || len(f[0]) != 40 {
			continue
		}
		var h ID
		if _, err := hex.Decode(h[:], []byte(f[0])); err != nil {
			t.Fatal(err)
		}
		off, err := strconv.ParseInt(f[4], 10, 64)
		if err != nil {
			t.Fatalf("verify-pack line %q: %v", line, err)
		}
		want[h] = off
	}
	if len(want) < 500 {
		t.Fatalf("only %d objects in the pack", len(want))
	}
	p, err := openPack(idx[0])
	if err != nil {
		t.Fatal(err)
	}
	defer p.idx.Close()
	defer p.data.Close()
	sample, ok := p.readSample()
	if !ok || len(sample) != (len(want)+sampleEvery-1)/sampleEvery {
		t.Fatalf("sample of %d names for %d objects (%v)", len(sample), len(want), ok)
	}
	sampled := func(h ID, window uint32) (int64, bool) { return p.findSampled(h, sample, window) }
	for _, find := range []func(ID, uint32) (int64, bool){p.findIn, sampled} {
		findLike(t, find, want)
	}
}

// findLike checks find against verify-pack's offsets (want).
func findLike(t *testing.T, find func(ID, uint32) (int64, bool), want map[ID]int64) {
	for _, window := range []uint32{1, 2, 3, 7, findWindow} {
		for h, off := range want {
			if got, ok := find(h, window); !ok || got != off {
				t.Fatalf("window %d: find(%x) = %d, %v; verify-pack says %d", window, h, got, ok, off)
			}
			// Names next to a present one, in its bucket: absent.
			for _, d := range []byte{1, 0xff} {
				n := h
				n[19] += d
				if _, present := want[n]; present {
					continue
				}
				if got, ok := find(n, window); ok {
					t.Fatalf("window %d: found absent %x at %d", window, n, got)
				}
			}
		}
	}
}
