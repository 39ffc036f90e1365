package policy

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// deleg is the fixture plus a three-level delegation:
//
//	targets.json --security (src/crypto/**, signers dave)--> security
//	security     --crypto   (src/crypto/**, signers erin)--> crypto
type deleg struct {
	*fixture
	dave, erin *testKey
}

func newDeleg(t testing.TB) *deleg {
	t.Helper()
	f := newFixture(t)
	d := &deleg{fixture: f, dave: newTestKey(t, "dave"), erin: newTestKey(t, "erin")}
	base := f.p
	p, err := base.Clone()
	must(t, err)
	must(t, p.AddPerson(base, "dave", []ssh.PublicKey{d.dave.Pub}, t0))
	must(t, p.AddPerson(base, "erin", []ssh.PublicKey{d.erin.Pub}, t0))
	must(t, p.Delegate(base, "", Delegation{Name: "security", Paths: []string{"src/crypto/**"}, Signers: []string{"dave"}, Threshold: 1}, t0))
	must(t, p.Delegate(base, "security", Delegation{Name: "crypto", Paths: []string{"src/crypto/**"}, Signers: []string{"erin"}, Threshold: 1}, t0))
	must(t, p.SignTargets(f.root.TUF))
	must(t, p.SignRuleFile("security", d.dave.TUF))
	must(t, p.SignRuleFile("crypto", d.erin.TUF))
	d.p = p
	return d
}

func ruleNames(rs []*Rule) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

func TestDelegationThreeLevels(t *testing.T) {
	d := newDeleg(t)
	p := d.p
	for _, f := range p.RuleFiles() {
		if f.Untrusted != "" {
			t.Fatalf("rule file %s: %s", f.Name, f.Untrusted)
		}
	}
	if got := p.Chain("crypto"); !slices.Equal(got, []string{"security", "crypto"}) {
		t.Fatalf("chain %v", got)
	}
	// The maintainers add a rule alone: only the crypto file changes.
	base := p
	q, err := p.Clone()
	must(t, err)
	must(t, q.AddRuleIn(base, "crypto", Rule{Name: "aes", Refs: []string{"refs/heads/main"}, Paths: []string{"src/crypto/aes/**"}, Allow: []string{"erin"}}, t0))
	r1, t1 := encode(t, base)
	r2, t2 := encode(t, q)
	if !bytes.Equal(r1, r2) || !bytes.Equal(t1, t2) {
		t.Fatal("a rule file edit changed root.json or targets.json")
	}
	if f, _ := q.RuleFile("crypto"); f.Untrusted == "" || f.Meta.Signed.Version != 2 {
		t.Fatalf("edited crypto file: version %d, untrusted %q (want unsigned, version 2)", f.Meta.Signed.Version, f.Untrusted)
	}
	// Unsigned, the namespace fails closed.
	rs := q.RulesFor("refs/heads/main")
	var pseudo *Rule
	for _, r := range rs {
		if r.Untrusted != "" {
			pseudo = r
		}
	}
	if pseudo == nil || !strings.Contains(pseudo.Untrusted, "signed by 0 of the 1 persons its delegation crypto requires") || !strings.Contains(pseudo.Untrusted, "not signed by erin") {
		t.Fatalf("unsigned crypto file: rules %v, pseudo %+v", ruleNames(rs), pseudo)
	}
	if !pseudo.CoversPath("src/crypto/x.c") || pseudo.CoversPath("src/net/x.c") {
		t.Fatal("the fail-closed rule must cover exactly the namespace")
	}
	must(t, q.SignRuleFile("crypto", d.erin.TUF))
	rs = q.RulesFor("refs/heads/main")
	var aes *Rule
	for _, r := range rs {
		if r.Untrusted != "" {
			t.Fatalf("signed file still untrusted: %s", r.Untrusted)
		}
		if r.Name == "crypto:aes" {
			aes = r
		}
	}
	if aes == nil || !slices.Equal(aes.Chain, []string{"security", "crypto"}) || aes.File != "crypto" {
		t.Fatalf("crypto:aes not found with its chain: %v", ruleNames(rs))
	}
	if !aes.CoversPath("src/crypto/aes/gcm.c") || !aes.CoversPath("SRC/Crypto/aes/gcm.c") || aes.CoversPath("src/crypto/rsa.c") {
		t.Fatal("crypto:aes covers the wrong paths")
	}
	if got := q.RulesFor("refs/heads/dev"); slices.ContainsFunc(got, func(r *Rule) bool { return r.Name == "crypto:aes" }) {
		t.Fatal("crypto:aes covers a ref it does not name")
	}
	// A file signed by someone else counts for nothing.
	bad, err := q.Clone()
	must(t, err)
	f, _ := bad.RuleFile("crypto")
	f.Meta.Signatures = nil
	must(t, bad.SignRuleFile("crypto", d.dave.TUF))
	if f, _ := bad.RuleFile("crypto"); !strings.Contains(f.Untrusted, "signed by 0 of the 1") {
		t.Fatalf("crypto signed by dave: %q", f.Untrusted)
	}
}

