package verify_test

// Policy depth: teams and requirements, edit validation, protected tags,
// path rules through merges and renames, required test runs, key rotation
// and revocation, global rules, expiry and renewal, and explanations. Each
// scenario runs on real repositories with real ed25519 keys, set up through
// internal/porcelain; attacks bypass porcelain (Forge) and must fail with
// the specific error kind, naming the ref, rule or person at fault.

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
	"github.com/git-secure/git-secure/internal/verify"
)

// depthKeyNames are the keys of the depth template: admin holds the root
// and rules roles; dev3 has two keys (dev3, dev3b); bob2 is bob's key after
// a rotation and belongs to nobody at first.
var depthKeyNames = []string{"admin", "dev1", "dev2", "dev3", "dev3b", "sec1", "sec2", "both", "ci", "bob", "bob2"}

// depthPersons maps each person of the template to their keys.
var depthPersons = []struct {
	name string
	keys []string
}{
	{"dev1", []string{"dev1"}},
	{"dev2", []string{"dev2"}},
	{"dev3", []string{"dev3", "dev3b"}},
	{"sec1", []string{"sec1"}},
	{"sec2", []string{"sec2"}},
	{"both", []string{"both"}},
	{"ci", []string{"ci"}},
	{"bob", []string{"bob"}},
}

const depthMain = "refs/heads/main"

// newDepthTemplate builds, once per test, a repository with five commits
// on main (the last two add src/crypto/a.go and src/other/b.go), Init by
// admin, the persons above, and the teams developers {dev1, dev2, dev3,
// both} and security {sec1, sec2, both}, applied. No rule yet: each
// scenario adds its own.
func newDepthTemplate(t *testing.T) *ScenarioTemplate {
	t.Helper()
	s := testutil.NewSandbox(t)
	tmpl := &ScenarioTemplate{Home: s.Home, Keys: map[string]testutil.Key{}}
	for _, name := range depthKeyNames {
		tmpl.Keys[name] = s.NewKey(name, "ed25519")
	}
	tmpl.Dir = s.InitRepo("depth", 3)
	s.Commit(tmpl.Dir, "src/crypto/a.go", "package crypto // a\n", "crypto a")
	s.Commit(tmpl.Dir, "src/other/b.go", "package other // b\n", "other b")
	f := tmpl.open(t, s, tmpl.Dir)
	if _, err := f.R.Init(f.Key("admin")); err != nil {
		t.Fatalf("init: %v", err)
	}
	for _, p := range depthPersons {
		f.AddPerson(p.name, p.keys...)
	}
	f.Stage("add team developers", func(p, base *policy.Policy, now time.Time) error {
		return p.AddTeam(base, "developers", []string{"dev1", "dev2", "dev3", "both"}, now)
	})
	f.Stage("add team security", func(p, base *policy.Policy, now time.Time) error {
		return p.AddTeam(base, "security", []string{"sec1", "sec2", "both"}, now)
	})
	f.Apply("admin")
	f.MustVerify(verify.Options{})
	return tmpl
}

// depthRequireMain is the article's rule: two developers and one security
// person on main (threshold, from the requirements, 3).
var depthRequireMain = policy.Rule{Name: "main", Refs: []string{depthMain},
	Require: []policy.Requirement{{Group: "team:developers", N: 2}, {Group: "team:security", N: 1}}}

// depthTree returns the tree of commit h.
func depthTree(f *ScenarioFixture, h gitrepo.Hash) gitrepo.Hash {
	f.T.Helper()
	c, err := f.G.ReadCommit(h)
	if err != nil {
		f.T.Fatal(err)
	}
	return c.Tree
}

// depthCommit writes path, commits it on the checked-out branch and
// returns the commit.
func depthCommit(f *ScenarioFixture, path, msg string) gitrepo.Hash {
	f.T.Helper()
	return scenarioHash(f.T, f.S.Commit(f.Dir, path, msg+"\n", msg))
}

// depthGitCommit commits what is staged and returns HEAD.
func depthGitCommit(f *ScenarioFixture, msg string) gitrepo.Hash {
	f.T.Helper()
	f.S.Git(f.Dir, "commit", "-q", "-m", msg)
	return f.Ref(depthMain)
}

// depthNoKind fails when failed has a problem of kind.
func depthNoKind(t *testing.T, failed *verify.Failed, kind error) {
	t.Helper()
	for _, p := range failed.Problems {
		if errors.Is(p, kind) {
			t.Errorf("unexpected %q problem: %s", kind, scenarioDescribe(failed))
			return
		}
	}
}

// depthOnlyEntries fails unless every problem is about one of entries,
// and each of entries has one.
func depthOnlyEntries(t *testing.T, failed *verify.Failed, entries ...uint64) {
	t.Helper()
	seen := map[uint64]bool{}
	for _, p := range failed.Problems {
		if !slices.Contains(entries, p.Entry) {
			t.Errorf("problem on entry #%d, want problems only on %v: %s", p.Entry, entries, scenarioDescribe(failed))
		}
		seen[p.Entry] = true
	}
	for _, n := range entries {
		if !seen[n] {
			t.Errorf("no problem on entry #%d: %s", n, scenarioDescribe(failed))
		}
	}
}

// depthStoreTestRun signs run with key and stores it in the attestation
// store, bypassing AttestRun.
func depthStoreTestRun(f *ScenarioFixture, key string, run attest.TestRun) {
	f.T.Helper()
	stmt, err := run.Statement()
	if err != nil {
		f.T.Fatal(err)
	}
	s, err := sign.LoadSigner(sign.KeySpec{File: f.Key(key)})
	if err != nil {
		f.T.Fatal(err)
	}
	defer s.Close()
	env, err := attest.Sign(stmt, s)
	if err != nil {
		f.T.Fatal(err)
	}
	store, err := attest.OpenStore(f.G)
	if err != nil {
		f.T.Fatal(err)
	}
	who, err := f.R.Ident()
	if err != nil {
		f.T.Fatal(err)
	}
	if _, err := store.Add(attest.TestRunDir(run.Tree)+"/"+attest.SignerFile(s.PublicKey()), env, who, "hand-made test run"); err != nil {
		f.T.Fatal(err)
	}
}

// depthMisfileTestRuns copies the store's directory tests/<from> to
// tests/<to> with git plumbing (attest.Store.Add refuses a misfiled run),
// as an attacker with push access to the store could.
func depthMisfileTestRuns(f *ScenarioFixture, from, to gitrepo.Hash) {
	f.T.Helper()
	tip := f.Ref(attest.Ref)
	c, err := f.G.ReadCommit(tip)
	if err != nil {
		f.T.Fatal(err)
	}
	root, err := f.G.ReadTree(c.Tree)
	if err != nil {
		f.T.Fatal(err)
	}
	ti := slices.IndexFunc(root, func(e gitrepo.TreeEntry) bool { return e.Name == "tests" })
	if ti < 0 {
		f.T.Fatal("no tests/ in the attestation store")
	}
	tests, err := f.G.ReadTree(root[ti].Hash)
	if err != nil {
		f.T.Fatal(err)
	}
	di := slices.IndexFunc(tests, func(e gitrepo.TreeEntry) bool { return e.Name == from.String() })
	if di < 0 {
		f.T.Fatalf("no tests/%s in the attestation store", from)
	}
	tests = append(tests, gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: to.String(), Hash: tests[di].Hash})
	th, err := f.G.WriteTree(tests)
	if err != nil {
		f.T.Fatal(err)
	}
	root[ti].Hash = th
	rh, err := f.G.WriteTree(root)
	if err != nil {
		f.T.Fatal(err)
	}
	who, err := f.R.Ident()
	if err != nil {
		f.T.Fatal(err)
	}
	h, err := f.G.WriteObject("commit", gitrepo.EncodeCommit(rh, []gitrepo.Hash{tip}, who, who, "git-secure: misfiled test run\n"))
	if err != nil {
		f.T.Fatal(err)
	}
	if err := f.G.UpdateRefs([]gitrepo.RefUpdate{{Name: attest.Ref, Old: tip, New: h}}, "test: misfile"); err != nil {
		f.T.Fatal(err)
	}
}

