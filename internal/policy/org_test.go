package policy

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// orgPolicy: the organisation's persons alice and bob, team leads, a
// global rule and a rule "org-main" (main needs 2 of alice, bob).
func orgPolicy(t *testing.T) (*Policy, *testKey, *testKey) {
	t.Helper()
	root, alice, bob := newTestKey(t, "org-root"), newTestKey(t, "alice"), newTestKey(t, "bob")
	p, err := New(root.Pub, t0)
	must(t, err)
	must(t, p.AddPerson(nil, "alice", []ssh.PublicKey{alice.Pub}, t0))
	must(t, p.AddPerson(nil, "bob", []ssh.PublicKey{bob.Pub}, t0))
	must(t, p.AddTeam(nil, "leads", []string{"alice", "bob"}, t0))
	must(t, p.AddGlobalRule(nil, GlobalRule{Name: "tags-immutable", Type: GlobalNoForcePush, Refs: []string{"refs/tags/*"}}, t0))
	must(t, p.AddRule(nil, Rule{Name: "org-main", Refs: []string{"refs/heads/main"}, Allow: []string{"team:leads"}, Threshold: 2}, t0))
	return p, alice, bob
}

// localPolicy: the repository's own person carol and a rule on release
// branches.
func localPolicy(t testing.TB) (*Policy, *testKey) {
	t.Helper()
	root, carol := newTestKey(t, "repo-root"), newTestKey(t, "carol")
	p, err := New(root.Pub, t0)
	must(t, err)
	must(t, p.AddPerson(nil, "carol", []ssh.PublicKey{carol.Pub}, t0))
	must(t, p.AddRule(nil, Rule{Name: "release", Refs: []string{"refs/heads/release/*"}, Allow: []string{"carol"}, Threshold: 1}, t0))
	return p, carol
}

func TestOrgFieldRoundTrip(t *testing.T) {
	p, _ := localPolicy(t)
	if p.Org() != nil {
		t.Fatal("a new policy inherits nothing")
	}
	orgRoot := newTestKey(t, "org-root")
	base, _ := p.Clone()
	must(t, p.SetOrg(base, Org{URL: "https://git.example.org/policy.git", RootKeys: []string{orgRoot.FP}}, t0))
	if p.Root.Signed.Version != base.Root.Signed.Version+1 {
		t.Fatalf("SetOrg is a root change: version %d after %d", p.Root.Signed.Version, base.Root.Signed.Version)
	}
	r, tg, err := p.Encode()
	must(t, err)
	q, err := Parse(r, tg)
	must(t, err)
	o := q.Org()
	if o == nil || o.URL != "https://git.example.org/policy.git" || len(o.RootKeys) != 1 || o.RootKeys[0] != orgRoot.FP || o.RootThreshold != 1 {
		t.Fatalf("Org() = %+v", o)
	}
	if !strings.Contains(string(r), `"x-git-secure-org":{"rootKeys":["`+orgRoot.FP+`"],"rootThreshold":"1","url":"https://git.example.org/policy.git"}`) {
		t.Fatalf("stored form: %s", r)
	}
	must(t, q.RemoveOrg(nil, t0))
	if q.Org() != nil {
		t.Fatal("RemoveOrg left the field")
	}
}