func TestDelegationWidenRefused(t *testing.T) {
	d := newDeleg(t)
	p, err := d.p.Clone()
	must(t, err)
	for _, tc := range []struct {
		rule Rule
		want string
	}{
		{Rule{Name: "net", Refs: []string{"refs/heads/main"}, Paths: []string{"src/net/**"}, Allow: []string{"erin"}}, "covers src/net/**, beyond crypto's paths src/crypto/**"},
		{Rule{Name: "all", Refs: []string{"refs/heads/main"}, Paths: []string{"src/**"}, Allow: []string{"erin"}}, "covers src/**, beyond crypto's paths"},
		{Rule{Name: "whole", Refs: []string{"refs/heads/main"}, Allow: []string{"erin"}}, "restricts whole refs, beyond crypto's paths"},
	} {
		err := p.AddRuleIn(d.p, "crypto", tc.rule, t0)
		if !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("rule %s: %v, want %q", tc.rule.Name, err, tc.want)
		}
	}
	err = p.Delegate(d.p, "crypto", Delegation{Name: "wide", Paths: []string{"src/**"}, Signers: []string{"erin"}}, t0)
	if !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), "can only delegate within its own namespace") {
		t.Fatalf("wider sub-delegation: %v", err)
	}
	// Written by hand and signed, the widened rule is ignored beyond the
	// namespace, with a warning, and still applies inside it.
	f, _ := p.RuleFile("crypto")
	f.Rules = append(f.Rules, &Rule{Name: "grab", Refs: []string{"refs/heads/main"}, Paths: []string{"src/**"}, Allow: []string{"erin"}, Threshold: 1, File: "crypto"},
		&Rule{Name: "lock", Refs: []string{"refs/heads/main"}, Allow: []string{"erin"}, Threshold: 1, File: "crypto"})
	p.encodeRuleFile(f)
	p.touchFile(d.p, f, t0)
	must(t, p.reindex())
	must(t, p.SignRuleFile("crypto", d.erin.TUF))
	warn := strings.Join(p.Warnings(), "\n")
	for _, want := range []string{"rule file crypto: rule grab covers src/**, beyond crypto's paths src/crypto/**: ignored there", "rule lock restricts whole refs"} {
		if !strings.Contains(warn, want) {
			t.Errorf("warnings %q lack %q", warn, want)
		}
	}
	var grab *Rule
	for _, r := range p.RulesFor("refs/heads/main") {
		switch r.Name {
		case "crypto:grab":
			grab = r
		case "crypto:lock":
			t.Fatal("a whole-ref rule in a path namespace applies")
		}
	}
	if grab == nil || grab.CoversPath("src/net/x.c") || grab.CoversPath("README.md") || !grab.CoversPath("src/crypto/x.c") {
		t.Fatalf("grab is not clipped to the namespace: %+v", grab)
	}
}