func TestDepth(t *testing.T) {
	t.Parallel()
	tmpl := newDepthTemplate(t)
	t.Run("1 teams and requirements", func(t *testing.T) { t.Parallel(); depthTeams(t, tmpl) })
	t.Run("2 policy edit validation", func(t *testing.T) { t.Parallel(); depthEdits(t, tmpl) })
	t.Run("3 protected tags", func(t *testing.T) { t.Parallel(); depthTags(t, tmpl) })
	t.Run("4 path rules through merges and renames", func(t *testing.T) { t.Parallel(); depthPaths(t, tmpl) })
	t.Run("5 required test runs", func(t *testing.T) { t.Parallel(); depthTests(t, tmpl) })
	t.Run("6 rotation and revocation", func(t *testing.T) { t.Parallel(); depthRevocation(t, tmpl) })
	t.Run("7 global rules", func(t *testing.T) { t.Parallel(); depthGlobal(t, tmpl) })
	t.Run("8 expiry and renewal", func(t *testing.T) { t.Parallel(); depthExpiry(t, tmpl) })
	t.Run("9 explain", func(t *testing.T) { t.Parallel(); depthExplain(t, tmpl) })
}

// ---------------------------------------------------------------------
// 1. Teams and requirements.

func depthTeams(t *testing.T, tmpl *ScenarioTemplate) {
	setup := func(t *testing.T) *ScenarioFixture {
		f := tmpl.Clone(t)
		f.AddRule(depthRequireMain)
		// Same requirements, but the threshold (3) can be met by a person
		// outside both teams (ci): only the requirements can fail.
		f.AddRule(policy.Rule{Name: "dev", Refs: []string{"refs/heads/dev"}, Allow: []string{"team:developers", "team:security", "ci"},
			Threshold: 3, Require: depthRequireMain.Require})
		f.Apply("admin")
		return f
	}

	t.Run("rule as stored", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		p, _, err := f.R.CurrentPolicy()
		if err != nil {
			t.Fatal(err)
		}
		r, ok := p.Rule("main")
		if !ok {
			t.Fatal("rule main missing")
		}
		if r.Threshold != 3 || strings.Join(r.Allow, ",") != "team:developers,team:security" || len(r.Require) != 2 {
			t.Errorf("rule main = %+v; want threshold 3 (sum of the requirements), allow team:developers, team:security", r)
		}
		if got := strings.Join(p.AllowedPersons(r), ","); got != "both,dev1,dev2,dev3,sec1,sec2" {
			t.Errorf("allowed persons %s", got)
		}
	})

	t.Run("two developers and one security person verify", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		b := f.CommitMain("feature")
		r := f.Record("dev1", "main")
		if len(r.Pending) == 0 || !strings.Contains(strings.Join(r.Pending, "\n"), "team:security needs 1 more") {
			t.Errorf("record pending %q; want a note that team:security needs 1 more", r.Pending)
		}
		f.Approve("dev2", "main", b, "")
		f.Approve("sec1", "main", b, "")
		f.MustVerify(verify.Options{})
	})

	t.Run("a person of both teams fills the slot the others cannot", func(t *testing.T) {
		t.Parallel()
		// dev1 and dev2 are developers only: "both" must take the
		// security slot (a greedy match giving "both" a developer slot
		// would leave security unmet).
		f := setup(t)
		b := f.CommitMain("feature")
		f.Record("dev1", "main")
		f.Approve("dev2", "main", b, "")
		f.Approve("both", "main", b, "")
		f.MustVerify(verify.Options{})
	})

	t.Run("developers only", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		b := f.CommitMain("feature")
		r := f.Record("dev1", "main")
		f.Approve("dev2", "main", b, "")
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, depthMain, "rule main", "has 2 (dev1, dev2)", "team:security needs 1 more")
		if p.Entry != r.Entry || p.Rule != "main" {
			t.Errorf("problem %+v; want entry #%d rule main", p, r.Entry)
		}
		if strings.Contains(p.Detail, "team:developers needs") {
			t.Errorf("detail %q: the developers requirement is met", p.Detail)
		}
	})

	t.Run("three developers meet the threshold but not security", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		b := f.CommitMain("feature")
		r := f.Record("dev1", "main")
		f.Approve("dev2", "main", b, "")
		f.Approve("dev3", "main", b, "")
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, depthMain, "rule main", "has 3 (dev1, dev2, dev3)", "team:security needs 1 more")
		if p.Entry != r.Entry {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, r.Entry)
		}
		if strings.Contains(p.Detail, "more needed") {
			t.Errorf("detail %q: the threshold (3) is met, only the requirement is not", p.Detail)
		}
	})

	t.Run("a person in both teams fills one slot only", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		b := f.CommitMain("feature")
		r := f.Record("dev1", "main")
		f.Approve("both", "main", b, "")
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, depthMain, "rule main", "has 2 (both, dev1)", "needs 1 more")
		if p.Entry != r.Entry {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, r.Entry)
		}
		if strings.Count(p.Detail, "needs 1 more") != 1 {
			t.Errorf("detail %q: want exactly one requirement one short", p.Detail)
		}
	})

	t.Run("a person in both teams fills one slot even when the threshold is met", func(t *testing.T) {
		t.Parallel()
		// dev1 + both + ci = 3 allowed persons (threshold met); counted
		// per group, developers {dev1, both} and security {both} would
		// pass, but both can fill one slot only.
		f := setup(t)
		x := f.NewCommit(f.Ref(depthMain), "dev work")
		f.SetRef("refs/heads/dev", x)
		r := f.Record("dev1", "dev")
		f.Approve("both", "dev", x, "")
		f.Approve("ci", "dev", x, "")
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, "refs/heads/dev", "rule dev", "has 3 (both, ci, dev1)", "needs 1 more")
		if p.Entry != r.Entry || strings.Contains(p.Detail, "more needed") {
			t.Errorf("problem %+v; want entry #%d failing on a requirement only", p, r.Entry)
		}
		f.Approve("sec1", "dev", x, "")
		f.MustVerify(verify.Options{})
	})

	t.Run("two keys of one developer count once", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		b := f.CommitMain("feature")
		r := f.Record("dev3", "main")
		if ap := f.Approve("dev3b", "main", b, ""); ap.Person != "dev3" {
			t.Fatalf("dev3b's approval counted as %q, want dev3", ap.Person)
		}
		f.Approve("sec1", "main", b, "")
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, depthMain, "rule main", "has 2 (dev3, sec1)", "team:developers needs 1 more")
		if p.Entry != r.Entry {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, r.Entry)
		}
	})

	t.Run("a person outside every team does not count", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		a := f.Ref(depthMain)
		b := f.CommitMain("feature")
		if _, err := f.R.Record("main", f.Key("ci")); !errors.Is(err, porcelain.ErrRefused) || !strings.Contains(err.Error(), "rule main") {
			t.Fatalf("record of main by ci: %v; want ErrRefused naming rule main", err)
		}
		n := f.Forge("ci", &rsl.Entry{Type: rsl.TypeRef, Ref: depthMain, Old: a, New: b})
		f.Approve("dev1", "main", b, "")
		f.Approve("dev2", "main", b, "")
		// ci is neither allowed nor in a requirement group: dev1 and dev2
		// are two of three, security is missing.
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, depthMain, "rule main", "has 2 (dev1, dev2)", "signer ci is not allowed", "team:security needs 1 more")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
	})
}

// ---------------------------------------------------------------------
// 2. Policy edit validation: refused edits wrap ErrInvalidChange and
// change nothing.

