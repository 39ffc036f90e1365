package attest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

var who = gitrepo.Ident{Name: "git-secure test", Email: "test@example.com", When: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}

func openRepo(t testing.TB) (*testutil.Sandbox, string, *gitrepo.Repo) {
	t.Helper()
	sb := testutil.NewSandbox(t)
	dir := sb.InitRepo("repo", 2)
	r, err := gitrepo.OpenWithEnv(dir, sb.Environ())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return sb, dir, r
}

func signApproval(t testing.TB, a Approval, s ssh.Signer) (string, []byte) {
	t.Helper()
	st, err := a.Statement()
	if err != nil {
		t.Fatal(err)
	}
	env, err := Sign(st, s)
	if err != nil {
		t.Fatal(err)
	}
	if !a.ToTree.IsZero() {
		return path.Join(ApprovalTreeDir(a.Ref, a.From, a.ToTree), SignerFile(s.PublicKey())), env
	}
	return path.Join(ApprovalDir(a.Ref, a.From, a.To), SignerFile(s.PublicKey())), env
}

func TestStoreAddApprovals(t *testing.T) {
	sb, dir, r := openRepo(t)
	head, err := gitrepo.ParseHash(sb.Git(dir, "rev-parse", "HEAD"))
	if err != nil {
		t.Fatal(err)
	}
	parent, err := gitrepo.ParseHash(sb.Git(dir, "rev-parse", "HEAD~1"))
	if err != nil {
		t.Fatal(err)
	}
	alice, bob := keyFile(t, sb, "alice", "ed25519"), keyFile(t, sb, "bob", "ed25519")

	s, err := OpenStore(r)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Tip().IsZero() {
		t.Fatalf("tip of missing ref = %s", s.Tip())
	}
	got, err := s.Approvals("refs/heads/main", parent, head)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v %v", got, err)
	}

	ap := Approval{Ref: "refs/heads/main", From: parent, To: head}
	p1, e1 := signApproval(t, ap, alice)
	c1, err := s.Add(p1, e1, who, "approve refs/heads/main by alice")
	if err != nil {
		t.Fatal(err)
	}
	if s.Tip() != c1 {
		t.Fatal("tip not moved")
	}
	if tip, ok, err := r.ResolveRef(Ref); err != nil || !ok || tip != c1 {
		t.Fatalf("ref = %s %v %v, want %s", tip, ok, err, c1)
	}
	commit, err := r.ReadCommit(c1)
	if err != nil {
		t.Fatal(err)
	}
	if len(commit.Parents) != 0 || commit.Message != "git-secure: approve refs/heads/main by alice\n" || commit.Author.Name != who.Name {
		t.Fatalf("first commit: %+v", commit)
	}
	blob, err := r.ReadBlobAt(commit.Tree, p1, MaxEnvelopeSize)
	if err != nil || !bytes.Equal(blob, e1) {
		t.Fatalf("blob at %s: %v", p1, err)
	}
	// git agrees with the layout.
	if out := sb.Git(dir, "ls-tree", "-r", "--name-only", Ref); out != p1 {
		t.Fatalf("ls-tree = %q, want %q", out, p1)
	}

	p2, e2 := signApproval(t, ap, bob)
	c2, err := s.Add(p2, e2, gitrepo.Ident{Name: "bob", Email: "bob@example.com"}, "git-secure: approval by bob")
	if err != nil {
		t.Fatal(err)
	}
	commit, err = r.ReadCommit(c2)
	if err != nil {
		t.Fatal(err)
	}
	if len(commit.Parents) != 1 || commit.Parents[0] != c1 || commit.Message != "git-secure: approval by bob\n" {
		t.Fatalf("second commit: %+v", commit)
	}
	if commit.Committer.When.IsZero() || time.Since(commit.Committer.When) > time.Hour {
		t.Fatalf("zero When not replaced by now: %v", commit.Committer.When)
	}

	// A fresh snapshot sees both; another update sees none.
	s2, err := OpenStore(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err = s2.Approvals("refs/heads/main", parent, head)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !bytes.Equal(got[SignerFile(alice.PublicKey())], e1) || !bytes.Equal(got[SignerFile(bob.PublicKey())], e2) {
		t.Fatalf("approvals = %v", keys(got))
	}
	for name, env := range got {
		e, err := ParseEnvelope(env)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckSignerFile(name, e); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Verify(trust(alice.PublicKey(), bob.PublicKey())); err != nil {
			t.Fatal(err)
		}
	}
	for _, other := range [][3]any{
		{"refs/heads/main", head, parent},
		{"refs/heads/other", parent, head},
		{"refs/heads/main", gitrepo.ZeroHash, head},
	} {
		got, err := s2.Approvals(other[0].(string), other[1].(gitrepo.Hash), other[2].(gitrepo.Hash))
		if err != nil || len(got) != 0 {
			t.Fatalf("other update %v: %v %v", other, keys(got), err)
		}
	}

	// A tree-bound approval has its own directory, keyed by the tree.
	tp, te := signApproval(t, Approval{Ref: ap.Ref, From: ap.From, To: ap.To, ToTree: commit.Tree}, alice)
	if tp == p1 {
		t.Fatal("tree-bound approval filed with the commit-bound ones")
	}
	if _, err := s2.Add(p1, te, who, "misfiled"); !errors.Is(err, ErrMismatch) {
		t.Fatalf("tree-bound approval at the commit-bound path: %v, want ErrMismatch", err)
	}
	c3, err := s2.Add(tp, te, who, "tree-bound approval by alice")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := s2.TreeApprovals("refs/heads/main", parent, commit.Tree)
	if err != nil || len(tg) != 1 || !bytes.Equal(tg[SignerFile(alice.PublicKey())], te) {
		t.Fatalf("tree approvals: %v %v", keys(tg), err)
	}
	e3 := e1 // alice's commit-bound approval is untouched
	got, err = s2.Approvals("refs/heads/main", parent, head)
	if err != nil || len(got) != 2 || !bytes.Equal(got[SignerFile(alice.PublicKey())], e3) {
		t.Fatalf("after the tree-bound add: %v %v", keys(got), err)
	}
	// Adding identical content again commits nothing.
	if c, err := s2.Add(tp, te, who, "again"); err != nil || c != c3 {
		t.Fatalf("idempotent add: %s %v, want %s", c, err, c3)
	}
	// The stale snapshot s still reads its own tip; its Add rebases.
	if s.Tip() != c2 {
		t.Fatal("stale snapshot moved")
	}
	got, err = s.Approvals("refs/heads/main", parent, head)
	if err != nil || !bytes.Equal(got[SignerFile(alice.PublicKey())], e1) {
		t.Fatalf("stale snapshot: %v", err)
	}
	carol := seedSigner(t, 9)
	p4, e4 := signApproval(t, ap, carol)
	c4, err := s.Add(p4, e4, who, "approval by carol")
	if err != nil {
		t.Fatal(err)
	}
	got, err = s.Approvals("refs/heads/main", parent, head)
	if err != nil || len(got) != 3 || !bytes.Equal(got[SignerFile(alice.PublicKey())], e3) {
		t.Fatalf("after stale add: %v %v", keys(got), err)
	}
	commit, err = r.ReadCommit(c4)
	if err != nil || len(commit.Parents) != 1 || commit.Parents[0] != c3 {
		t.Fatalf("stale add parent: %+v %v", commit, err)
	}
	if n := sb.Git(dir, "rev-list", "--count", Ref); n != "4" {
		t.Fatalf("chain length %s", n)
	}
	sb.Git(dir, "fsck", "--strict", "--no-dangling")
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestStoreAddRejects(t *testing.T) {
	_, _, r := openRepo(t)
	s, err := OpenStore(r)
	if err != nil {
		t.Fatal(err)
	}
	alice, bob := seedSigner(t, 1), seedSigner(t, 2)
	ap := Approval{Ref: "refs/heads/main", From: h(1), To: h(2)}
	p, env := signApproval(t, ap, alice)
	tr := TestRun{Tree: h(5), Command: []string{"go", "test"}, StartedAt: h0time}
	trs, err := tr.Statement()
	if err != nil {
		t.Fatal(err)
	}
	trEnv, err := Sign(trs, alice)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		path string
		env  []byte
		want error
	}{
		{"other signer's file", path.Join(ApprovalDir(ap.Ref, ap.From, ap.To), SignerFile(bob.PublicKey())), env, ErrMismatch},
		{"other update's dir", path.Join(ApprovalDir(ap.Ref, ap.To, ap.From), SignerFile(alice.PublicKey())), env, ErrMismatch},
		{"test run in approvals", path.Join(ApprovalDir(ap.Ref, ap.From, ap.To), SignerFile(alice.PublicKey())), trEnv, ErrMalformed},
		{"approval in tests", path.Join(TestRunDir(h(5)), SignerFile(alice.PublicKey())), env, ErrMalformed},
		{"test run for other tree", path.Join(TestRunDir(h(6)), SignerFile(alice.PublicKey())), trEnv, ErrMismatch},
		{"bad envelope", p, []byte(`{}`), ErrMalformed},
		{"too large", p, bytes.Repeat([]byte(" "), MaxEnvelopeSize+1), ErrMalformed},
		{"unknown kind", "other/" + strings.TrimPrefix(p, "approvals/"), env, ErrMalformed},
		{"extra level", "approvals/x/" + strings.TrimPrefix(p, "approvals/"), env, ErrMalformed},
		{"no .json", strings.TrimSuffix(p, ".json"), env, ErrMalformed},
		{"uppercase", strings.ToUpper(p[:len(p)-5]) + ".json", env, ErrMalformed},
		{"absolute", "/" + p, env, ErrMalformed},
		{"dotdot", "approvals/../" + p, env, ErrMalformed},
	}
	for _, c := range cases {
		if _, err := s.Add(c.path, c.env, who, "x"); !errors.Is(err, c.want) {
			t.Errorf("%s: Add(%q) = %v, want %v", c.name, c.path, err, c.want)
		}
	}
	if !s.Tip().IsZero() {
		t.Fatal("rejected Add moved the tip")
	}
	if _, ok, _ := r.ResolveRef(Ref); ok {
		t.Fatal("rejected Add created the ref")
	}
}