// TestDelegationPrecedence: the TUF search order decides which rule files
// are consulted; a terminating delegation that matches ends the search.
func TestDelegationPrecedence(t *testing.T) {
	type del struct {
		name, parent string
		refs, paths  []string
		terminating  bool
	}
	cases := []struct {
		name string
		dels []del
		ref  string
		path string // "" for the ref's whole-ref rules
		want []string
	}{
		{"non-terminating: both apply", []del{{name: "rel", refs: []string{"refs/heads/release/*"}}, {name: "all", refs: []string{"refs/heads/**"}}},
			"refs/heads/release/1", "", []string{"rel:r", "all:r"}},
		{"terminating first shadows the later", []del{{name: "rel", refs: []string{"refs/heads/release/*"}, terminating: true}, {name: "all", refs: []string{"refs/heads/**"}}},
			"refs/heads/release/1", "", []string{"rel:r"}},
		{"terminating does not shadow what it does not match", []del{{name: "rel", refs: []string{"refs/heads/release/*"}, terminating: true}, {name: "all", refs: []string{"refs/heads/**"}}},
			"refs/heads/dev", "", []string{"all:r"}},
		{"order: terminating listed last shadows nothing before it", []del{{name: "all", refs: []string{"refs/heads/**"}}, {name: "rel", refs: []string{"refs/heads/release/*"}, terminating: true}},
			"refs/heads/release/1", "", []string{"all:r", "rel:r"}},
		{"nested terminating does not shadow what a file above lists later", []del{{name: "rel", refs: []string{"refs/heads/release/*"}}, {name: "relsub", parent: "rel", refs: []string{"refs/heads/release/*"}, terminating: true}, {name: "all", refs: []string{"refs/heads/**"}}},
			"refs/heads/release/1", "", []string{"rel:r", "relsub:r", "all:r"}},
		{"nested terminating shadows its own file's later delegations", []del{{name: "rel", refs: []string{"refs/heads/release/*"}}, {name: "relsub", parent: "rel", refs: []string{"refs/heads/release/*"}, terminating: true}, {name: "relsub2", parent: "rel", refs: []string{"refs/heads/release/*"}}, {name: "all", refs: []string{"refs/heads/**"}}},
			"refs/heads/release/1", "", []string{"rel:r", "relsub:r", "all:r"}},
		{"nested terminating shadows below its file's later delegations", []del{{name: "rel", refs: []string{"refs/heads/release/*"}}, {name: "relsub", parent: "rel", refs: []string{"refs/heads/release/*"}, terminating: true}, {name: "relsub2", parent: "rel", refs: []string{"refs/heads/release/*"}}, {name: "deep", parent: "relsub2", refs: []string{"refs/heads/release/*"}}},
			"refs/heads/release/1", "", []string{"rel:r", "relsub:r"}},
		{"nested terminating: a team cannot switch off a later path delegation of the rules keys", []del{{name: "sec", paths: []string{"src/**"}}, {name: "helpers", parent: "sec", paths: []string{"src/**"}, terminating: true}, {name: "audit", paths: []string{"src/crypto/**"}}},
			"refs/heads/main", "src/crypto/a.c", []string{"sec:p", "helpers:p", "audit:p"}},
		{"a file's own rules come before its delegations", []del{{name: "rel", refs: []string{"refs/heads/release/*"}, terminating: true}, {name: "relsub", parent: "rel", refs: []string{"refs/heads/release/1"}}},
			"refs/heads/release/1", "", []string{"rel:r", "relsub:r"}},
		{"path: terminating shadows per file", []del{{name: "cr", paths: []string{"src/crypto/**"}, terminating: true}, {name: "src", paths: []string{"src/**"}}},
			"refs/heads/main", "src/crypto/a.c", []string{"cr:p"}},
		{"path: the later one still governs other files", []del{{name: "cr", paths: []string{"src/crypto/**"}, terminating: true}, {name: "src", paths: []string{"src/**"}}},
			"refs/heads/main", "src/net/a.c", []string{"src:p"}},
		{"path: non-terminating adds up", []del{{name: "cr", paths: []string{"src/crypto/**"}}, {name: "src", paths: []string{"src/**"}}},
			"refs/heads/main", "src/crypto/a.c", []string{"cr:p", "src:p"}},
		{"path: a terminating delegation does not hold the root's .gitattributes", []del{{name: "docs", paths: []string{"docs/**"}, terminating: true}, {name: "cr", paths: []string{"src/crypto/**"}}},
			"refs/heads/main", ".gitattributes", []string{"docs:p", "cr:p"}},
		{"path: a .gitattributes above only other files", []del{{name: "docs", paths: []string{"docs/**"}, terminating: true}, {name: "cr", paths: []string{"src/crypto/**"}}},
			"refs/heads/main", "src/crypto/.gitattributes", []string{"cr:p"}},
		{"ref-terminating shadows path delegations on that ref", []del{{name: "rel", refs: []string{"refs/heads/release/*"}, terminating: true}, {name: "src", paths: []string{"src/**"}}},
			"refs/heads/release/2", "src/a.c", []string{"rel:p"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t)
			base := fx.p
			p, err := base.Clone()
			must(t, err)
			signers := map[string]*testKey{}
			for _, x := range tc.dels {
				must(t, p.Delegate(base, x.parent, Delegation{Name: x.name, Refs: x.refs, Paths: x.paths, Signers: []string{"bob"}, Terminating: x.terminating}, t0))
				// Every file gets a whole-ref rule r (where allowed) and
				// a path rule p on its namespace.
				refs := x.refs
				if len(refs) == 0 {
					refs = []string{"refs/heads/**"}
				}
				paths := x.paths
				if len(paths) == 0 {
					paths = []string{"src/**"}
				}
				if len(x.paths) == 0 {
					must(t, p.AddRuleIn(base, x.name, Rule{Name: "r", Refs: refs, Allow: []string{"bob"}}, t0))
				}
				must(t, p.AddRuleIn(base, x.name, Rule{Name: "p", Refs: refs, Paths: paths, Allow: []string{"bob"}}, t0))
				signers[x.name] = fx.bob
			}
			for name, k := range signers {
				must(t, p.SignRuleFile(name, k.TUF))
			}
			var got []string
			for _, r := range p.RulesFor(tc.ref) {
				if r.File == "" {
					continue
				}
				if tc.path == "" && !r.IsPathRule() || tc.path != "" && r.IsPathRule() && r.CoversPath(tc.path) {
					got = append(got, r.Name)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("rules for %s %s: %v, want %v", tc.ref, tc.path, got, tc.want)
			}
		})
	}
}

