package policy

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/sign"
)

// t1 is a later "now" for edits, so renewed expiry is visible.
var t1 = t0.Add(30 * 24 * time.Hour)

// staged returns a parsed copy of the fixture's policy (the policy in
// force) and a clone to edit.
func staged(t testing.TB) (f *fixture, base, p *Policy) {
	t.Helper()
	f = newFixture(t)
	r, tg := encode(t, f.p)
	base, err := Parse(r, tg)
	must(t, err)
	p, err = base.Clone()
	must(t, err)
	return f, base, p
}

// unchanged fails unless p still encodes to before.
func unchanged(t *testing.T, p *Policy, beforeRoot, beforeTargets []byte) {
	t.Helper()
	r, tg := encode(t, p)
	if !bytes.Equal(r, beforeRoot) || !bytes.Equal(tg, beforeTargets) {
		t.Fatal("a refused edit changed the policy")
	}
}

// reparses fails unless p's encoding parses to the same bytes: every edit
// must leave a policy that a reader accepts.
func reparses(t *testing.T, p *Policy) *Policy {
	t.Helper()
	r, tg := encode(t, p)
	q, err := Parse(r, tg)
	if err != nil {
		t.Fatalf("edited policy does not parse: %v", err)
	}
	r2, tg2 := encode(t, q)
	if !bytes.Equal(r, r2) || !bytes.Equal(tg, tg2) {
		t.Fatal("edited policy does not round-trip")
	}
	return q
}

func p384Key(t *testing.T) ssh.PublicKey {
	k, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	must(t, err)
	pub, err := ssh.NewPublicKey(&k.PublicKey)
	must(t, err)
	return pub
}

func TestAddPerson(t *testing.T) {
	dave, erin := newTestKey(t, "dave"), newTestKey(t, "erin")
	tests := []struct {
		name    string
		person  string
		keys    func(f *fixture) []ssh.PublicKey
		wantErr bool
	}{
		{"one key", "dave", func(*fixture) []ssh.PublicKey { return []ssh.PublicKey{dave.Pub} }, false},
		{"two keys", "dave", func(*fixture) []ssh.PublicKey { return []ssh.PublicKey{dave.Pub, erin.Pub} }, false},
		{"root key as person key", "dave", func(f *fixture) []ssh.PublicKey { return []ssh.PublicKey{f.root.Pub} }, false},
		{"name with dots and dashes", "d.a-v_e2", func(*fixture) []ssh.PublicKey { return []ssh.PublicKey{dave.Pub} }, false},
		{"name of 64 characters", strings.Repeat("d", 64), func(*fixture) []ssh.PublicKey { return []ssh.PublicKey{dave.Pub} }, false},
		{"duplicate name", "bob", func(*fixture) []ssh.PublicKey { return []ssh.PublicKey{dave.Pub} }, true},
		{"key already owned", "dave", func(f *fixture) []ssh.PublicKey { return []ssh.PublicKey{f.bob.Pub} }, true},
		{"second key already owned", "dave", func(f *fixture) []ssh.PublicKey { return []ssh.PublicKey{dave.Pub, f.alice2.Pub} }, true},
		{"key given twice", "dave", func(*fixture) []ssh.PublicKey { return []ssh.PublicKey{dave.Pub, dave.Pub} }, true},
		{"no keys", "dave", func(*fixture) []ssh.PublicKey { return nil }, true},
		{"unsupported key", "dave", func(*fixture) []ssh.PublicKey { return []ssh.PublicKey{p384Key(t)} }, true},
		{"empty name", "", func(*fixture) []ssh.PublicKey { return []ssh.PublicKey{dave.Pub} }, true},
		{"name too long", strings.Repeat("d", 65), func(*fixture) []ssh.PublicKey { return []ssh.PublicKey{dave.Pub} }, true},
		{"name with space", "dave smith", func(*fixture) []ssh.PublicKey { return []ssh.PublicKey{dave.Pub} }, true},
		{"name with colon", "team:dave", func(*fixture) []ssh.PublicKey { return []ssh.PublicKey{dave.Pub} }, true},
		{"name starting with dash", "-dave", func(*fixture) []ssh.PublicKey { return []ssh.PublicKey{dave.Pub} }, true},
		{"name with newline", "dave\n", func(*fixture) []ssh.PublicKey { return []ssh.PublicKey{dave.Pub} }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, base, p := staged(t)
			r0, t0b := encode(t, p)
			keys := tt.keys(f)
			err := p.AddPerson(base, tt.person, keys, t1)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidChange) {
					t.Fatalf("AddPerson = %v, want ErrInvalidChange", err)
				}
				unchanged(t, p, r0, t0b)
				return
			}
			must(t, err)
			q := reparses(t, p)
			person, ok := q.Person(tt.person)
			if !ok || len(person.Keys) != len(keys) {
				t.Fatalf("person %q: %+v", tt.person, person)
			}
			for _, k := range keys {
				owner, ok := q.PersonByFingerprint(ssh.FingerprintSHA256(k))
				if !ok || owner.Name != tt.person {
					t.Fatalf("key %s owned by %v", ssh.FingerprintSHA256(k), owner)
				}
				if _, ok := q.LookupPersonKey(ssh.FingerprintSHA256(k)); !ok {
					t.Fatal("LookupPersonKey failed")
				}
			}
			if len(q.Persons()) != 4 {
				t.Fatalf("%d persons", len(q.Persons()))
			}
			// Existing rules do not allow the new person.
			for _, r := range q.Rules() {
				if r.Allows(tt.person) {
					t.Fatalf("rule %s allows the new person", r.Name)
				}
			}
		})
	}
}