func TestStoreTestRuns(t *testing.T) {
	sb, dir, r := openRepo(t)
	tree, err := gitrepo.ParseHash(sb.Git(dir, "rev-parse", "HEAD^{tree}"))
	if err != nil {
		t.Fatal(err)
	}
	head, err := gitrepo.ParseHash(sb.Git(dir, "rev-parse", "HEAD"))
	if err != nil {
		t.Fatal(err)
	}
	alice := keyFile(t, sb, "alice", "ed25519")
	tr := TestRun{Tree: tree, Commit: head, Command: []string{"go", "test", "./..."}, ExitCode: 0, DurationMs: 42,
		Tools: map[string]string{"go": "go1.26.8"}, StartedAt: h0time}
	st, err := tr.Statement()
	if err != nil {
		t.Fatal(err)
	}
	env, err := Sign(st, alice)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenStore(r)
	if err != nil {
		t.Fatal(err)
	}
	// Approvals and test runs live side by side.
	pa, ea := signApproval(t, Approval{Ref: "refs/heads/main", From: gitrepo.ZeroHash, To: head}, alice)
	if _, err := s.Add(pa, ea, who, ""); err != nil {
		t.Fatal(err)
	}
	c, err := s.Add(path.Join(TestRunDir(tree), SignerFile(alice.PublicKey())), env, who, "")
	if err != nil {
		t.Fatal(err)
	}
	commit, err := r.ReadCommit(c)
	if err != nil || !strings.HasPrefix(commit.Message, "git-secure: add tests/") {
		t.Fatalf("message %q %v", commit.Message, err)
	}
	got, err := s.TestRuns(tree)
	if err != nil || len(got) != 1 || !bytes.Equal(got[SignerFile(alice.PublicKey())], env) {
		t.Fatalf("TestRuns = %v %v", keys(got), err)
	}
	e, err := ParseEnvelope(got[SignerFile(alice.PublicKey())])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Verify(trust(alice.PublicKey())); err != nil {
		t.Fatal(err)
	}
	back, err := ParseTestRun(e.Payload)
	if err != nil || back.Tree != tree || back.Commit != head {
		t.Fatalf("%+v %v", back, err)
	}
	if got, err := s.TestRuns(head); err != nil || len(got) != 0 {
		t.Fatalf("TestRuns(other) = %v %v", keys(got), err)
	}
	if got, err := s.Approvals("refs/heads/main", gitrepo.ZeroHash, head); err != nil || len(got) != 1 {
		t.Fatalf("Approvals = %v %v", keys(got), err)
	}
}