func depthEdits(t *testing.T, tmpl *ScenarioTemplate) {
	f := tmpl.Clone(t)
	f.AddRule(depthRequireMain)
	f.Apply("admin")
	base, baseCommit, err := f.R.CurrentPolicy()
	if err != nil {
		t.Fatal(err)
	}
	encode := func(p *policy.Policy) string {
		t.Helper()
		r, tg, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return string(r) + "\n" + string(tg)
	}
	cases := []struct {
		name string
		edit porcelain.Edit
		want string
	}{
		{"unknown person in a team", func(p, b *policy.Policy, now time.Time) error {
			return p.AddTeam(b, "ops", []string{"dev1", "nobody"}, now)
		}, "team ops: unknown person nobody"},
		{"person twice in a team", func(p, b *policy.Policy, now time.Time) error {
			return p.AddTeam(b, "ops", []string{"dev1", "dev1"}, now)
		}, "team ops: dev1 given twice"},
		{"duplicate team", func(p, b *policy.Policy, now time.Time) error {
			return p.AddTeam(b, "developers", []string{"dev1"}, now)
		}, "team developers already exists"},
		{"remove a team a rule names", func(p, b *policy.Policy, now time.Time) error {
			return p.RemoveTeam(b, "security", now)
		}, "rule main names team security"},
		{"rule names an unknown team", func(p, b *policy.Policy, now time.Time) error {
			return p.AddRule(b, policy.Rule{Name: "ops", Refs: []string{"refs/heads/ops"}, Allow: []string{"team:ops"}}, now)
		}, "rule ops: unknown team ops"},
		{"requirement larger than its team", func(p, b *policy.Policy, now time.Time) error {
			return p.AddRule(b, policy.Rule{Name: "sec4", Refs: []string{"refs/heads/sec"}, Allow: []string{"team:developers"},
				Require: []policy.Requirement{{Group: "team:security", N: 4}}}, now)
		}, "requirement team:security=4 cannot be met: team:security has 3 persons"},
		{"requirement naming a person more than once", func(p, b *policy.Policy, now time.Time) error {
			return p.AddRule(b, policy.Rule{Name: "solo", Refs: []string{"refs/heads/solo"}, Allow: []string{"team:developers"},
				Require: []policy.Requirement{{Group: "dev1", N: 2}}}, now)
		}, "dev1 has 1 persons"},
		{"threshold larger than the allowed persons", func(p, b *policy.Policy, now time.Time) error {
			return p.AddRule(b, policy.Rule{Name: "big", Refs: []string{"refs/heads/big"}, Allow: []string{"dev1", "sec1"}, Threshold: 3}, now)
		}, "threshold 3 cannot be met by 2 allowed persons"},
		{"threshold larger than the allowed team", func(p, b *policy.Policy, now time.Time) error {
			return p.AddRule(b, policy.Rule{Name: "big", Refs: []string{"refs/heads/big"}, Allow: []string{"team:security"}, Threshold: 4}, now)
		}, "threshold 4 cannot be met by 3 allowed persons"},
		{"remove a person who is in a team", func(p, b *policy.Policy, now time.Time) error {
			return p.RemovePerson(b, "sec2", now)
		}, "sec2 is a member of team security"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := base.Clone()
			if err != nil {
				t.Fatal(err)
			}
			before := encode(p)
			err = tc.edit(p, base, ScenarioNow)
			if !errors.Is(err, policy.ErrInvalidChange) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("edit: %v; want ErrInvalidChange containing %q", err, tc.want)
			}
			if encode(p) != before {
				t.Errorf("a refused edit changed the policy")
			}
			// Through porcelain: a usage error, and the staged change,
			// the policy and the log stay where they were.
			staged, rslTip := f.Ref(policy.StagingRef), f.Ref(rsl.Ref)
			if _, err := f.R.Stage(tc.name, tc.edit); !errors.Is(err, porcelain.ErrUsage) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("stage: %v; want ErrUsage containing %q", err, tc.want)
			}
			if f.Ref(policy.StagingRef) != staged || f.Ref(policy.Ref) != baseCommit || f.Ref(rsl.Ref) != rslTip {
				t.Errorf("a refused stage moved the staging ref, the policy or the log")
			}
		})
	}
	t.Run("a valid edit does change the policy", func(t *testing.T) {
		// Control: the comparisons above can see a change.
		p, err := base.Clone()
		if err != nil {
			t.Fatal(err)
		}
		before := encode(p)
		if err := p.AddTeam(base, "ops", []string{"dev1", "sec1"}, ScenarioNow); err != nil {
			t.Fatal(err)
		}
		if encode(p) == before {
			t.Fatal("AddTeam changed nothing")
		}
		if tm, ok := p.Team("ops"); !ok || strings.Join(tm.Members, ",") != "dev1,sec1" {
			t.Errorf("team ops = %+v", tm)
		}
	})
}

// ---------------------------------------------------------------------
// 3. Protected tags: created once by the threshold, never moved or
// deleted.

func depthTags(t *testing.T, tmpl *ScenarioTemplate) {
	const tag = "refs/tags/v2.0"
	created := func(t *testing.T) (*ScenarioFixture, gitrepo.Hash) {
		f := tmpl.Clone(t)
		f.AddRule(policy.Rule{Name: "releases", Refs: []string{"refs/tags/v*"}, Allow: []string{"dev1", "dev2"}, Threshold: 2})
		f.Apply("admin")
		f.S.Git(f.Dir, "tag", "-a", "v2.0", "-m", "release 2.0")
		obj := f.Ref(tag)
		r := f.Record("dev1", "v2.0")
		if r.Ref != tag || r.New != obj || len(r.Pending) == 0 {
			t.Fatalf("record: %+v; want %s created at %s, pending an approval", r, tag, obj)
		}
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, tag, "rule releases", "has 1 (dev1)", "1 more needed")
		if p.Entry != r.Entry {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, r.Entry)
		}
		f.Approve("dev2", tag, obj, "")
		f.MustVerify(verify.Options{})
		return f, obj
	}

	t.Run("moved", func(t *testing.T) {
		t.Parallel()
		f, obj := created(t)
		f.S.Git(f.Dir, "tag", "-f", "-a", "v2.0", "-m", "release 2.0, again", "HEAD~1")
		moved := f.Ref(tag)
		if moved == obj {
			t.Fatal("tag did not move")
		}
		x, err := f.R.Explain(tag, f.Key("dev1"))
		if err != nil {
			t.Fatal(err)
		}
		if x.Satisfied || !slices.ContainsFunc(x.Failures, func(fl porcelain.ExplainedFailure) bool {
			return fl.Kind == verify.ErrPolicyRule.Error() && strings.Contains(fl.Detail, "never moved or deleted")
		}) {
			t.Errorf("explain of the tag move: %+v; want a %q failure", x, verify.ErrPolicyRule)
		}
		tip := f.Ref(rsl.Ref)
		_, err = f.R.Record(tag, f.Key("dev1"))
		if !errors.Is(err, porcelain.ErrRefused) || !strings.Contains(err.Error(), "never moved or deleted") {
			t.Fatalf("porcelain record of the moved tag: %v; want ErrRefused saying tags are never moved", err)
		}
		if f.Ref(rsl.Ref) != tip {
			t.Fatal("a refused record moved the log")
		}
		// Forged, and signed and approved by both allowed persons.
		n := f.Forge("dev1", &rsl.Entry{Type: rsl.TypeRef, Ref: tag, Old: obj, New: moved})
		if ap := f.Approve("dev2", tag, moved, ""); ap.From != obj || ap.To != moved {
			t.Fatalf("approval %+v", ap)
		}
		p, failed := f.MustFail(verify.Options{}, verify.ErrPolicyRule, tag, "was moved", "never moved or deleted")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
		depthNoKind(t, failed, verify.ErrThreshold)
		depthOnlyEntries(t, failed, n)
	})

	t.Run("deleted", func(t *testing.T) {
		t.Parallel()
		f, obj := created(t)
		f.S.Git(f.Dir, "tag", "-d", "v2.0")
		if _, err := f.R.Record(tag, f.Key("dev1")); !errors.Is(err, porcelain.ErrRefused) || !strings.Contains(err.Error(), "never moved or deleted") {
			t.Fatalf("porcelain record of the deleted tag: %v; want ErrRefused", err)
		}
		n := f.Forge("dev1", &rsl.Entry{Type: rsl.TypeRef, Ref: tag, Old: obj})
		if ap := f.Approve("dev2", tag, gitrepo.ZeroHash, ""); ap.From != obj || !ap.To.IsZero() {
			t.Fatalf("approval %+v", ap)
		}
		p, failed := f.MustFail(verify.Options{}, verify.ErrPolicyRule, tag, "was deleted", "never moved or deleted")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
		depthNoKind(t, failed, verify.ErrThreshold)
	})

	t.Run("another tag is created normally", func(t *testing.T) {
		t.Parallel()
		f, _ := created(t)
		f.S.Git(f.Dir, "tag", "v2.1", "HEAD~1")
		obj := f.Ref("refs/tags/v2.1")
		f.Approve("dev1", "refs/tags/v2.1", obj, "")
		if r := f.Record("dev2", "v2.1"); len(r.Pending) != 0 {
			t.Errorf("pending %q", r.Pending)
		}
		f.MustVerify(verify.Options{})
	})
}

