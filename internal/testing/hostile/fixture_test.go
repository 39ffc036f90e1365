package hostile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
	"github.com/git-secure/git-secure/internal/verify"
)

// now is the fixed clock of every fixture.
var now = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// timeout is the generous bound on every hostile input: a parser or
// verifier still busy after it hangs (a failure), it is no speed target.
const timeout = 2 * time.Minute

// bounded runs fn with a timeout and returns its error; it fails the test
// when fn does not return in time, or allocates more than maxAlloc bytes
// (when maxAlloc > 0). Tests in this package do not run in parallel, so
// the allocation count is fn's.
func bounded(t *testing.T, maxAlloc uint64, fn func() error) error {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		t.Fatalf("no answer within %v", timeout)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; maxAlloc > 0 && alloc > maxAlloc {
		t.Errorf("allocated %.1f MiB for this input, bound %.1f MiB", float64(alloc)/(1<<20), float64(maxAlloc)/(1<<20))
	}
	return err
}

const (
	kib = 1 << 10
	mib = 1 << 20
)

// wantErr requires err to wrap sentinel and mention every substring.
func wantErr(t *testing.T, what string, err, sentinel error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted, want an error wrapping %q", what, sentinel)
		return
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("%s: error %q does not wrap %q", what, clip(err.Error()), sentinel)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: error %q does not mention %q", what, clip(err.Error()), s)
		}
	}
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}

// fixture is a repository set up through internal/porcelain: main with two
// commits, persons alice and bob, rule protect-main (refs/heads/main,
// allow alice and bob, the given threshold) applied by alice.
type fixture struct {
	t    *testing.T
	s    *testutil.Sandbox
	dir  string
	g    *gitrepo.Repo
	r    *porcelain.Repo
	keys map[string]testutil.Key
}

func newFixture(t *testing.T, threshold int) *fixture {
	t.Helper()
	s := testutil.NewSandbox(t)
	f := &fixture{t: t, s: s, keys: map[string]testutil.Key{}}
	for _, n := range []string{"alice", "bob", "mallory"} {
		f.keys[n] = s.NewKey(n, "ed25519")
	}
	f.dir = s.InitRepo("repo", 2)
	g, err := gitrepo.OpenWithEnv(f.dir, s.Environ())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	f.g = g
	f.r = &porcelain.Repo{Git: g, Now: func() time.Time { return now }, Home: s.Home}
	if _, err := f.r.Init(f.keys["alice"].Private); err != nil {
		t.Fatalf("init: %v", err)
	}
	for _, n := range []string{"alice", "bob"} {
		pub := f.pub(n)
		f.stage(func(p, base *policy.Policy, now time.Time) error {
			return p.AddPerson(base, n, []ssh.PublicKey{pub}, now)
		})
	}
	f.stage(func(p, base *policy.Policy, now time.Time) error {
		return p.AddRule(base, policy.Rule{Name: "protect-main", Refs: []string{"refs/heads/main"}, Allow: []string{"alice", "bob"}, Threshold: threshold}, now)
	})
	if _, _, err := f.r.Apply(f.keys["alice"].Private); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if _, err := f.verify(); err != nil {
		t.Fatalf("the fixture does not verify: %v", err)
	}
	return f
}

func (f *fixture) stage(edit porcelain.Edit) {
	f.t.Helper()
	if _, err := f.r.Stage("test", edit); err != nil {
		f.t.Fatalf("stage: %v", err)
	}
}

func (f *fixture) pub(name string) ssh.PublicKey {
	f.t.Helper()
	data, err := os.ReadFile(f.keys[name].Public)
	if err != nil {
		f.t.Fatal(err)
	}
	pub, _, err := sign.ParsePublicKey(data)
	if err != nil {
		f.t.Fatal(err)
	}
	return pub
}

func (f *fixture) signer(name string) sign.Signer {
	f.t.Helper()
	s, err := sign.LoadSigner(sign.KeySpec{File: f.keys[name].Private})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { s.Close() })
	return s
}