// TestAddPersonRootKeyStaysRootKey: a root key given to a person remains
// a root key and becomes a person key too.
func TestAddPersonRootKey(t *testing.T) {
	f, base, p := staged(t)
	must(t, p.AddPerson(base, "admin", []ssh.PublicKey{f.root.Pub}, t1))
	if keys, _ := p.RoleKeys(metadata.ROOT); len(keys) != 1 || keys[0].Fingerprint != f.root.FP {
		t.Fatal("root role changed")
	}
	if x, ok := p.PersonByFingerprint(f.root.FP); !ok || x.Name != "admin" {
		t.Fatal("root key is not admin's")
	}
}

func TestRemovePerson(t *testing.T) {
	f, base, p := staged(t)
	r0, t0b := encode(t, p)
	for _, name := range []string{"alice", "bob", "carol"} {
		if err := p.RemovePerson(base, name, t1); !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), "rule") {
			t.Fatalf("RemovePerson(%s) while a rule allows them = %v", name, err)
		}
	}
	if err := p.RemovePerson(base, "dave", t1); !errors.Is(err, ErrInvalidChange) {
		t.Fatalf("RemovePerson(unknown) = %v", err)
	}
	unchanged(t, p, r0, t0b)

	// Once no rule allows bob, bob and his key can go.
	must(t, p.RemoveRule(base, "main", t1))
	if err := p.RemovePerson(base, "bob", t1); !errors.Is(err, ErrInvalidChange) {
		t.Fatalf("bob is still allowed by tagged-docs: %v", err)
	}
	must(t, p.RemoveRule(base, "tagged-docs", t1))
	must(t, p.RemovePerson(base, "bob", t1))
	q := reparses(t, p)
	if _, ok := q.Person("bob"); ok {
		t.Fatal("bob still there")
	}
	if _, ok := q.LookupKey(f.bob.FP); ok {
		t.Fatal("bob's key still known")
	}
	if _, ok := q.Targets.Signed.Delegations.Keys[f.bob.ID]; ok {
		t.Fatal("bob's key still in delegations.keys")
	}
	if len(q.Persons()) != 2 || q.Targets.Signed.Version != base.Targets.Signed.Version+1 {
		t.Fatalf("%d persons, targets version %d", len(q.Persons()), q.Targets.Signed.Version)
	}
	// Bob's key is free again.
	must(t, p.AddPerson(base, "robert", []ssh.PublicKey{f.bob.Pub}, t1))
}