// ---------------------------------------------------------------------
// 4. Path rules through merges, renames and case tricks.

func depthPaths(t *testing.T, tmpl *ScenarioTemplate) {
	setup := func(t *testing.T) *ScenarioFixture {
		f := tmpl.Clone(t)
		f.AddRule(policy.Rule{Name: "main", Refs: []string{depthMain, "refs/heads/release/**"}, Allow: []string{"team:developers"}})
		f.AddRule(policy.Rule{Name: "crypto", Paths: []string{"src/crypto/**"}, Allow: []string{"sec1"}})
		f.Apply("admin")
		return f
	}
	// merge commits files on a feature branch, a change on main, and a
	// merge commit of the branch into main; the branch is deleted.
	merge := func(f *ScenarioFixture, branch string, files ...string) (old, merged gitrepo.Hash) {
		f.T.Helper()
		old = f.Ref(depthMain)
		f.S.Git(f.Dir, "checkout", "-q", "-b", branch)
		for _, p := range files {
			depthCommit(f, p, "feature change of "+p)
		}
		f.S.Git(f.Dir, "checkout", "-q", "main")
		depthCommit(f, "main-"+branch+".txt", "main side of "+branch)
		f.S.Git(f.Dir, "merge", "-q", "--no-ff", "-m", "merge "+branch, branch)
		f.S.Git(f.Dir, "branch", "-q", "-D", branch)
		merged = f.Ref(depthMain)
		if c, err := f.G.ReadCommit(merged); err != nil || len(c.Parents) != 2 {
			f.T.Fatalf("%s is not a merge commit: %v", merged, err)
		}
		return old, merged
	}
	// refusedThenForged checks that porcelain refuses dev1's record naming
	// rule crypto and file, then forges the entry and returns its number.
	refusedThenForged := func(f *ScenarioFixture, ref string, old, new gitrepo.Hash, file string) uint64 {
		f.T.Helper()
		tip := f.Ref(rsl.Ref)
		_, err := f.R.Record(ref, f.Key("dev1"))
		if !errors.Is(err, porcelain.ErrRefused) || !strings.Contains(err.Error(), "rule crypto") || !strings.Contains(err.Error(), file) {
			f.T.Fatalf("porcelain record by dev1: %v; want ErrRefused naming rule crypto and %s", err, file)
		}
		if f.Ref(rsl.Ref) != tip {
			f.T.Fatal("a refused record moved the log")
		}
		return f.Forge("dev1", &rsl.Entry{Type: rsl.TypeRef, Ref: ref, Old: old, New: new})
	}

	t.Run("merge of a crypto change", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		old, m := merge(f, "feature", "src/crypto/x.go")
		n := refusedThenForged(f, depthMain, old, m, "src/crypto/x.go")
		p, failed := f.MustFail(verify.Options{}, verify.ErrUnauthorized, depthMain, "rule crypto", "dev1 is not allowed", "src/crypto/x.go")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
		depthOnlyEntries(t, failed, n)
		// Another developer's approval: still nobody the rule allows.
		f.Approve("dev2", "main", m, "")
		p, _ = f.MustFail(verify.Options{}, verify.ErrThreshold, depthMain, "rule crypto", "1 more needed", "protected files changed: src/crypto/x.go")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
		f.Approve("sec1", "main", m, "")
		f.MustVerify(verify.Options{})
	})

	t.Run("rename out of the protected folder", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		old := f.Ref(depthMain)
		f.S.Git(f.Dir, "mv", "src/crypto/a.go", "src/other/a.go")
		m := depthGitCommit(f, "move a out of crypto")
		n := refusedThenForged(f, depthMain, old, m, "src/crypto/a.go")
		p, _ := f.MustFail(verify.Options{}, verify.ErrUnauthorized, depthMain, "rule crypto", "src/crypto/a.go")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
		f.Approve("sec1", "main", m, "")
		f.MustVerify(verify.Options{})
	})

	t.Run("rename into the protected folder", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		old := f.Ref(depthMain)
		f.S.Git(f.Dir, "mv", "src/other/b.go", "src/crypto/b.go")
		m := depthGitCommit(f, "move b into crypto")
		n := refusedThenForged(f, depthMain, old, m, "src/crypto/b.go")
		f.MustFail(verify.Options{}, verify.ErrUnauthorized, depthMain, "rule crypto", "src/crypto/b.go")
		_ = n
		// Approved first by sec1, a record is then complete.
		f.Approve("sec1", "main", m, old.String())
		f.MustVerify(verify.Options{})
	})

	t.Run("approved first then recorded", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		_, m := merge(f, "feature", "src/crypto/z.go")
		f.Approve("sec1", "main", m, "")
		if r := f.Record("dev1", "main"); len(r.Pending) != 0 {
			t.Errorf("pending %q after sec1's approval", r.Pending)
		}
		f.MustVerify(verify.Options{})
	})

	t.Run("other case spelling of the protected folder", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		old := f.Ref(depthMain)
		m := depthCommit(f, "SRC/Crypto/y.go", "case trick")
		n := refusedThenForged(f, depthMain, old, m, "SRC/Crypto/y.go")
		p, _ := f.MustFail(verify.Options{}, verify.ErrUnauthorized, depthMain, "rule crypto", "SRC/Crypto/y.go")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
	})

	t.Run("merge that does not touch crypto", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		merge(f, "docs", "docs/readme.md", "src/cryptography/z.go")
		if r := f.Record("dev1", "main"); len(r.Pending) != 0 {
			t.Errorf("pending %q for a merge without crypto changes", r.Pending)
		}
		f.MustVerify(verify.Options{})
	})

	t.Run("new branch without protected changes", func(t *testing.T) {
		t.Parallel()
		// A new ref's changed files are computed from its best common
		// ancestor with the recorded refs, not from the empty tree (which
		// would count src/crypto/a.go, already on main).
		f := setup(t)
		f.S.Git(f.Dir, "checkout", "-q", "-b", "topic")
		depthCommit(f, "docs/topic.md", "topic docs")
		if r := f.Record("dev1", "topic"); len(r.Pending) != 0 || !r.Old.IsZero() {
			t.Errorf("record of the new topic branch: %+v", r)
		}
		f.MustVerify(verify.Options{})
	})

	t.Run("review branch with a crypto change", func(t *testing.T) {
		t.Parallel()
		// The path rule has no ref patterns: it judges the refs the ref
		// rules name (main, release/**), not a review branch.
		f := setup(t)
		f.S.Git(f.Dir, "checkout", "-q", "-b", "review/crypto")
		depthCommit(f, "src/crypto/r.go", "proposed crypto")
		if r := f.Record("dev1", "review/crypto"); len(r.Pending) != 0 || !r.Old.IsZero() {
			t.Errorf("record of a review branch with a crypto change: %+v", r)
		}
		f.MustVerify(verify.Options{})
	})

	// newCryptoBranch creates release/2 off main with a crypto change (a
	// new ref the path rule covers, through the main rule's
	// refs/heads/release/**); dev1's record is refused, then forged. It
	// returns the entry number.
	newCryptoBranch := func(t *testing.T) (*ScenarioFixture, uint64) {
		f := setup(t)
		f.S.Git(f.Dir, "checkout", "-q", "-b", "release/2")
		x := depthCommit(f, "src/crypto/t.go", "topic crypto")
		return f, refusedThenForged(f, "refs/heads/release/2", gitrepo.ZeroHash, x, "src/crypto/t.go")
	}

	t.Run("porcelain refuses a new branch with a crypto change", func(t *testing.T) {
		t.Parallel()
		newCryptoBranch(t)
	})

	t.Run("new branch with a crypto change", func(t *testing.T) {
		t.Parallel()
		f, n := newCryptoBranch(t)
		p, _ := f.MustFail(verify.Options{}, verify.ErrUnauthorized, "refs/heads/release/2", "rule crypto", "dev1 is not allowed", "src/crypto/t.go")
		if p.Entry != n || strings.Contains(p.Detail, "src/crypto/a.go") {
			t.Errorf("problem %+v; want entry #%d naming only the new crypto file", p, n)
		}
	})

	t.Run("new branch at a crypto change main went through", func(t *testing.T) {
		t.Parallel()
		// dev1 moves main through a commit that changes src/crypto/a.go
		// and a second that puts it back: main's update changes no
		// crypto file, so it needs nobody from security. A new branch at
		// the middle commit must not pass as changing nothing: that
		// commit was never a recorded state, and its merge base with
		// main is itself.
		f := setup(t)
		x := depthCommit(f, "src/crypto/a.go", "smuggled crypto")
		depthCommit(f, "src/crypto/a.go", "package crypto // a")
		if r := f.Record("dev1", "main"); len(r.Pending) != 0 {
			t.Fatalf("pending %q for a main update that changes no crypto file", r.Pending)
		}
		f.MustVerify(verify.Options{})
		f.S.Git(f.Dir, "branch", "release/2", x.String())
		n := refusedThenForged(f, "refs/heads/release/2", gitrepo.ZeroHash, x, "src/crypto/a.go")
		p, _ := f.MustFail(verify.Options{}, verify.ErrUnauthorized, "refs/heads/release/2", "rule crypto", "dev1 is not allowed", "src/crypto/a.go")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
	})

	// Files that change what is made of the crypto files while those stay
	// unchanged: git archive (and a forge's release tarball) of main would
	// leave src/crypto/a.go out; git submodule update --remote would fetch
	// src/crypto/vendor from the attacker's server.
	for _, tc := range []struct{ name, file, content string }{
		{"attributes that drop a crypto file from archives", ".gitattributes", "src/crypto/a.go export-ignore"},
		{"gitmodules that redirect a submodule in the crypto tree", ".gitmodules", "[submodule \"v\"]\n\tpath = src/crypto/vendor\n\turl = https://evil.example/v.git\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			old := f.Ref(depthMain)
			m := depthCommit(f, tc.file, tc.content)
			n := refusedThenForged(f, depthMain, old, m, tc.file)
			p, _ := f.MustFail(verify.Options{}, verify.ErrUnauthorized, depthMain, "rule crypto", "dev1 is not allowed", tc.file)
			if p.Entry != n {
				t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
			}
			f.Approve("sec1", "main", m, old.String())
			f.MustVerify(verify.Options{})
		})
	}

	t.Run("new branch at an older commit of main", func(t *testing.T) {
		t.Parallel()
		// Branching off a commit main went through changes nothing the
		// current main does not hold: nothing to approve.
		f := setup(t)
		x := depthCommit(f, "docs/one.md", "docs one")
		depthCommit(f, "docs/two.md", "docs two")
		if r := f.Record("dev1", "main"); len(r.Pending) != 0 {
			t.Fatalf("pending %q for a docs change", r.Pending)
		}
		f.S.Git(f.Dir, "branch", "release/1", x.String())
		if r := f.Record("dev1", "release/1"); len(r.Pending) != 0 {
			t.Errorf("pending %q for a branch off main without crypto changes", r.Pending)
		}
		f.MustVerify(verify.Options{})
	})
}