// TestStoreReadIgnoresJunk plants entries a writer would never make and
// checks readers skip them, and that an oversized envelope fails the read.
func TestStoreReadIgnoresJunk(t *testing.T) {
	sb, dir, r := openRepo(t)
	alice := seedSigner(t, 1)
	ap := Approval{Ref: "refs/heads/main", From: h(1), To: h(2)}
	p, env := signApproval(t, ap, alice)
	s, err := OpenStore(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(p, env, who, ""); err != nil {
		t.Fatal(err)
	}
	adir := ApprovalDir(ap.Ref, ap.From, ap.To)
	write := func(rel string, content []byte, mode uint32) {
		t.Helper()
		blob, err := r.WriteObject("blob", content)
		if err != nil {
			t.Fatal(err)
		}
		tree, err := putEntry(r, s.snapshot(), strings.Split(rel, "/"), mode, blob)
		if err != nil {
			t.Fatal(err)
		}
		c, err := r.WriteObject("commit", gitrepo.EncodeCommit(tree, []gitrepo.Hash{s.Tip()}, who, who, "junk\n"))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.UpdateRefs([]gitrepo.RefUpdate{{Name: Ref, Old: s.Tip(), New: c}}, "junk"); err != nil {
			t.Fatal(err)
		}
		if err := s.Refresh(); err != nil {
			t.Fatal(err)
		}
	}
	write(adir+"/README", []byte("hi"), gitrepo.ModeFile)
	write(adir+"/"+strings.Repeat("A", 64)+".json", env, gitrepo.ModeFile)
	write(adir+"/sub/"+SignerFile(alice.PublicKey()), env, gitrepo.ModeFile)
	write(adir+"/"+SignerFile(seedSigner(t, 2).PublicKey()), env, gitrepo.ModeExec)
	write(adir+"/"+SignerFile(seedSigner(t, 3).PublicKey()), env, gitrepo.ModeSymlink)
	got, err := s.Approvals(ap.Ref, ap.From, ap.To)
	if err != nil || len(got) != 1 || !bytes.Equal(got[SignerFile(alice.PublicKey())], env) {
		t.Fatalf("with junk: %v %v", keys(got), err)
	}
	big := strings.Repeat("0", 64) + ".json"
	write(adir+"/"+big, bytes.Repeat([]byte("x"), MaxEnvelopeSize+1), gitrepo.ModeFile)
	// An oversized file cannot be an envelope: it is listed without
	// content (callers count it as malformed), and the read still succeeds.
	got, err = s.Approvals(ap.Ref, ap.From, ap.To)
	if err != nil {
		t.Fatalf("oversized envelope: %v", err)
	}
	if data, ok := got[big]; !ok || data != nil {
		t.Fatalf("oversized envelope: listed=%v content=%d bytes; want listed with no content", ok, len(data))
	}
	if _, err := ParseEnvelope(got[big]); !errors.Is(err, ErrMalformed) {
		t.Fatalf("oversized envelope parses: %v", err)
	}
	sb.Git(dir, "fsck", "--no-dangling")
}

// putEntry is Store.put with a chosen mode for the leaf, for planting junk.
func putEntry(r Repo, tree gitrepo.Hash, parts []string, mode uint32, blob gitrepo.Hash) (gitrepo.Hash, error) {
	var entries []gitrepo.TreeEntry
	if !tree.IsZero() {
		got, err := r.ReadTree(tree)
		if err != nil {
			return gitrepo.ZeroHash, err
		}
		entries = got
	}
	e := gitrepo.TreeEntry{Mode: mode, Name: parts[0], Hash: blob}
	var sub gitrepo.Hash
	for _, x := range entries {
		if x.Name == parts[0] {
			sub = x.Hash
		}
	}
	if len(parts) > 1 {
		h, err := putEntry(r, sub, parts[1:], mode, blob)
		if err != nil {
			return gitrepo.ZeroHash, err
		}
		e = gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: parts[0], Hash: h}
	}
	out := []gitrepo.TreeEntry{e}
	for _, x := range entries {
		if x.Name != parts[0] {
			out = append(out, x)
		}
	}
	return r.WriteTree(out)
}

