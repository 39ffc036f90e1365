package verify_test

// End-to-end security scenarios: a real repository is set up through
// internal/porcelain (init, persons, a two-person rule on main), then either
// used as intended (must verify) or attacked by raw git and gitrepo
// manipulation (must fail with the specific error kind, naming the entry,
// ref or rule at fault).

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
	"github.com/git-secure/git-secure/internal/verify"
)

// ScenarioNow is the fixed clock of every scenario.
var ScenarioNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// scenarioKeys are made once per template: persons alice, bob, carol; an
// outsider mallory; dave's two keys.
var scenarioKeys = []string{"alice", "bob", "carol", "mallory", "dave1", "dave2"}

// ScenarioTemplate is a repository set up once per top-level test and
// copied for each subtest: three commits on main, an annotated tag v1.0,
// Init by alice, persons alice, bob and carol, and rule protect-main
// (refs/heads/main, threshold 2 of alice, bob, carol) applied.
type ScenarioTemplate struct {
	Home string
	Keys map[string]testutil.Key
	Dir  string
}

// NewScenarioTemplate builds the standard setup.
func NewScenarioTemplate(t testing.TB) *ScenarioTemplate {
	t.Helper()
	s := testutil.NewSandbox(t)
	tmpl := &ScenarioTemplate{Home: s.Home, Keys: map[string]testutil.Key{}}
	for _, name := range scenarioKeys {
		tmpl.Keys[name] = s.NewKey(name, "ed25519")
	}
	tmpl.Dir = s.InitRepo("template", 3)
	s.Git(tmpl.Dir, "tag", "-a", "v1.0", "-m", "release 1.0")
	f := tmpl.open(t, s, tmpl.Dir)
	if _, err := f.R.Init(f.Key("alice")); err != nil {
		t.Fatalf("init: %v", err)
	}
	for _, name := range []string{"alice", "bob", "carol"} {
		f.AddPerson(name, name)
	}
	f.AddRule(policy.Rule{Name: "protect-main", Refs: []string{"refs/heads/main"}, Allow: []string{"alice", "bob", "carol"}, Threshold: 2})
	f.Apply("alice")
	f.MustVerify(verify.Options{})
	return tmpl
}

// Clone copies the template repository into a fresh directory for t.
func (tmpl *ScenarioTemplate) Clone(t testing.TB) *ScenarioFixture {
	t.Helper()
	s := &testutil.Sandbox{T: t, Home: tmpl.Home}
	dst := filepath.Join(t.TempDir(), "repo")
	if out, err := exec.Command("cp", "-a", tmpl.Dir, dst).CombinedOutput(); err != nil {
		t.Fatalf("copy template: %v: %s", err, out)
	}
	return tmpl.open(t, s, dst)
}

func (tmpl *ScenarioTemplate) open(t testing.TB, s *testutil.Sandbox, dir string) *ScenarioFixture {
	t.Helper()
	g, err := gitrepo.OpenWithEnv(dir, s.Environ())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	f := &ScenarioFixture{T: t, S: s, Dir: dir, G: g, Keys: tmpl.Keys}
	f.R = &porcelain.Repo{Git: g, Now: func() time.Time { return ScenarioNow }, Home: s.Home}
	return f
}

// ScenarioFixture is one repository under test.
type ScenarioFixture struct {
	T    testing.TB
	S    *testutil.Sandbox
	Dir  string
	G    *gitrepo.Repo
	R    *porcelain.Repo
	Keys map[string]testutil.Key
}

// Key is the private key file of a named key.
func (f *ScenarioFixture) Key(name string) string {
	k, ok := f.Keys[name]
	if !ok {
		f.T.Fatalf("no key %s", name)
	}
	return k.Private
}

// Pub is the public key of a named key.
func (f *ScenarioFixture) Pub(name string) ssh.PublicKey {
	f.T.Helper()
	data, err := os.ReadFile(f.Keys[name].Public)
	if err != nil {
		f.T.Fatal(err)
	}
	pub, _, err := sign.ParsePublicKey(data)
	if err != nil {
		f.T.Fatal(err)
	}
	return pub
}

// FP is the SSH fingerprint of a named key.
func (f *ScenarioFixture) FP(name string) string { return sign.Fingerprint(f.Pub(name)) }

// Ref returns the current value of ref (zero when absent).
func (f *ScenarioFixture) Ref(ref string) gitrepo.Hash {
	f.T.Helper()
	h, _, err := f.G.ResolveRef(ref)
	if err != nil {
		f.T.Fatal(err)
	}
	return h
}

// SetRef moves ref with plain git (no entry); zero deletes it.
func (f *ScenarioFixture) SetRef(ref string, h gitrepo.Hash) {
	f.T.Helper()
	if h.IsZero() {
		f.S.Git(f.Dir, "update-ref", "-d", ref)
		return
	}
	f.S.Git(f.Dir, "update-ref", ref, h.String())
}

// CommitMain commits a change on the checked-out main and returns it.
func (f *ScenarioFixture) CommitMain(msg string) gitrepo.Hash {
	f.T.Helper()
	return scenarioHash(f.T, f.S.Commit(f.Dir, "main-"+strings.ReplaceAll(msg, " ", "-")+".txt", msg+"\n", msg))
}

// NewCommit makes a commit on top of parent (same tree) without touching
// any ref.
func (f *ScenarioFixture) NewCommit(parent gitrepo.Hash, msg string) gitrepo.Hash {
	f.T.Helper()
	return scenarioHash(f.T, f.S.Git(f.Dir, "commit-tree", parent.String()+"^{tree}", "-p", parent.String(), "-m", msg))
}