func TestAddRule(t *testing.T) {
	tests := []struct {
		name    string
		rule    Rule
		wantErr bool
		want    *Rule // the stored rule when it differs from rule
	}{
		{"ref rule", Rule{Name: "dev", Refs: []string{"refs/heads/dev"}, Allow: []string{"bob"}, Threshold: 1}, false, nil},
		{"path rule", Rule{Name: "ci", Paths: []string{".github/**"}, Allow: []string{"alice", "carol"}, Threshold: 2}, false, nil},
		{"ref and path rule", Rule{Name: "rel", Refs: []string{"refs/tags/**"}, Paths: []string{"CHANGELOG.md"}, Allow: []string{"alice", "bob", "carol"}, Threshold: 3}, false, nil},
		{"threshold 0 defaults to 1", Rule{Name: "dev", Refs: []string{"refs/heads/dev"}, Allow: []string{"bob", "carol"}}, false,
			&Rule{Name: "dev", Refs: []string{"refs/heads/dev"}, Allow: []string{"bob", "carol"}, Threshold: 1}},
		{"bad name", Rule{Name: "my rule", Refs: []string{"refs/heads/dev"}, Allow: []string{"bob"}, Threshold: 1}, true, nil},
		{"empty name", Rule{Refs: []string{"refs/heads/dev"}, Allow: []string{"bob"}, Threshold: 1}, true, nil},
		{"name too long", Rule{Name: strings.Repeat("r", 65), Refs: []string{"refs/heads/dev"}, Allow: []string{"bob"}, Threshold: 1}, true, nil},
		{"duplicate name", Rule{Name: "main", Refs: []string{"refs/heads/dev"}, Allow: []string{"bob"}, Threshold: 1}, true, nil},
		{"no patterns", Rule{Name: "dev", Allow: []string{"bob"}, Threshold: 1}, true, nil},
		{"empty ref pattern", Rule{Name: "dev", Refs: []string{""}, Allow: []string{"bob"}, Threshold: 1}, true, nil},
		{"short ref pattern", Rule{Name: "dev", Refs: []string{"heads/dev"}, Allow: []string{"bob"}, Threshold: 1}, true, nil},
		{"ref pattern on refs/secure", Rule{Name: "dev", Refs: []string{"refs/secure/**"}, Allow: []string{"bob"}, Threshold: 1}, true, nil},
		{"ref pattern with prefix", Rule{Name: "dev", Refs: []string{"git:refs/heads/dev"}, Allow: []string{"bob"}, Threshold: 1}, true, nil},
		{"one bad ref pattern", Rule{Name: "dev", Refs: []string{"refs/heads/dev", "refs/heads/[x]"}, Allow: []string{"bob"}, Threshold: 1}, true, nil},
		{"absolute path pattern", Rule{Name: "ci", Paths: []string{"/etc/passwd"}, Allow: []string{"bob"}, Threshold: 1}, true, nil},
		{"path pattern with dotdot", Rule{Name: "ci", Paths: []string{"a/../b"}, Allow: []string{"bob"}, Threshold: 1}, true, nil},
		{"path pattern triple star", Rule{Name: "ci", Paths: []string{"***"}, Allow: []string{"bob"}, Threshold: 1}, true, nil},
		{"no allowed persons", Rule{Name: "dev", Refs: []string{"refs/heads/dev"}, Threshold: 1}, true, nil},
		{"unknown person", Rule{Name: "dev", Refs: []string{"refs/heads/dev"}, Allow: []string{"bob", "mallory"}, Threshold: 1}, true, nil},
		{"team", Rule{Name: "dev", Refs: []string{"refs/heads/dev"}, Allow: []string{"team:core"}, Threshold: 1}, true, nil},
		{"person twice", Rule{Name: "dev", Refs: []string{"refs/heads/dev"}, Allow: []string{"bob", "bob"}, Threshold: 2}, true, nil},
		{"threshold above persons", Rule{Name: "dev", Refs: []string{"refs/heads/dev"}, Allow: []string{"alice", "bob"}, Threshold: 3}, true, nil},
		{"threshold counts persons not keys", Rule{Name: "dev", Refs: []string{"refs/heads/dev"}, Allow: []string{"alice"}, Threshold: 2}, true, nil},
		{"negative threshold", Rule{Name: "dev", Refs: []string{"refs/heads/dev"}, Allow: []string{"bob"}, Threshold: -1}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, base, p := staged(t)
			r0, t0b := encode(t, p)
			err := p.AddRule(base, tt.rule, t1)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidChange) {
					t.Fatalf("AddRule = %v, want an error wrapping ErrInvalidChange", err)
				}
				unchanged(t, p, r0, t0b)
				return
			}
			must(t, err)
			q := reparses(t, p)
			want := tt.want
			if want == nil {
				want = &tt.rule
			}
			rules := q.Rules()
			if len(rules) != 4 || rules[3].Name != want.Name {
				t.Fatalf("rules %v: the new rule is not last", ruleSummary(q))
			}
			if got := *rules[3]; !slices.Equal(got.Refs, want.Refs) || !slices.Equal(got.Paths, want.Paths) ||
				!slices.Equal(got.Allow, want.Allow) || got.Threshold != want.Threshold {
				t.Fatalf("stored rule %+v, want %+v", got, *want)
			}
		})
	}
}