func (f *fixture) verify() (*verify.Result, error) {
	return verify.Verify(f.g, verify.Options{Now: now})
}

func (f *fixture) ref(name string) gitrepo.Hash {
	f.t.Helper()
	h, _, err := f.g.ResolveRef(name)
	if err != nil {
		f.t.Fatal(err)
	}
	return h
}

func (f *fixture) setRef(name string, old, new gitrepo.Hash) {
	f.t.Helper()
	if err := f.g.UpdateRefs([]gitrepo.RefUpdate{{Name: name, Old: old, New: new}}, "hostile test"); err != nil {
		f.t.Fatal(err)
	}
}

// tip returns the log's tip and its entry.
func (f *fixture) tip() (gitrepo.Hash, *rsl.Entry) {
	f.t.Helper()
	tip := f.ref(rsl.Ref)
	c, err := f.g.ReadCommit(tip)
	if err != nil {
		f.t.Fatal(err)
	}
	e, err := rsl.FromCommit(c)
	if err != nil {
		f.t.Fatal(err)
	}
	return tip, e
}

// rawEntry writes an entry commit with an arbitrary message on top of
// parent, signed by key like a real entry, and returns it. Large objects
// are written by git hash-object straight from the bytes.
func (f *fixture) rawEntry(key string, msg []byte, parent gitrepo.Hash) gitrepo.Hash {
	f.t.Helper()
	who, err := f.r.Ident()
	if err != nil {
		f.t.Fatal(err)
	}
	tree, _ := gitrepo.ParseHash(gitrepo.EmptyTreeHash)
	var parents []gitrepo.Hash
	if !parent.IsZero() {
		parents = []gitrepo.Hash{parent}
	}
	payload := gitrepo.EncodeCommit(tree, parents, who, who, string(msg))
	sig, err := sign.SignSSHSig(f.signer(key), payload, sign.NamespaceGit)
	if err != nil {
		f.t.Fatal(err)
	}
	raw, err := gitrepo.AddSignature(payload, sig)
	if err != nil {
		f.t.Fatalf("add signature: %v", err)
	}
	h, err := f.g.WriteObject("commit", raw)
	if err != nil {
		f.t.Fatalf("write entry commit: %v", err)
	}
	return h
}

// appendRaw puts a raw entry on top of the log and returns it and a
// function that puts the log back.
func (f *fixture) appendRaw(key string, msg []byte) (gitrepo.Hash, func()) {
	f.t.Helper()
	tip, _ := f.tip()
	h := f.rawEntry(key, msg, tip)
	f.setRef(rsl.Ref, tip, h)
	return h, func() { f.setRef(rsl.Ref, h, tip) }
}

// mustFail verifies and requires a *verify.Failed wrapping kind whose
// message contains every substring, within maxAlloc bytes.
func (f *fixture) mustFail(what string, maxAlloc uint64, kind error, subs ...string) *verify.Failed {
	f.t.Helper()
	err := bounded(f.t, maxAlloc, func() error { _, err := f.verify(); return err })
	var failed *verify.Failed
	if !errors.As(err, &failed) {
		f.t.Errorf("%s: verify returned %v, want a verification failure (fail closed)", what, err)
		return nil
	}
	if !errors.Is(err, kind) {
		f.t.Errorf("%s: verify failed with %q, want a %q problem", what, clip(err.Error()), kind)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			f.t.Errorf("%s: verify's error %q does not name %q", what, clip(err.Error()), s)
		}
	}
	return failed
}

// entryMsg is a canonical-looking ref entry message with any ref text.
func entryMsg(n uint64, ref string, old, new gitrepo.Hash) string {
	verb := "update"
	if old.IsZero() {
		verb = "create"
	}
	return fmt.Sprintf("rsl #%d: %s %s\n\nformat: %s\nnumber: %d\ntype: ref\nref: %s\nold: %s\nnew: %s\n", n, verb, ref, rsl.Format, n, ref, old, new)
}
