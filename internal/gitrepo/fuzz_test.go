package gitrepo

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo/fastpath"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// realObjects builds a small repository (nested trees, a merge, an
// SSH-signed commit, odd file names) and returns its raw commits and trees.
func realObjects(f *testing.F) (commits, trees [][]byte) {
	s := testutil.NewSandbox(f)
	dir := s.InitRepo("seed", 3)
	s.Commit(dir, "a/b/c.txt", "c", "nested")
	s.Commit(dir, "a.b", "x", "sort trap")
	s.Commit(dir, "sp ace/ünï", "u", "unicode\n\nbody line\n")
	key := s.NewKey("seed", "ed25519")
	s.Git(dir, "config", "gpg.format", "ssh")
	s.Git(dir, "config", "user.signingkey", key.Public)
	if err := os.WriteFile(filepath.Join(dir, "signed"), []byte("s"), 0o755); err != nil {
		f.Fatal(err)
	}
	s.Git(dir, "add", "-A")
	s.Git(dir, "commit", "-q", "-S", "-m", "signed")
	out := s.Git(dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
	for _, line := range strings.Split(out, "\n") {
		h, typ, _ := strings.Cut(line, " ")
		switch typ {
		case "commit":
			commits = append(commits, []byte(s.Git(dir, "cat-file", "commit", h)+"\n"))
		case "tree":
			raw, err := s.RunErr(dir, nil, "sh", "-c", "git cat-file tree "+h+" | od -An -v -tx1")
			if err != nil {
				f.Fatal(err)
			}
			trees = append(trees, fromOD(raw))
		}
	}
	return commits, trees
}

// fromOD decodes od -tx1 output (cannot use s.Git for binary output: it
// trims whitespace).
func fromOD(s string) []byte {
	var b []byte
	for _, f := range strings.Fields(s) {
		var v byte
		for _, c := range f {
			v <<= 4
			if c >= 'a' {
				v |= byte(c-'a') + 10
			} else {
				v |= byte(c - '0')
			}
		}
		b = append(b, v)
	}
	return b
}

func FuzzParseCommit(f *testing.F) {
	commits, _ := realObjects(f)
	for _, c := range commits {
		f.Add(c)
	}
	id := "A <a@x> 1700000000 +0130\n"
	f.Add([]byte("tree " + EmptyTreeHash + "\nauthor " + id + "committer " + id + "encoding x\ngpgsig a\n b\n \n c\n\nmsg"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		firstParentLikeParse(t, raw)
		c, err := ParseCommit(raw)
		if err != nil {
			return
		}
		if !bytes.Equal(c.Raw, raw) {
			t.Fatal("Raw differs from input")
		}
		payload := c.SignedPayload()
		if len(payload) > len(raw) {
			t.Fatal("payload longer than raw")
		}
		p, err := ParseCommit(payload)
		if err != nil {
			t.Fatalf("payload does not parse: %v", err)
		}
		if p.Signature != nil {
			t.Fatal("payload still signed")
		}
		if c.Signature != nil {
			// Re-adding the signature restores the object when the
			// gpgsig header was the last header (git's placement).
			re, err := AddSignature(payload, c.Signature)
			if err != nil {
				t.Fatalf("AddSignature: %v", err)
			}
			rc, err := ParseCommit(re)
			if err != nil || !bytes.Equal(rc.Signature, c.Signature) || !bytes.Equal(rc.SignedPayload(), payload) {
				t.Fatalf("re-signed commit differs: %v", err)
			}
		}
		enc := EncodeCommit(c.Tree, c.Parents, c.Author, c.Committer, c.Message)
		e, err := ParseCommit(enc)
		if err != nil {
			t.Fatalf("encoded commit does not parse: %v\n%q", err, enc)
		}
		if e.Tree != c.Tree || len(e.Parents) != len(c.Parents) || e.Message != c.Message ||
			e.Author.Name != c.Author.Name || e.Author.Email != c.Author.Email || !e.Author.When.Equal(c.Author.When) ||
			e.Committer.String() != c.Committer.String() || e.Author.String() != c.Author.String() {
			t.Fatalf("encode round trip differs:\n%q\n%q", raw, enc)
		}
		if !bytes.Equal(EncodeCommit(e.Tree, e.Parents, e.Author, e.Committer, e.Message), enc) {
			t.Fatal("encoding not stable")
		}
	})
}

func FuzzParseTree(f *testing.F) {
	_, trees := realObjects(f)
	for _, tr := range trees {
		f.Add(tr)
	}
	f.Add([]byte{})
	f.Add([]byte("100644 a\x00" + strings.Repeat("\x01", 20) + "40000 a0\x00" + strings.Repeat("\x02", 20)))
	f.Fuzz(func(t *testing.T, raw []byte) {
		entries, err := ParseTree(raw)
		if err != nil {
			return
		}
		enc, err := EncodeTree(entries)
		if err != nil {
			t.Fatalf("EncodeTree of parsed tree: %v", err)
		}
		// Modes are normalized as git reads them: the canonical encoding
		// must read back the same, and be the input when it was canonical.
		back, err := ParseTree(enc)
		if err != nil || !reflect.DeepEqual(back, entries) {
			t.Fatalf("canonical encoding reads back differently: %v", err)
		}
		if canonicalModes(raw) && !bytes.Equal(enc, raw) {
			t.Fatalf("round trip differs:\n%q\n%q", raw, enc)
		}
	})
}

// canonicalModes reports whether every mode in a well-formed raw tree is
// spelled as EncodeTree writes it.
func canonicalModes(raw []byte) bool {
	for len(raw) > 0 {
		sp := bytes.IndexByte(raw, ' ')
		if _, ok := map[string]bool{"100644": true, "100755": true, "120000": true, "40000": true, "160000": true}[string(raw[:sp])]; !ok {
			return false
		}
		raw = raw[bytes.IndexByte(raw, 0)+21:]
	}
	return true
}

// FuzzParseHash checks the hand-written decoder against encoding/hex: it
// accepts exactly 40 lowercase hex digits, and the bytes form agrees.
func FuzzParseHash(f *testing.F) {
	f.Add("0123456789abcdef0123456789abcdef01234567")
	f.Add("0123456789ABCDEF0123456789abcdef01234567")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHash(s)
		want, herr := hex.DecodeString(s)
		ok := herr == nil && len(s) == 40 && strings.ToLower(s) == s
		if (err == nil) != ok {
			t.Fatalf("ParseHash(%q) err=%v, want ok=%v", s, err, ok)
		}
		if ok && !bytes.Equal(h[:], want) {
			t.Fatalf("ParseHash(%q) = %x", s, h)
		}
		hb, errb := parseHashBytes([]byte(s))
		if hb != h || fmt.Sprint(errb) != fmt.Sprint(err) {
			t.Fatalf("parseHashBytes(%q) = %v, %v; ParseHash: %v, %v", s, hb, errb, h, err)
		}
	})
}

// firstParentLikeParse checks the chain listing's reading of a commit's
// start (fastpath.ParseFirstParent) against ParseCommit: on every commit
// ParseCommit accepts it names the same first parent, or none for a root;
// what it reads of a commit cut to its first 128 bytes is what it reads of
// the whole, or nothing.
func firstParentLikeParse(t *testing.T, raw []byte) {
	t.Helper()
	parent, has, ok := fastpath.ParseFirstParent(raw)
	if c, err := ParseCommit(raw); err == nil {
		if !ok || has != (len(c.Parents) > 0) || (has && Hash(parent) != c.Parents[0]) {
			t.Fatalf("first parent %x %v %v, ParseCommit says %v", parent, has, ok, c.Parents)
		}
	}
	if len(raw) > 128 {
		p2, has2, ok2 := fastpath.ParseFirstParentPrefix(raw[:128])
		if ok2 && (!ok || p2 != parent || has2 != has) {
			t.Fatalf("the first 128 bytes say %x %v, the whole %x %v %v", p2, has2, parent, has, ok)
		}
	}
}