// TestAddRuleExistingSaysHowToChange: adding a rule under a name in use is
// refused with the commands that change it (no command edits a rule in
// place), and those commands, staged together, do replace it.
func TestAddRuleExistingSaysHowToChange(t *testing.T) {
	_, base, p := staged(t)
	r0, t0b := encode(t, p)
	changed := Rule{Name: "main", Refs: []string{"refs/heads/main"}, Allow: []string{"alice", "bob", "carol"}, Threshold: 3}
	err := p.AddRule(base, changed, t1)
	if !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), "rule main already exists: to change it, run git secure policy remove-rule main, then add-rule main again") {
		t.Fatalf("AddRule of an existing name = %v, want ErrInvalidChange naming remove-rule then add-rule", err)
	}
	unchanged(t, p, r0, t0b)
	must(t, p.RemoveRule(base, "main", t1))
	must(t, p.AddRule(base, changed, t1))
	got, ok := reparses(t, p).Rule("main")
	if !ok || got.Threshold != 3 || !slices.Equal(got.Allow, changed.Allow) {
		t.Fatalf("rule main after remove-rule and add-rule = %+v, want %+v", got, changed)
	}
}

// TestAddRuleCopiesInput: the caller's slices are not kept.
func TestAddRuleCopiesInput(t *testing.T) {
	_, base, p := staged(t)
	refs, allow := []string{"refs/heads/dev"}, []string{"bob"}
	must(t, p.AddRule(base, Rule{Name: "dev", Refs: refs, Allow: allow, Threshold: 1}, t1))
	refs[0], allow[0] = "refs/heads/x", "carol"
	r, _ := p.Rule("dev")
	if r.Refs[0] != "refs/heads/dev" || r.Allow[0] != "bob" {
		t.Fatalf("rule changed with the caller's slices: %+v", r)
	}
	reparses(t, p)
}

func TestRemoveRule(t *testing.T) {
	_, base, p := staged(t)
	r0, t0b := encode(t, p)
	if err := p.RemoveRule(base, "nope", t1); !errors.Is(err, ErrInvalidChange) {
		t.Fatalf("RemoveRule(unknown) = %v", err)
	}
	unchanged(t, p, r0, t0b)
	must(t, p.RemoveRule(base, "crypto", t1))
	q := reparses(t, p)
	var names []string
	for _, r := range q.Rules() {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{"main", "tagged-docs"}) {
		t.Fatalf("rules after removal: %v (order must be kept)", names)
	}
	// Persons stay.
	if len(q.Persons()) != 3 {
		t.Fatal("persons removed with the rule")
	}
}

// TestVersionsBumpOnce: relative to the policy in force, each metadata
// file's version grows by exactly one however many edits are staged, its
// expiry is renewed from the edit time, and an untouched file keeps its
// version and expiry.
func TestVersionsBumpOnce(t *testing.T) {
	f, base, p := staged(t)
	rv, tv := base.Root.Signed.Version, base.Targets.Signed.Version
	wantExp := t1.Add(DefaultLifetime)
	dave := newTestKey(t, "dave")

	must(t, p.AddPerson(base, "dave", []ssh.PublicKey{dave.Pub}, t1))
	must(t, p.AddRule(base, Rule{Name: "dev", Refs: []string{"refs/heads/dev"}, Allow: []string{"dave"}}, t1))
	must(t, p.RemoveRule(base, "crypto", t1))
	must(t, p.RemoveRule(base, "dev", t1))
	must(t, p.RemovePerson(base, "dave", t1))
	if p.Targets.Signed.Version != tv+1 {
		t.Fatalf("targets version %d after 5 edits, want %d", p.Targets.Signed.Version, tv+1)
	}
	if p.Root.Signed.Version != rv || !p.Root.Signed.Expires.Equal(base.Root.Signed.Expires) {
		t.Fatalf("rules edits changed root: version %d expires %v", p.Root.Signed.Version, p.Root.Signed.Expires)
	}
	if !p.Targets.Signed.Expires.Equal(wantExp) {
		t.Fatalf("targets expires %v, want %v", p.Targets.Signed.Expires, wantExp)
	}

	rules := newTestKey(t, "rules-key")
	must(t, p.AddRoleKey(base, metadata.TARGETS, rules.Pub, t1))
	must(t, p.AddRoleKey(base, metadata.ROOT, rules.Pub, t1))
	must(t, p.SetRoleThreshold(base, metadata.ROOT, 2, t1))
	must(t, p.RemoveRoleKey(base, metadata.TARGETS, f.root.FP, t1))
	if p.Root.Signed.Version != rv+1 {
		t.Fatalf("root version %d after 4 edits, want %d", p.Root.Signed.Version, rv+1)
	}
	if p.Targets.Signed.Version != tv+1 {
		t.Fatalf("root edits changed the targets version to %d", p.Targets.Signed.Version)
	}
	if !p.Root.Signed.Expires.Equal(wantExp) {
		t.Fatalf("root expires %v, want %v", p.Root.Signed.Expires, wantExp)
	}
	q := reparses(t, p)

	// Applying the staged policy makes it the base of the next change.
	next, err := q.Clone()
	must(t, err)
	must(t, next.RemoveRule(q, "main", t1))
	must(t, next.SetRoleThreshold(q, metadata.ROOT, 1, t1))
	if next.Root.Signed.Version != rv+2 || next.Targets.Signed.Version != tv+2 {
		t.Fatalf("second round: versions %d/%d, want %d/%d", next.Root.Signed.Version, next.Targets.Signed.Version, rv+2, tv+2)
	}

	// Without a base (building a first policy) versions stay.
	fresh, err := New(f.root.Pub, t0)
	must(t, err)
	must(t, fresh.AddPerson(nil, "dave", []ssh.PublicKey{dave.Pub}, t1))
	must(t, fresh.AddRoleKey(nil, metadata.ROOT, dave.Pub, t1))
	if fresh.Root.Signed.Version != 1 || fresh.Targets.Signed.Version != 1 {
		t.Fatalf("versions %d/%d without a base", fresh.Root.Signed.Version, fresh.Targets.Signed.Version)
	}
}