// ---------------------------------------------------------------------
// 5. attest run and --require-tests-by.

func depthTests(t *testing.T, tmpl *ScenarioTemplate) {
	setup := func(t *testing.T) *ScenarioFixture {
		f := tmpl.Clone(t)
		f.AddRule(policy.Rule{Name: "tested", Refs: []string{depthMain}, Allow: []string{"team:developers"}, TestsBy: []string{"ci"}})
		f.Apply("admin")
		return f
	}
	run := func(f *ScenarioFixture, key string, argv ...string) (*porcelain.RunResult, error) {
		return f.R.AttestRun(argv, f.Key(key), "depth-test", io.Discard, io.Discard)
	}
	mustRun := func(f *ScenarioFixture, key string, argv ...string) *porcelain.RunResult {
		f.T.Helper()
		res, err := run(f, key, argv...)
		if err != nil || !res.Attested {
			f.T.Fatalf("attest run by %s: %+v, %v", key, res, err)
		}
		return res
	}

	t.Run("passing run by ci", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		b := f.CommitMain("tested change")
		r := f.Record("dev1", "main")
		if !strings.Contains(strings.Join(r.Pending, "\n"), "attest run") {
			t.Errorf("record pending %q; want a note on the missing test run", r.Pending)
		}
		p, _ := f.MustFail(verify.Options{}, verify.ErrNoTests, depthMain, "rule tested", "attested by ci")
		if p.Entry != r.Entry {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, r.Entry)
		}
		att := f.Ref(attest.Ref)
		res := mustRun(f, "ci", "sh", "-c", "exit 0")
		if res.Person != "ci" || res.Commit != b || res.Tree != depthTree(f, b) || res.ExitCode != 0 {
			t.Errorf("run result %+v; want ci attesting commit %s", res, b)
		}
		if f.Ref(attest.Ref) == att {
			t.Error("a passing run did not add to the attestation store")
		}
		f.MustVerify(verify.Options{})
	})

	t.Run("failing command records nothing", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		f.CommitMain("broken change")
		att := f.Ref(attest.Ref)
		res, err := run(f, "ci", "sh", "-c", "exit 3")
		if !errors.Is(err, porcelain.ErrTestsFailed) || !errors.Is(err, porcelain.ErrRefused) {
			t.Fatalf("failing run: %v; want ErrTestsFailed (ErrRefused)", err)
		}
		if res == nil || res.ExitCode != 3 || res.Attested {
			t.Errorf("failing run result %+v; want exit 3, not attested", res)
		}
		if f.Ref(attest.Ref) != att {
			t.Error("a failing run changed the attestation store")
		}
		f.Record("dev1", "main")
		f.MustFail(verify.Options{}, verify.ErrNoTests, depthMain, "rule tested", "attested by ci")
	})

	t.Run("dirty work tree is refused", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		f.CommitMain("change")
		att := f.Ref(attest.Ref)
		scratch := filepath.Join(f.Dir, "scratch.txt")
		if err := os.WriteFile(scratch, []byte("untracked\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := run(f, "ci", "sh", "-c", "exit 0"); !errors.Is(err, porcelain.ErrUsage) || !strings.Contains(err.Error(), "work tree has changes") {
			t.Fatalf("run with an untracked file: %v; want ErrUsage about the work tree", err)
		}
		os.Remove(scratch)
		if err := os.WriteFile(filepath.Join(f.Dir, "file0.txt"), []byte("edited\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := run(f, "ci", "sh", "-c", "exit 0"); !errors.Is(err, porcelain.ErrUsage) || !strings.Contains(err.Error(), "file0.txt") {
			t.Fatalf("run with a modified tracked file: %v; want ErrUsage naming file0.txt", err)
		}
		if f.Ref(attest.Ref) != att {
			t.Error("a refused run changed the attestation store")
		}
		f.S.Git(f.Dir, "checkout", "--", "file0.txt")
		mustRun(f, "ci", "sh", "-c", "exit 0") // clean again: accepted
	})

	t.Run("command that changes the work tree is refused", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		head := f.CommitMain("change")
		att := f.Ref(attest.Ref)
		for _, script := range []string{"echo changed >> file0.txt", "echo new > generated.txt", "git commit -q --allow-empty -m sneaky"} {
			res, err := run(f, "ci", "sh", "-c", script)
			if !errors.Is(err, porcelain.ErrRefused) || !strings.Contains(err.Error(), "changed the work tree or HEAD") || (res != nil && res.Attested) {
				t.Errorf("run %q: %+v, %v; want ErrRefused, nothing attested", script, res, err)
			}
			f.S.Git(f.Dir, "reset", "-q", "--hard", head.String())
			f.S.Git(f.Dir, "clean", "-q", "-f")
		}
		if f.Ref(attest.Ref) != att {
			t.Error("a refused run changed the attestation store")
		}
	})

	t.Run("attestation of another tree does not count", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		b := f.CommitMain("tested")
		mustRun(f, "ci", "sh", "-c", "exit 0")
		c := f.CommitMain("untested follow-up")
		if depthTree(f, b) == depthTree(f, c) {
			t.Fatal("same tree")
		}
		r := f.Record("dev1", "main")
		p, _ := f.MustFail(verify.Options{}, verify.ErrNoTests, depthMain, "rule tested", c.String()[:12], "attested by ci")
		if p.Entry != r.Entry {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, r.Entry)
		}
	})

	t.Run("a stored run of a failing command does not count", func(t *testing.T) {
		t.Parallel()
		// Hand-made (AttestRun never stores one), correctly signed by ci.
		f := setup(t)
		c := f.CommitMain("failing tests")
		depthStoreTestRun(f, "ci", attest.TestRun{Tree: depthTree(f, c), Commit: c, Command: []string{"make", "test"}, ExitCode: 3,
			Tools: map[string]string{}, StartedAt: ScenarioNow})
		r := f.Record("dev1", "main")
		p, _ := f.MustFail(verify.Options{}, verify.ErrNoTests, depthMain, "rule tested", "attested by ci", "exited with 3")
		if p.Entry != r.Entry {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, r.Entry)
		}
	})

	t.Run("a run filed under another tree does not count", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		b := f.CommitMain("tested")
		mustRun(f, "ci", "sh", "-c", "exit 0")
		c := f.CommitMain("untested")
		depthMisfileTestRuns(f, depthTree(f, b), depthTree(f, c))
		r := f.Record("dev1", "main")
		p, _ := f.MustFail(verify.Options{}, verify.ErrNoTests, depthMain, "rule tested", "attested by ci", "it is for tree "+depthTree(f, b).String()[:12])
		if p.Entry != r.Entry {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, r.Entry)
		}
	})

	t.Run("attestation by a person outside the group does not count", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		f.CommitMain("tested by a developer")
		if res := mustRun(f, "dev2", "sh", "-c", "exit 0"); res.Person != "dev2" {
			t.Fatalf("run by dev2 attested as %q", res.Person)
		}
		r := f.Record("dev1", "main")
		p, _ := f.MustFail(verify.Options{}, verify.ErrNoTests, depthMain, "rule tested", "attested by ci")
		if p.Entry != r.Entry {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, r.Entry)
		}
		mustRun(f, "ci", "sh", "-c", "exit 0")
		f.MustVerify(verify.Options{})
	})
}

