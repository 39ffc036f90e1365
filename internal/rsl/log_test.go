package rsl_test

import (
	"crypto/ed25519"
	"crypto/sha1"
	"crypto/sha256"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// hashCommit is git's object name of a raw commit.
func hashCommit(raw []byte) gitrepo.Hash {
	d := sha1.New()
	fmt.Fprintf(d, "commit %d\x00", len(raw))
	d.Write(raw)
	var h gitrepo.Hash
	copy(h[:], d.Sum(nil))
	return h
}

// memStore is an in-memory object store holding commits, for the pure
// tests; the same tests also run against a real repository.
type memStore struct {
	commits   map[gitrepo.Hash]*gitrepo.Commit
	emptyTree bool // stored: every entry names it
}

func newMemStore() *memStore { return &memStore{commits: map[gitrepo.Hash]*gitrepo.Commit{}} }

func (m *memStore) WriteObject(typ string, data []byte) (gitrepo.Hash, error) {
	if typ == "tree" && len(data) == 0 {
		m.emptyTree = true
		return gitrepo.ParseHash(gitrepo.EmptyTreeHash)
	}
	if typ != "commit" {
		return gitrepo.ZeroHash, fmt.Errorf("memStore: cannot store a %s", typ)
	}
	if !m.emptyTree {
		return gitrepo.ZeroHash, fmt.Errorf("memStore: commit stored before the empty tree it names")
	}
	c, err := gitrepo.ParseCommit(data)
	if err != nil {
		return gitrepo.ZeroHash, err
	}
	c.Hash = hashCommit(data)
	m.commits[c.Hash] = c
	return c.Hash, nil
}

func (m *memStore) ReadCommit(h gitrepo.Hash) (*gitrepo.Commit, error) {
	c, ok := m.commits[h]
	if !ok {
		return nil, fmt.Errorf("memStore: commit %s: %w", h, gitrepo.ErrNotFound)
	}
	cp := *c
	return &cp, nil
}

type store interface {
	rsl.Reader
	rsl.Writer
}

// backends returns a fresh in-memory store and a fresh git repository.
func backends(t *testing.T) []struct {
	name string
	s    store
} {
	t.Helper()
	out := []struct {
		name string
		s    store
	}{{"mem", newMemStore()}}
	if testing.Short() {
		return out
	}
	sb := testutil.NewSandbox(t)
	dir := sb.InitRepo("repo", 1)
	repo, err := gitrepo.OpenWithEnv(dir, sb.Environ())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = repo.Close() })
	return append(out, struct {
		name string
		s    store
	}{"git", repo})
}

// testSigner is a deterministic ed25519 SSH signer.
func testSigner(t testing.TB, name string) ssh.Signer {
	t.Helper()
	seed := sha256.Sum256([]byte("rsl test key " + name))
	s, err := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(seed[:]))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func signWith(s ssh.Signer) rsl.SignFunc {
	return func(payload []byte) ([]byte, error) { return sign.SignSSHSig(s, payload, sign.NamespaceGit) }
}

// logWriter appends entries to a log in a store.
type logWriter struct {
	t      *testing.T
	s      store
	signer ssh.Signer
	ids    map[uint64]gitrepo.Hash // by entry number, last written wins
}

func newLog(t *testing.T, s store) *logWriter {
	return &logWriter{t: t, s: s, signer: testSigner(t, "writer"), ids: map[uint64]gitrepo.Hash{}}
}

// put writes e on top of parent and returns its ID.
func (l *logWriter) put(e rsl.Entry, parent gitrepo.Hash) gitrepo.Hash {
	l.t.Helper()
	h, err := rsl.Write(l.s, &e, parent, testWho, signWith(l.signer))
	if err != nil {
		l.t.Fatalf("Write #%d: %v", e.Number, err)
	}
	l.ids[e.Number] = h
	return h
}

func refEntry(n uint64, ref string, old, new gitrepo.Hash) rsl.Entry {
	return rsl.Entry{Number: n, Type: rsl.TypeRef, Ref: ref, Old: old, New: new}
}

func skipEntry(n uint64, reason string, skips ...rsl.Skip) rsl.Entry {
	return rsl.Entry{Number: n, Type: rsl.TypeAnnotation, Skips: skips, Reason: reason}
}

const (
	mainRef = "refs/heads/main"
	featRef = "refs/heads/feature"
)