// TestVersionsBumpFromBase: the bump is relative to base, not to the
// staged copy, and a staged version already past base is kept.
func TestVersionsBumpFromBase(t *testing.T) {
	_, base, p := staged(t)
	base.Targets.Signed.Version = 7
	base.Root.Signed.Version = 4
	must(t, p.RemoveRule(base, "crypto", t1))
	must(t, p.SetRoleThreshold(base, metadata.ROOT, 1, t1))
	if p.Targets.Signed.Version != 8 || p.Root.Signed.Version != 5 {
		t.Fatalf("versions %d/%d, want 5/8", p.Root.Signed.Version, p.Targets.Signed.Version)
	}
	p.Targets.Signed.Version = 20
	must(t, p.RemoveRule(base, "main", t1))
	if p.Targets.Signed.Version != 20 {
		t.Fatalf("targets version %d, want 20 kept", p.Targets.Signed.Version)
	}
}

// TestEditsDropSignatures: an edit drops the signatures of the file it
// changes, so every staged change is signed afresh. Root edits keep the
// targets signatures (they are checked against the new root's rules keys).
func TestEditsDropSignatures(t *testing.T) {
	edits := []struct {
		name       string
		edit       func(t *testing.T, f *fixture, base, p *Policy) error
		rootEdited bool
	}{
		{"AddPerson", func(t *testing.T, f *fixture, base, p *Policy) error {
			return p.AddPerson(base, "dave", []ssh.PublicKey{newTestKey(t, "dave").Pub}, t1)
		}, false},
		{"RemovePerson", func(t *testing.T, f *fixture, base, p *Policy) error {
			if err := p.RemoveRule(base, "crypto", t1); err != nil {
				return err
			}
			if err := p.SignTargets(f.root.TUF); err != nil {
				return err
			}
			if err := p.RemoveRule(base, "tagged-docs", t1); err != nil {
				return err
			}
			if err := p.SignTargets(f.root.TUF); err != nil {
				return err
			}
			return p.RemovePerson(base, "carol", t1)
		}, false},
		{"AddRule", func(t *testing.T, f *fixture, base, p *Policy) error {
			return p.AddRule(base, Rule{Name: "dev", Refs: []string{"refs/heads/dev"}, Allow: []string{"bob"}}, t1)
		}, false},
		{"RemoveRule", func(t *testing.T, f *fixture, base, p *Policy) error { return p.RemoveRule(base, "main", t1) }, false},
		{"AddRoleKey", func(t *testing.T, f *fixture, base, p *Policy) error {
			return p.AddRoleKey(base, metadata.ROOT, newTestKey(t, "root2").Pub, t1)
		}, true},
		{"RemoveRoleKey", func(t *testing.T, f *fixture, base, p *Policy) error {
			if err := p.AddRoleKey(base, metadata.TARGETS, newTestKey(t, "rules").Pub, t1); err != nil {
				return err
			}
			if err := p.SignRoot(f.root.TUF); err != nil {
				return err
			}
			return p.RemoveRoleKey(base, metadata.TARGETS, f.root.FP, t1)
		}, true},
		{"SetRoleThreshold", func(t *testing.T, f *fixture, base, p *Policy) error {
			return p.SetRoleThreshold(base, metadata.TARGETS, 1, t1)
		}, true},
	}
	for _, tt := range edits {
		t.Run(tt.name, func(t *testing.T) {
			f, base, p := staged(t)
			if len(p.Root.Signatures) != 1 || len(p.Targets.Signatures) != 1 {
				t.Fatal("fixture is not signed")
			}
			must(t, tt.edit(t, f, base, p))
			q := reparses(t, p)
			if tt.rootEdited {
				if len(q.Root.Signatures) != 0 {
					t.Fatal("root edit kept root signatures")
				}
				if len(q.Targets.Signatures) != 1 {
					t.Fatal("root edit dropped targets signatures")
				}
			} else {
				if len(q.Targets.Signatures) != 0 {
					t.Fatal("rules edit kept targets signatures")
				}
				if len(q.Root.Signatures) != 1 {
					t.Fatal("rules edit dropped root signatures")
				}
			}
			// Signing the result gives valid signatures again.
			if tt.rootEdited {
				must(t, p.SignRoot(f.root.TUF))
				if err := p.Root.VerifyDelegate(metadata.ROOT, p.Root); err != nil {
					t.Fatalf("re-signed root: %v", err)
				}
			} else {
				must(t, p.SignTargets(f.root.TUF))
				if err := p.Root.VerifyDelegate(metadata.TARGETS, p.Targets); err != nil {
					t.Fatalf("re-signed targets: %v", err)
				}
			}
			reparses(t, p)
		})
	}
}