func TestOrgFieldRejects(t *testing.T) {
	fp := newTestKey(t, "org-root").FP
	fp2 := newTestKey(t, "org-root-2").FP
	for _, tc := range []struct {
		name string
		org  Org
		want string
	}{
		{"ext transport", Org{URL: "ext::sh -c touch% /tmp/pwned", RootKeys: []string{fp}}, "holds a space"},
		{"ext without space", Org{URL: "ext::evil", RootKeys: []string{fp}}, "is not an https://"},
		{"option", Org{URL: "--upload-pack=touch", RootKeys: []string{fp}}, "is not an https://"},
		{"scp host option", Org{URL: "git@-oProxyCommand=x:p", RootKeys: []string{fp}}, "is not an https://"},
		{"control", Org{URL: "https://x/\n", RootKeys: []string{fp}}, "control"},
		{"empty", Org{URL: "", RootKeys: []string{fp}}, "1 to 1024 bytes"},
		{"scheme only", Org{URL: "https://", RootKeys: []string{fp}}, "is not an https://"},
		{"no keys", Org{URL: "https://x/p"}, "1 to 32 pinned root keys"},
		{"not a fingerprint", Org{URL: "https://x/p", RootKeys: []string{"MD5:ab"}}, "not an SSH fingerprint"},
		{"threshold", Org{URL: "https://x/p", RootKeys: []string{fp, fp2}, RootThreshold: 3}, "root threshold 3 with 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := localPolicy(t)
			err := p.SetOrg(nil, tc.org, t0)
			if !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("SetOrg = %v, want %q", err, tc.want)
			}
			if p.Org() != nil {
				t.Fatal("a refused SetOrg changed the policy")
			}
		})
	}
	for _, ok := range []string{"git@github.com:org/policy.git", "ssh://git@host/p", "file:///srv/policy.git", "git://host/p"} {
		if err := ValidOrgURL(ok); err != nil {
			t.Errorf("ValidOrgURL(%q) = %v", ok, err)
		}
	}
	// A stored field of another shape is malformed, not ignored.
	p, _ := localPolicy(t)
	for _, raw := range []any{
		"https://x/p",
		map[string]any{"url": "https://x/p", "rootKeys": []any{fp}},
		map[string]any{"url": "https://x/p", "rootKeys": []any{fp}, "rootThreshold": "01"},
		map[string]any{"url": "https://x/p", "rootKeys": []any{fp2, fp}, "rootThreshold": "1"},
		map[string]any{"url": "https://x/p", "rootKeys": []any{fp}, "rootThreshold": "1", "extra": "x"},
	} {
		if err := checkOrgField(map[string]any{fieldOrg: raw}); !errors.Is(err, ErrMalformed) {
			t.Errorf("checkOrgField(%v) = %v, want ErrMalformed", raw, err)
		}
	}
	_ = p
}

// TestInherit: the organisation's persons, teams, global rules and rules
// come first; the repository's own are added below; both bind.
func TestInherit(t *testing.T) {
	org, alice, _ := orgPolicy(t)
	local, carol := localPolicy(t)
	m, err := Inherit(org, local)
	must(t, err)
	var names []string
	for _, r := range m.Rules() {
		names = append(names, r.Name)
	}
	if strings.Join(names, ",") != "org-main,release" {
		t.Fatalf("rules %v, want org-main then release", names)
	}
	if _, ok := m.PersonByFingerprint(alice.FP); !ok {
		t.Fatal("alice (organisation) is not a person of the merged policy")
	}
	if _, ok := m.PersonByFingerprint(carol.FP); !ok {
		t.Fatal("carol (repository) is not a person of the merged policy")
	}
	if got := m.RulesFor("refs/heads/main"); len(got) != 1 || got[0].Name != "org-main" || got[0].Threshold != 2 {
		t.Fatalf("main is governed by %v, want the organisation's rule", got)
	}
	if g := m.GlobalRules(); len(g) != 1 || g[0].Name != "tags-immutable" {
		t.Fatalf("global rules %v", g)
	}
	if tm, ok := m.Team("leads"); !ok || len(tm.Members) != 2 {
		t.Fatalf("team leads: %v %v", tm, ok)
	}
	// The repository's root stays its own.
	if m.Root.Signed.Version != local.Root.Signed.Version || m.Org() != local.Org() {
		t.Fatal("the merged policy's root is not the repository's")
	}
	// Inherit changes neither input.
	if len(local.Rules()) != 1 || len(org.Persons()) != 2 {
		t.Fatal("Inherit modified its inputs")
	}
	// A person removed from the organisation is gone from the merge.
	org2, _ := org.Clone()
	must(t, org2.RemoveRule(nil, "org-main", t0))
	must(t, org2.RemoveTeam(nil, "leads", t0))
	must(t, org2.RemovePerson(nil, "bob", t0))
	m2, err := Inherit(org2, local)
	must(t, err)
	if _, ok := m2.Person("bob"); ok {
		t.Fatal("bob, removed from the organisation, is still a person")
	}
	// The same person in both with the same keys is one person.
	same, _ := local.Clone()
	must(t, same.AddPerson(nil, "alice", []ssh.PublicKey{alice.Pub}, t0))
	m3, err := Inherit(org, same)
	must(t, err)
	if len(m3.Persons()) != 3 {
		t.Fatalf("persons %d, want 3 (alice once)", len(m3.Persons()))
	}
}