// sampleLog writes this log and returns the ID of each entry by number:
//
//	#1 policy create P1
//	#2 main create A
//	#3 main update A -> B
//	#4 feature create C
//	#5 annotate skip #3
//	#6 main update A -> D
//	#7 annotate skip #4, #6
//	#8 policy update P1 -> P2
//	#9 main update A -> E
func sampleLog(t *testing.T, s store) []gitrepo.Hash {
	l := newLog(t, s)
	ids := []gitrepo.Hash{{}} // ids[n] is entry #n
	add := func(e rsl.Entry) {
		ids = append(ids, l.put(e, ids[len(ids)-1]))
	}
	add(refEntry(1, rsl.PolicyRef, gitrepo.ZeroHash, hx('1')))
	add(refEntry(2, mainRef, gitrepo.ZeroHash, hx('a')))
	add(refEntry(3, mainRef, hx('a'), hx('b')))
	add(refEntry(4, featRef, gitrepo.ZeroHash, hx('c')))
	add(skipEntry(5, "B was pushed by mistake", rsl.Skip{Number: 3, ID: ids[3]}))
	add(refEntry(6, mainRef, hx('a'), hx('d')))
	add(skipEntry(7, "revoked", rsl.Skip{Number: 4, ID: ids[4]}, rsl.Skip{Number: 6, ID: ids[6]}))
	add(refEntry(8, rsl.PolicyRef, hx('1'), hx('2')))
	add(refEntry(9, mainRef, hx('a'), hx('e')))
	return ids
}

func TestWriteReadLog(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ids := sampleLog(t, b.s)
			recs, err := rsl.ReadLog(b.s, ids[9])
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 9 {
				t.Fatalf("ReadLog: %d records, want 9", len(recs))
			}
			writer := testSigner(t, "writer").PublicKey()
			lookup := func(fp string) (ssh.PublicKey, bool) {
				return writer, fp == sign.Fingerprint(writer)
			}
			for i, rec := range recs {
				n := uint64(i + 1)
				if rec.Entry.Number != n || rec.ID != ids[n] || rec.Commit.Hash != ids[n] {
					t.Fatalf("record %d: number %d id %s commit %s, want #%d %s", i, rec.Entry.Number, rec.ID, rec.Commit.Hash, n, ids[n])
				}
				again, err := rsl.FromCommit(rec.Commit)
				if err != nil || !reflect.DeepEqual(again, rec.Entry) {
					t.Fatalf("record %d: FromCommit = %+v, %v", i, again, err)
				}
				// The entry is an ordinary SSH-signed commit, namespace git.
				if _, err := sign.VerifySSHSig(rec.Commit.Signature, rec.Commit.SignedPayload(), sign.NamespaceGit, lookup); err != nil {
					t.Fatalf("record %d: signature: %v", i, err)
				}
				if _, err := sign.VerifySSHSig(rec.Commit.Signature, rec.Commit.SignedPayload(), sign.NamespaceAttestation, lookup); err == nil {
					t.Fatalf("record %d: signature verifies in the attestation namespace", i)
				}
			}
			if recs[4].Entry.Type != rsl.TypeAnnotation || recs[4].Entry.Skips[0].ID != ids[3] {
				t.Fatalf("entry #5 = %+v", recs[4].Entry)
			}
			// Every prefix of the log reads too.
			for n := 1; n <= 9; n++ {
				recs, err := rsl.ReadLog(b.s, ids[n])
				if err != nil || len(recs) != n {
					t.Fatalf("ReadLog(#%d) = %d records, %v", n, len(recs), err)
				}
			}
		})
	}
}

func TestReadLogEmpty(t *testing.T) {
	recs, err := rsl.ReadLog(newMemStore(), gitrepo.ZeroHash)
	if err != nil || len(recs) != 0 {
		t.Fatalf("ReadLog(zero) = %v, %v", recs, err)
	}
	called := false
	if err := rsl.WalkBack(newMemStore(), gitrepo.ZeroHash, func(*rsl.Record) (bool, error) { called = true; return true, nil }); err != nil || called {
		t.Fatalf("WalkBack(zero): called=%v err=%v", called, err)
	}
	rec, err := rsl.LatestFor(newMemStore(), gitrepo.ZeroHash, mainRef)
	if rec != nil || err != nil {
		t.Fatalf("LatestFor(zero) = %v, %v", rec, err)
	}
}