func TestRoleKeyEdits(t *testing.T) {
	f, base, p := staged(t)
	r0, t0b := encode(t, p)
	k2, k3 := newTestKey(t, "root2"), newTestKey(t, "root3")

	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrInvalidChange) {
			t.Fatalf("%s = %v, want ErrInvalidChange", what, err)
		}
		unchanged(t, p, r0, t0b)
	}
	refused("AddRoleKey(snapshot)", p.AddRoleKey(base, metadata.SNAPSHOT, k2.Pub, t1))
	refused("AddRoleKey(existing)", p.AddRoleKey(base, metadata.ROOT, f.root.Pub, t1))
	refused("AddRoleKey(P-384)", p.AddRoleKey(base, metadata.ROOT, p384Key(t), t1))
	refused("RemoveRoleKey(last key)", p.RemoveRoleKey(base, metadata.ROOT, f.root.FP, t1))
	refused("RemoveRoleKey(last rules key)", p.RemoveRoleKey(base, metadata.TARGETS, f.root.FP, t1))
	refused("RemoveRoleKey(not a member)", p.RemoveRoleKey(base, metadata.ROOT, k2.FP, t1))
	refused("RemoveRoleKey(unknown role)", p.RemoveRoleKey(base, "timestamp", f.root.FP, t1))
	refused("SetRoleThreshold(0)", p.SetRoleThreshold(base, metadata.ROOT, 0, t1))
	refused("SetRoleThreshold(-1)", p.SetRoleThreshold(base, metadata.ROOT, -1, t1))
	refused("SetRoleThreshold(2 of 1)", p.SetRoleThreshold(base, metadata.ROOT, 2, t1))
	refused("SetRoleThreshold(unknown role)", p.SetRoleThreshold(base, "snapshot", 1, t1))

	must(t, p.AddRoleKey(base, metadata.ROOT, k2.Pub, t1))
	must(t, p.AddRoleKey(base, metadata.ROOT, k3.Pub, t1))
	must(t, p.SetRoleThreshold(base, metadata.ROOT, 3, t1))
	if err := p.SetRoleThreshold(base, metadata.ROOT, 4, t1); !errors.Is(err, ErrInvalidChange) {
		t.Fatalf("SetRoleThreshold(4 of 3) = %v", err)
	}
	// Threshold 3 of 3: no key can go.
	if err := p.RemoveRoleKey(base, metadata.ROOT, k2.FP, t1); !errors.Is(err, ErrInvalidChange) {
		t.Fatalf("RemoveRoleKey below threshold = %v", err)
	}
	must(t, p.SetRoleThreshold(base, metadata.ROOT, 2, t1))
	must(t, p.RemoveRoleKey(base, metadata.ROOT, f.root.FP, t1))
	q := reparses(t, p)
	keys, th := q.RoleKeys(metadata.ROOT)
	var fps []string
	for _, k := range keys {
		fps = append(fps, k.Fingerprint)
	}
	if th != 2 || !sameSet(fps, []string{k2.FP, k3.FP}) {
		t.Fatalf("root role: %v threshold %d", fps, th)
	}
	// The old root key still holds the rules role, so it stays in keys.
	if _, ok := q.Root.Signed.Keys[f.root.ID]; !ok {
		t.Fatal("a key the rules role uses was deleted from root.json keys")
	}
	if tk, _ := q.RoleKeys(metadata.TARGETS); len(tk) != 1 || tk[0].Fingerprint != f.root.FP {
		t.Fatal("rules role changed")
	}
	// Moving the rules role to k2 drops the old key from root.json.
	must(t, p.AddRoleKey(base, metadata.TARGETS, k2.Pub, t1))
	must(t, p.RemoveRoleKey(base, metadata.TARGETS, f.root.FP, t1))
	q = reparses(t, p)
	if _, ok := q.Root.Signed.Keys[f.root.ID]; ok {
		t.Fatal("a key no role uses stayed in root.json keys")
	}
	if _, ok := q.LookupKey(f.root.FP); ok {
		t.Fatal("removed key still known")
	}
	if len(q.Root.Signed.Keys) != 2 {
		t.Fatalf("%d root keys, want 2", len(q.Root.Signed.Keys))
	}
}

