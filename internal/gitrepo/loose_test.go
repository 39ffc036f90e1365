package gitrepo

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Loose objects read in-process are exactly what cat-file returns; anything
// else (packed, too large, damaged, elsewhere) goes to cat-file.
func TestReadLoose(t *testing.T) {
	s, dir, r := newInProcessRepo(t, 3)
	head := mustParse(t, s.Git(dir, "rev-parse", "HEAD"))
	tree := mustParse(t, s.Git(dir, "rev-parse", "HEAD^{tree}"))
	big, err := r.WriteObject("blob", []byte(strings.Repeat("y", 5000)))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []Hash{head, tree, big} {
		typ, data, ok := r.fast.ReadLoose(h, 1<<20)
		if !ok {
			t.Fatalf("%s: not read as a loose object", h)
		}
		fast := r.fast
		r.fast = nil // through cat-file
		wantTyp, want, err := r.ReadObject(h, 1<<20)
		r.fast = fast
		if err != nil || typ != wantTyp || string(data) != string(want) {
			t.Fatalf("%s: loose %s %d bytes, cat-file %s %d bytes (%v)", h, typ, len(data), wantTyp, len(want), err)
		}
	}
	if _, _, ok := r.fast.ReadLoose(big, 100); ok {
		t.Error("an object over the size limit was read")
	}
	if _, _, err := r.ReadObject(big, 100); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadObject over the limit: %v, want ErrTooLarge from cat-file", err)
	}

	// A loose file whose contents are another object: refused, and git
	// decides.
	other, err := r.WriteObject("blob", []byte("other\n"))
	if err != nil {
		t.Fatal(err)
	}
	objects := filepath.Join(dir, ".git", "objects")
	fake := mustParse(t, "2222222222222222222222222222222222222222")
	src, _ := os.ReadFile(filepath.Join(objects, other.String()[:2], other.String()[2:]))
	if err := os.MkdirAll(filepath.Join(objects, "22"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(objects, "22", fake.String()[2:]), src, 0o444); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := r.fast.ReadLoose(fake, 1<<20); ok {
		t.Error("a loose file whose contents hash to another name was accepted")
	}

	// Packed objects are cat-file's.
	s.Git(dir, "gc", "-q", "--prune=now")
	if _, _, ok := r.fast.ReadLoose(head, 1<<20); ok {
		t.Error("a packed object was read as loose")
	}
	if _, err := r.ReadCommit(head); err != nil {
		t.Fatalf("ReadCommit of a packed commit: %v", err)
	}

	// The object directory the environment names (a push's quarantine).
	quarantine := t.TempDir()
	q, err := OpenWithEnv(dir, append(inProcessEnv(s), "GIT_OBJECT_DIRECTORY="+quarantine, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+objects))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if _, err := q.WriteObject("blob", []byte("pushed\n")); err != nil { // git hash-object, into the quarantine
		t.Fatal(err)
	}
	if typ, data, ok := q.fast.ReadLoose(hashObject("blob", []byte("pushed\n")), 100); !ok || typ != "blob" || string(data) != "pushed\n" {
		t.Fatalf("object in GIT_OBJECT_DIRECTORY: %v %q %v", typ, data, ok)
	}
}

// Objects written in-process are what git writes: git reads each back
// with the same type and contents, finds it under the same name, and
// fsck --strict accepts the repository; with the switch, git hash-object
// writes them, to the same names.
func TestWriteLooseLikeGit(t *testing.T) {
	s, dir, fast := newInProcessRepo(t, 1)
	slow, err := OpenWithEnv(dir, append(inProcessEnv(s), EnvNoFastPath+"=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	blob := []byte("written in-process\n")
	objects := []struct {
		typ  string
		data []byte
	}{
		{"blob", blob},
		{"blob", nil},
		{"blob", bytes.Repeat([]byte("large "), 50000)},
		// Stored uncompressed up to 16 KiB, compressed beyond.
		{"blob", bytes.Repeat([]byte("s"), 16<<10)},
		{"blob", bytes.Repeat([]byte("c"), 16<<10+1)},
		{"tree", mustEncodeTree(t, TreeEntry{Mode: ModeFile, Name: "a.txt", Hash: hashObject("blob", blob)})},
	}
	for _, o := range objects {
		h := hashObject(o.typ, o.data)
		if !fast.fast.WriteLoose(h, o.typ, o.data) || !fileExists(filepath.Join(dir, ".git", "objects", h.String()[:2], h.String()[2:])) {
			t.Fatalf("%s %s was not written loose in-process", o.typ, h)
		}
		if again, err := fast.WriteObject(o.typ, o.data); err != nil || again != h {
			t.Fatalf("WriteObject: %s, %v; want %s", again, err, h)
		}
		if got := s.Git(dir, "cat-file", "-t", h.String()); got != o.typ {
			t.Fatalf("git reads %s as a %s, want %s", h, got, o.typ)
		}
		if got, err := s.RunErr(dir, nil, "git", "cat-file", o.typ, h.String()); err != nil || got != strings.TrimSpace(string(o.data)) {
			t.Fatalf("git reads %s %s as %d bytes (%v), want %d", o.typ, h, len(got), err, len(o.data))
		}
		if viaGit, err := slow.WriteObject(o.typ, o.data); err != nil || viaGit != h {
			t.Fatalf("git hash-object wrote %s (%v), in-process %s", viaGit, err, h)
		}
	}
	s.Git(dir, "fsck", "--strict", "--no-dangling")
}

func mustEncodeTree(t *testing.T, entries ...TreeEntry) []byte {
	t.Helper()
	raw, err := EncodeTree(entries)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