// TestDelegationMigration: a policy written before delegations (the golden
// files, format git-secure-policy/1) is read and re-encoded unchanged;
// delegating writes /2, removing the last delegation /1 again; a /1
// targets.json that delegates, and a /2 one that does not, are refused.
func TestDelegationMigration(t *testing.T) {
	gr, err1 := os.ReadFile(filepath.Join("testdata", "golden-root.json"))
	gt, err2 := os.ReadFile(filepath.Join("testdata", "golden-targets.json"))
	must(t, errors.Join(err1, err2))
	if !bytes.Contains(gt, []byte(`"x-git-secure-format":"git-secure-policy/1"`)) {
		t.Fatal("golden targets.json is not format /1")
	}
	old, err := Parse(gr, gt)
	must(t, err)
	r2, t2 := encode(t, old)
	if !bytes.Equal(r2, gr) || !bytes.Equal(t2, gt) {
		t.Fatal("a /1 policy re-encodes differently")
	}
	p, err := old.Clone()
	must(t, err)
	person := p.Persons()[0].Name
	must(t, p.Delegate(old, "", Delegation{Name: "team", Paths: []string{"src/**"}, Signers: []string{person}}, t0))
	_, tg := encode(t, p)
	if !bytes.Contains(tg, []byte(`"x-git-secure-format":"git-secure-policy/2"`)) || !bytes.Contains(tg, []byte(`"x-git-secure-signers":["`+person+`"]`)) {
		t.Fatalf("delegating targets.json: %s", tg)
	}
	rootAfter, _ := encode(t, p)
	if !bytes.Equal(rootAfter, gr) {
		t.Fatal("delegating changed root.json")
	}
	files, err := p.EncodeRuleFiles()
	must(t, err)
	if !bytes.Contains(files["team"], []byte(`"x-git-secure-format":"git-secure-rules/1","x-git-secure-rule-file":"team"`)) {
		t.Fatalf("rule file: %s", files["team"])
	}
	if _, err := ParseFiles(gr, bytes.Replace(tg, []byte("git-secure-policy/2"), []byte("git-secure-policy/1"), 1), files); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), `must be "git-secure-policy/2"`) {
		t.Fatalf("/1 that delegates: %v", err)
	}
	if _, err := ParseFiles(gr, bytes.Replace(gt, []byte("git-secure-policy/1"), []byte("git-secure-policy/2"), 1), nil); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), `must be "git-secure-policy/1"`) {
		t.Fatalf("/2 without delegations: %v", err)
	}
	must(t, p.RemoveDelegation(old, "team", t0))
	_, tg = encode(t, p)
	if !bytes.Contains(tg, []byte(`"git-secure-policy/1"`)) || len(p.RuleFiles()) != 0 {
		t.Fatal("removing the last delegation must go back to /1 without rule files")
	}
}