func TestInheritConflicts(t *testing.T) {
	org, alice, _ := orgPolicy(t)
	mallory := newTestKey(t, "mallory")
	for _, tc := range []struct {
		name string
		edit func(p *Policy)
		want string
	}{
		{"person with other keys", func(p *Policy) {
			must(t, p.AddPerson(nil, "alice", []ssh.PublicKey{mallory.Pub}, t0))
		}, "person alice is in the organisation policy with other keys"},
		{"organisation key under another name", func(p *Policy) {
			must(t, p.AddPerson(nil, "al", []ssh.PublicKey{alice.Pub}, t0))
		}, "is the organisation's person alice's"},
		{"team with more members", func(p *Policy) {
			must(t, p.AddPerson(nil, "mallory", []ssh.PublicKey{mallory.Pub}, t0))
			must(t, p.AddTeam(nil, "leads", []string{"mallory"}, t0))
		}, "team leads is the organisation's with other members"},
		{"rule of the same name", func(p *Policy) {
			must(t, p.AddRule(nil, Rule{Name: "org-main", Refs: []string{"refs/heads/main"}, Allow: []string{"carol"}, Threshold: 1}, t0))
		}, "rule org-main is the organisation's"},
		// A copy of an organisation person with the same keys is allowed;
		// a forge account the repository gives it is not
		// (TestInheritForgeAccountOfOrgPerson).
		{"forge account of an organisation person", func(p *Policy) {
			must(t, p.AddPerson(nil, "alice", []ssh.PublicKey{alice.Pub}, t0))
			must(t, p.SetForgeAccount(nil, "alice", "github", "repo-admin-alt", "", t0))
		}, "the repository maps the organisation's person alice to the github account repo-admin-alt"},
		{"global rule of the same name", func(p *Policy) {
			must(t, p.AddGlobalRule(nil, GlobalRule{Name: "tags-immutable", Type: GlobalMinPersons, N: 1}, t0))
		}, "global rule tags-immutable is the organisation's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			local, _ := localPolicy(t)
			tc.edit(local)
			_, err := Inherit(org, local)
			if !errors.Is(err, ErrInheritConflict) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Inherit = %v, want %q", err, tc.want)
			}
		})
	}
	// A nested organisation is refused.
	nested, _ := org.Clone()
	must(t, nested.SetOrg(nil, Org{URL: "https://x/p", RootKeys: []string{mallory.FP}}, t0))
	local, _ := localPolicy(t)
	if _, err := Inherit(nested, local); err == nil || !strings.Contains(err.Error(), "nesting is not supported") {
		t.Fatalf("Inherit of a nested organisation = %v", err)
	}
}

// TestInheritRevocations: a key the organisation revokes, even one it
// leaves listed, is no key of its person in an inheriting repository,
// and a repository may not list it under a person of its own.
func TestInheritRevocations(t *testing.T) {
	org, alice, bob := orgPolicy(t)
	local, _ := localPolicy(t)
	revoking, _ := org.Clone()
	must(t, revoking.RevokeKey(nil, bob.FP, 7, t0))
	m, err := Inherit(revoking, local)
	must(t, err)
	if _, ok := m.LookupKey(bob.FP); ok {
		t.Fatal("bob's key, revoked by the organisation, is a key of the merged policy")
	}
	if _, ok := m.PersonByFingerprint(bob.FP); ok {
		t.Fatal("bob's revoked key still names him in the merged policy")
	}
	if !m.RevokedByOrg(bob.FP) || m.RevokedByOrg(alice.FP) {
		t.Fatalf("RevokedByOrg(bob) = %v, RevokedByOrg(alice) = %v", m.RevokedByOrg(bob.FP), m.RevokedByOrg(alice.FP))
	}
	if _, ok := m.PersonByFingerprint(alice.FP); !ok {
		t.Fatal("alice's key, not revoked, is gone")
	}
	// Without the revocation bob's key counts; the organisation policy
	// itself is unchanged.
	if m0, err := Inherit(org, local); err != nil || m0.RevokedByOrg(bob.FP) {
		t.Fatalf("Inherit without the revocation: %v", err)
	} else if _, ok := m0.PersonByFingerprint(bob.FP); !ok {
		t.Fatal("bob is not a person before the revocation")
	}
	if _, ok := revoking.PersonByFingerprint(bob.FP); !ok {
		t.Fatal("Inherit modified the organisation policy")
	}
	// The repository lists the revoked key under a name of its own.
	sneaky, _ := local.Clone()
	must(t, sneaky.AddPerson(nil, "robert", []ssh.PublicKey{bob.Pub}, t0))
	if _, err := Inherit(revoking, sneaky); !errors.Is(err, ErrInheritConflict) || !strings.Contains(err.Error(), "is revoked by the organisation policy") {
		t.Fatalf("Inherit with the revoked key under another name = %v", err)
	}
}