func TestSignTwiceKeepsOneSignature(t *testing.T) {
	f, _, p := staged(t)
	for i := 0; i < 3; i++ {
		must(t, p.SignRoot(f.root.TUF))
		must(t, p.SignTargets(f.root.TUF))
	}
	if len(p.Root.Signatures) != 1 || len(p.Targets.Signatures) != 1 {
		t.Fatalf("%d root and %d targets signatures after signing again with one key", len(p.Root.Signatures), len(p.Targets.Signatures))
	}
	q := reparses(t, p) // go-tuf refuses two signatures by one key ID
	if !HasSignature(q.Root, f.root.ID) {
		t.Fatal("signature lost")
	}

	// A second key adds a second signature; signing again replaces only its own.
	k2 := newTestKey(t, "root2")
	must(t, p.SignRoot(k2.TUF))
	must(t, p.SignRoot(k2.TUF))
	must(t, p.SignRoot(f.root.TUF))
	if len(p.Root.Signatures) != 2 || !HasSignature(p.Root, k2.ID) || !HasSignature(p.Root, f.root.ID) {
		t.Fatalf("signatures %+v", p.Root.Signatures)
	}
	reparses(t, p)

	// Re-signing after an edit replaces the stale signature with a valid one.
	must(t, p.AddRoleKey(nil, metadata.ROOT, k2.Pub, t1))
	must(t, p.SignRoot(f.root.TUF))
	must(t, p.SignRoot(k2.TUF))
	must(t, p.SetRoleThreshold(nil, metadata.ROOT, 2, t1))
	must(t, p.SignRoot(k2.TUF))
	must(t, p.SignRoot(f.root.TUF))
	if err := p.Root.VerifyDelegate(metadata.ROOT, p.Root); err != nil {
		t.Fatalf("root with threshold 2 signed by both keys: %v", err)
	}
}

// TestTwoKeysOnePerson: every key of a person counts as that one person
// in rules; the rule's keyids hold all of them.
func TestTwoKeysOnePerson(t *testing.T) {
	f, base, p := staged(t)
	d := rule(p, "main")
	if !sameSet(d.KeyIDs, []string{f.alice1.ID, f.alice2.ID, f.bob.ID}) {
		t.Fatalf("rule main keyids %v", d.KeyIDs)
	}
	// alice alone cannot meet a threshold of 2 persons, though she has 2 keys.
	if err := p.AddRule(base, Rule{Name: "solo", Refs: []string{"refs/heads/solo"}, Allow: []string{"alice"}, Threshold: 2}, t1); !errors.Is(err, ErrInvalidChange) {
		t.Fatalf("AddRule threshold 2 for one person with two keys = %v", err)
	}
	a1, _ := p.PersonByFingerprint(f.alice1.FP)
	a2, _ := p.PersonByFingerprint(f.alice2.FP)
	if a1 == nil || a1 != a2 {
		t.Fatal("alice's keys belong to different persons")
	}
}