func scenarioHash(t testing.TB, s string) gitrepo.Hash {
	t.Helper()
	h, err := gitrepo.ParseHash(strings.TrimSpace(s))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Record records ref with a named key and fails the test on error.
func (f *ScenarioFixture) Record(key, ref string) *porcelain.RecordResult {
	f.T.Helper()
	res, err := f.R.Record(ref, f.Key(key))
	if err != nil {
		f.T.Fatalf("%s records %s: %v", key, ref, err)
	}
	return res
}

// Approve approves ref's update to `to` (from the default old value when
// from is "") with a named key.
func (f *ScenarioFixture) Approve(key, ref string, to gitrepo.Hash, from string) *porcelain.ApproveResult {
	f.T.Helper()
	res, err := f.R.Approve(ref, to.String(), from, f.Key(key))
	if err != nil {
		f.T.Fatalf("%s approves %s -> %s: %v", key, ref, to, err)
	}
	return res
}

// Stage stages one policy edit.
func (f *ScenarioFixture) Stage(desc string, edit porcelain.Edit) {
	f.T.Helper()
	if _, err := f.R.Stage(desc, edit); err != nil {
		f.T.Fatalf("stage %s: %v", desc, err)
	}
}

// AddPerson stages a person with the given keys.
func (f *ScenarioFixture) AddPerson(name string, keys ...string) {
	f.T.Helper()
	var pubs []ssh.PublicKey
	for _, k := range keys {
		pubs = append(pubs, f.Pub(k))
	}
	f.Stage("add person "+name, func(p, base *policy.Policy, now time.Time) error { return p.AddPerson(base, name, pubs, now) })
}

// AddRule stages a rule.
func (f *ScenarioFixture) AddRule(r policy.Rule) {
	f.T.Helper()
	f.Stage("add rule "+r.Name, func(p, base *policy.Policy, now time.Time) error { return p.AddRule(base, r, now) })
}

// Apply applies the staged change with a named key and fails on error.
func (f *ScenarioFixture) Apply(key string) *porcelain.ApplyResult {
	f.T.Helper()
	res, _, err := f.R.Apply(f.Key(key))
	if err != nil {
		f.T.Fatalf("%s applies: %v", key, err)
	}
	return res
}

// DelegateCrypto has dave (key dave1) keep src/crypto/** in the rule
// file crypto, holding rules, signed by dave1 and applied by alice.
func (f *ScenarioFixture) DelegateCrypto(rules ...policy.Rule) {
	f.T.Helper()
	f.AddPerson("dave", "dave1")
	f.Stage("delegate crypto", func(p, base *policy.Policy, now time.Time) error {
		if err := p.Delegate(base, "", policy.Delegation{Name: "crypto", Paths: []string{"src/crypto/**"}, Signers: []string{"dave"}}, now); err != nil {
			return err
		}
		for _, r := range rules {
			if err := p.AddRuleIn(base, "crypto", r, now); err != nil {
				return err
			}
		}
		return nil
	})
	if _, err := f.R.SignStagedFile(f.Key("dave1"), "crypto"); err != nil {
		f.T.Fatal(err)
	}
	f.Apply("alice")
}

// SavePolicy writes p as a policy commit on top of the policy in force,
// moving no ref.
func (f *ScenarioFixture) SavePolicy(p *policy.Policy, msg string) gitrepo.Hash {
	f.T.Helper()
	who, err := f.R.Ident()
	if err != nil {
		f.T.Fatal(err)
	}
	pc, err := policy.Save(f.G, p, f.Ref(policy.Ref), who, msg)
	if err != nil {
		f.T.Fatal(err)
	}
	return pc
}

// ForcePolicy puts p in force by hand, around apply's checks: its policy
// commit (SavePolicy) and an entry for it signed with key. It returns the
// commit and the entry's number.
func (f *ScenarioFixture) ForcePolicy(key string, p *policy.Policy, msg string) (gitrepo.Hash, uint64) {
	f.T.Helper()
	pc := f.SavePolicy(p, msg)
	return pc, f.ForcePolicyCommit(key, pc)
}

// ForcePolicyCommit moves the policy ref to commit with an entry signed
// by key, bypassing porcelain; it returns the entry's number.
func (f *ScenarioFixture) ForcePolicyCommit(key string, commit gitrepo.Hash) uint64 {
	f.T.Helper()
	cur := f.Ref(policy.Ref)
	return f.Forge(key, &rsl.Entry{Type: rsl.TypeRef, Ref: rsl.PolicyRef, Old: cur, New: commit},
		gitrepo.RefUpdate{Name: policy.Ref, Old: cur, New: commit})
}

// Tip returns the log's tip and its entry.
func (f *ScenarioFixture) Tip() (gitrepo.Hash, *rsl.Entry) {
	f.T.Helper()
	tip := f.Ref(rsl.Ref)
	c, err := f.G.ReadCommit(tip)
	if err != nil {
		f.T.Fatal(err)
	}
	e, err := rsl.FromCommit(c)
	if err != nil {
		f.T.Fatal(err)
	}
	return tip, e
}

// Log returns every record of the log.
func (f *ScenarioFixture) Log() []*rsl.Record {
	f.T.Helper()
	recs, err := rsl.ReadLog(f.G, f.Ref(rsl.Ref))
	if err != nil {
		f.T.Fatal(err)
	}
	return recs
}

// SignFunc signs entries with a named key, as an attacker holding that key
// would, bypassing porcelain's checks.
func (f *ScenarioFixture) SignFunc(key string) rsl.SignFunc {
	f.T.Helper()
	s, err := sign.LoadSigner(sign.KeySpec{File: f.Key(key)})
	if err != nil {
		f.T.Fatal(err)
	}
	f.T.Cleanup(func() { s.Close() })
	return func(payload []byte) ([]byte, error) { return sign.SignSSHSig(s, payload, sign.NamespaceGit) }
}

// Write stores e on top of parent signed with key, without moving refs.
func (f *ScenarioFixture) Write(key string, e *rsl.Entry, parent gitrepo.Hash) gitrepo.Hash {
	f.T.Helper()
	who, err := f.R.Ident()
	if err != nil {
		f.T.Fatal(err)
	}
	id, err := rsl.Write(f.G, e, parent, who, f.SignFunc(key))
	if err != nil {
		f.T.Fatalf("write entry %+v: %v", e, err)
	}
	return id
}

// Forge appends a correctly formatted entry signed with key (numbered
// after the tip) and moves the log, plus any other refs, in one
// transaction. It returns the entry's number.
func (f *ScenarioFixture) Forge(key string, e *rsl.Entry, also ...gitrepo.RefUpdate) uint64 {
	f.T.Helper()
	tip, last := f.Tip()
	e.Number = last.Number + 1
	id := f.Write(key, e, tip)
	updates := append([]gitrepo.RefUpdate{{Name: rsl.Ref, Old: tip, New: id}}, also...)
	if err := f.G.UpdateRefs(updates, "test: forge"); err != nil {
		f.T.Fatal(err)
	}
	return e.Number
}

// Rechain rewrites the log from the entry after base: entries are written
// in the given order on top of base, signed with key, and the log ref is
// moved to the result.
func (f *ScenarioFixture) Rechain(key string, base gitrepo.Hash, entries []*rsl.Entry) {
	f.T.Helper()
	tip := f.Ref(rsl.Ref)
	h := base
	for _, e := range entries {
		h = f.Write(key, e, h)
	}
	if err := f.G.UpdateRefs([]gitrepo.RefUpdate{{Name: rsl.Ref, Old: tip, New: h}}, "test: rewrite log"); err != nil {
		f.T.Fatal(err)
	}
}

// Verify verifies with opts (Now defaults to ScenarioNow).
func (f *ScenarioFixture) Verify(opts verify.Options) (*verify.Result, error) {
	f.T.Helper()
	if opts.Now.IsZero() {
		opts.Now = ScenarioNow
	}
	return verify.Verify(f.G, opts)
}

// MustVerify fails the test unless the repository verifies.
func (f *ScenarioFixture) MustVerify(opts verify.Options) *verify.Result {
	f.T.Helper()
	res, err := f.Verify(opts)
	if err != nil {
		f.T.Fatalf("verify: want success, got: %v", scenarioDescribe(err))
	}
	return res
}

// MustFail verifies and requires a *verify.Failed that errors.Is kind, with
// a problem of that kind whose message contains every substring. It
// returns that problem and the whole failure.
func (f *ScenarioFixture) MustFail(opts verify.Options, kind error, substrings ...string) (*verify.Problem, *verify.Failed) {
	f.T.Helper()
	_, err := f.Verify(opts)
	return ScenarioWantProblem(f.T, err, kind, substrings...)
}

// ScenarioWantProblem checks err as MustFail does.
func ScenarioWantProblem(t testing.TB, err error, kind error, substrings ...string) (*verify.Problem, *verify.Failed) {
	t.Helper()
	if err == nil {
		t.Fatalf("verify succeeded; want failure of kind %q", kind)
	}
	var failed *verify.Failed
	if !errors.As(err, &failed) {
		t.Fatalf("verify: want *verify.Failed, got %T: %v", err, err)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("verify: want kind %q, got: %s", kind, scenarioDescribe(err))
	}
	for _, p := range failed.Problems {
		if !errors.Is(p, kind) {
			continue
		}
		msg := p.Error()
		ok := true
		for _, s := range substrings {
			ok = ok && strings.Contains(msg, s)
		}
		if ok {
			return p, failed
		}
	}
	t.Fatalf("verify: no %q problem mentions all of %q; got: %s", kind, substrings, scenarioDescribe(err))
	return nil, nil
}

func scenarioDescribe(err error) string {
	var failed *verify.Failed
	if !errors.As(err, &failed) {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range failed.Problems {
		b.WriteString("\n  - " + p.Error())
		if p.Hint != "" {
			b.WriteString(" [hint: " + p.Hint + "]")
		}
	}
	return b.String()
}

// Mirror makes a bare mirror clone of the fixture repository (as a server
// holds it) and returns a fixture on it.
func (f *ScenarioFixture) Mirror() *ScenarioFixture {
	f.T.Helper()
	dst := filepath.Join(f.T.TempDir(), "mirror.git")
	f.S.Git(f.Dir, "clone", "-q", "--mirror", f.Dir, dst)
	g, err := gitrepo.OpenWithEnv(dst, f.S.Environ())
	if err != nil {
		f.T.Fatal(err)
	}
	f.T.Cleanup(func() { g.Close() })
	if g.WorkTree() != "" {
		f.T.Fatalf("mirror %s is not bare", dst)
	}
	m := *f
	m.Dir, m.G = dst, g
	m.R = &porcelain.Repo{Git: g, Now: f.R.Now, Home: f.S.Home}
	return &m
}

// ---------------------------------------------------------------------
// Benign use: every scenario must verify.

func TestScenarioBenign(t *testing.T) {
	t.Parallel()
	tmpl := NewScenarioTemplate(t)

	t.Run("recording finds the previous entry through the checkpoint", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		a := f.Ref("refs/heads/main")
		x1 := f.NewCommit(a, "x1")
		f.SetRef("refs/heads/x", x1)
		f.Record("alice", "x")
		y1 := f.NewCommit(a, "y1")
		f.SetRef("refs/heads/y", y1)
		f.Record("alice", "y")
		x2 := f.NewCommit(x1, "x2")
		f.SetRef("refs/heads/x", x2)
		second := f.Record("alice", "x")
		if _, err := verify.WithCheckpoint(f.G, verify.Options{Now: ScenarioNow}, false); err != nil {
			t.Fatal(err)
		}
		record := func(ref string, to gitrepo.Hash, wantOld gitrepo.Hash) uint64 {
			t.Helper()
			f.SetRef("refs/heads/"+ref, to)
			// A new porcelain.Repo reads the checkpoint afresh, as each
			// command does.
			r := &porcelain.Repo{Git: f.G, Now: f.R.Now, Home: f.S.Home}
			res, err := r.Record(ref, f.Key("alice"))
			if err != nil {
				t.Fatalf("record %s: %v", ref, err)
			}
			if res.Old != wantOld || res.New != to {
				t.Fatalf("record %s: %s -> %s, want %s -> %s", ref, res.Old, res.New, wantOld, to)
			}
			return res.Entry
		}
		record("y", f.NewCommit(y1, "y2"), y1) // last recorded below the checkpoint
		record("z", a, gitrepo.ZeroHash)       // never recorded
		x3 := record("x", f.NewCommit(x2, "x3"), x2)
		if _, err := f.R.Skip([]uint64{x3}, "mistake", f.Key("alice")); err != nil {
			t.Fatal(err)
		}
		x4 := record("x", f.NewCommit(x2, "x4"), x2) // back to x2, found above the checkpoint again
		if _, err := f.R.Skip([]uint64{x4, second.Entry}, "mistake", f.Key("alice")); err != nil {
			t.Fatal(err)
		}
		// x2's entry, the checkpoint's latest for x, is skipped now: the
		// one before it is not in the checkpoint.
		record("x", f.NewCommit(x1, "x5"), x1)
		f.MustVerify(verify.Options{})
	})

	t.Run("setup verifies", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		res := f.MustVerify(verify.Options{})
		if res.Entries != 4 || res.RootVersion != 1 || res.RulesVersion != 2 {
			t.Errorf("result: %d entries, root v%d, rules v%d; want 4 entries (policy, main, v1.0, policy), root v1, rules v2", res.Entries, res.RootVersion, res.RulesVersion)
		}
		var main *verify.RefStatus
		for i := range res.Refs {
			if res.Refs[i].Ref == "refs/heads/main" {
				main = &res.Refs[i]
			}
		}
		if main == nil || !main.Protected || main.Entry != 2 {
			t.Errorf("refs/heads/main status = %+v; want protected, entry #2", main)
		}
	})

	t.Run("record then approve", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		a := f.Ref("refs/heads/main")
		b := f.CommitMain("feature one")
		res := f.Record("alice", "main")
		if res.Old != a || res.New != b || len(res.Pending) != 1 || !strings.Contains(res.Pending[0], "protect-main") {
			t.Fatalf("record: %+v; want %s -> %s with one pending note about protect-main", res, a, b)
		}
		// Recorded but not yet approved: the second person is missing.
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, "refs/heads/main", "rule protect-main", "1 more needed")
		if p.Entry != res.Entry {
			t.Errorf("problem entry #%d, want #%d", p.Entry, res.Entry)
		}
		ap := f.Approve("bob", "main", b, "")
		if ap.From != a || ap.To != b || ap.Person != "bob" {
			t.Fatalf("approve after record: %+v; want bob approving %s -> %s", ap, a, b)
		}
		f.MustVerify(verify.Options{})
	})

	t.Run("approve then record", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		a := f.Ref("refs/heads/main")
		b := f.CommitMain("feature two")
		ap := f.Approve("bob", "main", b, "")
		if ap.From != a || ap.To != b {
			t.Fatalf("approve before record: %+v; want %s -> %s", ap, a, b)
		}
		res := f.Record("alice", "main")
		if len(res.Pending) != 0 {
			t.Errorf("record after approval still pending: %q", res.Pending)
		}
		f.MustVerify(verify.Options{})
	})

	t.Run("unprotected branch created, force-moved and deleted", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		main := f.Ref("refs/heads/main")
		x := f.NewCommit(main, "feature work")
		f.SetRef("refs/heads/feature", x)
		if r := f.Record("carol", "feature"); r.Ref != "refs/heads/feature" || !r.Old.IsZero() || r.New != x {
			t.Fatalf("create: %+v", r)
		}
		// Force-move to a commit that does not descend from x.
		y := f.NewCommit(main, "feature rewritten")
		f.SetRef("refs/heads/feature", y)
		if r := f.Record("carol", "feature"); r.Old != x || r.New != y {
			t.Fatalf("force-move: %+v", r)
		}
		f.MustVerify(verify.Options{})
		f.SetRef("refs/heads/feature", gitrepo.ZeroHash)
		if r := f.Record("bob", "refs/heads/feature"); r.Old != y || !r.New.IsZero() {
			t.Fatalf("delete: %+v", r)
		}
		res := f.MustVerify(verify.Options{})
		if len(res.Warnings) != 0 {
			t.Errorf("warnings: %q", res.Warnings)
		}
	})

	t.Run("tag entry", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		f.S.Git(f.Dir, "tag", "-a", "v2.0", "-m", "release 2.0")
		tagObj := f.Ref("refs/tags/v2.0")
		r := f.Record("alice", "v2.0")
		if r.Ref != "refs/tags/v2.0" || r.New != tagObj {
			t.Fatalf("tag record: %+v; want refs/tags/v2.0 -> tag object %s", r, tagObj)
		}
		res := f.MustVerify(verify.Options{})
		found := false
		for _, s := range res.Refs {
			found = found || (s.Ref == "refs/tags/v2.0" && s.Target == tagObj && s.Entry == r.Entry)
		}
		if !found {
			t.Errorf("refs/tags/v2.0 not reported at entry #%d: %+v", r.Entry, res.Refs)
		}
	})

	t.Run("policy change by the rules key", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		f.AddRule(policy.Rule{Name: "protect-tags", Refs: []string{"refs/tags/v*"}, Allow: []string{"alice"}})
		res := f.Apply("alice")
		if res.RulesVersion != 3 || res.RootVersion != 1 {
			t.Errorf("apply: %+v; want rules v3, root v1", res)
		}
		vr := f.MustVerify(verify.Options{})
		if vr.RulesVersion != 3 || vr.PolicyEntry != res.Entry {
			t.Errorf("verify: rules v%d at entry #%d; want v3 at #%d", vr.RulesVersion, vr.PolicyEntry, res.Entry)
		}
	})

	t.Run("root rotation then rules change under the new thresholds", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		bob := f.Pub("bob")
		f.Stage("add-root-key bob", func(p, base *policy.Policy, now time.Time) error {
			return p.AddRoleKey(base, metadata.ROOT, bob, now)
		})
		f.Stage("set-threshold 2", func(p, base *policy.Policy, now time.Time) error {
			return p.SetRoleThreshold(base, metadata.ROOT, 2, now)
		})
		f.Stage("add-rules-key bob", func(p, base *policy.Policy, now time.Time) error {
			return p.AddRoleKey(base, metadata.TARGETS, bob, now)
		})
		f.Stage("set-rules-threshold 2", func(p, base *policy.Policy, now time.Time) error {
			return p.SetRoleThreshold(base, metadata.TARGETS, 2, now)
		})
		// alice (the old root) signs; bob (a new root key) applies.
		if _, err := f.R.SignStaged(f.Key("alice")); err != nil {
			t.Fatalf("alice signs: %v", err)
		}
		res := f.Apply("bob")
		if res.RootVersion != 2 {
			t.Fatalf("rotation: %+v; want root v2", res)
		}
		f.MustVerify(verify.Options{})

		// A later rules change needs both rules keys now.
		f.AddRule(policy.Rule{Name: "protect-tags", Refs: []string{"refs/tags/**"}, Allow: []string{"alice", "bob"}})
		before := f.Ref(policy.Ref)
		if _, _, err := f.R.Apply(f.Key("alice")); !errors.Is(err, porcelain.ErrThresholdPending) {
			t.Fatalf("apply with alice alone after rotation: %v; want ErrThresholdPending", err)
		}
		if f.Ref(policy.Ref) != before {
			t.Fatal("policy moved without the rules threshold")
		}
		res = f.Apply("bob")
		if res.RootVersion != 2 || res.RulesVersion != 3 {
			t.Errorf("rules change: %+v; want root v2, rules v3", res)
		}
		vr := f.MustVerify(verify.Options{})
		if vr.RootVersion != 2 || vr.RulesVersion != 3 {
			t.Errorf("verify: root v%d rules v%d", vr.RootVersion, vr.RulesVersion)
		}
	})

	t.Run("local branch ahead in a clone", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		f.CommitMain("unpushed")
		res := f.MustVerify(verify.Options{LocalAhead: true})
		note := ""
		for _, s := range res.Refs {
			if s.Ref == "refs/heads/main" {
				note = s.Note
			}
		}
		if !strings.Contains(note, "unpushed") {
			t.Errorf("main note %q; want it to mention unpushed work", note)
		}
		// A server (no LocalAhead) refuses the same state.
		f.MustFail(verify.Options{}, verify.ErrUnrecorded, "refs/heads/main", "without an entry")
	})

	t.Run("local branch ahead in a working clone", func(t *testing.T) {
		t.Parallel()
		c := tmpl.Clone(t).WorkingClone()
		c.CommitMain("unpushed")
		res := c.MustVerify(c.CloneOpts("origin"))
		if got := localState(res, "refs/heads/main"); got != "ahead" {
			t.Errorf("main local state %q; want ahead", got)
		}
		// A server (its own refs judged) refuses the same state.
		c.MustFail(verify.Options{}, verify.ErrUnrecorded, "refs/heads/main", "without an entry")
	})

	t.Run("local main behind its entry after a plain fetch", func(t *testing.T) {
		t.Parallel()
		srv := tmpl.Clone(t)
		c := srv.WorkingClone()
		b := srv.CommitMain("reviewed change")
		srv.Approve("bob", "main", b, "")
		srv.Record("alice", "main")
		c.S.Git(c.Dir, "fetch", "-q", "origin")
		c.S.Git(c.Dir, "fetch", "-q", "origin", "refs/secure/*:refs/secure/*")
		res := c.MustVerify(c.CloneOpts("origin"))
		if got := localState(res, "refs/heads/main"); got != "behind" {
			t.Errorf("main local state %q; want behind", got)
		}
	})

	t.Run("new local branch under a path-only rule", func(t *testing.T) {
		t.Parallel()
		srv := tmpl.Clone(t)
		srv.AddRule(policy.Rule{Name: "crypto", Paths: []string{"src/crypto/**"}, Allow: []string{"alice"}})
		srv.Apply("alice")
		c := srv.WorkingClone()
		c.S.Git(c.Dir, "checkout", "-q", "-b", "feature")
		c.CommitMain("local feature work")
		res := c.MustVerify(c.CloneOpts("origin"))
		if got := localState(res, "refs/heads/feature"); got != "new" {
			t.Errorf("feature local state %q; want new", got)
		}
	})

	t.Run("local tag in a working clone", func(t *testing.T) {
		t.Parallel()
		srv := tmpl.Clone(t)
		srv.AddRule(policy.Rule{Name: "releases", Refs: []string{"refs/tags/v*"}, Allow: []string{"alice"}})
		srv.Apply("alice")
		c := srv.WorkingClone()
		c.S.Git(c.Dir, "tag", "v9.9-mine")
		res := c.MustVerify(c.CloneOpts("origin"))
		if got := localState(res, "refs/tags/v9.9-mine"); got != "new" {
			t.Errorf("local tag state %q; want new", got)
		}
	})

	t.Run("entry recorded in a clone, not pushed yet", func(t *testing.T) {
		t.Parallel()
		c := tmpl.Clone(t).WorkingClone()
		// git-remote-secure remembers the remote's verified log tip.
		c.S.Git(c.Dir, "config", "remote.origin.securetip", c.Ref("refs/secure/rsl").String())
		c.S.Git(c.Dir, "config", "remote.origin.vcs", "secure")
		b := c.CommitMain("recorded here")
		c.Approve("bob", "main", b, "")
		r := c.Record("alice", "main")
		res := c.MustVerify(c.CloneOpts("origin"))
		if note, _ := refNote(res, "refs/heads/main"); !strings.Contains(note, "not pushed yet") || !strings.Contains(note, fmt.Sprintf("entry #%d", r.Entry)) {
			t.Errorf("main note %q; want entry #%d not pushed yet", note, r.Entry)
		}
	})
}