// ---------------------------------------------------------------------
// 6. Key rotation and revocation.

func depthRevocation(t *testing.T, tmpl *ScenarioTemplate) {
	t.Run("rotation", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		rot := policy.Rule{Name: "rot", Refs: []string{depthMain}, Allow: []string{"dev1", "bob"}}
		f.AddRule(rot)
		f.Apply("admin")
		b := f.CommitMain("bob's change")
		before := f.Record("bob", "main")
		f.MustVerify(verify.Options{})

		// bob's new key replaces the old one, in one policy change.
		f.Stage("remove rule rot", func(p, base *policy.Policy, now time.Time) error { return p.RemoveRule(base, "rot", now) })
		f.Stage("remove person bob", func(p, base *policy.Policy, now time.Time) error { return p.RemovePerson(base, "bob", now) })
		f.AddPerson("bob", "bob2")
		f.AddRule(rot)
		f.Apply("admin")
		res := f.MustVerify(verify.Options{}) // bob's entry made with the old key still verifies
		for _, s := range res.Refs {
			if s.Ref == depthMain && s.Entry != before.Entry {
				t.Errorf("main at entry #%d, want bob's #%d", s.Entry, before.Entry)
			}
		}

		c := f.CommitMain("after rotation")
		if _, err := f.R.Record("main", f.Key("bob")); !errors.Is(err, porcelain.ErrRefused) {
			t.Fatalf("record with bob's old key: %v; want ErrRefused", err)
		}
		if _, err := f.R.Approve("main", c.String(), "", f.Key("bob")); !errors.Is(err, porcelain.ErrRefused) {
			t.Fatalf("approve with bob's old key: %v; want ErrRefused", err)
		}
		n := f.Forge("bob", &rsl.Entry{Type: rsl.TypeRef, Ref: depthMain, Old: b, New: c})
		p, failed := f.MustFail(verify.Options{}, verify.ErrSignature, depthMain, f.FP("bob"), "does not know")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
		depthOnlyEntries(t, failed, n)
	})

	t.Run("revoking a key after it was rotated out", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		f.AddRule(policy.Rule{Name: "rot", Refs: []string{depthMain}, Allow: []string{"dev1", "bob"}})
		f.Apply("admin")
		f.CommitMain("signed with the stolen key")
		stolen := f.Record("bob", "main")
		f.Stage("remove rule rot", func(p, base *policy.Policy, now time.Time) error { return p.RemoveRule(base, "rot", now) })
		f.Stage("remove person bob", func(p, base *policy.Policy, now time.Time) error { return p.RemovePerson(base, "bob", now) })
		f.AddPerson("bob", "bob2")
		f.AddRule(policy.Rule{Name: "rot", Refs: []string{depthMain}, Allow: []string{"dev1", "bob"}})
		f.Apply("admin")
		fp, from := f.FP("bob"), stolen.Entry
		f.Stage("revoke bob's old key", func(p, base *policy.Policy, now time.Time) error { return p.RevokeKey(base, fp, from, now) })
		f.Apply("admin")
		p, _ := f.MustFail(verify.Options{}, verify.ErrSignature, depthMain, fp, "revoked")
		if p.Entry != stolen.Entry {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, stolen.Entry)
		}
	})

	t.Run("rotated key records", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		f.Stage("remove person bob", func(p, base *policy.Policy, now time.Time) error { return p.RemovePerson(base, "bob", now) })
		f.AddPerson("bob", "bob2")
		f.AddRule(policy.Rule{Name: "rot", Refs: []string{depthMain}, Allow: []string{"dev1", "bob"}, Threshold: 2})
		f.Apply("admin")
		b := f.CommitMain("bob's change")
		f.Record("bob2", "main")
		if ap := f.Approve("dev1", "main", b, ""); ap.Person != "dev1" {
			t.Fatal(ap)
		}
		f.MustVerify(verify.Options{})
	})

	// revoked builds: rule rev (2 of dev1, bob, sec1); entry r1 by dev1
	// approved by bob, r2 by bob approved by dev1, r3 by dev1 approved by
	// bob; then bob's key revoked from r2.
	revoked := func(t *testing.T) (f *ScenarioFixture, r1, r2, r3 *porcelain.RecordResult, c3 gitrepo.Hash) {
		f = tmpl.Clone(t)
		f.AddRule(policy.Rule{Name: "rev", Refs: []string{depthMain}, Allow: []string{"dev1", "bob", "sec1"}, Threshold: 2})
		f.Apply("admin")
		c1 := f.CommitMain("one")
		f.Approve("bob", "main", c1, "")
		r1 = f.Record("dev1", "main")
		c2 := f.CommitMain("two")
		f.Approve("dev1", "main", c2, "")
		r2 = f.Record("bob", "main")
		c3 = f.CommitMain("three")
		f.Approve("bob", "main", c3, "")
		r3 = f.Record("dev1", "main")
		f.MustVerify(verify.Options{})
		from := r2.Entry
		fp := f.FP("bob")
		f.Stage("revoke bob's key", func(p, base *policy.Policy, now time.Time) error { return p.RevokeKey(base, fp, from, now) })
		f.Apply("admin")
		return f, r1, r2, r3, c3
	}

	t.Run("revocation", func(t *testing.T) {
		t.Parallel()
		f, r1, r2, r3, c3 := revoked(t)
		p, failed := f.MustFail(verify.Options{}, verify.ErrSignature, depthMain, f.FP("bob"), "revoked from entry #"+scenarioItoa(r2.Entry))
		if p.Entry != r2.Entry {
			t.Errorf("signature problem on entry #%d, want #%d", p.Entry, r2.Entry)
		}
		// bob's approval of r3 (after the revocation point) does not count.
		p3, _ := ScenarioWantProblem(t, failed, verify.ErrThreshold, depthMain, "rule rev", "has 1 (dev1)", "revoked key")
		if p3.Entry != r3.Entry {
			t.Errorf("threshold problem on entry #%d, want #%d", p3.Entry, r3.Entry)
		}
		// r1, signed by dev1 and approved by bob before entry r2, still
		// verifies: only r2 and r3 fail.
		depthOnlyEntries(t, failed, r2.Entry, r3.Entry)
		_ = r1

		// Another person's approval of r3 still counts.
		if ap := f.Approve("sec1", "main", c3, ""); ap.To != c3 {
			t.Fatalf("approval %+v", ap)
		}
		_, failed = f.MustFail(verify.Options{}, verify.ErrSignature, depthMain, f.FP("bob"), "revoked")
		depthOnlyEntries(t, failed, r2.Entry)
	})

	t.Run("revoked key may not record", func(t *testing.T) {
		t.Parallel()
		f, _, _, _, _ := revoked(t)
		f.CommitMain("after revocation")
		tip := f.Ref(rsl.Ref)
		if _, err := f.R.Record("main", f.Key("bob")); !errors.Is(err, porcelain.ErrRefused) {
			t.Errorf("record with bob's revoked key: %v; want ErrRefused (the entry could never verify)", err)
		}
		if f.Ref(rsl.Ref) != tip {
			t.Error("the log moved")
		}
	})
}

