package gitrepo

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// packedRepo makes a repository whose objects are all in one pack, with
// delta chains (a file edited a little in every commit), annotated tags and
// a large blob.
func packedRepo(t testing.TB, refDeltas bool) (*testutil.Sandbox, string) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 1)
	var text strings.Builder
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&text, "line %d of a file that changes a little in every commit\n", i)
	}
	body := text.String()
	for i := 0; i < 12; i++ {
		body = strings.Replace(body, fmt.Sprintf("line %d ", i*30), fmt.Sprintf("LINE %d (edit %d) ", i*30, i), 1)
		s.Commit(dir, "doc.txt", body, fmt.Sprintf("edit %d", i))
		if i%4 == 0 {
			s.Git(dir, "tag", "-a", "-m", "tag", fmt.Sprintf("v%d", i))
		}
	}
	s.Commit(dir, "big.bin", strings.Repeat("0123456789abcdef", 1<<14), "a 256 KiB file")
	if refDeltas {
		s.Git(dir, "config", "repack.useDeltaBaseOffset", "false")
	}
	s.Git(dir, "repack", "-a", "-d", "-f", "-q", "--window=50", "--depth=20")
	s.Git(dir, "prune-packed")
	return s, dir
}

// allObjects lists every object with its type (cat-file --batch-all-objects).
func allObjects(t testing.TB, s *testutil.Sandbox, dir string) map[Hash]string {
	out := s.Git(dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
	objs := map[Hash]string{}
	for _, line := range strings.Split(out, "\n") {
		name, typ, _ := strings.Cut(line, " ")
		objs[mustParse(t, name)] = typ
	}
	return objs
}

// Every object of a packed repository reads in-process exactly as cat-file
// reads it, through offset and reference deltas.
func TestReadPackedMatchesCatFile(t *testing.T) {
	for _, refDeltas := range []bool{false, true} {
		t.Run(fmt.Sprintf("ref-deltas=%v", refDeltas), func(t *testing.T) {
			s, dir := packedRepo(t, refDeltas)
			if loose, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "??", "*")); len(loose) != 0 {
				t.Fatalf("%d loose objects left", len(loose))
			}
			verifyPack := s.Git(dir, "verify-pack", "-v", mustGlob(t, filepath.Join(dir, ".git", "objects", "pack", "*.idx")))
			if !strings.Contains(verifyPack, "chain length = 2") {
				t.Fatalf("the pack has no delta chains to test:\n%s", verifyPack)
			}
			g := openPlain(t, s, dir)
			objs := allObjects(t, s, dir)
			for h, typ := range objs {
				gotTyp, got, ok := g.fast.ReadPacked(h, 1<<20)
				if !ok {
					t.Fatalf("%s %s not read in-process", typ, h)
				}
				info, want, err := g.batch.read(h, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				if gotTyp != info.typ || !bytes.Equal(got, want) {
					t.Fatalf("%s: in-process %s (%d bytes), cat-file %s (%d bytes)", h, gotTyp, len(got), info.typ, len(want))
				}
				if ok, err := g.HasObject(h); err != nil || !ok {
					t.Fatalf("HasObject(%s) = %v, %v", h, ok, err)
				}
			}
			// Over the limit: not read in-process; ReadObject says too large.
			big := mustParse(t, s.Git(dir, "rev-parse", "HEAD:big.bin"))
			if _, _, ok := g.fast.ReadPacked(big, 1000); ok {
				t.Fatal("read a blob over the size limit")
			}
			// Absent objects are left to git.
			absent := mustParse(t, strings.Repeat("ab", 20))
			if _, _, ok := g.fast.ReadPacked(absent, 1<<20); ok {
				t.Fatal("read an absent object")
			}
			if ok, err := g.HasObject(absent); err != nil || ok {
				t.Fatalf("HasObject(absent) = %v, %v", ok, err)
			}
			if tag := mustParse(t, s.Git(dir, "rev-parse", "v4")); true {
				if c, err := g.PeelToCommit(tag); err != nil || c.String() != s.Git(dir, "rev-parse", "v4^{commit}") {
					t.Fatalf("PeelToCommit(v4) = %s, %v", c, err)
				}
			}
		})
	}
}

func mustGlob(t testing.TB, pattern string) string {
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) != 1 {
		t.Fatalf("glob %s: %v %v", pattern, m, err)
	}
	return m[0]
}

// A damaged pack never yields an object that is not what its name says:
// each read either fails (and git reports the damage) or is exact.
func TestReadPackedDamaged(t *testing.T) {
	s, dir := packedRepo(t, false)
	objs := allObjects(t, s, dir)
	packPath := strings.TrimSuffix(mustGlob(t, filepath.Join(dir, ".git", "objects", "pack", "*.idx")), ".idx") + ".pack"
	orig, err := os.ReadFile(packPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{20, len(orig) / 3, len(orig) / 2, len(orig) - 30} {
		damaged := append([]byte(nil), orig...)
		for i := at; i < at+8 && i < len(damaged); i++ {
			damaged[i] ^= 0x5a
		}
		os.Chmod(packPath, 0o644)
		if err := os.WriteFile(packPath, damaged, 0o644); err != nil {
			t.Fatal(err)
		}
		g := openPlain(t, s, dir)
		failed := 0
		for h := range objs {
			typ, data, ok := g.fast.ReadPacked(h, 1<<20)
			if !ok {
				failed++
				continue
			}
			if hashObject(typ, data) != h {
				t.Fatalf("damage at %d: %s read as other contents", at, h)
			}
		}
		if failed == 0 {
			t.Errorf("damage at %d: every object still read", at)
		}
		g.Close()
	}
}

// FuzzReadPack replaces a real pack's bytes (its index kept): reading its
// objects must never panic, allocate past the limits, or return contents
// that do not hash to the name asked for.
func FuzzReadPack(f *testing.F) {
	s := testutil.NewSandbox(f)
	dir := s.InitRepo("repo", 3)
	s.Commit(dir, "a.txt", strings.Repeat("some text\n", 50), "a")
	s.Commit(dir, "a.txt", strings.Repeat("some text\n", 49)+"changed\n", "b")
	s.Git(dir, "repack", "-a", "-d", "-f", "-q")
	s.Git(dir, "prune-packed")
	idx := mustGlob(f, filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	packPath := strings.TrimSuffix(idx, ".idx") + ".pack"
	orig, err := os.ReadFile(packPath)
	if err != nil {
		f.Fatal(err)
	}
	objs := allObjects(f, s, dir)
	f.Add(orig)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		os.Chmod(packPath, 0o644)
		if err := os.WriteFile(packPath, data, 0o644); err != nil {
			t.Fatal(err)
		}
		g, err := OpenGitDir(filepath.Join(dir, ".git"), dir, inProcessEnv(s))
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		for h := range objs {
			if typ, body, ok := g.fast.ReadPacked(h, 1<<16); ok && hashObject(typ, body) != h {
				t.Fatalf("%s read as other contents", h)
			}
		}
	})
}