// Attack: a repository's root key holders meet an organisation rule
// without the organisation's persons. rita, the repository's root, lists
// the organisation's alice and bob under their own keys (allowed: the
// same keys), gives them GitHub accounts she controls, and trusts a forge
// app of hers. The combined policy took the repository's forge accounts:
// her accounts were alice and bob, and her bridge's records of their
// "reviews" met org-main (2 of the leads) in their name. Now the
// combination is refused naming the person and the account; a copy
// without forge accounts still combines, with no account mapped.
func TestInheritForgeAccountOfOrgPerson(t *testing.T) {
	org, alice, bob := orgPolicy(t)
	local, _ := localPolicy(t)
	must(t, local.AddPerson(nil, "alice", []ssh.PublicKey{alice.Pub}, t0))
	must(t, local.AddPerson(nil, "bob", []ssh.PublicKey{bob.Pub}, t0))
	m, err := Inherit(org, local)
	if err != nil {
		t.Fatalf("Inherit with copies of the organisation's persons: %v", err)
	}
	if _, ok := m.PersonByForgeAccount("github", "rita-alt-1"); ok {
		t.Fatal("an account nobody mapped names a person")
	}
	must(t, local.SetForgeAccount(nil, "alice", "github", "rita-alt-1", "", t0))
	must(t, local.SetForgeAccount(nil, "bob", "github", "rita-alt-2", "", t0))
	m, err = Inherit(org, local)
	if err == nil {
		p, _ := m.PersonByForgeAccount("github", "rita-alt-1")
		t.Fatalf("the repository's forge accounts of the organisation's persons were taken: rita-alt-1 is %v in the combined policy", p)
	}
	if !errors.Is(err, ErrInheritConflict) || !strings.Contains(err.Error(), "the repository maps the organisation's person alice to the github account rita-alt-1") || !strings.Contains(err.Error(), "git secure policy remove-person alice") {
		t.Fatalf("Inherit = %v", err)
	}
}

// orgWithFiles: orgPolicy plus dave, and a three-level delegation: the
// rules keys delegate src/crypto/** to security (bob), which delegates it
// on to crypto (alice), whose rule aes needs alice or dave on main.
func orgWithFiles(t *testing.T) (*Policy, *testKey, *testKey) {
	t.Helper()
	org, alice, bob := orgPolicy(t)
	dave := newTestKey(t, "dave")
	must(t, org.AddPerson(nil, "dave", []ssh.PublicKey{dave.Pub}, t0))
	must(t, org.Delegate(nil, "", Delegation{Name: "security", Paths: []string{"src/crypto/**"}, Signers: []string{"bob"}, Threshold: 1}, t0))
	must(t, org.Delegate(nil, "security", Delegation{Name: "crypto", Paths: []string{"src/crypto/**"}, Signers: []string{"alice"}, Threshold: 1}, t0))
	must(t, org.AddRuleIn(nil, "crypto", Rule{Name: "aes", Refs: []string{"refs/heads/main"}, Paths: []string{"src/crypto/**"}, Allow: []string{"alice", "dave"}, Threshold: 1}, t0))
	must(t, org.SignRuleFile("security", bob.TUF))
	must(t, org.SignRuleFile("crypto", alice.TUF))
	for _, f := range org.RuleFiles() {
		if f.Untrusted != "" {
			t.Fatalf("rule file %s: %s", f.Name, f.Untrusted)
		}
	}
	return org, alice, dave
}

// TestInheritOrgRuleFiles: the organisation's rule files govern an
// inheriting repository as the organisation judged them, clipped to
// their namespaces, with the chain that decided.
func TestInheritOrgRuleFiles(t *testing.T) {
	org, _, _ := orgWithFiles(t)
	local, _ := localPolicy(t)
	m, err := Inherit(org, local)
	must(t, err)
	var aes *Rule
	for _, r := range m.RulesFor("refs/heads/main") {
		if r.Name == "crypto:aes" {
			aes = r
		}
	}
	if aes == nil || !aes.Org || strings.Join(aes.Chain, ",") != "security,crypto" || aes.Untrusted != "" {
		t.Fatalf("crypto:aes in the combined policy: %+v", aes)
	}
	if !aes.CoversPath("src/crypto/aes.c") || aes.CoversPath("src/net/tcp.c") {
		t.Fatal("the organisation's rule is not clipped to src/crypto/**")
	}
	// Editing the organisation policy afterwards changes nothing in the
	// combination.
	must(t, org.RemoveRuleIn(nil, "crypto", "aes", t0))
	if rs := m.RulesFor("refs/heads/release/1"); len(rs) != 1 || rs[0].Name != "release" {
		t.Fatalf("release is governed by %v", rs)
	}
	found := false
	for _, r := range m.RulesFor("refs/heads/main") {
		found = found || r.Name == "crypto:aes"
	}
	if !found {
		t.Fatal("an edit of the organisation policy after Inherit reached the combined policy")
	}
}