func TestStoreConcurrentAdds(t *testing.T) {
	sb, dir, r := openRepo(t)
	head, err := gitrepo.ParseHash(sb.Git(dir, "rev-parse", "HEAD"))
	if err != nil {
		t.Fatal(err)
	}
	ap := Approval{Ref: "refs/heads/main", From: gitrepo.ZeroHash, To: head}
	const n = 4
	signers := make([]ssh.Signer, n)
	paths := make([]string, n)
	envs := make([][]byte, n)
	stores := make([]*Store, n)
	for i := range signers {
		signers[i] = keyFile(t, sb, fmt.Sprintf("k%d", i), "ed25519")
		paths[i], envs[i] = signApproval(t, ap, signers[i])
		// Separate stores (as separate processes would have), each with the
		// same stale snapshot, so every loser must retry.
		if stores[i], err = OpenStore(r); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = stores[i].Add(paths[i], envs[i], who, fmt.Sprintf("approval %d", i))
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Add %d: %v", i, err)
		}
	}
	s, err := OpenStore(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Approvals(ap.Ref, ap.From, ap.To)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d approvals landed, want %d: %v", len(got), n, keys(got))
	}
	for i := range signers {
		if !bytes.Equal(got[SignerFile(signers[i].PublicKey())], envs[i]) {
			t.Fatalf("approval %d missing", i)
		}
	}
	if c := sb.Git(dir, "rev-list", "--count", Ref); c != fmt.Sprint(n) {
		t.Fatalf("chain has %s commits, want %d", c, n)
	}
	if m := sb.Git(dir, "rev-list", "--merges", "--count", Ref); m != "0" {
		t.Fatalf("chain has %s merges", m)
	}

	// Concurrent Adds through one shared Store are serialized.
	shared, err := OpenStore(r)
	if err != nil {
		t.Fatal(err)
	}
	ap2 := Approval{Ref: "refs/heads/other", From: gitrepo.ZeroHash, To: head}
	for i := 0; i < n; i++ {
		paths[i], envs[i] = signApproval(t, ap2, signers[i])
	}
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = shared.Add(paths[i], envs[i], who, "shared")
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("shared Add %d: %v", i, err)
		}
	}
	if got, err := shared.Approvals(ap2.Ref, ap2.From, ap2.To); err != nil || len(got) != n {
		t.Fatalf("shared: %v %v", keys(got), err)
	}
}