func TestWalkBack(t *testing.T) {
	s := newMemStore()
	ids := sampleLog(t, s)

	var seen []uint64
	err := rsl.WalkBack(s, ids[9], func(r *rsl.Record) (bool, error) {
		seen = append(seen, r.Entry.Number)
		return len(seen) < 3, nil
	})
	if err != nil || !reflect.DeepEqual(seen, []uint64{9, 8, 7}) {
		t.Fatalf("WalkBack stopping after 3: %v, %v", seen, err)
	}

	stop := errors.New("stop here")
	seen = nil
	err = rsl.WalkBack(s, ids[9], func(r *rsl.Record) (bool, error) {
		seen = append(seen, r.Entry.Number)
		if r.Entry.Number == 5 {
			return true, stop // the error wins over "more"
		}
		return true, nil
	})
	if !errors.Is(err, stop) || !reflect.DeepEqual(seen, []uint64{9, 8, 7, 6, 5}) {
		t.Fatalf("WalkBack with an error: %v, %v", seen, err)
	}

	seen = nil
	if err := rsl.WalkBack(s, ids[9], func(r *rsl.Record) (bool, error) {
		seen = append(seen, r.Entry.Number)
		return true, nil
	}); err != nil || !reflect.DeepEqual(seen, []uint64{9, 8, 7, 6, 5, 4, 3, 2, 1}) {
		t.Fatalf("full WalkBack: %v, %v", seen, err)
	}
}

func TestLatestFor(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ids := sampleLog(t, b.s)
			tests := []struct {
				tip  uint64
				ref  string
				want uint64 // 0: none
			}{
				{1, rsl.PolicyRef, 1},
				{1, mainRef, 0},
				{2, mainRef, 2},
				{3, mainRef, 3},
				{4, mainRef, 3},
				{4, featRef, 4},
				{5, mainRef, 2}, // #3 skipped
				{5, featRef, 4},
				{6, mainRef, 6},
				{7, mainRef, 2}, // #3 and #6 skipped
				{7, featRef, 0}, // #4 skipped: the ref is back to not recorded
				{7, rsl.PolicyRef, 1},
				{8, rsl.PolicyRef, 8},
				{8, mainRef, 2},
				{9, mainRef, 9},
				{9, featRef, 0},
				{9, "refs/tags/v1", 0},
				{9, "refs/heads/mai", 0},
			}
			for _, tt := range tests {
				rec, err := rsl.LatestFor(b.s, ids[tt.tip], tt.ref)
				if err != nil {
					t.Fatalf("LatestFor(#%d, %s): %v", tt.tip, tt.ref, err)
				}
				switch {
				case tt.want == 0 && rec != nil:
					t.Errorf("LatestFor(#%d, %s) = #%d, want none", tt.tip, tt.ref, rec.Entry.Number)
				case tt.want != 0 && rec == nil:
					t.Errorf("LatestFor(#%d, %s) = none, want #%d", tt.tip, tt.ref, tt.want)
				case tt.want != 0 && (rec.Entry.Number != tt.want || rec.ID != ids[tt.want] || rec.Entry.Ref != tt.ref):
					t.Errorf("LatestFor(#%d, %s) = #%d %s, want #%d %s", tt.tip, tt.ref, rec.Entry.Number, rec.ID, tt.want, ids[tt.want])
				}
			}
		})
	}
}

// TestLatestForDeleted: a delete entry is the latest entry of its ref.
func TestLatestForDeleted(t *testing.T) {
	s := newMemStore()
	l := newLog(t, s)
	h1 := l.put(refEntry(1, rsl.PolicyRef, gitrepo.ZeroHash, hx('1')), gitrepo.ZeroHash)
	h2 := l.put(refEntry(2, mainRef, gitrepo.ZeroHash, hx('a')), h1)
	h3 := l.put(refEntry(3, mainRef, hx('a'), gitrepo.ZeroHash), h2)
	rec, err := rsl.LatestFor(s, h3, mainRef)
	if err != nil || rec == nil || rec.Entry.Number != 3 || !rec.Entry.New.IsZero() {
		t.Fatalf("LatestFor after delete = %+v, %v", rec, err)
	}
}