// TestInheritOrgRuleFileWidened: a rule the crypto maintainers sign
// beyond their namespace (src/**) is ignored there in the combined policy
// too, and verification warns naming the organisation's file.
func TestInheritOrgRuleFileWidened(t *testing.T) {
	org, alice, _ := orgWithFiles(t)
	must(t, org.AddRuleIn(nil, "crypto", Rule{Name: "grab", Refs: []string{"refs/heads/main"}, Paths: []string{"src/crypto/**"}, Allow: []string{"alice"}, Threshold: 1}, t0))
	f, _ := org.RuleFile("crypto")
	for _, r := range f.Rules {
		if r.Name == "grab" {
			r.Paths = []string{"src/**"} // what a modified client signs
		}
	}
	org.encodeRuleFile(f)
	must(t, org.reindex())
	must(t, org.SignRuleFile("crypto", alice.TUF))
	local, _ := localPolicy(t)
	m, err := Inherit(org, local)
	must(t, err)
	for _, r := range m.RulesFor("refs/heads/main") {
		if r.Name == "crypto:grab" && r.CoversPath("src/net/tcp.c") {
			t.Fatal("the widened organisation rule covers src/net in the combined policy")
		}
	}
	w := strings.Join(m.Warnings(), "\n")
	if !strings.Contains(w, "organisation rule file crypto: rule grab covers src/**, beyond crypto's paths src/crypto/**: ignored there") {
		t.Fatalf("warnings: %s", w)
	}
}

// TestInheritOrgRuleFileRemovedPerson: the organisation removes dave, whom
// the crypto maintainers' file still names. The file counts for nothing
// in the organisation's judgement, and so in the combined policy: every
// update of src/crypto on main fails (fail closed), even in a repository
// that lists a dave of its own, whom the file's name must not reach.
func TestInheritOrgRuleFileRemovedPerson(t *testing.T) {
	org, _, _ := orgWithFiles(t)
	persons := slices.DeleteFunc(slices.Clone(org.persons), func(x *Person) bool { return x.Name == "dave" })
	must(t, org.rebuildTargets(persons, org.rules))
	if f, _ := org.RuleFile("crypto"); f.Untrusted == "" {
		t.Fatal("the organisation's file naming a removed person counts")
	}
	local, _ := localPolicy(t)
	mallory := newTestKey(t, "mallory")
	must(t, local.AddPerson(nil, "dave", []ssh.PublicKey{mallory.Pub}, t0))
	m, err := Inherit(org, local)
	must(t, err)
	var closed *Rule
	for _, r := range m.RulesFor("refs/heads/main") {
		if r.File == "crypto" {
			if r.Untrusted == "" {
				t.Fatalf("rule %s of the organisation's file counts in the combined policy", r.Name)
			}
			closed = r
		}
	}
	if closed == nil || !closed.Org || !closed.CoversPath("src/crypto/aes.c") || !strings.Contains(closed.Untrusted, `unknown or repeated person or team "dave"`) {
		t.Fatalf("src/crypto does not fail closed: %+v", closed)
	}
}