// TestAddPersons: one change adds many persons, all or nothing; a name or
// key repeated inside the batch is refused like one already in the policy.
func TestAddPersons(t *testing.T) {
	dave, erin, fred := newTestKey(t, "dave"), newTestKey(t, "erin"), newTestKey(t, "fred")
	tests := []struct {
		name    string
		add     func(f *fixture) []NewPerson
		wantErr string
	}{
		{"three persons", func(*fixture) []NewPerson {
			return []NewPerson{{"dave", []ssh.PublicKey{dave.Pub}}, {"erin", []ssh.PublicKey{erin.Pub}}, {"fred", []ssh.PublicKey{fred.Pub}}}
		}, ""},
		{"name twice in the batch", func(*fixture) []NewPerson {
			return []NewPerson{{"dave", []ssh.PublicKey{dave.Pub}}, {"dave", []ssh.PublicKey{erin.Pub}}}
		}, "person dave already exists"},
		{"key shared inside the batch", func(*fixture) []NewPerson {
			return []NewPerson{{"dave", []ssh.PublicKey{dave.Pub}}, {"erin", []ssh.PublicKey{dave.Pub}}}
		}, "already belongs to person dave"},
		{"key twice for one person", func(*fixture) []NewPerson {
			return []NewPerson{{"dave", []ssh.PublicKey{dave.Pub, dave.Pub}}}
		}, "given twice"},
		{"last one owns a policy key", func(f *fixture) []NewPerson {
			return []NewPerson{{"dave", []ssh.PublicKey{dave.Pub}}, {"erin", []ssh.PublicKey{f.bob.Pub}}}
		}, "already belongs to person bob"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, base, p := staged(t)
			r0, t0b := encode(t, p)
			add := tt.add(f)
			err := p.AddPersons(base, add, t1)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("AddPersons = %v, want ErrInvalidChange with %q", err, tt.wantErr)
				}
				unchanged(t, p, r0, t0b)
				return
			}
			must(t, err)
			q := reparses(t, p)
			if len(q.Persons()) != 3+len(add) {
				t.Fatalf("%d persons, want %d", len(q.Persons()), 3+len(add))
			}
			for _, np := range add {
				owner, ok := q.PersonByFingerprint(ssh.FingerprintSHA256(np.Keys[0]))
				if !ok || owner.Name != np.Name {
					t.Fatalf("key of %s owned by %v", np.Name, owner)
				}
			}
		})
	}
}

// TestPersonsUpToTheSizeLimit: MaxPersons persons (less the fixture's
// keys) with one ed25519 key each and names of 64 characters fit in one
// policy; a change that would take targets.json over MaxTargetsSize (here
// keyless identities with long subjects) is refused by name (every reader
// would refuse the stored policy), and the policy is left as it was.
func TestPersonsUpToTheSizeLimit(t *testing.T) {
	_, base, p := staged(t)
	long := strings.Repeat("p", 58)
	must(t, p.AddPersons(base, benchPersons(t, long, MaxPersons-100), t1))
	r, tg := encode(t, p)
	t.Logf("targets.json with %d persons: %d bytes", len(p.Persons()), len(tg))
	q, err := Parse(r, tg)
	must(t, err)
	if len(q.Persons()) != len(p.Persons()) {
		t.Fatalf("%d persons after parse, want %d", len(q.Persons()), len(p.Persons()))
	}

	_, base, p = staged(t)
	var ids []NewPerson
	for i := range 9000 {
		k, err := sign.NewSigstoreKey("https://accounts.google.com", fmt.Sprintf("%s-%04d@example.com", strings.Repeat("s", 230), i))
		must(t, err)
		ids = append(ids, NewPerson{Name: fmt.Sprintf("id%d", i), Keys: []ssh.PublicKey{k}})
	}
	must(t, p.AddPersons(base, ids[:1000], t1))
	r, tg = encode(t, p)
	err = p.AddPersons(base, ids[1000:], t1)
	if !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), "targets.json would be") || !strings.Contains(err.Error(), "over the limit of 4194304") {
		t.Fatalf("AddPersons past the size limit = %v, want ErrInvalidChange naming the limit", err)
	}
	unchanged(t, p, r, tg)
}