func TestRuleFileStrict(t *testing.T) {
	d := newDeleg(t)
	r, tg := encode(t, d.p)
	files, err := d.p.EncodeRuleFiles()
	must(t, err)
	cases := []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"file passing as another", map[string][]byte{"security": files["crypto"], "crypto": files["crypto"]}, `x-git-secure-rule-file must be "security"`},
		{"file nobody delegates", map[string][]byte{"security": files["security"], "crypto": files["crypto"], "extra": files["crypto"]}, `must be "extra"`},
		{"not canonical", map[string][]byte{"security": files["security"], "crypto": append(bytes.Clone(files["crypto"]), ' ')}, "not in canonical form"},
		{"keys in a rule file", map[string][]byte{"security": files["security"], "crypto": bytes.Replace(files["crypto"], []byte(`"keys":{}`), []byte(`"keys":{"a":{}}`), 1)}, "rules/crypto.json"},
	}
	for _, tc := range cases {
		_, err := ParseFiles(r, tg, tc.files)
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// A missing file: the policy reads, the namespace fails closed.
	p, err := ParseFiles(r, tg, map[string][]byte{"security": files["security"]})
	must(t, err)
	if f, _ := p.RuleFile("crypto"); f == nil {
		if !slices.ContainsFunc(p.RulesFor("refs/heads/main"), func(x *Rule) bool { return strings.Contains(x.Untrusted, "rules/crypto.json is missing") }) {
			t.Fatal("missing rule file does not fail closed")
		}
	}
	// Removing a person a rule file names is allowed: the files naming
	// her (security delegates to her, crypto below it) count for nothing,
	// closed by the removal; one of the top-level delegations is refused.
	q, err := d.p.Clone()
	must(t, err)
	must(t, q.RemovePerson(d.p, "erin", t0))
	for _, name := range []string{"security", "crypto"} {
		f, _ := q.RuleFile(name)
		if f.Untrusted == "" || !q.ClosedByRemoval(d.p, f) || !slices.Equal(q.MissingNames(name), []string{"erin"}) {
			t.Fatalf("rule file %s after erin's removal: untrusted %q, missing %v", name, f.Untrusted, q.MissingNames(name))
		}
	}
	q, err = d.p.Clone()
	must(t, err)
	if err := q.RemovePerson(d.p, "dave", t0); !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), "delegation security (of the top-level rules) names dave") {
		t.Fatalf("remove dave: %v", err)
	}
}

func TestWithin(t *testing.T) {
	cases := []struct {
		outer, pat string
		want       bool
	}{
		{"src/crypto/**", "src/crypto/**", true},
		{"src/crypto/**", "src/crypto/aes/*.c", true},
		{"src/crypto/**", "src/crypto/a?s/**", true},
		{"src/crypto/**", "src/**", false},
		{"src/crypto/**", "src/crypto*/x", false},
		{"src/*", "src/**", false},
		{"src/*", "src/a*", true},
		{"src/*.c", "src/*", false},
		{"src/**/x", "src/a/**/x", true},
		{"refs/heads/release/*", "refs/heads/release/v1", true},
		{"refs/heads/release/*", "refs/heads/release/**", false},
		{"refs/heads/**", "refs/heads/release/*", true},
		{"**", "anything/**", true},
	}
	for _, tc := range cases {
		if got := Within(tc.outer, tc.pat); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.outer, tc.pat, got, tc.want)
		}
	}
	// Paths match with ASCII case folded, as checkouts do; refs do not.
	if !WithinFold("src/Crypto/**", "src/crypto/x") || Within("refs/heads/main", "refs/heads/MAIN") {
		t.Error("WithinFold folds paths, Within does not fold refs")
	}
}

