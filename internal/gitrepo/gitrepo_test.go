package gitrepo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// open opens dir with the sandbox environment and closes it at cleanup.
func open(t *testing.T, s *testutil.Sandbox, dir string) *Repo {
	t.Helper()
	r, err := OpenWithEnv(dir, s.Environ())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// inProcessEnv is the sandbox's environment without the switch
// (EnvNoFastPath, EnvNoInProcess), for the tests of the in-process readers
// themselves (each compares its reader with git): the second run of the
// suite, with the switch set, still reaches them.
func inProcessEnv(s *testutil.Sandbox) []string {
	var env []string
	for _, kv := range s.Environ() {
		if !strings.HasPrefix(kv, EnvNoInProcess+"=") && !strings.HasPrefix(kv, EnvNoFastPath+"=") {
			env = append(env, kv)
		}
	}
	return env
}

// newInProcessRepo is newRepo with the in-process readers on, whatever
// the test process's environment says.
func newInProcessRepo(t *testing.T, commits int) (*testutil.Sandbox, string, *Repo) {
	t.Helper()
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", commits)
	r, err := OpenWithEnv(dir, inProcessEnv(s))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return s, dir, r
}

func newRepo(t *testing.T, commits int) (*testutil.Sandbox, string, *Repo) {
	t.Helper()
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", commits)
	return s, dir, open(t, s, dir)
}

func mustParse(t testing.TB, s string) Hash {
	t.Helper()
	h, err := ParseHash(strings.TrimSpace(s))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestParseHash(t *testing.T) {
	good := "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		in string
		ok bool
	}{
		{good, true},
		{EmptyTreeHash, true},
		{strings.Repeat("0", 40), true},
		{"", false},
		{good[:39], false},
		{good + "8", false},
		{strings.ToUpper(good), false},
		{"g123456789abcdef0123456789abcdef01234567", false},
		{"-123456789abcdef0123456789abcdef01234567", false},
		{" 123456789abcdef0123456789abcdef01234567", false},
		{good[:39] + "\n", false},
	}
	for _, tt := range tests {
		h, err := ParseHash(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseHash(%q) err=%v, want ok=%v", tt.in, err, tt.ok)
			continue
		}
		if tt.ok && h.String() != tt.in {
			t.Errorf("round trip %q -> %q", tt.in, h.String())
		}
		// The bulk readers' parser gives the same hash and error.
		hb, errb := parseHashBytes([]byte(tt.in))
		if hb != h || fmt.Sprint(errb) != fmt.Sprint(err) {
			t.Errorf("parseHashBytes(%q) = %v, %v; ParseHash: %v, %v", tt.in, hb, errb, h, err)
		}
	}
	if !ZeroHash.IsZero() || mustParse(t, good).IsZero() {
		t.Error("IsZero")
	}
}

func TestHashJSON(t *testing.T) {
	type doc struct{ H Hash }
	h := mustParse(t, EmptyTreeHash)
	b, err := json.Marshal(doc{h})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"H":"`+EmptyTreeHash+`"}` {
		t.Fatalf("got %s", b)
	}
	var d doc
	if err := json.Unmarshal(b, &d); err != nil || d.H != h {
		t.Fatalf("unmarshal: %v %v", d.H, err)
	}
	if err := json.Unmarshal([]byte(`{"H":"4B825DC642CB6EB9A060E54BF8D69288FBEE4904"}`), &d); err == nil {
		t.Fatal("uppercase accepted")
	}
}

func TestOpen(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("w", 1)
	if err := os.MkdirAll(filepath.Join(dir, "sub", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(s.Home, "b.git")
	s.Git(s.Home, "clone", "-q", "--bare", dir, bare)
	realDir, _ := filepath.EvalSymlinks(dir)
	realBare, _ := filepath.EvalSymlinks(bare)
	tests := []struct {
		name, dir, gitDir, workTree string
	}{
		{"worktree", dir, filepath.Join(realDir, ".git"), realDir},
		{"subdir", filepath.Join(dir, "sub", "dir"), filepath.Join(realDir, ".git"), realDir},
		{"dotgit", filepath.Join(dir, ".git"), filepath.Join(realDir, ".git"), realDir},
		{"bare", bare, realBare, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A hostile inherited GIT_DIR must not redirect Open.
			env := append(s.Environ(), "GIT_DIR=/nonexistent")
			r, err := OpenWithEnv(tt.dir, env)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.GitDir() != tt.gitDir || r.WorkTree() != tt.workTree {
				t.Fatalf("GitDir=%q WorkTree=%q, want %q %q", r.GitDir(), r.WorkTree(), tt.gitDir, tt.workTree)
			}
			if _, ok, err := r.ResolveRef("refs/heads/main"); err != nil || !ok {
				t.Fatalf("ResolveRef: %v %v", ok, err)
			}
		})
	}
	if _, err := OpenWithEnv(s.Home, s.Environ()); err == nil {
		t.Error("Open outside a repository succeeded")
	}
	sha256 := filepath.Join(s.Home, "s256")
	if _, err := s.RunErr(s.Home, nil, "git", "init", "-q", "--object-format=sha256", sha256); err != nil {
		t.Skipf("no sha256 support: %v", err)
	}
	if _, err := OpenWithEnv(sha256, s.Environ()); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("sha256 repo: err=%v", err)
	}
}

func TestReadObject(t *testing.T) {
	_, _, r := newRepo(t, 1)
	big := strings.Repeat("x", 10000)
	bigHash, err := r.WriteObject("blob", []byte(big))
	if err != nil {
		t.Fatal(err)
	}
	small, err := r.WriteObject("blob", []byte("small\n"))
	if err != nil {
		t.Fatal(err)
	}
	missing := mustParse(t, "1111111111111111111111111111111111111111")
	for i := 0; i < 3; i++ {
		if _, _, err := r.ReadObject(missing, 1<<20); !errors.Is(err, ErrNotFound) {
			t.Fatalf("missing: %v", err)
		}
		if _, _, err := r.ReadObject(bigHash, 9999); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("too large: %v", err)
		}
		typ, data, err := r.ReadObject(small, 6)
		if err != nil || typ != "blob" || string(data) != "small\n" {
			t.Fatalf("after errors: %q %q %v", typ, data, err)
		}
		typ, data, err = r.ReadObject(bigHash, 10000)
		if err != nil || typ != "blob" || string(data) != big {
			t.Fatalf("big: %q %d %v", typ, len(data), err)
		}
	}
	if _, _, err := r.ReadObject(ZeroHash, 100); !errors.Is(err, ErrNotFound) {
		t.Fatalf("zero hash: %v", err)
	}
	if ok, err := r.HasObject(small); !ok || err != nil {
		t.Fatalf("HasObject: %v %v", ok, err)
	}
	if ok, err := r.HasObject(missing); ok || err != nil {
		t.Fatalf("HasObject missing: %v %v", ok, err)
	}
	// The helper process is restarted if it dies (loose objects would be
	// read without it).
	r.fast = nil
	r.batch.mu.Lock()
	_ = r.batch.cmd.Process.Kill()
	r.batch.mu.Unlock()
	if _, _, err := r.ReadObject(small, 100); err != nil {
		t.Fatalf("after kill: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.ReadObject(small, 100); err == nil {
		t.Fatal("read after Close succeeded")
	}
}

func TestConcurrentReads(t *testing.T) {
	s, dir, r := newRepo(t, 30)
	var hashes []Hash
	for _, l := range strings.Split(s.Git(dir, "rev-list", "HEAD"), "\n") {
		hashes = append(hashes, mustParse(t, l))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, h := range hashes {
				c, err := r.ReadCommit(h)
				if err != nil || c.Hash != h {
					errs <- fmt.Errorf("%s: %v", h, err)
					return
				}
				if _, err := r.HasObject(c.Tree); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestReplaceRefsIgnored(t *testing.T) {
	s, dir, r := newRepo(t, 2)
	a := s.Git(dir, "rev-parse", "HEAD~1")
	b := s.Git(dir, "rev-parse", "HEAD")
	s.Git(dir, "replace", a, b)
	c, err := r.ReadCommit(mustParse(t, a))
	if err != nil {
		t.Fatal(err)
	}
	if c.Message != "commit 0\n" {
		t.Fatalf("replace ref honoured: message %q", c.Message)
	}
}

func TestCommitRoundTrip(t *testing.T) {
	s, dir, r := newRepo(t, 3)
	s.Git(dir, "checkout", "-q", "-b", "side", "HEAD~1")
	s.Commit(dir, "side.txt", "side\n", "side")
	s.Git(dir, "checkout", "-q", "main")
	s.Git(dir, "merge", "-q", "--no-ff", "-m", "merge side", "side")
	for _, l := range strings.Split(s.Git(dir, "rev-list", "HEAD"), "\n") {
		h := mustParse(t, l)
		c, err := r.ReadCommit(h)
		if err != nil {
			t.Fatal(err)
		}
		raw := []byte(s.Git(dir, "cat-file", "commit", l) + "\n")
		if !bytes.Equal(c.Raw, raw) {
			t.Fatalf("raw mismatch")
		}
		enc := EncodeCommit(c.Tree, c.Parents, c.Author, c.Committer, c.Message)
		if !bytes.Equal(enc, c.Raw) {
			t.Fatalf("encode mismatch:\n%s\n---\n%s", enc, c.Raw)
		}
		if hashObject("commit", enc) != h {
			t.Fatal("hash mismatch")
		}
		if c.Signature != nil || !bytes.Equal(c.SignedPayload(), c.Raw) {
			t.Fatal("unsigned commit has signature")
		}
		wantParents := strings.Fields(s.Git(dir, "log", "-1", "--format=%P", l))
		if len(wantParents) != len(c.Parents) {
			t.Fatalf("parents %v want %v", c.Parents, wantParents)
		}
		if c.Author.Name != "Test Author" || c.Committer.Email != "committer@example.com" {
			t.Fatalf("idents %+v %+v", c.Author, c.Committer)
		}
	}
	// Timezone offsets survive.
	when := time.Unix(1700000000, 0).In(time.FixedZone("", -(3*3600 + 30*60)))
	id := Ident{Name: "A U Thor", Email: "a@x", When: when}
	enc := EncodeCommit(mustParse(t, EmptyTreeHash), nil, id, id, "msg\n")
	if !bytes.Contains(enc, []byte("author A U Thor <a@x> 1700000000 -0330\n")) {
		t.Fatalf("encoding: %s", enc)
	}
	c, err := ParseCommit(enc)
	if err != nil {
		t.Fatal(err)
	}
	if _, off := c.Author.When.Zone(); off != -(3*3600+30*60) || !c.Author.When.Equal(when) {
		t.Fatalf("when %v", c.Author.When)
	}
	written, err := r.WriteObject("commit", enc)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Git(dir, "log", "-1", "--format=%an %ae %ad", "--date=raw", written.String()); got != "A U Thor a@x 1700000000 -0330" {
		t.Fatalf("git reads %q", got)
	}
}

func TestSSHSignedCommit(t *testing.T) {
	s, dir, r := newRepo(t, 1)
	key := s.NewKey("signer", "ed25519")
	s.Git(dir, "config", "gpg.format", "ssh")
	s.Git(dir, "config", "user.signingkey", key.Public)
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("signed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Git(dir, "add", "f")
	s.Git(dir, "commit", "-q", "-S", "-m", "signed commit")
	hs := s.Git(dir, "rev-parse", "HEAD")
	c, err := r.ReadCommit(mustParse(t, hs))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(c.Signature, []byte("-----BEGIN SSH SIGNATURE-----\n")) ||
		!bytes.HasSuffix(c.Signature, []byte("-----END SSH SIGNATURE-----\n")) {
		t.Fatalf("signature %q", c.Signature)
	}
	// Expected payload: cat-file output minus the gpgsig header and its
	// continuation lines, computed independently line by line.
	raw := s.Git(dir, "cat-file", "commit", hs) + "\n"
	var want strings.Builder
	inSig, inHeaders := false, true
	for _, line := range strings.SplitAfter(raw, "\n") {
		if inHeaders && line == "\n" {
			inHeaders = false
		}
		if inHeaders && strings.HasPrefix(line, "gpgsig ") {
			inSig = true
			continue
		}
		if inSig && strings.HasPrefix(line, " ") {
			continue
		}
		inSig = false
		want.WriteString(line)
	}
	payload := c.SignedPayload()
	if string(payload) != want.String() {
		t.Fatalf("payload:\n%s\nwant:\n%s", payload, want.String())
	}
	// Re-signing the payload with the extracted signature rebuilds the
	// exact object.
	re, err := AddSignature(payload, c.Signature)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(re, c.Raw) {
		t.Fatalf("AddSignature:\n%s\nwant:\n%s", re, c.Raw)
	}
	if _, err := AddSignature(c.Raw, c.Signature); err == nil {
		t.Fatal("AddSignature on a signed commit succeeded")
	}
	// The signature verifies over SignedPayload with ssh-keygen.
	allowed := filepath.Join(s.Home, "allowed")
	if err := os.WriteFile(allowed, []byte("signer@example.com "+key.PublicLine(t)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sigFile := filepath.Join(s.Home, "sig")
	if err := os.WriteFile(sigFile, c.Signature, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunErr(s.Home, payload, "ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "signer@example.com", "-n", "git", "-s", sigFile); err != nil {
		t.Fatalf("ssh-keygen verify: %v", err)
	}
	// A signed commit written by us is accepted by git verify-commit.
	s.Git(dir, "config", "gpg.ssh.allowedSignersFile", allowed)
	s.Git(dir, "verify-commit", hs)
	newer := EncodeCommit(c.Tree, []Hash{c.Hash}, c.Author, c.Committer, "resigned\n")
	sig, err := s.RunErr(s.Home, newer, "ssh-keygen", "-Y", "sign", "-f", key.Private, "-n", "git")
	if err != nil {
		t.Fatal(err)
	}
	signed, err := AddSignature(newer, []byte(sig)) // no trailing newline: must be added
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.WriteObject("commit", signed)
	if err != nil {
		t.Fatal(err)
	}
	s.Git(dir, "verify-commit", h.String())
}

func TestParseCommitErrors(t *testing.T) {
	tree := "tree " + EmptyTreeHash + "\n"
	id := "A <a@x> 1700000000 +0000\n"
	ok := tree + "author " + id + "committer " + id + "\nmsg\n"
	if _, err := ParseCommit([]byte(ok)); err != nil {
		t.Fatalf("valid commit rejected: %v", err)
	}
	bad := map[string]string{
		"empty":             "",
		"no tree":           "author " + id + "committer " + id + "\nm",
		"bad tree":          "tree " + strings.ToUpper(EmptyTreeHash) + "\nauthor " + id + "committer " + id + "\nm",
		"short tree":        "tree abc\nauthor " + id + "committer " + id + "\nm",
		"no author":         tree + "committer " + id + "\nm",
		"no committer":      tree + "author " + id + "\nm",
		"parent after":      tree + "author " + id + "parent " + EmptyTreeHash + "\ncommitter " + id + "\nm",
		"bad parent":        tree + "parent 123\nauthor " + id + "committer " + id + "\nm",
		"two trees":         tree + tree + "author " + id + "committer " + id + "\nm",
		"two committers":    tree + "author " + id + "committer " + id + "committer " + id + "\nm",
		"no blank line":     tree + "author " + id + "committer " + id,
		"two gpgsig":        tree + "author " + id + "committer " + id + "gpgsig a\n b\ngpgsig c\n\nm",
		"odd gpgsig":        tree + "author " + id + "committer " + id + "gpgsigx a\n\nm",
		"bad ident":         tree + "author A a@x 1 +0000\ncommitter " + id + "\nm",
		"bad tz":            tree + "author A <a@x> 1 +00000\ncommitter " + id + "\nm",
		"bad tz minutes":    tree + "author A <a@x> 1 +0060\ncommitter " + id + "\nm",
		"bad timestamp":     tree + "author A <a@x> -1 +0000\ncommitter " + id + "\nm",
		"nul in header":     tree + "author A <a@x> 1 +0000\x00\ncommitter " + id + "\nm",
		"continuation tree": "tree " + EmptyTreeHash + "\n x\nauthor " + id + "committer " + id + "\nm",
		"leading space":     " " + ok,
	}
	for name, raw := range bad {
		if _, err := ParseCommit([]byte(raw)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	extra := tree + "author " + id + "committer " + id + "encoding ISO-8859-1\nmergetag object x\n y\ngpgsig L1\n L2\n\nmsg"
	c, err := ParseCommit([]byte(extra))
	if err != nil {
		t.Fatal(err)
	}
	if string(c.Signature) != "L1\nL2\n" {
		t.Fatalf("signature %q", c.Signature)
	}
	wantPayload := tree + "author " + id + "committer " + id + "encoding ISO-8859-1\nmergetag object x\n y\n\nmsg"
	if string(c.SignedPayload()) != wantPayload {
		t.Fatalf("payload %q", c.SignedPayload())
	}
	re, err := AddSignature([]byte(wantPayload), []byte("L1\nL2\n"))
	if err != nil || string(re) != extra {
		t.Fatalf("AddSignature %q %v", re, err)
	}
}

func TestTreeEncodeMatchesGit(t *testing.T) {
	s, dir, r := newRepo(t, 0)
	files := []string{"a", "a.b", "a-b", "a/x", "a/y/z", "b", "ab/c", "a0", "z.txt", "dir/sub/deep/file", "dir.txt", "dir/x"}
	for _, f := range files {
		p := filepath.Join(dir, f)
		if f == "a" {
			continue // a is a directory below
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "exec"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.b", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	s.Git(dir, "add", "-A")
	root := mustParse(t, s.Git(dir, "write-tree"))
	// Re-encode every tree read from git and compare hashes.
	var walk func(h Hash)
	walk = func(h Hash) {
		entries, err := r.ReadTree(h)
		if err != nil {
			t.Fatal(err)
		}
		rev := slices.Clone(entries)
		slices.Reverse(rev) // EncodeTree must sort
		got, err := r.WriteTree(rev)
		if err != nil {
			t.Fatal(err)
		}
		if got != h {
			t.Fatalf("WriteTree %s, want %s", got, h)
		}
		for _, e := range entries {
			if e.Mode == ModeTree {
				walk(e.Hash)
			}
		}
	}
	walk(root)
	// And against git mktree for a tree with file/dir sort traps, every
	// mode and a gitlink.
	blob, err := r.WriteObject("blob", []byte("hello\n"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := r.WriteTree([]TreeEntry{{Mode: ModeFile, Name: "f", Hash: blob}})
	if err != nil {
		t.Fatal(err)
	}
	gitlink := mustParse(t, "0123456789abcdef0123456789abcdef01234567")
	entries := []TreeEntry{
		{ModeTree, "foo", sub}, {ModeFile, "foo.c", blob}, {ModeFile, "foo-bar", blob},
		{ModeExec, "foo0", blob}, {ModeSymlink, "l", blob}, {ModeGitlink, "mod", gitlink},
		{ModeTree, "a", sub}, {ModeFile, "a.", blob}, {ModeFile, "\xff\x01name", blob},
	}
	got, err := r.WriteTree(entries)
	if err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	for _, e := range entries {
		typ := map[uint32]string{ModeTree: "tree", ModeGitlink: "commit"}[e.Mode]
		if typ == "" {
			typ = "blob"
		}
		m, _ := modeString(e.Mode)
		fmt.Fprintf(&in, "%06s %s %s\t%s\x00", m, typ, e.Hash, e.Name)
	}
	want, err := s.RunErr(dir, []byte(in.String()), "git", "mktree", "-z", "--missing")
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != want {
		t.Fatalf("WriteTree %s, git mktree %s", got, want)
	}
	back, err := r.ReadTree(got)
	if err != nil || len(back) != len(entries) {
		t.Fatalf("ReadTree: %v %v", back, err)
	}
}

func TestParseTreeErrors(t *testing.T) {
	h := strings.Repeat("\x01", 20)
	ent := func(mode, name string) string { return mode + " " + name + "\x00" + h }
	bad := map[string]string{
		"bad mode":     ent("10064a", "a"),
		"empty mode":   ent("", "a"),
		"empty name":   ent("100644", ""),
		"dot":          ent("100644", "."),
		"dotdot":       ent("40000", ".."),
		"slash":        ent("100644", "a/b"),
		"unsorted":     ent("100644", "b") + ent("100644", "a"),
		"dir order":    ent("40000", "a") + ent("100644", "a.b"),
		"duplicate":    ent("100644", "a") + ent("100644", "a"),
		"dup file/dir": ent("100644", "a") + ent("100644", "a.b") + ent("40000", "a"),
		"truncated":    ent("100644", "a")[:20],
		"no nul":       "100644 a",
		"no space":     "100644",
	}
	for name, raw := range bad {
		if _, err := ParseTree([]byte(raw)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	good := ent("100644", "a") + ent("100644", "a.b") + ent("40000", "a0") + ent("100644", "b.c") + ent("40000", "b")
	entries, err := ParseTree([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	enc, err := EncodeTree(entries)
	if err != nil || string(enc) != good {
		t.Fatalf("round trip: %v", err)
	}
	for _, e := range []TreeEntry{{Mode: 0o100664, Name: "x"}, {Mode: ModeFile, Name: "a/b"}, {Mode: ModeFile, Name: ""}} {
		if _, err := EncodeTree([]TreeEntry{e}); err == nil {
			t.Errorf("EncodeTree(%+v) accepted", e)
		}
	}
	if _, err := EncodeTree([]TreeEntry{{Mode: ModeFile, Name: "a"}, {Mode: ModeTree, Name: "a"}}); err == nil {
		t.Error("duplicate accepted")
	}
}