// ---------------------------------------------------------------------
// 7. Global rules.

func depthGlobal(t *testing.T, tmpl *ScenarioTemplate) {
	linear := func(t *testing.T) *ScenarioFixture {
		f := tmpl.Clone(t)
		f.AddRule(policy.Rule{Name: "main", Refs: []string{depthMain}, Allow: []string{"team:developers"}})
		f.Stage("add global rule linear", func(p, base *policy.Policy, now time.Time) error {
			return p.AddGlobalRule(base, policy.GlobalRule{Name: "linear", Type: policy.GlobalNoForcePush, Refs: []string{depthMain}}, now)
		})
		f.Apply("admin")
		return f
	}

	t.Run("no-force-push: fast-forwards pass", func(t *testing.T) {
		t.Parallel()
		f := linear(t)
		f.CommitMain("one")
		f.Record("dev1", "main")
		next := f.NewCommit(f.Ref(depthMain), "two")
		f.SetRef(depthMain, next)
		f.Record("dev2", "main")
		f.MustVerify(verify.Options{})
	})

	t.Run("no-force-push: rewrite", func(t *testing.T) {
		t.Parallel()
		f := linear(t)
		a := f.Ref(depthMain)
		b := f.CommitMain("to be rewritten")
		f.Record("dev1", "main")
		f.S.Git(f.Dir, "reset", "-q", "--hard", a.String())
		c := f.CommitMain("rewritten")
		x, err := f.R.Explain("main", f.Key("dev1"))
		if err != nil {
			t.Fatal(err)
		}
		if x.Satisfied || len(x.Failures) != 1 || x.Failures[0].Rule != "linear" || x.Failures[0].Kind != verify.ErrPolicyRule.Error() {
			t.Errorf("explain of the rewrite: %+v; want one %q failure of global rule linear", x, verify.ErrPolicyRule)
		}
		tip := f.Ref(rsl.Ref)
		if _, err := f.R.Record("main", f.Key("dev1")); !errors.Is(err, porcelain.ErrRefused) || !strings.Contains(err.Error(), "global rule linear") {
			t.Fatalf("porcelain record of a rewrite: %v; want ErrRefused naming global rule linear", err)
		}
		if f.Ref(rsl.Ref) != tip {
			t.Fatal("a refused record moved the log")
		}
		n := f.Forge("dev1", &rsl.Entry{Type: rsl.TypeRef, Ref: depthMain, Old: b, New: c})
		f.Approve("dev2", "main", c, "") // two persons change nothing
		p, failed := f.MustFail(verify.Options{}, verify.ErrPolicyRule, depthMain, "rule linear", "may only fast-forward", c.String()[:12])
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
		depthOnlyEntries(t, failed, n)
	})

	t.Run("no-force-push: deletion", func(t *testing.T) {
		t.Parallel()
		f := linear(t)
		a := f.Ref(depthMain)
		f.S.Git(f.Dir, "checkout", "-q", "--detach")
		f.SetRef(depthMain, gitrepo.ZeroHash)
		if _, err := f.R.Record(depthMain, f.Key("dev1")); !errors.Is(err, porcelain.ErrRefused) || !strings.Contains(err.Error(), "global rule linear") {
			t.Fatalf("porcelain record of the deletion: %v; want ErrRefused naming global rule linear", err)
		}
		n := f.Forge("dev1", &rsl.Entry{Type: rsl.TypeRef, Ref: depthMain, Old: a})
		p, _ := f.MustFail(verify.Options{}, verify.ErrPolicyRule, depthMain, "rule linear", "force push or deletion")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
	})

	t.Run("no-force-push on a ref no other rule protects", func(t *testing.T) {
		t.Parallel()
		f := tmpl.Clone(t)
		f.Stage("add global rule linear-release", func(p, base *policy.Policy, now time.Time) error {
			return p.AddGlobalRule(base, policy.GlobalRule{Name: "linear-release", Type: policy.GlobalNoForcePush, Refs: []string{"refs/heads/release"}}, now)
		})
		f.Apply("admin")
		main := f.Ref(depthMain)
		x := f.NewCommit(main, "release 1")
		f.SetRef("refs/heads/release", x)
		f.Record("dev1", "release")
		y := f.NewCommit(main, "release rewritten")
		f.SetRef("refs/heads/release", y)
		n := f.Forge("dev1", &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/release", Old: x, New: y})
		p, _ := f.MustFail(verify.Options{}, verify.ErrPolicyRule, "refs/heads/release", "rule linear-release", "may only fast-forward")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
	})

	minPersons := func(t *testing.T) *ScenarioFixture {
		f := tmpl.Clone(t)
		f.AddRule(policy.Rule{Name: "main", Refs: []string{depthMain}, Allow: []string{"team:developers"}})
		f.Stage("add global rule two", func(p, base *policy.Policy, now time.Time) error {
			return p.AddGlobalRule(base, policy.GlobalRule{Name: "two", Type: policy.GlobalMinPersons, N: 2}, now)
		})
		f.Apply("admin")
		return f
	}

	t.Run("min-persons", func(t *testing.T) {
		t.Parallel()
		f := minPersons(t)
		a := f.Ref(depthMain)
		b := f.CommitMain("needs two")
		n := f.Forge("dev1", &rsl.Entry{Type: rsl.TypeRef, Ref: depthMain, Old: a, New: b})
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, depthMain, "rule two", "needs 2 distinct persons", "has 1 (dev1)")
		if p.Entry != n || p.Rule != "two" {
			t.Errorf("problem %+v; want entry #%d, global rule two", p, n)
		}
		f.Approve("dev2", "main", b, "")
		f.MustVerify(verify.Options{})
	})

	t.Run("min-persons counts a person's two keys once", func(t *testing.T) {
		t.Parallel()
		f := minPersons(t)
		a := f.Ref(depthMain)
		b := f.CommitMain("dev3 alone")
		n := f.Forge("dev3", &rsl.Entry{Type: rsl.TypeRef, Ref: depthMain, Old: a, New: b})
		f.Approve("dev3b", "main", b, "")
		p, _ := f.MustFail(verify.Options{}, verify.ErrThreshold, depthMain, "rule two", "has 1 (dev3)")
		if p.Entry != n {
			t.Errorf("problem on entry #%d, want #%d", p.Entry, n)
		}
	})

	t.Run("min-persons leaves unprotected refs alone", func(t *testing.T) {
		t.Parallel()
		f := minPersons(t)
		f.SetRef("refs/heads/scratch", f.NewCommit(f.Ref(depthMain), "scratch"))
		f.Record("dev1", "scratch")
		f.MustVerify(verify.Options{})
	})

	t.Run("min-persons: record then approve", func(t *testing.T) {
		t.Parallel()
		f := minPersons(t)
		b := f.CommitMain("needs two")
		r, err := f.R.Record("main", f.Key("dev1"))
		if err != nil {
			t.Fatalf("record by dev1 (allowed by rule main, needs one approval for global rule two): %v; want the entry recorded with a pending note", err)
		}
		if !strings.Contains(strings.Join(r.Pending, "\n"), "two") {
			t.Errorf("pending %q; want a note about global rule two", r.Pending)
		}
		f.Approve("dev2", "main", b, "")
		f.MustVerify(verify.Options{})
	})
}