// FuzzParseDelegated: whatever ParseFiles accepts with one rule file
// re-encodes to the same bytes, and the rules it yields stay inside their
// namespace.
func FuzzParseDelegated(f *testing.F) {
	d := newDeleg(f)
	must(f, d.p.AddRuleIn(d.p, "crypto", Rule{Name: "aes", Refs: []string{"refs/heads/main"}, Paths: []string{"src/crypto/aes/**"}, Allow: []string{"erin"}}, t0))
	must(f, d.p.SignRuleFile("crypto", d.erin.TUF))
	r, tg := encode(f, d.p)
	files, err := d.p.EncodeRuleFiles()
	must(f, err)
	f.Add(r, tg, files["security"], files["crypto"])
	f.Add(r, tg, files["security"], bytes.Replace(files["crypto"], []byte(`"terminating":false`), []byte(`"terminating":true`), 1))
	f.Add(r, tg, files["security"], bytes.Replace(files["crypto"], []byte(`"roles":[]`), []byte(`"roles":[{"keyids":[],"name":"x","paths":["file:src/**"],"terminating":false,"threshold":1,"x-git-secure-allow":["erin"]}]`), 1))
	f.Fuzz(func(t *testing.T, root, targets, sec, cr []byte) {
		p, err := ParseFiles(root, targets, map[string][]byte{"security": sec, "crypto": cr})
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		r2, t2, err := p.Encode()
		must(t, err)
		files, err := p.EncodeRuleFiles()
		must(t, err)
		if !bytes.Equal(r2, root) || !bytes.Equal(t2, targets) || !bytes.Equal(files["security"], sec) || !bytes.Equal(files["crypto"], cr) {
			t.Fatal("accepted input re-encodes differently")
		}
		for _, ref := range []string{"refs/heads/main", "refs/heads/x", "refs/pull/1/head"} {
			for _, rule := range p.RulesFor(ref) {
				if rule.File == "" {
					continue
				}
				for _, path := range []string{"src/net/a.c", "README.md", "x"} {
					if rule.IsPathRule() && rule.CoversPath(path) && !chainPaths(p.chainOf(rule.File), path) {
						t.Fatalf("rule %s covers %s outside its namespace", rule.Name, path)
					}
				}
			}
		}
		if _, err := p.Clone(); err != nil {
			t.Fatalf("Clone: %v", err)
		}
	})
}

// TestPolicyExpires: a policy expires with the first of its root, its
// rules and its rule files.
func TestPolicyExpires(t *testing.T) {
	d := newDeleg(t)
	p := d.p
	if got, want := p.Expires(), p.Root.Signed.Expires; !got.Equal(want) {
		t.Fatalf("all expire together: %v, want %v", got, want)
	}
	early := p.Root.Signed.Expires.Add(-48 * time.Hour)
	for _, tc := range []struct {
		name string
		set  func(time.Time)
	}{
		{"root", func(e time.Time) { p.Root.Signed.Expires = e }},
		{"rules", func(e time.Time) { p.Targets.Signed.Expires = e }},
		{"rule file", func(e time.Time) {
			for _, f := range p.RuleFiles() {
				if f.Name == "crypto" {
					f.Meta.Signed.Expires = e
				}
			}
		}},
	} {
		saved := p.Expires()
		tc.set(early)
		if got := p.Expires(); !got.Equal(early) {
			t.Errorf("%s expires first: %v, want %v", tc.name, got, early)
		}
		tc.set(saved)
	}
}