// TestInheritOrgRuleFileClashes: a repository rule file or rule of an
// organisation rule file's name is refused, naming both.
func TestInheritOrgRuleFileClashes(t *testing.T) {
	org, _, _ := orgWithFiles(t)
	for _, tc := range []struct {
		name string
		edit func(p *Policy)
		want string
	}{
		{"rule file", func(p *Policy) {
			must(t, p.Delegate(nil, "", Delegation{Name: "tools", Refs: []string{"refs/heads/tools/*"}, Signers: []string{"carol"}, Threshold: 1}, t0))
			must(t, p.Delegate(nil, "tools", Delegation{Name: "crypto", Refs: []string{"refs/heads/tools/*"}, Signers: []string{"carol"}, Threshold: 1}, t0))
		}, "rule file crypto is both the organisation's (delegated: rules keys -> security -> crypto) and the repository's (delegated: rules keys -> tools -> crypto)"},
		{"rule", func(p *Policy) {
			must(t, p.AddRule(nil, Rule{Name: "security", Refs: []string{"refs/heads/x"}, Allow: []string{"carol"}, Threshold: 1}, t0))
		}, "the repository's rule security has the name of the organisation's rule file security (delegated: rules keys -> security)"},
		{"rule file of an organisation rule's name", func(p *Policy) {
			must(t, p.Delegate(nil, "", Delegation{Name: "org-main", Refs: []string{"refs/heads/tools/*"}, Signers: []string{"carol"}, Threshold: 1}, t0))
		}, "org-main"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			local, _ := localPolicy(t)
			tc.edit(local)
			_, err := Inherit(org, local)
			if !errors.Is(err, ErrInheritConflict) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Inherit = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestInheritRepoRuleFileSignedByOrgRevokedKey: a repository rule file
// signed by a key the organisation revoked counts for nothing in the
// combined policy, saying which key of whom. carol's file team delegates
// tools to the repository's copy of the organisation's bob (same key),
// who signs it; the repository then removes its bob (tools and team
// count for nothing there). Combined with the organisation, bob is a
// person again, by the organisation's listing: tools counted again,
// signed by his key even once the organisation revoked it. A repository
// that still lists the revoked key is refused outright, naming it.
func TestInheritRepoRuleFileSignedByOrgRevokedKey(t *testing.T) {
	org, _, bob := orgPolicy(t)
	local, carol := localPolicy(t)
	must(t, local.AddPerson(nil, "bob", []ssh.PublicKey{bob.Pub}, t0))
	must(t, local.Delegate(nil, "", Delegation{Name: "team", Refs: []string{"refs/heads/tools/*"}, Signers: []string{"carol"}, Threshold: 1}, t0))
	must(t, local.Delegate(nil, "team", Delegation{Name: "tools", Refs: []string{"refs/heads/tools/*"}, Signers: []string{"bob"}, Threshold: 1}, t0))
	must(t, local.AddRuleIn(nil, "tools", Rule{Name: "tools-main", Refs: []string{"refs/heads/tools/*"}, Allow: []string{"bob"}, Threshold: 1}, t0))
	must(t, local.SignRuleFile("team", carol.TUF))
	must(t, local.SignRuleFile("tools", bob.TUF))
	revoking, _ := org.Clone()
	must(t, revoking.RevokeKey(nil, bob.FP, 9, t0))
	if _, err := Inherit(revoking, local); !errors.Is(err, ErrInheritConflict) || !strings.Contains(err.Error(), "key "+bob.FP+" of the repository's person bob is revoked by the organisation policy") {
		t.Fatalf("Inherit with the revoked key still listed = %v", err)
	}
	removed, _ := local.Clone()
	must(t, removed.RemovePerson(local, "bob", t0))
	if f, _ := removed.RuleFile("tools"); !removed.ClosedByRemoval(local, f) {
		t.Fatalf("tools in the repository after bob's removal: %q", f.Untrusted)
	}
	// Not revoked: the organisation's bob (same key) signs tools.
	m, err := Inherit(org, removed)
	must(t, err)
	if f, _ := m.RuleFile("tools"); f.Untrusted != "" {
		t.Fatalf("tools combined with an organisation that lists bob: %q", f.Untrusted)
	}
	// Revoked: tools counts for nothing, and refs/heads/tools/* fails
	// closed.
	m, err = Inherit(revoking, removed)
	must(t, err)
	f, _ := m.RuleFile("tools")
	if want := "(the organisation policy revokes key " + bob.FP + " of bob, which signed it)"; !strings.Contains(f.Untrusted, want) || !strings.Contains(f.Untrusted, "signed by 0 of the 1 persons its delegation tools requires") {
		t.Fatalf("tools signed by the revoked key, combined: %q, want %q", f.Untrusted, want)
	}
	closed := false
	for _, r := range m.RulesFor("refs/heads/tools/x") {
		closed = closed || (r.File == "tools" && r.Untrusted != "")
	}
	if !closed {
		t.Fatalf("refs/heads/tools/x does not fail closed: %v", ruleNames(m.RulesFor("refs/heads/tools/x")))
	}
	if f, _ := m.RuleFile("team"); f.Untrusted != "" {
		t.Fatalf("team, signed by carol, counts for nothing: %q", f.Untrusted)
	}
}