// ---------------------------------------------------------------------
// Attacks on ref updates.

func TestScenarioAttacks(t *testing.T) {
	t.Parallel()
	tmpl := NewScenarioTemplate(t)

	t.Run("1 unknown key signs an entry", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		a := f.Ref("refs/heads/main")
		b := f.CommitMain("mallory was here")
		if _, err := f.R.Record("main", f.Key("mallory")); !errors.Is(err, porcelain.ErrRefused) {
			t.Fatalf("porcelain record by mallory: %v; want ErrRefused", err)
		}
		n := f.Forge("mallory", &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/main", Old: a, New: b})
		p, _ := f.MustFail(verify.Options{}, verify.ErrSignature, f.FP("mallory"), "does not know", "refs/heads/main")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
	})

	t.Run("1 person not in the rule", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		f.AddRule(policy.Rule{Name: "release", Refs: []string{"refs/heads/release"}, Allow: []string{"alice"}})
		f.Apply("alice")
		x := f.NewCommit(f.Ref("refs/heads/main"), "release candidate")
		f.SetRef("refs/heads/release", x)
		tip := f.Ref(rsl.Ref)
		_, err := f.R.Record("release", f.Key("carol"))
		if !errors.Is(err, porcelain.ErrRefused) || !strings.Contains(err.Error(), "rule release") {
			t.Fatalf("porcelain record by carol: %v; want ErrRefused naming rule release", err)
		}
		if f.Ref(rsl.Ref) != tip {
			t.Fatal("a refused record moved the log")
		}
		n := f.Forge("carol", &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/release", New: x})
		_, err = f.Verify(verify.Options{})
		if !errors.Is(err, verify.ErrUnauthorized) && !errors.Is(err, verify.ErrThreshold) {
			t.Fatalf("verify: %v; want ErrUnauthorized or ErrThreshold", scenarioDescribe(err))
		}
		p, _ := ScenarioWantProblem(t, err, verify.ErrUnauthorized, "refs/heads/release", "rule release", "carol is not allowed")
		if p.Entry != n || p.Rule != "release" {
			t.Errorf("problem %+v; want entry #%d rule release", p, n)
		}
	})

	t.Run("2 two keys of one person", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		f.AddPerson("dave", "dave1", "dave2")
		f.AddRule(policy.Rule{Name: "dev", Refs: []string{"refs/heads/dev"}, Allow: []string{"dave", "alice"}, Threshold: 2})
		f.Apply("alice")
		x := f.NewCommit(f.Ref("refs/heads/main"), "dev work")
		f.SetRef("refs/heads/dev", x)
		r := f.Record("dave1", "dev")
		if len(r.Pending) == 0 {
			t.Errorf("dave's record says nothing is pending")
		}
		if ap := f.Approve("dave2", "dev", x, ""); ap.Person != "dave" {
			t.Fatalf("approval by dave2 counted as %s", ap.Person)
		}
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, "refs/heads/dev", "rule dev", "has 1 (dave)")
		if p.Entry != r.Entry {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, r.Entry)
		}
	})

	t.Run("3 same person approves twice", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		b := f.CommitMain("bob alone")
		r := f.Record("bob", "main")
		f.Approve("bob", "main", b, "")
		f.Approve("bob", "main", b, "")
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, "refs/heads/main", "rule protect-main", "has 1 (bob)")
		if p.Entry != r.Entry {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, r.Entry)
		}
	})

	t.Run("3 recorder approves their own update", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		b := f.CommitMain("alice alone")
		r := f.Record("alice", "main")
		f.Approve("alice", "main", b, "")
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, "refs/heads/main", "rule protect-main", "has 1 (alice)")
		if p.Entry != r.Entry {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, r.Entry)
		}
	})

	t.Run("4 approval of another update", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		a := f.Ref("refs/heads/main")
		b := f.NewCommit(a, "the reviewed change")
		f.Approve("bob", "main", b, "")
		c := f.NewCommit(a, "a different change")
		f.SetRef("refs/heads/main", c)
		r := f.Record("alice", "main")
		if r.Old != a || r.New != c || len(r.Pending) == 0 {
			t.Fatalf("record: %+v; want pending %s -> %s", r, a, c)
		}
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, "refs/heads/main", "rule protect-main", "has 1 (alice)")
		if p.Entry != r.Entry {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, r.Entry)
		}
	})

	// An approval counts once: the same transition recorded again needs a
	// new one. Recording warns about it when the first use is within the
	// entries it looks back over (porcelain's maxPrecheckWalk, 128);
	// verification refuses the replay wherever the first use is.
	for _, buried := range []int{0, 140} {
		t.Run(fmt.Sprintf("4 approval replayed for a repeated transition, %d entries later", buried), func(t *testing.T) {
			t.Parallel()
			f := tmpl.Clone(t)
			a := f.Ref("refs/heads/main")
			b := f.CommitMain("reviewed once")
			f.Approve("bob", "main", b, "")
			first := f.Record("alice", "main")
			f.MustVerify(verify.Options{})
			// Back to A, properly approved.
			f.SetRef("refs/heads/main", a)
			f.Approve("carol", "main", a, "")
			f.Record("alice", "main")
			f.MustVerify(verify.Options{})
			for c, i := a, 0; i < buried; i++ {
				c = f.NewCommit(c, "filler")
				f.SetRef("refs/heads/filler", c)
				f.Record("alice", "filler")
			}
			// A -> B again, with no new approval: bob's old one must not count.
			f.SetRef("refs/heads/main", b)
			again := f.Record("alice", "main")
			if again.Old != a || again.New != b {
				t.Fatalf("second record: %+v", again)
			}
			p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, "refs/heads/main", "rule protect-main", "already counted for entry #"+scenarioItoa(first.Entry))
			if p.Entry != again.Entry {
				t.Errorf("problem on entry #%d, want #%d", p.Entry, again.Entry)
			}
			if buried == 0 && len(again.Pending) == 0 {
				t.Errorf("Record(main) %s -> %s a second time: Pending is empty; want a note that rule protect-main needs 1 more approval (bob's approval was used by entry #%d)", a, b, first.Entry)
			}
		})
	}

	t.Run("4 approval by a key the policy does not know", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		a := f.Ref("refs/heads/main")
		b := f.CommitMain("mallory approves")
		if _, err := f.R.Approve("main", b.String(), "", f.Key("mallory")); !errors.Is(err, porcelain.ErrRefused) {
			t.Fatalf("porcelain approve by mallory: %v; want ErrRefused", err)
		}
		// Stored by hand, correctly signed and filed under mallory's key.
		stmt, err := attest.Approval{Ref: "refs/heads/main", From: a, To: b}.Statement()
		if err != nil {
			t.Fatal(err)
		}
		ms, err := sign.LoadSigner(sign.KeySpec{File: f.Key("mallory")})
		if err != nil {
			t.Fatal(err)
		}
		defer ms.Close()
		env, err := attest.Sign(stmt, ms)
		if err != nil {
			t.Fatal(err)
		}
		store, err := attest.OpenStore(f.G)
		if err != nil {
			t.Fatal(err)
		}
		who, err := f.R.Ident()
		if err != nil {
			t.Fatal(err)
		}
		path := attest.ApprovalDir("refs/heads/main", a, b) + "/" + attest.SignerFile(ms.PublicKey())
		if _, err := store.Add(path, env, who, "mallory approves"); err != nil {
			t.Fatal(err)
		}
		r := f.Record("alice", "main")
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, "refs/heads/main", "rule protect-main", "has 1 (alice)", "ignored")
		if p.Entry != r.Entry {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, r.Entry)
		}
	})

	t.Run("5 entry signed in another SSHSIG namespace", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		// alice's valid signature, but made for attestations, not git.
		s, err := sign.LoadSigner(sign.KeySpec{File: f.Key("alice")})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		x := f.NewCommit(f.Ref("refs/heads/main"), "feature")
		f.SetRef("refs/heads/feature", x)
		tip, last := f.Tip()
		who, err := f.R.Ident()
		if err != nil {
			t.Fatal(err)
		}
		e := &rsl.Entry{Number: last.Number + 1, Type: rsl.TypeRef, Ref: "refs/heads/feature", New: x}
		id, err := rsl.Write(f.G, e, tip, who, func(payload []byte) ([]byte, error) {
			return sign.SignSSHSig(s, payload, sign.NamespaceAttestation)
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.G.UpdateRefs([]gitrepo.RefUpdate{{Name: rsl.Ref, Old: tip, New: id}}, "test"); err != nil {
			t.Fatal(err)
		}
		p, _ := f.MustFail(verify.Options{}, verify.ErrSignature, "refs/heads/feature", "#"+scenarioItoa(e.Number))
		if p.Entry != e.Number {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, e.Number)
		}
	})

	t.Run("5 forged entry keeps another entry's signature", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		b := f.CommitMain("honest")
		f.Approve("bob", "main", b, "")
		f.Record("alice", "main")
		tip, e := f.Tip()
		c := f.NewCommit(b, "evil")
		_, raw, err := f.G.ReadObject(tip, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		forged := bytes.Replace(raw, []byte("\nnew: "+b.String()+"\n"), []byte("\nnew: "+c.String()+"\n"), 1)
		if bytes.Equal(forged, raw) {
			t.Fatal("new: line not found in the entry")
		}
		out, err := f.S.RunErr(f.Dir, forged, "git", "hash-object", "-w", "-t", "commit", "--stdin")
		if err != nil {
			t.Fatal(err)
		}
		id := scenarioHash(t, out)
		// Still canonical: it decodes, so only the signature can catch it.
		fc, err := f.G.ReadCommit(id)
		if err != nil {
			t.Fatal(err)
		}
		if fe, err := rsl.FromCommit(fc); err != nil || fe.New != c || fe.Number != e.Number {
			t.Fatalf("forged entry does not decode as intended: %+v, %v", fe, err)
		}
		if err := f.G.UpdateRefs([]gitrepo.RefUpdate{{Name: rsl.Ref, Old: tip, New: id}, {Name: "refs/heads/main", Old: b, New: c}}, "test"); err != nil {
			t.Fatal(err)
		}
		p, _ := f.MustFail(verify.Options{}, verify.ErrSignature, "refs/heads/main", "#"+scenarioItoa(e.Number))
		if p.EntryID != id {
			t.Errorf("problem names entry %s, want the forged %s", p.EntryID, id)
		}
	})

	t.Run("6 rewritten log", func(t *testing.T) {
		t.Parallel()
		// Entries 5 and 6 move the unprotected feature branch; 7 records a
		// tag. The attacker holds alice's key, so every rewritten entry is
		// validly signed.
		build := func(t *testing.T) (*ScenarioFixture, []*rsl.Record) {
			f := tmpl.Clone(t)
			main := f.Ref("refs/heads/main")
			x := f.NewCommit(main, "x")
			f.SetRef("refs/heads/feature", x)
			f.Record("carol", "feature")
			f.SetRef("refs/heads/feature", f.NewCommit(x, "y"))
			f.Record("carol", "feature")
			f.S.Git(f.Dir, "tag", "v1.1")
			f.Record("alice", "v1.1")
			f.MustVerify(verify.Options{})
			recs := f.Log()
			if len(recs) != 7 {
				t.Fatalf("log has %d entries, want 7", len(recs))
			}
			return f, recs
		}
		copyEntry := func(e *rsl.Entry, n uint64) *rsl.Entry {
			c := *e
			if n != 0 {
				c.Number = n
			}
			return &c
		}
		t.Run("entry removed", func(t *testing.T) {
			t.Parallel()
			f, recs := build(t)
			f.Rechain("alice", recs[3].ID, []*rsl.Entry{recs[5].Entry, recs[6].Entry})
			f.MustFail(verify.Options{}, verify.ErrMalformed, "number 4 where 5 was expected", "removed or reordered")
		})
		t.Run("entry removed and renumbered", func(t *testing.T) {
			t.Parallel()
			f, recs := build(t)
			f.Rechain("alice", recs[3].ID, []*rsl.Entry{copyEntry(recs[5].Entry, 5), copyEntry(recs[6].Entry, 6)})
			p, _ := f.MustFail(verify.Options{}, verify.ErrChain, "refs/heads/feature", "entry #5")
			if p.Entry != 5 {
				t.Errorf("problem on entry #%d, want #5", p.Entry)
			}
		})
		t.Run("entries reordered", func(t *testing.T) {
			t.Parallel()
			f, recs := build(t)
			f.Rechain("alice", recs[3].ID, []*rsl.Entry{recs[5].Entry, recs[4].Entry, recs[6].Entry})
			f.MustFail(verify.Options{}, verify.ErrMalformed, "removed or reordered")
		})
		t.Run("entries reordered and renumbered", func(t *testing.T) {
			t.Parallel()
			f, recs := build(t)
			f.Rechain("alice", recs[3].ID, []*rsl.Entry{copyEntry(recs[5].Entry, 5), copyEntry(recs[4].Entry, 6), recs[6].Entry})
			f.MustFail(verify.Options{}, verify.ErrChain, "refs/heads/feature", "entry #5")
		})
	})

	t.Run("7 branch moved without an entry in a bare mirror", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		m := f.Mirror()
		m.MustVerify(verify.Options{})
		ahead := m.NewCommit(m.Ref("refs/heads/main"), "pushed without an entry")
		m.SetRef("refs/heads/main", ahead)
		p, _ := m.MustFail(verify.Options{}, verify.ErrUnrecorded, "refs/heads/main", "without an entry", ahead.String()[:12])
		if p.Entry != 0 {
			t.Errorf("current-state problem carries entry #%d", p.Entry)
		}
	})

	t.Run("7 non-fast-forward move in a clone", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		main := f.Ref("refs/heads/main")
		c, err := f.G.ReadCommit(main)
		if err != nil {
			t.Fatal(err)
		}
		sibling := f.NewCommit(c.Parents[0], "rewritten history")
		f.SetRef("refs/heads/main", sibling)
		f.MustFail(verify.Options{LocalAhead: true, IgnoreMissingRefs: true}, verify.ErrUnrecorded, "refs/heads/main", "without an entry")
	})

	t.Run("8 rollback to an older recorded commit", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		a := f.Ref("refs/heads/main")
		b := f.CommitMain("newer")
		f.Approve("bob", "main", b, "")
		f.Record("alice", "main")
		f.SetRef("refs/heads/main", a)
		f.MustFail(verify.Options{LocalAhead: true}, verify.ErrUnrecorded, "refs/heads/main", "rollback", "entry #2")
	})

	t.Run("9 teleport to another branch's commit", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		x := f.NewCommit(f.Ref("refs/heads/main"), "feature only")
		f.SetRef("refs/heads/feature", x)
		r := f.Record("carol", "feature")
		f.SetRef("refs/heads/main", x)
		f.MustFail(verify.Options{}, verify.ErrUnrecorded, "refs/heads/main", "teleport", "refs/heads/feature (entry #"+scenarioItoa(r.Entry)+")")
	})

	t.Run("10 protected ref deleted in a bare mirror", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		m := f.Mirror()
		m.SetRef("refs/heads/main", gitrepo.ZeroHash)
		m.MustFail(verify.Options{}, verify.ErrUnrecorded, "refs/heads/main", "missing")
		// An unprotected ref deleted the same way only warns.
		m2 := f.Mirror()
		m2.SetRef("refs/tags/v1.0", gitrepo.ZeroHash)
		res := m2.MustVerify(verify.Options{})
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "refs/tags/v1.0") {
			t.Errorf("warnings %q; want one about refs/tags/v1.0", res.Warnings)
		}
	})

	t.Run("12 revoked key used after revocation", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		b := f.CommitMain("bob's change")
		f.Approve("alice", "main", b, "")
		bobs := f.Record("bob", "main")
		f.Stage("remove rule protect-main", func(p, base *policy.Policy, now time.Time) error { return p.RemoveRule(base, "protect-main", now) })
		f.AddRule(policy.Rule{Name: "protect-main", Refs: []string{"refs/heads/main"}, Allow: []string{"alice", "carol"}, Threshold: 2})
		f.Stage("remove person bob", func(p, base *policy.Policy, now time.Time) error { return p.RemovePerson(base, "bob", now) })
		f.Apply("alice")
		f.MustVerify(verify.Options{})

		x := f.NewCommit(b, "after revocation")
		f.SetRef("refs/heads/feature", x)
		if _, err := f.R.Record("feature", f.Key("bob")); !errors.Is(err, porcelain.ErrRefused) {
			t.Fatalf("porcelain record with the revoked key: %v; want ErrRefused", err)
		}
		n := f.Forge("bob", &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/feature", New: x})
		p, failed := f.MustFail(verify.Options{}, verify.ErrSignature, f.FP("bob"), "refs/heads/feature")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
		if len(failed.Problems) != 1 {
			t.Errorf("want only the entry after revocation to fail (bob's entry #%d stays valid); got %s", bobs.Entry, scenarioDescribe(failed))
		}
	})

	t.Run("protected ref outside refs/heads and refs/tags", func(t *testing.T) {
		t.Parallel()
		// The format lets the log record any valid ref (refs/notes/...),
		// and porcelain records it, but the current-state check only reads
		// refs/heads/, refs/tags/ and the policy ref.
		f := tmpl.Clone(t)
		f.S.Git(f.Dir, "notes", "add", "-m", "a note", "HEAD")
		f.AddRule(policy.Rule{Name: "notes", Refs: []string{"refs/notes/**"}, Allow: []string{"alice"}})
		f.Apply("alice")
		r := f.Record("alice", "refs/notes/commits")
		if r.Ref != "refs/notes/commits" || r.New != f.Ref("refs/notes/commits") {
			t.Fatalf("record: %+v", r)
		}
		t.Run("recorded value verifies on a server", func(t *testing.T) {
			if _, err := f.Verify(verify.Options{}); err != nil {
				t.Errorf("strict verify of a correctly recorded refs/notes/commits: %s; want success", scenarioDescribe(err))
			}
		})
		t.Run("unrecorded move is detected in a clone", func(t *testing.T) {
			f.S.Git(f.Dir, "notes", "add", "-f", "-m", "rewritten note", "HEAD")
			f.MustFail(verify.Options{LocalAhead: true, IgnoreMissingRefs: true}, verify.ErrUnrecorded, "refs/notes/commits", "without an entry")
		})
	})

	t.Run("skip annotation without the rule's threshold", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		a := f.Ref("refs/heads/main")
		b := f.CommitMain("approved change")
		f.Approve("bob", "main", b, "")
		r := f.Record("alice", "main")
		f.MustVerify(verify.Options{})
		// carol alone undoes a two-person update by skipping its entry.
		f.SetRef("refs/heads/main", a)
		n := f.Forge("carol", &rsl.Entry{Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{Number: r.Entry, ID: r.ID}}, Reason: "revert"})
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, "refs/heads/main", "rule protect-main", "#"+scenarioItoa(n))
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want the annotation #%d", p.Entry, n)
		}
	})

	t.Run("skip annotation of a policy entry", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		pol := f.Log()[3]
		n := f.Forge("alice", &rsl.Entry{Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{Number: 4, ID: pol.ID}}, Reason: "undo the rules"})
		p, _ := f.MustFail(verify.Options{}, verify.ErrChain, "#"+scenarioItoa(n), "skips entry #4")
		if !strings.Contains(p.Hint, "policy entries") || !strings.Contains(p.Hint, "cannot be skipped") {
			t.Errorf("hint %q; want it to say policy entries cannot be skipped", p.Hint)
		}
	})

	t.Run("skip annotation naming the wrong entry id", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		x := f.NewCommit(f.Ref("refs/heads/main"), "feature")
		f.SetRef("refs/heads/feature", x)
		r := f.Record("carol", "feature")
		f.SetRef("refs/heads/feature", gitrepo.ZeroHash)
		n := f.Forge("carol", &rsl.Entry{Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{Number: r.Entry, ID: f.Log()[1].ID}}, Reason: "wrong id"})
		f.MustFail(verify.Options{}, verify.ErrChain, "#"+scenarioItoa(n), "skips entry #"+scenarioItoa(r.Entry))
	})

	t.Run("forged entry skipped by an authorized annotation verifies", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		a := f.Ref("refs/heads/main")
		b := f.CommitMain("mallory's push")
		bad := f.Forge("mallory", &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/main", Old: a, New: b})
		f.MustFail(verify.Options{}, verify.ErrSignature, f.FP("mallory"))
		// Put main back and skip the bad entry: moving main B -> A needs
		// two persons, alice (the annotation) and bob (an approval).
		f.SetRef("refs/heads/main", a)
		if ap := f.Approve("bob", "main", a, ""); ap.From != b || ap.To != a {
			t.Fatalf("approval of the revert: %+v", ap)
		}
		f.Forge("alice", &rsl.Entry{Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{Number: bad, ID: f.Log()[bad-1].ID}}, Reason: "pushed with an unknown key"})
		res := f.MustVerify(verify.Options{})
		if len(res.SkippedEntries) != 1 || res.SkippedEntries[0] != bad {
			t.Errorf("skipped entries %v, want [%d]", res.SkippedEntries, bad)
		}
	})
}