// TestStoreAppendOnly: Dropped names what a newer store tree removed or
// changed (and nothing for equal trees or additions), Add keeps a stored
// envelope rather than replace it, and a WithHistory view reads what a
// later commit dropped.
func TestStoreAppendOnly(t *testing.T) {
	sb, dir, r := openRepo(t)
	tree, _ := gitrepo.ParseHash(sb.Git(dir, "rev-parse", "HEAD^{tree}"))
	head, _ := gitrepo.ParseHash(sb.Git(dir, "rev-parse", "HEAD"))
	alice, bob := keyFile(t, sb, "alice", "ed25519"), keyFile(t, sb, "bob", "ed25519")
	s, err := OpenStore(r)
	if err != nil {
		t.Fatal(err)
	}
	pa, ea := signApproval(t, Approval{Ref: "refs/heads/main", From: gitrepo.ZeroHash, To: head}, alice)
	pb, eb := signApproval(t, Approval{Ref: "refs/heads/main", From: gitrepo.ZeroHash, To: head}, bob)
	first, err := s.Add(pa, ea, who, "")
	if err != nil {
		t.Fatal(err)
	}
	treeOf := func(c gitrepo.Hash) gitrepo.Hash {
		commit, err := r.ReadCommit(c)
		if err != nil {
			t.Fatal(err)
		}
		return commit.Tree
	}
	second, err := s.Add(pb, eb, who, "")
	if err != nil {
		t.Fatal(err)
	}
	if d, err := Dropped(r, treeOf(first), treeOf(second)); err != nil || len(d) != 0 {
		t.Fatalf("an addition: Dropped = %v, %v; want nothing", d, err)
	}
	if d, err := Dropped(r, treeOf(second), treeOf(second)); err != nil || len(d) != 0 {
		t.Fatalf("equal trees: Dropped = %v, %v; want nothing", d, err)
	}

	// A test run started again later by the same signer: the stored one
	// stays (a second one would count for nobody more).
	run := func(at time.Time) []byte {
		st, err := TestRun{Tree: tree, Commit: head, Command: []string{"make", "test"}, StartedAt: at}.Statement()
		if err != nil {
			t.Fatal(err)
		}
		env, err := Sign(st, alice)
		if err != nil {
			t.Fatal(err)
		}
		return env
	}
	pr := path.Join(TestRunDir(tree), SignerFile(alice.PublicKey()))
	third, err := s.Add(pr, run(h0time), who, "")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.Add(pr, run(h0time.Add(time.Hour)), who, ""); err != nil || again != third {
		t.Fatalf("a second test run over the stored one: %s, %v; want the store unchanged at %s", again, err, third)
	}

	// One commit drops alice's approval and replaces bob's with garbage.
	junk, _ := r.WriteObject("blob", []byte("{}"))
	wiped, err := putEntry(r, gitrepo.ZeroHash, strings.Split(pb, "/"), gitrepo.ModeFile, junk)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Dropped(r, treeOf(third), wiped)
	if err != nil {
		t.Fatal(err)
	}
	want := []StoredFile{{Path: pa}, {Path: pb, Changed: true}, {Path: pr}}
	sort.Slice(want, func(i, j int) bool { return want[i].Path < want[j].Path })
	if len(d) != len(want) {
		t.Fatalf("Dropped = %+v, want paths %+v", d, want)
	}
	for i := range want {
		if d[i].Path != want[i].Path || d[i].Changed != want[i].Changed || d[i].Blob.IsZero() {
			t.Errorf("Dropped[%d] = %+v, want %+v", i, d[i], want[i])
		}
	}
	c, err := r.WriteObject("commit", gitrepo.EncodeCommit(wiped, []gitrepo.Hash{third}, who, who, "wipe\n"))
	if err != nil {
		t.Fatal(err)
	}
	at, err := OpenStoreAt(r, c)
	if err != nil {
		t.Fatal(err)
	}
	dirA := path.Dir(pa)
	if files, err := at.Envelopes(dirA); err != nil || len(files) != 1 || files[0].Data == nil || bytes.Equal(files[0].Data, eb) {
		t.Fatalf("tip after the wipe: %d files, %v; want bob's garbage only", len(files), err)
	}
	view, dropped, err := at.WithHistory()
	if err != nil || !dropped {
		t.Fatalf("WithHistory = %v, %v; want something dropped", dropped, err)
	}
	files, err := view.Envelopes(dirA)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range files {
		got[string(f.Data)] = true
	}
	if len(files) != 3 || !got[string(ea)] || !got[string(eb)] || !got["{}"] {
		t.Fatalf("union over the history: %d files; want alice's, bob's and the garbage", len(files))
	}
	if _, dropped, err := s.WithHistory(); err != nil || dropped {
		t.Fatalf("an intact store: WithHistory dropped = %v, %v; want nothing", dropped, err)
	}
	// A bound on the walk's comparisons (a push's budget): past it, the
	// walk stops with ErrHistoryBudget instead of going on.
	bounded, err := OpenStoreAt(r, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := bounded.WithHistoryLimit(1); !errors.Is(err, ErrHistoryBudget) {
		t.Fatalf("WithHistoryLimit(1) = %v; want ErrHistoryBudget", err)
	}
	if _, dropped, err := bounded.WithHistoryLimit(1 << 20); err != nil || !dropped {
		t.Fatalf("WithHistoryLimit(1<<20) = %v, %v; want the walk within the bound", dropped, err)
	}

	// The walk's result is kept for the next one, which starts from it
	// only when it is for an ancestor: a line planted in the file shows
	// which.
	file := historyFile(r.GitDir())
	data, err := os.ReadFile(file)
	if err != nil || !strings.HasPrefix(string(data), "tip "+third.String()+"\n") {
		// s (at third) walked last.
		t.Fatalf("history file after the walk: %q, %v", data, err)
	}
	planted := StoredFile{Path: path.Join(dirA, strings.Repeat("c", 64)+".json"), Blob: junk}
	writeHistory := func(tip gitrepo.Hash) {
		h := newHistory()
		h.add(planted)
		saveHistory(r.GitDir(), tip, h)
	}
	readsPlanted := func(tip gitrepo.Hash) bool {
		st, err := OpenStoreAt(r, tip)
		if err != nil {
			t.Fatal(err)
		}
		v, _, err := st.WithHistory()
		if err != nil {
			t.Fatal(err)
		}
		files, err := v.Envelopes(dirA)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if f.Name == planted.Name() {
				return true
			}
		}
		return false
	}
	writeHistory(first)
	if !readsPlanted(c) {
		t.Errorf("a walk from a descendant of the file's tip did not start from the file")
	}
	writeHistory(c)
	if readsPlanted(third) {
		t.Errorf("a walk from a commit that does not descend from the file's tip used the file")
	}
	os.WriteFile(file, []byte("garbage"), 0o644)
	fresh, err := OpenStoreAt(r, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, dropped, err := fresh.WithHistory(); err != nil || !dropped || readsPlanted(c) {
		t.Errorf("a damaged history file: WithHistory = %v, %v; want a new walk", dropped, err)
	}
}