// TestRemoveTeamNamedByRuleFile: a team a rule file's rule names is
// removed by the rules keys alone; the file counts for nothing, closed by
// the removal, naming the team.
func TestRemoveTeamNamedByRuleFile(t *testing.T) {
	d := newDeleg(t)
	p, err := d.p.Clone()
	must(t, err)
	must(t, p.AddTeam(d.p, "cryptoteam", []string{"erin"}, t0))
	must(t, p.AddRuleIn(d.p, "crypto", Rule{Name: "aes", Refs: []string{"refs/heads/main"}, Paths: []string{"src/crypto/**"}, Allow: []string{"team:cryptoteam"}, Threshold: 1}, t0))
	must(t, p.SignRuleFile("crypto", d.erin.TUF))
	q, err := p.Clone()
	must(t, err)
	must(t, q.RemoveTeam(p, "cryptoteam", t0))
	f, _ := q.RuleFile("crypto")
	if !q.ClosedByRemoval(p, f) || !slices.Equal(q.MissingNames("crypto"), []string{"team:cryptoteam"}) {
		t.Fatalf("crypto after the team's removal: untrusted %q, missing %v", f.Untrusted, q.MissingNames("crypto"))
	}
	if e := strings.Join(q.RemovalEffects(p), "\n"); !strings.Contains(e, "rule file crypto (delegated: rules keys -> security -> crypto) names team:cryptoteam, removed") || !strings.Contains(e, "its signers (erin) change what names them") {
		t.Fatalf("RemovalEffects: %s", e)
	}
	if s, _ := q.RuleFile("security"); s.Untrusted != "" {
		t.Fatalf("security, which does not name the team, counts for nothing: %q", s.Untrusted)
	}
}

// A path rule without ref patterns covers the refs that a rule of a rule
// file names, as those of targets.json (finding 06 of session 14): a
// release team's file that protects refs/heads/rel/* makes crypto apply
// there. Before, only targets.json's rules named refs, so rel/1.0 was
// governed by the release team's rule alone.
func TestScopedPathRuleCoversRefsARuleFileNames(t *testing.T) {
	f := newFixture(t)
	base := f.p
	p, err := base.Clone()
	must(t, err)
	must(t, p.Delegate(base, "", Delegation{Name: "relteam", Refs: []string{"refs/heads/rel/*", "refs/pull/*"}, Signers: []string{"carol"}, Threshold: 1}, t0))
	must(t, p.AddRuleIn(base, "relteam", Rule{Name: "rel", Refs: []string{"refs/heads/rel/*"}, Allow: []string{"carol"}}, t0))
	must(t, p.AddRuleIn(base, "relteam", Rule{Name: "prs", Refs: []string{"refs/pull/*"}, Allow: []string{"carol"}}, t0))
	must(t, p.SignTargets(f.root.TUF))
	must(t, p.SignRuleFile("relteam", f.carol.TUF))
	got := ruleNames(p.RulesFor("refs/heads/rel/1.0"))
	for _, want := range []string{"crypto", "relteam:rel"} {
		if !slices.Contains(got, want) {
			t.Fatalf("rules for refs/heads/rel/1.0: %v, want %s among them", got, want)
		}
	}
	crypto, _ := p.Rule("crypto")
	if !p.Covers(crypto, "refs/heads/rel/1.0") || p.Covers(crypto, "refs/heads/dev") {
		t.Fatal("crypto must cover rel/1.0 (named by relteam:rel) and not dev (named by no rule)")
	}
	if got := ruleNames(p.RulesFor("refs/heads/dev")); len(got) != 0 {
		t.Fatalf("rules for refs/heads/dev: %v, want none", got)
	}
	if got := ruleNames(p.RulesFor("refs/pull/7")); !slices.Contains(got, "crypto") || !slices.Contains(got, "relteam:prs") {
		t.Fatalf("rules for refs/pull/7: %v, want crypto and relteam:prs", got)
	}
	// The forge namespace a rule file names is fetched (judged), the
	// others stay out.
	if got := ForgeExcludes(p); slices.Contains(got, "^refs/pull/*") || !slices.Contains(got, "^refs/changes/*") {
		t.Fatalf("ForgeExcludes %v: refs/pull/* is named by relteam:prs", got)
	}
	if !p.HasRefPatterns() {
		t.Fatal("HasRefPatterns: relteam's rules have ref patterns")
	}
	// Without the rule file's rules, nothing names rel/1.0.
	if got := ruleNames(base.RulesFor("refs/heads/rel/1.0")); len(got) != 0 {
		t.Fatalf("base rules for refs/heads/rel/1.0: %v", got)
	}
}
