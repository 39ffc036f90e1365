package attest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// rawTree encodes entries as a tree object in the order given, duplicates
// and all: a tree git accepts (receive-pack does not fsck by default) that
// gitrepo.ParseTree refuses.
func rawTree(entries ...gitrepo.TreeEntry) []byte {
	var b bytes.Buffer
	for _, e := range entries {
		mode := "100644"
		if e.Mode == gitrepo.ModeTree {
			mode = "40000"
		}
		b.WriteString(mode + " " + e.Name + "\x00")
		b.Write(e.Hash[:])
	}
	return b.Bytes()
}

func writeRaw(t *testing.T, r Repo, typ string, data []byte) gitrepo.Hash {
	t.Helper()
	h, err := r.WriteObject(typ, data)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// commitTree puts tree on top of s's tip as the ref's new value, past
// every check (a server or forge without the hook).
func commitTree(t *testing.T, r Repo, s *Store, tree gitrepo.Hash) {
	t.Helper()
	var parents []gitrepo.Hash
	if !s.Tip().IsZero() {
		parents = []gitrepo.Hash{s.Tip()}
	}
	c := writeRaw(t, r, "commit", gitrepo.EncodeCommit(tree, parents, who, who, "junk\n"))
	if err := r.UpdateRefs([]gitrepo.RefUpdate{{Name: Ref, Old: s.Tip(), New: c}}, "junk"); err != nil {
		t.Fatal(err)
	}
	if err := s.Refresh(); err != nil {
		t.Fatal(err)
	}
}

// TestStoreJunkCountsForNothing: junk a pusher without a key can plant in
// the store (a tree that does not parse, an entry of the wrong type, in a
// new directory or at the root) made every read of that directory an
// error (verification, fetch, clone) and Add refuse to store there
// ("duplicate name", "is not a regular file", "is not a directory"). Now
// it counts for nothing, with a note naming it; an envelope stored next
// to it is still read; Add replaces it, keeps that envelope, writes a tree
// that CheckShape accepts, and says what it replaced.
func TestStoreJunkCountsForNothing(t *testing.T) {
	alice, bob := seedSigner(t, 1), seedSigner(t, 2)
	ap := Approval{Ref: "refs/heads/main", From: h(1), To: h(2)}
	adir := ApprovalDir(ap.Ref, ap.From, ap.To)
	a := strings.Split(adir, "/")[1]
	aliceFile, bobFile := SignerFile(alice.PublicKey()), SignerFile(bob.PublicKey())
	for _, tc := range []struct {
		name string
		// plant returns the junk store tree, given alice's envelope blob
		// (withAlice: the junk holds it) and the repository.
		plant     func(r Repo, env gitrepo.Hash) gitrepo.Hash
		withAlice bool
		junkPath  string
	}{
		{"a name twice in a new directory", func(r Repo, env gitrepo.Hash) gitrepo.Hash {
			junk := writeRaw(t, r, "blob", []byte("junk"))
			d := writeRaw(t, r, "tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: "x.json", Hash: junk}, gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: "x.json", Hash: junk}))
			return storeRoot(t, r, "approvals", a, d)
		}, false, adir},
		{"a name twice next to alice's envelope", func(r Repo, env gitrepo.Hash) gitrepo.Hash {
			junk := writeRaw(t, r, "blob", []byte("junk"))
			d := writeRaw(t, r, "tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: aliceFile, Hash: env}, gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: "x.json", Hash: junk}, gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: "x.json", Hash: junk}))
			return storeRoot(t, r, "approvals", a, d)
		}, true, adir},
		{"alice's envelope twice, junk first", func(r Repo, env gitrepo.Hash) gitrepo.Hash {
			junk := writeRaw(t, r, "blob", []byte("junk"))
			d := writeRaw(t, r, "tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: aliceFile, Hash: junk}, gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: aliceFile, Hash: env}))
			return storeRoot(t, r, "approvals", a, d)
		}, true, adir},
		{"an empty tree at bob's file", func(r Repo, env gitrepo.Hash) gitrepo.Hash {
			empty := writeRaw(t, r, "tree", nil)
			d := writeRaw(t, r, "tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: bobFile, Hash: empty}))
			return storeRoot(t, r, "approvals", a, d)
		}, false, adir + "/" + bobFile},
		{"a blob where the directory goes", func(r Repo, env gitrepo.Hash) gitrepo.Hash {
			junk := writeRaw(t, r, "blob", []byte("junk"))
			sub := writeRaw(t, r, "tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: a, Hash: junk}))
			return writeRaw(t, r, "tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: "approvals", Hash: sub}))
		}, false, adir},
		{"a tree entry naming a blob", func(r Repo, env gitrepo.Hash) gitrepo.Hash {
			junk := writeRaw(t, r, "blob", []byte("junk"))
			return storeRoot(t, r, "approvals", a, junk)
		}, false, adir},
		{"the kind directory twice at the root, alice's in the second", func(r Repo, env gitrepo.Hash) gitrepo.Hash {
			junk := writeRaw(t, r, "blob", []byte("junk"))
			bad := writeRaw(t, r, "tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: "x", Hash: junk}, gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: "x", Hash: junk}))
			d := writeRaw(t, r, "tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: aliceFile, Hash: env}))
			good := writeRaw(t, r, "tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: a, Hash: d}))
			return writeRaw(t, r, "tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: "approvals", Hash: bad}, gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: "approvals", Hash: good}))
		}, true, "approvals"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, dir, r := openRepo(t)
			s, err := OpenStore(r)
			if err != nil {
				t.Fatal(err)
			}
			_, aliceEnv := signApproval(t, ap, alice)
			env := writeRaw(t, r, "blob", aliceEnv)
			junkTree := tc.plant(r, env)
			commitTree(t, r, s, junkTree)
			if err := CheckShape(r, gitrepo.ZeroHash, junkTree); err == nil {
				t.Errorf("CheckShape of the store's creation with junk: nil")
			}

			files, err := s.Envelopes(adir)
			if err != nil {
				t.Fatalf("Envelopes with junk: %v (was the old code's jam)", err)
			}
			var counted, notes []string
			for _, f := range files {
				if f.Junk != "" {
					notes = append(notes, f.Junk)
					continue
				}
				if bytes.Equal(f.Data, aliceEnv) {
					counted = append(counted, f.Name)
				}
			}
			if tc.withAlice != (len(counted) == 1) {
				t.Errorf("alice's envelope read %v; want read: %v (junk must not hide it)", counted, tc.withAlice)
			}
			if !strings.Contains(strings.Join(notes, "\n"), "store entry "+tc.junkPath+":") {
				t.Errorf("notes %q do not name %s", notes, tc.junkPath)
			}

			pb, eb := signApproval(t, ap, bob)
			if _, err := s.Add(pb, eb, who, ""); err != nil {
				t.Fatalf("Add over junk: %v (was the old code's jam)", err)
			}
			if rep := s.Replaced(); len(rep) == 0 {
				t.Errorf("Add replaced junk without saying so")
			}
			if err := CheckShape(r, junkTree, s.snapshot()); err != nil {
				t.Errorf("the tree Add wrote over junk: %v", err)
			}
			if err := CheckShape(r, gitrepo.ZeroHash, s.snapshot()); err != nil {
				t.Errorf("the tree Add wrote is not wholly clean: %v", err)
			}
			dropped, err := Dropped(r, junkTree, s.snapshot())
			if err != nil {
				t.Fatalf("Dropped from junk: %v", err)
			}
			for _, f := range dropped {
				data, _ := s.readEnvelope(f.Blob)
				if Protected(f.Path, data) {
					t.Errorf("Add over junk dropped the stored envelope %s", f.Path)
				}
			}
			got, err := s.Approvals(ap.Ref, ap.From, ap.To)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[bobFile], eb) || tc.withAlice != bytes.Equal(got[aliceFile], aliceEnv) {
				t.Errorf("after Add: %v; want bob's%s", keys(got), map[bool]string{true: " and alice's"}[tc.withAlice])
			}
			sb.Git(dir, "fsck", "--no-dangling", "--connectivity-only")
		})
	}
}

// storeRoot returns a store root tree holding entry name -> sub (a tree
// entry) under kind.
func storeRoot(t *testing.T, r Repo, kind, name string, sub gitrepo.Hash) gitrepo.Hash {
	t.Helper()
	k := writeRaw(t, r, "tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: name, Hash: sub}))
	return writeRaw(t, r, "tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: kind, Hash: k}))
}

// TestCheckShape: the hook's check of a pushed store tree against its
// parent's: every added or changed tree is read (new directories and the
// store's creation included), what does not parse or is of the wrong type
// is refused naming its path, and a tree that removes or replaces junk is
// accepted without the junk having to parse.
func TestCheckShape(t *testing.T) {
	_, _, r := openRepo(t)
	s, err := OpenStore(r)
	if err != nil {
		t.Fatal(err)
	}
	ap := Approval{Ref: "refs/heads/main", From: h(1), To: h(2)}
	p, env := signApproval(t, ap, seedSigner(t, 1))
	if _, err := s.Add(p, env, who, ""); err != nil {
		t.Fatal(err)
	}
	good := s.snapshot()
	if err := CheckShape(r, gitrepo.ZeroHash, good); err != nil {
		t.Fatalf("a store git-secure wrote: %v", err)
	}
	junk := writeRaw(t, r, "blob", []byte("junk"))
	dup := writeRaw(t, r, "tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: "x.json", Hash: junk}, gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: "x.json", Hash: junk}))
	entries, err := r.ReadTree(good)
	if err != nil {
		t.Fatal(err)
	}
	with := func(name string, mode uint32, h gitrepo.Hash) gitrepo.Hash {
		return writeRaw(t, r, "tree", rawTree(append(append([]gitrepo.TreeEntry(nil), entries...), gitrepo.TreeEntry{Mode: mode, Name: name, Hash: h})...))
	}
	newDir := func(kind string, mode uint32, h gitrepo.Hash) gitrepo.Hash {
		sub := writeRaw(t, r, "tree", rawTree(gitrepo.TreeEntry{Mode: mode, Name: strings.Repeat("a", 64), Hash: h}))
		return with(kind, gitrepo.ModeTree, sub)
	}
	fileAt := writeRaw(t, r, "tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: strings.Repeat("b", 64) + ".json", Hash: writeRaw(t, r, "tree", nil)}))
	for _, tc := range []struct {
		name string
		tree gitrepo.Hash
		path string // "" for no refusal
		why  string
	}{
		{"a name twice in a new directory", newDir("tests", gitrepo.ModeTree, dup), "tests/" + strings.Repeat("a", 64), "duplicate name"},
		{"a blob at a directory", newDir("tests", gitrepo.ModeFile, junk), "tests/" + strings.Repeat("a", 64), "mode 100644 where a directory"},
		{"a tree at an envelope file", newDir("tests", gitrepo.ModeTree, fileAt), "tests/" + strings.Repeat("a", 64) + "/" + strings.Repeat("b", 64) + ".json", "where a regular file"},
		{"a blob at the root", with("zz", gitrepo.ModeFile, junk), "zz", "where a directory"},
		{"a tree entry naming a blob", newDir("tests", gitrepo.ModeTree, junk), "tests/" + strings.Repeat("a", 64), "a blob where a directory goes"},
		{"an unsorted root", writeRaw(t, r, "tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: "z", Hash: good}, gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: "a", Hash: good})), "", "not sorted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckShape(r, good, tc.tree)
			var se *ShapeError
			if !errors.As(err, &se) || se.Path != tc.path || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("CheckShape = %v; want a refusal of %q saying %q", err, tc.path, tc.why)
			}
			// The same junk in the store's creation.
			if err := CheckShape(r, gitrepo.ZeroHash, tc.tree); err == nil {
				t.Errorf("the store's creation with it: accepted")
			}
			// Removing it again: the junk need not parse.
			if err := CheckShape(r, tc.tree, good); err != nil {
				t.Errorf("removing it: %v", err)
			}
			if d, err := Dropped(r, tc.tree, good); err != nil || len(d) != 0 {
				t.Errorf("removing it drops %v, %v", d, err)
			}
		})
	}
}

// FuzzLenientTree: a junk tree of the store is read as git reads it
// (lenientTree): never a panic, and a tree that parses strictly reads the
// same either way, so a reader that falls back on it sees what the strict
// reader would have.
func FuzzLenientTree(f *testing.F) {
	var id gitrepo.Hash
	id[0] = 1
	f.Add(rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: "x.json", Hash: id}, gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: "x.json", Hash: id}))
	f.Add(rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: "approvals", Hash: id}, gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: "a", Hash: id}))
	f.Add([]byte("100644 a\x00short"))
	f.Add([]byte("0 /\x00" + strings.Repeat("\x00", 20)))
	f.Fuzz(func(t *testing.T, raw []byte) {
		entries, err := lenientTree(raw)
		strict, serr := gitrepo.ParseTree(raw)
		if serr != nil {
			return
		}
		if err != nil || len(entries) != len(strict) {
			t.Fatalf("strict %d entries, lenient %d (%v)", len(strict), len(entries), err)
		}
		for i := range strict {
			if entries[i] != strict[i] {
				t.Fatalf("entry %d: strict %+v, lenient %+v", i, strict[i], entries[i])
			}
		}
	})
}

// countingRepo counts the raw reads of one object.
type countingRepo struct {
	*gitrepo.Repo
	of    gitrepo.Hash
	reads int
}

func (c *countingRepo) ReadObject(h gitrepo.Hash, max int64) (string, []byte, error) {
	if h == c.of {
		c.reads++
	}
	return c.Repo.ReadObject(h, max)
}

// TestStoreJunkRootReadOnce: a junk root (a name twice) is read as git
// reads it once per snapshot, not once per lookup: with a root of tens of
// megabytes, a verification's thousands of lookups would otherwise parse
// it thousands of times.
func TestStoreJunkRootReadOnce(t *testing.T) {
	_, _, r := openRepo(t)
	junk := writeRaw(t, r, "blob", []byte("junk"))
	empty := writeRaw(t, r, "tree", nil)
	root := writeRaw(t, r, "tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: "approvals", Hash: empty}, gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: "approvals", Hash: empty}, gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: "x", Hash: junk}))
	cr := &countingRepo{Repo: r, of: root}
	s, err := OpenStore(cr)
	if err != nil {
		t.Fatal(err)
	}
	commitTree(t, r, s, root)
	for i := byte(0); i < 50; i++ {
		files, err := s.Envelopes(ApprovalDir("refs/heads/main", h(i), h(i+1)))
		if err != nil || len(files) != 1 || files[0].Junk == "" {
			t.Fatalf("lookup %d: %v %+v; want one note of the junk root", i, err, files)
		}
	}
	if cr.reads > 1 {
		t.Fatalf("the junk root was read %d times for 50 lookups; want once", cr.reads)
	}
	if j := s.Junk(); len(j) != 1 || !strings.Contains(j[0], "store entry (the root tree): it does not parse") {
		t.Fatalf("Junk() = %q", j)
	}
}

// FuzzStoreJunkDir: whatever tree git would accept at an approval
// directory (names, modes, order, duplicates from the fuzzer; every entry
// naming an object that exists: a blob, or the empty tree for a
// directory), reading it never fails and never loses alice's envelope,
// and Add stores bob's there over it in a tree the hook accepts, dropping
// nothing kept.
func FuzzStoreJunkDir(f *testing.F) {
	f.Add([]byte("100644 x.json\x00" + strings.Repeat("\x01", 20) + "100644 x.json\x00" + strings.Repeat("\x01", 20)))
	f.Add([]byte("40000 " + strings.Repeat("b", 64) + ".json\x00" + strings.Repeat("\x01", 20)))
	f.Add([]byte("120000 z\x00" + strings.Repeat("\x01", 20) + "100644 a\x00" + strings.Repeat("\x01", 20)))
	_, _, r := openRepo(f)
	alice, bob := seedSigner(f, 1), seedSigner(f, 2)
	ap := Approval{Ref: "refs/heads/main", From: h(1), To: h(2)}
	adir := ApprovalDir(ap.Ref, ap.From, ap.To)
	a := strings.Split(adir, "/")[1]
	_, aliceEnv := signApproval(f, ap, alice)
	pb, eb := signApproval(f, ap, bob)
	env, err := r.WriteObject("blob", aliceEnv)
	if err != nil {
		f.Fatal(err)
	}
	junk, err := r.WriteObject("blob", []byte("junk"))
	if err != nil {
		f.Fatal(err)
	}
	empty, err := r.WriteObject("tree", nil)
	if err != nil {
		f.Fatal(err)
	}
	aliceFile := SignerFile(alice.PublicKey())
	f.Fuzz(func(t *testing.T, raw []byte) {
		entries, _ := lenientTree(raw)
		if len(entries) > 64 {
			entries = entries[:64]
		}
		var b bytes.Buffer
		b.WriteString("100644 " + aliceFile + "\x00")
		b.Write(env[:])
		for _, e := range entries {
			if strings.ContainsRune(e.Name, 0) {
				continue
			}
			hash := junk
			if e.Mode == gitrepo.ModeTree {
				hash = empty
			}
			if e.Mode == gitrepo.ModeGitlink {
				continue // names a commit that need not exist, as git allows
			}
			fmt.Fprintf(&b, "%o %s\x00", e.Mode, e.Name)
			b.Write(hash[:])
		}
		d, err := r.WriteObject("tree", b.Bytes())
		if err != nil {
			t.Skip(err)
		}
		s, err := OpenStoreAt(r, gitrepo.ZeroHash)
		if err != nil {
			t.Fatal(err)
		}
		k, _ := r.WriteObject("tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: a, Hash: d}))
		root, _ := r.WriteObject("tree", rawTree(gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: "approvals", Hash: k}))
		s.tree = root
		files, err := s.Envelopes(adir)
		if err != nil {
			t.Fatalf("Envelopes: %v", err)
		}
		found := false
		for _, f := range files {
			found = found || (f.Junk == "" && bytes.Equal(f.Data, aliceEnv))
		}
		if !found {
			t.Fatalf("alice's envelope hidden by %q", b.Bytes())
		}
		newTree, err := s.put(root, strings.Split(pb, "/"), writeBlob(t, r, eb), "", new([]string))
		if err != nil {
			t.Fatalf("put over junk: %v", err)
		}
		if err := CheckShape(r, root, newTree); err != nil {
			t.Fatalf("the tree put wrote: %v", err)
		}
		dropped, err := Dropped(r, root, newTree)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range dropped {
			if f.Blob == env {
				t.Fatalf("put dropped alice's envelope")
			}
		}
	})
}

func writeBlob(t testing.TB, r Repo, data []byte) gitrepo.Hash {
	t.Helper()
	h, err := r.WriteObject("blob", data)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