// ---------------------------------------------------------------------
// 8. Expiry and renewal.

func depthExpiry(t *testing.T, tmpl *ScenarioTemplate) {
	f := tmpl.Clone(t)
	later := ScenarioNow.Add(policy.DefaultLifetime + 30*24*time.Hour)
	p, _ := f.MustFail(verify.Options{Now: later}, verify.ErrExpired, rsl.PolicyRef, "expired on")
	if !strings.Contains(p.Hint, "policy renew") {
		t.Errorf("hint %q does not mention git secure policy renew", p.Hint)
	}
	// The signers renew at the later time.
	fl := *f
	fl.R = &porcelain.Repo{Git: f.G, Now: func() time.Time { return later }, Home: f.S.Home}
	// Renewing the rules alone leaves the expired root: refused.
	fl.Stage("renew", func(p, base *policy.Policy, now time.Time) error { return p.Renew(base, false, now) })
	before := f.Ref(policy.Ref)
	if _, _, err := fl.R.Apply(fl.Key("admin")); !errors.Is(err, porcelain.ErrRefused) || !strings.Contains(err.Error(), "root metadata") {
		t.Fatalf("apply of a rules-only renewal with an expired root: %v; want ErrRefused naming the root metadata", err)
	}
	if f.Ref(policy.Ref) != before {
		t.Fatal("a refused apply moved the policy")
	}
	if err := fl.R.Discard(); err != nil {
		t.Fatal(err)
	}
	fl.Stage("renew --root", func(p, base *policy.Policy, now time.Time) error { return p.Renew(base, true, now) })
	ar := fl.Apply("admin")
	if ar.RootVersion != 2 {
		t.Errorf("renewal: %+v; want root v2", ar)
	}
	res := fl.MustVerify(verify.Options{Now: later})
	if !res.PolicyExpires.After(later.Add(300 * 24 * time.Hour)) {
		t.Errorf("renewed policy expires %s; want about a year after %s", res.PolicyExpires, later)
	}
	f.MustFail(verify.Options{Now: later.Add(policy.DefaultLifetime + 24*time.Hour)}, verify.ErrExpired, rsl.PolicyRef, "expired on")
}

// ---------------------------------------------------------------------
// 9. Explain.

func depthExplain(t *testing.T, tmpl *ScenarioTemplate) {
	f := tmpl.Clone(t)
	f.AddRule(depthRequireMain)
	f.Apply("admin")
	a := f.Ref(depthMain)
	b := f.CommitMain("explained")
	x, err := f.R.Explain("main", f.Key("dev1"))
	if err != nil {
		t.Fatal(err)
	}
	if !x.Pending || x.Old != a || x.New != b || x.Signer != "dev1" || !x.Protected || x.Satisfied {
		t.Fatalf("explanation %+v; want pending %s -> %s signed by dev1, protected, not satisfied", x, a, b)
	}
	if len(x.Rules) != 1 || x.Rules[0].Name != "main" || !x.Rules[0].Applies || strings.Join(x.Rules[0].Signed, ",") != "dev1" ||
		strings.Join(x.Rules[0].Require, ",") != "team:developers=2,team:security=1" || x.Rules[0].Threshold != 3 {
		t.Errorf("rules %+v; want rule main (threshold 3, requirements) counting dev1", x.Rules)
	}
	if len(x.Failures) != 1 {
		t.Fatalf("failures %+v; want one", x.Failures)
	}
	fl := x.Failures[0]
	cmd := "git secure attest approve refs/heads/main --from " + a.String() + " --to " + b.String()
	for _, want := range []string{"team:developers needs 1 more", "team:security needs 1 more", "2 more needed"} {
		if !strings.Contains(fl.Detail, want) {
			t.Errorf("failure detail %q lacks %q", fl.Detail, want)
		}
	}
	if fl.Rule != "main" || fl.Kind != verify.ErrThreshold.Error() || !strings.Contains(fl.Next, cmd) || !strings.Contains(fl.Next, "sec1") || !strings.Contains(fl.Next, "dev2") {
		t.Errorf("failure %+v; want rule main, kind %q, next naming dev2 and sec1 and %q", fl, verify.ErrThreshold, cmd)
	}

	f.Approve("dev2", "main", b, "")
	f.Approve("sec1", "main", b, "")
	x, err = f.R.Explain("main", f.Key("dev1"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(x.Approved)
	if !x.Satisfied || len(x.Failures) != 0 || strings.Join(x.Approved, ",") != "dev2,sec1" || strings.Join(x.Rules[0].Signed, ",") != "dev1,dev2,sec1" {
		t.Errorf("after approvals: %+v; want satisfied with dev1, dev2, sec1 counted", x)
	}

	// Recorded: the latest entry is explained, its signer taken from it.
	f.Record("dev1", "main")
	x, err = f.R.Explain("main", "")
	if err != nil {
		t.Fatal(err)
	}
	if x.Pending || x.Signer != "dev1" || !x.Satisfied || x.Old != a || x.New != b {
		t.Errorf("recorded update: %+v; want not pending, signer dev1, satisfied", x)
	}
	f.MustVerify(verify.Options{})

	t.Run("path and tests rules", func(t *testing.T) {
		g := tmpl.Clone(t)
		g.AddRule(policy.Rule{Name: "main", Refs: []string{depthMain}, Allow: []string{"team:developers"}, TestsBy: []string{"ci"}})
		g.AddRule(policy.Rule{Name: "crypto", Paths: []string{"src/crypto/**"}, Allow: []string{"sec1"}})
		g.Apply("admin")
		old := g.Ref(depthMain)
		nw := depthCommit(g, "src/crypto/c.go", "crypto change")
		x, err := g.R.Explain("main", g.Key("dev1"))
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, fl := range x.Failures {
			kinds = append(kinds, fl.Rule+":"+fl.Kind)
			if fl.Rule == "crypto" && !strings.Contains(fl.Next, "sec1 can approve with: git secure attest approve refs/heads/main --from "+old.String()+" --to "+nw.String()) {
				t.Errorf("crypto next %q", fl.Next)
			}
			if fl.Rule == "main" && !strings.Contains(fl.Next, "git secure attest run") {
				t.Errorf("tests next %q", fl.Next)
			}
		}
		slices.Sort(kinds)
		if want := "crypto:" + verify.ErrUnauthorized.Error() + ",main:" + verify.ErrNoTests.Error(); strings.Join(kinds, ",") != want {
			t.Errorf("failures %v; want %s", kinds, want)
		}
		for _, r := range x.Rules {
			if r.Name == "crypto" && (!r.Applies || strings.Join(r.Files, ",") != "src/crypto/c.go") {
				t.Errorf("crypto rule %+v; want it to apply to src/crypto/c.go", r)
			}
		}
	})
}
