package pushcert

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// TestStoreAppendLookup: certificates are filed under each entry they
// are stored for, every earlier file is kept, and git reads the store as
// written (fsck).
func TestStoreAppendLookup(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 1)
	g, err := gitrepo.OpenWithEnv(dir, s.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	cert1 := readTestdata(t, "signed.cert")
	cert2 := bytes.Replace(cert1, []byte("ci.skip"), []byte("ci.run"), 1)
	e1 := mustHash(t, strings.Repeat("1a", 20))
	e2 := mustHash(t, strings.Repeat("2b", 20))
	e3 := mustHash(t, "1a"+strings.Repeat("3c", 19)) // same first directory as e1
	when := time.Unix(1796470544, 0)

	tip1, err := Append(g, gitrepo.ZeroHash, cert1, []gitrepo.Hash{e1, e2}, when)
	if err != nil {
		t.Fatal(err)
	}
	tip2, err := Append(g, tip1, cert2, []gitrepo.Hash{e3, e2}, when)
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.ReadCommit(tip2)
	if err != nil || len(c.Parents) != 1 || c.Parents[0] != tip1 {
		t.Fatalf("store commit %+v, %v: want parent %s", c, err, tip1)
	}
	for _, tc := range []struct {
		tip   gitrepo.Hash
		entry gitrepo.Hash
		want  [][]byte
	}{
		{gitrepo.ZeroHash, e1, nil},
		{tip1, e1, [][]byte{cert1}},
		{tip1, e3, nil},
		{tip2, e1, [][]byte{cert1}},
		{tip2, e3, [][]byte{cert2}},
		{tip2, e2, nil}, // both, in name order: checked below
	} {
		got, err := Lookup(g, tc.tip, tc.entry)
		if err != nil {
			t.Fatal(err)
		}
		if tc.tip == tip2 && tc.entry == e2 {
			if len(got) != 2 {
				t.Errorf("entry %s: %d certificates, want 2", e2, len(got))
			}
			continue
		}
		if len(got) != len(tc.want) || (len(got) == 1 && !bytes.Equal(got[0], tc.want[0])) {
			t.Errorf("Lookup(%s, %s) = %d certificates, want %d", tc.tip, tc.entry, len(got), len(tc.want))
		}
	}
	s.Git(dir, "update-ref", Ref, tip2.String())
	s.Git(dir, "fsck", "--strict", "--no-dangling")
	if out := s.Git(dir, "ls-tree", "-r", "--name-only", tip2.String()); strings.Count(out, "\n") != 3 {
		t.Errorf("store tree:\n%s", out)
	}
}

// TestLookupSkipsStrangers: a file whose name is not its content's hash,
// or that is not a regular file, is not read as a certificate; a blob over
// MaxSize fails the read.
func TestLookupSkipsStrangers(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 1)
	g, err := gitrepo.OpenWithEnv(dir, s.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	entry := mustHash(t, strings.Repeat("ab", 20))
	build := func(files ...gitrepo.TreeEntry) gitrepo.Hash {
		leaf, err := g.WriteTree(files)
		if err != nil {
			t.Fatal(err)
		}
		mid, err := g.WriteTree([]gitrepo.TreeEntry{{Mode: gitrepo.ModeTree, Name: entry.String()[2:], Hash: leaf}})
		if err != nil {
			t.Fatal(err)
		}
		root, err := g.WriteTree([]gitrepo.TreeEntry{{Mode: gitrepo.ModeTree, Name: entry.String()[:2], Hash: mid}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := g.WriteObject("commit", []byte("tree "+root.String()+"\nauthor a <a> 1 +0000\ncommitter a <a> 1 +0000\n\nx\n"))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	blob, err := g.WriteObject("blob", readTestdata(t, "signed.cert"))
	if err != nil {
		t.Fatal(err)
	}
	tip := build(
		gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: strings.Repeat("0", 40), Hash: blob},
		gitrepo.TreeEntry{Mode: gitrepo.ModeExec, Name: blob.String(), Hash: blob},
	)
	if got, err := Lookup(g, tip, entry); err != nil || len(got) != 0 {
		t.Fatalf("Lookup read %d strangers (%v)", len(got), err)
	}
	big, err := g.WriteObject("blob", bytes.Repeat([]byte("x"), MaxSize+1))
	if err != nil {
		t.Fatal(err)
	}
	tip = build(gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: big.String(), Hash: big})
	if _, err := Lookup(g, tip, entry); err == nil {
		t.Fatalf("Lookup read a blob over MaxSize")
	}
}