// TestLogChainErrors tampers with the chain of entries: every way of
// removing, reordering or forging entries must be detected by ReadLog, and
// by LatestFor whenever it has to walk past the damage.
func TestLogChainErrors(t *testing.T) {
	type scenario struct {
		name  string
		build func(l *logWriter) gitrepo.Hash // returns the tip
		// wantErr is the error the failure wraps; nil for "any error".
		wantErr error
	}
	p := func(l *logWriter) gitrepo.Hash {
		return l.put(refEntry(1, rsl.PolicyRef, gitrepo.ZeroHash, hx('1')), gitrepo.ZeroHash)
	}
	scenarios := []scenario{
		{"numbering gap", func(l *logWriter) gitrepo.Hash {
			h1 := p(l)
			h2 := l.put(refEntry(2, featRef, gitrepo.ZeroHash, hx('a')), h1)
			return l.put(refEntry(4, "refs/heads/other", gitrepo.ZeroHash, hx('b')), h2)
		}, rsl.ErrNotEntry},
		{"entry removed", func(l *logWriter) gitrepo.Hash {
			h1 := p(l)
			l.put(refEntry(2, featRef, gitrepo.ZeroHash, hx('a')), h1)
			return l.put(refEntry(3, "refs/heads/other", gitrepo.ZeroHash, hx('b')), h1) // #3 on #1
		}, rsl.ErrNotEntry},
		{"entries reordered", func(l *logWriter) gitrepo.Hash {
			h1 := p(l)
			h3 := l.put(refEntry(3, featRef, gitrepo.ZeroHash, hx('a')), h1)
			return l.put(refEntry(2, "refs/heads/other", gitrepo.ZeroHash, hx('b')), h3) // #2 on #3
		}, rsl.ErrNotEntry},
		{"number repeated", func(l *logWriter) gitrepo.Hash {
			h1 := p(l)
			h2 := l.put(refEntry(2, featRef, gitrepo.ZeroHash, hx('a')), h1)
			return l.put(refEntry(2, "refs/heads/other", gitrepo.ZeroHash, hx('b')), h2)
		}, rsl.ErrNotEntry},
		{"numbers going up", func(l *logWriter) gitrepo.Hash {
			h1 := p(l)
			h5 := l.put(refEntry(5, featRef, gitrepo.ZeroHash, hx('a')), h1)
			return l.put(refEntry(3, "refs/heads/other", gitrepo.ZeroHash, hx('b')), h5)
		}, rsl.ErrNotEntry},
		{"log not starting at entry 1", func(l *logWriter) gitrepo.Hash {
			return l.put(refEntry(2, featRef, gitrepo.ZeroHash, hx('a')), gitrepo.ZeroHash)
		}, rsl.ErrNotEntry},
		{"entry 1 in the middle", func(l *logWriter) gitrepo.Hash {
			h1 := p(l)
			return l.put(refEntry(1, featRef, gitrepo.ZeroHash, hx('a')), h1)
		}, rsl.ErrNotEntry},
		{"missing parent", func(l *logWriter) gitrepo.Hash {
			return l.put(refEntry(2, featRef, gitrepo.ZeroHash, hx('a')), hx('9'))
		}, nil},
		{"source commit in the chain", func(l *logWriter) gitrepo.Hash {
			raw := gitrepo.EncodeCommit(hx('7'), nil, testWho, testWho, "initial commit\n")
			raw, err := gitrepo.AddSignature(raw, []byte(fakeSig))
			if err != nil {
				l.t.Fatal(err)
			}
			h, err := l.s.WriteObject("commit", raw)
			if err != nil {
				l.t.Skipf("store refuses a commit with a missing tree: %v", err)
			}
			return l.put(refEntry(2, featRef, gitrepo.ZeroHash, hx('a')), h)
		}, rsl.ErrNotEntry},
		{"unsigned entry in the chain", func(l *logWriter) gitrepo.Hash {
			h1 := p(l)
			e := refEntry(2, featRef, gitrepo.ZeroHash, hx('a'))
			payload, err := rsl.Payload(&e, h1, testWho)
			if err != nil {
				l.t.Fatal(err)
			}
			h2, err := l.s.WriteObject("commit", payload)
			if err != nil {
				l.t.Fatal(err)
			}
			return l.put(refEntry(3, "refs/heads/other", gitrepo.ZeroHash, hx('b')), h2)
		}, rsl.ErrNotEntry},
		{"non-canonical message in the chain", func(l *logWriter) gitrepo.Hash {
			h1 := p(l)
			raw := gitrepo.EncodeCommit(emptyTree(), []gitrepo.Hash{h1}, testWho, testWho, refMsg("2", "update", featRef, a40, b40)+"\n")
			raw, err := gitrepo.AddSignature(raw, []byte(fakeSig))
			if err != nil {
				l.t.Fatal(err)
			}
			h2, err := l.s.WriteObject("commit", raw)
			if err != nil {
				l.t.Fatal(err)
			}
			return l.put(refEntry(3, "refs/heads/other", gitrepo.ZeroHash, hx('b')), h2)
		}, rsl.ErrMalformed},
	}
	for _, b := range backends(t) {
		for _, sc := range scenarios {
			t.Run(b.name+"/"+sc.name, func(t *testing.T) {
				l := newLog(t, b.s)
				tip := sc.build(l)
				check := func(what string, err error) {
					t.Helper()
					if err == nil {
						t.Fatalf("%s accepted the tampered log", what)
					}
					if sc.wantErr != nil && !errors.Is(err, sc.wantErr) {
						t.Fatalf("%s: %v, want an error wrapping %v", what, err, sc.wantErr)
					}
					// Each layer adds only its own context ("rsl: rsl:
					// not an RSL entry commit", "rsl: entry X: rsl:
					// malformed entry" before).
					if msg := err.Error(); !strings.HasPrefix(msg, "rsl: ") || strings.Count(msg, "rsl: ") != 1 || strings.Count(msg, "gitrepo: ") > 1 {
						t.Errorf("%s: %q repeats a package prefix", what, msg)
					}
				}
				recs, err := rsl.ReadLog(b.s, tip)
				if recs != nil {
					t.Fatalf("ReadLog returned records with error %v", err)
				}
				check("ReadLog", err)
				check("WalkBack", rsl.WalkBack(b.s, tip, func(*rsl.Record) (bool, error) { return true, nil }))
				// No entry is for this ref: LatestFor walks the whole log.
				rec, err := rsl.LatestFor(b.s, tip, "refs/heads/never")
				if rec != nil {
					t.Fatalf("LatestFor returned %+v with error %v", rec, err)
				}
				check("LatestFor", err)
			})
		}
	}
}