// ---------------------------------------------------------------------
// Attacks on the policy.

func TestScenarioPolicyAttacks(t *testing.T) {
	t.Parallel()
	tmpl := NewScenarioTemplate(t)

	t.Run("11 policy change below the rules threshold", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		bob := f.Pub("bob")
		f.Stage("add-rules-key bob", func(p, base *policy.Policy, now time.Time) error {
			return p.AddRoleKey(base, metadata.TARGETS, bob, now)
		})
		f.Stage("set-rules-threshold 2", func(p, base *policy.Policy, now time.Time) error {
			return p.SetRoleThreshold(base, metadata.TARGETS, 2, now)
		})
		if _, _, err := f.R.Apply(f.Key("alice")); !errors.Is(err, porcelain.ErrThresholdPending) {
			t.Fatalf("apply of the new rules threshold by alice alone: %v; want ErrThresholdPending (rules now need alice and bob)", err)
		}
		f.Apply("bob")
		f.MustVerify(verify.Options{})

		f.AddRule(policy.Rule{Name: "sneaky", Refs: []string{"refs/heads/sneaky"}, Allow: []string{"alice"}})
		polBefore, rslBefore := f.Ref(policy.Ref), f.Ref(rsl.Ref)
		_, st, err := f.R.Apply(f.Key("alice"))
		if !errors.Is(err, porcelain.ErrThresholdPending) || !errors.Is(err, porcelain.ErrRefused) {
			t.Fatalf("apply with one of two rules keys: %v; want ErrRefused wrapping ErrThresholdPending", err)
		}
		if f.Ref(policy.Ref) != polBefore || f.Ref(rsl.Ref) != rslBefore {
			t.Fatal("a refused apply moved the policy or the log")
		}
		statuses, err := st.Status()
		if err != nil {
			t.Fatal(err)
		}
		if s := statuses[len(statuses)-1]; s.Met() || len(s.Missing) != 1 || s.Missing[0] != f.FP("bob") {
			t.Errorf("rules status %v; want bob's signature missing", s)
		}

		// Force it in by hand: the staged policy (signed by alice only) as
		// the policy commit, and an entry signed by alice.
		_, n := f.ForcePolicy("alice", st.Policy, "forced")
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, rsl.PolicyRef, "#"+scenarioItoa(n), "rules: 1 of 2")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
		// Limiting verification to some refs never skips policy entries.
		f.MustFail(verify.Options{Refs: []string{"refs/heads/main"}}, verify.ErrThreshold, rsl.PolicyRef, "#"+scenarioItoa(n))
	})

	t.Run("13 policy rolled back to an older policy commit", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		first := f.Log()[0].Entry.New // the policy of init (rules v1, no rules)
		n := f.ForcePolicyCommit("alice", first)
		p, _ := f.MustFail(verify.Options{}, verify.ErrRollback, rsl.PolicyRef, "#"+scenarioItoa(n), "version 1 replaces newer version 2")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
	})

	t.Run("13 policy entry that does not follow the policy in force", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		recs := f.Log()
		first := recs[0].Entry.New
		// Claims to move from the first policy while the second is in force.
		n := f.Forge("alice", &rsl.Entry{Type: rsl.TypeRef, Ref: rsl.PolicyRef, Old: first, New: recs[3].Entry.New})
		f.MustFail(verify.Options{}, verify.ErrChain, rsl.PolicyRef, "#"+scenarioItoa(n))
	})

	t.Run("14 expired policy", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		p, _ := f.MustFail(verify.Options{Now: ScenarioNow.AddDate(2, 0, 0)}, verify.ErrExpired, rsl.PolicyRef, "expired on")
		if !strings.Contains(p.Hint, "renew") {
			t.Errorf("hint %q does not mention renew", p.Hint)
		}
	})

	t.Run("policy ref moved without an entry", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		p, _, err := f.R.CurrentPolicy()
		if err != nil {
			t.Fatal(err)
		}
		f.SetRef(policy.Ref, f.SavePolicy(p, "same policy, new commit"))
		f.MustFail(verify.Options{LocalAhead: true, IgnoreMissingRefs: true}, verify.ErrUnrecorded, rsl.PolicyRef, "without an entry")
	})

	t.Run("policy ref deleted in a clone", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		f.SetRef(policy.Ref, gitrepo.ZeroHash)
		f.MustFail(verify.Options{LocalAhead: true, IgnoreMissingRefs: true}, verify.ErrUnrecorded, rsl.PolicyRef, "missing")
	})

	t.Run("root threshold met by one key listed under two key IDs", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		base, _, err := f.R.CurrentPolicy()
		if err != nil {
			t.Fatal(err)
		}
		next, err := base.Clone()
		if err != nil {
			t.Fatal(err)
		}
		// alice's key again, its hex in upper case: another TUF key ID for
		// the same key. Root v2 claims two root keys, threshold 2.
		root := &next.Root.Signed
		role := root.Roles[metadata.ROOT]
		k1 := root.Keys[role.KeyIDs[0]]
		k2 := metadata.Key{Type: k1.Type, Scheme: k1.Scheme, Value: metadata.KeyVal{PublicKey: strings.ToUpper(k1.Value.PublicKey)}}
		id2, err := k2.ID()
		if err != nil || id2 == role.KeyIDs[0] {
			t.Fatalf("second key id %q: %v", id2, err)
		}
		root.Keys[id2] = &k2
		role.KeyIDs = append(role.KeyIDs, id2)
		role.Threshold = 2
		root.Version = 2
		next.Root.Signatures = []metadata.Signature{}
		s, err := sign.LoadSigner(sign.KeySpec{File: f.Key("alice")})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ts, err := sign.TUFSigner(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := next.SignRoot(ts); err != nil {
			t.Fatal(err)
		}
		next.Root.Signatures = append(next.Root.Signatures, metadata.Signature{KeyID: id2, Signature: next.Root.Signatures[0].Signature})
		if next, err = next.Clone(); err != nil {
			// policy.Parse refuses one key listed twice: the attack stops
			// at decoding, which is the stronger outcome.
			if !errors.Is(err, policy.ErrMalformed) || !strings.Contains(err.Error(), "listed twice") {
				t.Fatalf("the two-id root: %v; want policy.ErrMalformed naming the key listed twice", err)
			}
			return
		}
		if err := verify.CheckPolicy(base, next, ScenarioNow); !errors.Is(err, verify.ErrThreshold) {
			t.Fatalf("CheckPolicy: %v; want ErrThreshold (one distinct root key signed)", err)
		}
		_, n := f.ForcePolicy("alice", next, "root v2 with one key twice")
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, rsl.PolicyRef, "#"+scenarioItoa(n))
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
		t.Run("status counts distinct keys", func(t *testing.T) {
			statuses, err := verify.PolicyStatus(base, next)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range statuses {
				if st.Role == metadata.ROOT && st.Met() {
					t.Errorf("PolicyStatus root = %v: met with signatures %v; want not met (one distinct key)", st, st.SignedBy)
				}
			}
		})
	})

	writePolicyFiles := func(f *ScenarioFixture, root, targets []byte) gitrepo.Hash {
		f.T.Helper()
		rh, err := f.G.WriteObject("blob", root)
		if err != nil {
			f.T.Fatal(err)
		}
		th, err := f.G.WriteObject("blob", targets)
		if err != nil {
			f.T.Fatal(err)
		}
		tree, err := f.G.WriteTree([]gitrepo.TreeEntry{
			{Mode: gitrepo.ModeFile, Name: policy.RootFile, Hash: rh},
			{Mode: gitrepo.ModeFile, Name: policy.TargetsFile, Hash: th},
		})
		if err != nil {
			f.T.Fatal(err)
		}
		who, err := f.R.Ident()
		if err != nil {
			f.T.Fatal(err)
		}
		raw := gitrepo.EncodeCommit(tree, []gitrepo.Hash{f.Ref(policy.Ref)}, who, who, "hand-made policy\n")
		h, err := f.G.WriteObject("commit", raw)
		if err != nil {
			f.T.Fatal(err)
		}
		return h
	}
	currentFiles := func(f *ScenarioFixture) (root, targets []byte) {
		f.T.Helper()
		p, err := policy.Load(f.G, f.Ref(policy.Ref))
		if err != nil {
			f.T.Fatal(err)
		}
		root, targets, err = p.Encode()
		if err != nil {
			f.T.Fatal(err)
		}
		return root, targets
	}

	t.Run("15 policy blob with duplicate JSON keys", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		root, targets := currentFiles(f)
		// A second "signed" object: a lenient reader would keep the last.
		dup := append([]byte(`{"signed":{},`), root[1:]...)
		n := f.ForcePolicyCommit("alice", writePolicyFiles(f, dup, targets))
		p, _ := f.MustFail(verify.Options{}, verify.ErrMalformed, rsl.PolicyRef, "duplicate key", "root.json")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
	})

	t.Run("15 oversized policy blob", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		root, targets := currentFiles(f)
		big := append(bytes.Clone(targets), bytes.Repeat([]byte(" "), policy.MaxTargetsSize)...)
		n := f.ForcePolicyCommit("alice", writePolicyFiles(f, root, big))
		p, _ := f.MustFail(verify.Options{}, verify.ErrMalformed, rsl.PolicyRef, "targets.json")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
	})

	t.Run("15 non-canonical policy blob", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		root, targets := currentFiles(f)
		spaced := append(bytes.Clone(root), '\n')
		f.ForcePolicyCommit("alice", writePolicyFiles(f, spaced, targets))
		f.MustFail(verify.Options{}, verify.ErrMalformed, rsl.PolicyRef, "root.json")
	})
}

// scenarioItoa formats an entry number.
func scenarioItoa(n uint64) string { return strconv.FormatUint(n, 10) }