// TestReadLogHugeNumber: the number of the tip entry comes from the
// repository, which may be hostile. ReadLog must neither panic nor try to
// allocate memory for that many entries, and logs longer than MaxEntries
// are refused.
func TestReadLogHugeNumber(t *testing.T) {
	for _, n := range []uint64{rsl.MaxEntries + 1, 1 << 40, rsl.MaxNumber} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := newMemStore()
			l := newLog(t, s)
			tip := l.put(refEntry(n, mainRef, gitrepo.ZeroHash, hx('a')), hx('9')) // parent missing
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("ReadLog panicked: %v", r)
				}
			}()
			_, err := rsl.ReadLog(s, tip)
			if !errors.Is(err, rsl.ErrNotEntry) {
				t.Fatalf("ReadLog = %v, want a refusal wrapping ErrNotEntry (more than MaxEntries entries)", err)
			}
		})
	}
}

// TestWriteErrors: Write refuses invalid entries before signing and
// reports signing and storage failures.
func TestWriteErrors(t *testing.T) {
	s := newMemStore()
	signed := false
	_, err := rsl.Write(s, &rsl.Entry{Number: 1, Type: rsl.TypeRef, Ref: "main", New: hx('a')}, gitrepo.ZeroHash, testWho,
		func([]byte) ([]byte, error) { signed = true; return []byte(fakeSig), nil })
	if !errors.Is(err, rsl.ErrMalformed) || signed {
		t.Fatalf("Write of an invalid entry: %v (signed=%v)", err, signed)
	}
	boom := errors.New("no agent")
	e := refEntry(1, rsl.PolicyRef, gitrepo.ZeroHash, hx('a'))
	if _, err := rsl.Write(s, &e, gitrepo.ZeroHash, testWho, func([]byte) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("Write with a failing signer: %v", err)
	}
	if _, err := rsl.Write(s, &e, gitrepo.ZeroHash, testWho, func([]byte) ([]byte, error) { return []byte(" \n"), nil }); err == nil {
		t.Fatal("Write accepted an empty signature")
	}
	if len(s.commits) != 0 {
		t.Fatalf("failed writes stored %d objects", len(s.commits))
	}
	// The payload handed to the signer is the exact signed part of the
	// stored commit.
	var got []byte
	h, err := rsl.Write(s, &e, gitrepo.ZeroHash, testWho, func(p []byte) ([]byte, error) {
		got = append([]byte(nil), p...)
		return []byte(fakeSig), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.ReadCommit(h)
	if string(c.SignedPayload()) != string(got) || string(c.Signature) != fakeSig {
		t.Fatalf("stored commit: payload %q signature %q", c.SignedPayload(), c.Signature)
	}
}

// countingReader counts the entries a walk reads.
type countingReader struct {
	rsl.Reader
	n int
}

func (c *countingReader) ReadCommit(h gitrepo.Hash) (*gitrepo.Commit, error) {
	c.n++
	return c.Reader.ReadCommit(h)
}

// FindRecordedAfter reads no entry at or before knownTip for the states an
// earlier search ruled out there (known), and still finds every state it
// is asked about that an entry records.
func TestFindRecordedAfter(t *testing.T) {
	s := newMemStore()
	ids := sampleLog(t, s)
	set := func(hs ...gitrepo.Hash) map[gitrepo.Hash]bool {
		m := map[gitrepo.Hash]bool{}
		for _, h := range hs {
			m[h] = true
		}
		return m
	}
	junk := hx('f')
	for _, tc := range []struct {
		name     string
		want     map[gitrepo.Hash]bool
		knownTip gitrepo.Hash
		known    map[gitrepo.Hash]bool
		found    map[gitrepo.Hash]bool
		reads    int
	}{
		{"nothing known: the whole log", set(junk), gitrepo.ZeroHash, nil, set(), 9},
		{"known junk: only the entries after knownTip", set(junk), ids[6], set(junk), set(), 4},
		{"known junk and a new state: until the new one is found", set(junk, hx('c')), ids[6], set(junk), set(hx('c')), 6},
		{"a known state recorded after knownTip is found", set(hx('e')), ids[6], set(hx('e')), set(hx('e')), 1},
		{"an old state, as old state of a later entry", set(hx('a')), ids[8], set(), set(hx('a')), 1},
		{"knownTip not in the log: the whole log", set(junk), hx('9'), set(junk), set(), 9},
	} {
		r := &countingReader{Reader: s}
		got, err := rsl.FindRecordedAfter(r, ids[9], tc.want, tc.knownTip, tc.known)
		if err != nil || !reflect.DeepEqual(got, tc.found) || r.n != tc.reads {
			t.Errorf("%s: found %v after %d reads (%v), want %v after %d", tc.name, got, r.n, err, tc.found, tc.reads)
		}
	}
}

// LatestForEach answers, from one walk, what LatestFor answers ref by ref
// (skips included), reading no entry twice and stopping once every ref is
// found.
func TestLatestForEach(t *testing.T) {
	s := newMemStore()
	ids := sampleLog(t, s)
	refs := []string{rsl.PolicyRef, mainRef, featRef, "refs/tags/v1"}
	for tip := 1; tip < len(ids); tip++ {
		want := map[string]bool{}
		for _, ref := range refs {
			want[ref] = true
		}
		r := &countingReader{Reader: s}
		got, stopped, err := rsl.LatestForEach(r, ids[tip], want, nil)
		if err != nil || stopped {
			t.Fatalf("LatestForEach(#%d): stopped %v, %v", tip, stopped, err)
		}
		if r.n > tip {
			t.Errorf("LatestForEach(#%d) read %d entries of %d", tip, r.n, tip)
		}
		for _, ref := range refs {
			one, err := rsl.LatestFor(s, ids[tip], ref)
			if err != nil {
				t.Fatal(err)
			}
			switch all := got[ref]; {
			case (one == nil) != (all == nil):
				t.Errorf("#%d %s: LatestForEach %v, LatestFor %v", tip, ref, all, one)
			case one != nil && one.ID != all.ID:
				t.Errorf("#%d %s: LatestForEach #%d, LatestFor #%d", tip, ref, all.Entry.Number, one.Entry.Number)
			}
		}
	}
	// Once every ref asked is found, the walk stops: main at #9 reads one
	// entry; a stop before #8 reports the refs not found as undecided.
	r := &countingReader{Reader: s}
	if got, _, err := rsl.LatestForEach(r, ids[9], map[string]bool{mainRef: true}, nil); err != nil || got[mainRef].ID != ids[9] || r.n != 1 {
		t.Errorf("LatestForEach(#9, main) = %v after %d reads, %v", got, r.n, err)
	}
	got, stopped, err := rsl.LatestForEach(s, ids[9], map[string]bool{rsl.PolicyRef: true, featRef: true}, func(rec *rsl.Record) bool { return rec.Entry.Number < 8 })
	if err != nil || !stopped || got[rsl.PolicyRef] == nil || got[rsl.PolicyRef].ID != ids[8] || got[featRef] != nil {
		t.Errorf("LatestForEach stopped before #8 = %v, stopped %v, %v", got, stopped, err)
	}
}
