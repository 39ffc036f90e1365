package policy

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/theupdateframework/go-tuf/v2/metadata"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden-*.json")

// t0 is the fixed "now" of the fixtures, so encodings are reproducible.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// testKey is a deterministic ed25519 key, made in-process.
type testKey struct {
	Name   string
	Pub    ssh.PublicKey
	Signer ssh.Signer
	TUF    signature.Signer
	ID     string // TUF key ID
	FP     string // SSH fingerprint
}

func newTestKey(t testing.TB, name string) *testKey {
	t.Helper()
	seed := sha256.Sum256([]byte("policy test key " + name))
	s, err := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(seed[:]))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := sign.TUFSigner(s)
	if err != nil {
		t.Fatal(err)
	}
	_, id, err := sign.TUFKey(s.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	return &testKey{Name: name, Pub: s.PublicKey(), Signer: s, TUF: ts, ID: id, FP: sign.Fingerprint(s.PublicKey())}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fixture is a signed policy with a root key (holding both root roles),
// three persons (alice with two keys) and three rules:
//
//	main         git:refs/heads/main, git:refs/heads/release/**  alice, bob    threshold 2
//	crypto       file:src/crypto/**                              carol, alice  threshold 1
//	tagged-docs  git:refs/tags/v*, file:docs/**, file:*.md       bob, carol    threshold 2
type fixture struct {
	p                                *Policy
	root, alice1, alice2, bob, carol *testKey
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{
		root:   newTestKey(t, "root"),
		alice1: newTestKey(t, "alice-laptop"),
		alice2: newTestKey(t, "alice-desktop"),
		bob:    newTestKey(t, "bob"),
		carol:  newTestKey(t, "carol"),
	}
	p, err := New(f.root.Pub, t0)
	must(t, err)
	must(t, p.AddPerson(nil, "alice", []ssh.PublicKey{f.alice1.Pub, f.alice2.Pub}, t0))
	must(t, p.AddPerson(nil, "bob", []ssh.PublicKey{f.bob.Pub}, t0))
	must(t, p.AddPerson(nil, "carol", []ssh.PublicKey{f.carol.Pub}, t0))
	must(t, p.AddRule(nil, Rule{Name: "main", Refs: []string{"refs/heads/main", "refs/heads/release/**"}, Allow: []string{"alice", "bob"}, Threshold: 2}, t0))
	must(t, p.AddRule(nil, Rule{Name: "crypto", Paths: []string{"src/crypto/**"}, Allow: []string{"carol", "alice"}}, t0))
	must(t, p.AddRule(nil, Rule{Name: "tagged-docs", Refs: []string{"refs/tags/v*"}, Paths: []string{"docs/**", "*.md"}, Allow: []string{"bob", "carol"}, Threshold: 2}, t0))
	must(t, p.SignRoot(f.root.TUF))
	must(t, p.SignTargets(f.root.TUF))
	f.p = p
	return f
}

func encode(t testing.TB, p *Policy) (root, targets []byte) {
	t.Helper()
	r, tg, err := p.Encode()
	must(t, err)
	return r, tg
}

func TestNewPolicy(t *testing.T) {
	k := newTestKey(t, "root")
	now := time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.FixedZone("CEST", 2*3600))
	p, err := New(k.Pub, now)
	must(t, err)
	if p.Root.Signed.Version != 1 || p.Targets.Signed.Version != 1 {
		t.Fatalf("versions %d/%d, want 1/1", p.Root.Signed.Version, p.Targets.Signed.Version)
	}
	wantExp := now.Add(DefaultLifetime).UTC().Truncate(time.Second)
	if !p.Root.Signed.Expires.Equal(wantExp) || p.Root.Signed.Expires.Location() != time.UTC || !p.Targets.Signed.Expires.Equal(wantExp) {
		t.Fatalf("expires %v / %v, want %v UTC", p.Root.Signed.Expires, p.Targets.Signed.Expires, wantExp)
	}
	for _, role := range []string{metadata.ROOT, metadata.TARGETS} {
		keys, th := p.RoleKeys(role)
		if th != 1 || len(keys) != 1 || keys[0].ID != k.ID || keys[0].Fingerprint != k.FP {
			t.Fatalf("role %s: %d keys, threshold %d", role, len(keys), th)
		}
	}
	if keys, th := p.RoleKeys("snapshot"); keys != nil || th != 0 {
		t.Fatalf("RoleKeys(snapshot) = %v, %d", keys, th)
	}
	if len(p.Persons()) != 0 || len(p.Rules()) != 0 || p.Protected("refs/heads/main") {
		t.Fatal("new policy has persons or rules")
	}
	if len(p.Root.Signatures) != 0 || len(p.Targets.Signatures) != 0 {
		t.Fatal("new policy is signed")
	}
	if pub, ok := p.LookupKey(k.FP); !ok || !bytes.Equal(pub.Marshal(), k.Pub.Marshal()) {
		t.Fatal("LookupKey(root key) failed")
	}
	if _, ok := p.LookupPersonKey(k.FP); ok {
		t.Fatal("root key is a person key")
	}
	r, tg := encode(t, p)
	q, err := Parse(r, tg)
	must(t, err)
	r2, tg2 := encode(t, q)
	if !bytes.Equal(r, r2) || !bytes.Equal(tg, tg2) {
		t.Fatal("new policy does not round-trip")
	}
	if !bytes.Contains(r, []byte(`"x-git-secure-format":"git-secure-policy/1"`)) || !bytes.Contains(tg, []byte(`"x-git-secure-persons":{}`)) {
		t.Fatalf("encoding lacks the git-secure fields:\n%s\n%s", r, tg)
	}
}

func TestNewRejectsUnsupportedKey(t *testing.T) {
	if _, err := New(nil, t0); err == nil {
		t.Fatal("New(nil) accepted")
	}
}

// TestRoundTrip: a signed policy encodes, parses and re-encodes to the same
// bytes, with the same persons, rules, keys and valid signatures.
func TestRoundTrip(t *testing.T) {
	f := newFixture(t)
	r, tg := encode(t, f.p)
	q, err := Parse(r, tg)
	must(t, err)
	r2, tg2 := encode(t, q)
	if !bytes.Equal(r, r2) || !bytes.Equal(tg, tg2) {
		t.Fatalf("re-encoding differs:\n%s\n%s", r2, tg2)
	}
	if !reflect.DeepEqual(ruleSummary(q), ruleSummary(f.p)) || !reflect.DeepEqual(personSummary(q), personSummary(f.p)) {
		t.Fatal("persons or rules differ after parsing")
	}
	wantPersons := map[string][]string{
		"alice": slices.Sorted(slices.Values([]string{f.alice1.ID, f.alice2.ID})),
		"bob":   {f.bob.ID},
		"carol": {f.carol.ID},
	}
	if got := personSummary(q); !reflect.DeepEqual(got, wantPersons) {
		t.Fatalf("persons %v, want %v", got, wantPersons)
	}
	var names []string
	for _, x := range q.Persons() {
		names = append(names, x.Name)
	}
	if !slices.IsSorted(names) {
		t.Fatalf("Persons() not sorted: %v", names)
	}
	wantRules := []Rule{
		{Name: "main", Refs: []string{"refs/heads/main", "refs/heads/release/**"}, Allow: []string{"alice", "bob"}, Threshold: 2},
		{Name: "crypto", Paths: []string{"src/crypto/**"}, Allow: []string{"carol", "alice"}, Threshold: 1},
		{Name: "tagged-docs", Refs: []string{"refs/tags/v*"}, Paths: []string{"docs/**", "*.md"}, Allow: []string{"bob", "carol"}, Threshold: 2},
	}
	if got := ruleSummary(q); !reflect.DeepEqual(got, wantRules) {
		t.Fatalf("rules %+v, want %+v", got, wantRules)
	}
	// keyids of each rule are every key of every allowed person.
	for _, d := range q.Targets.Signed.Delegations.Roles {
		r, _ := q.Rule(d.Name)
		var want []string
		for _, name := range r.Allow {
			want = append(want, wantPersons[name]...)
		}
		if !sameSet(d.KeyIDs, want) || d.Terminating {
			t.Errorf("rule %s: keyids %v, want %v", d.Name, d.KeyIDs, want)
		}
	}
	// Signatures are valid TUF signatures by the root key.
	if err := q.Root.VerifyDelegate(metadata.ROOT, q.Root); err != nil {
		t.Fatalf("root signature: %v", err)
	}
	if err := q.Root.VerifyDelegate(metadata.TARGETS, q.Targets); err != nil {
		t.Fatalf("targets signature: %v", err)
	}
	if !HasSignature(q.Root, f.root.ID) || !HasSignature(q.Targets, f.root.ID) || HasSignature(q.Root, f.bob.ID) {
		t.Fatal("HasSignature")
	}
	// Key lookups.
	for _, k := range []*testKey{f.alice1, f.alice2, f.bob, f.carol} {
		if _, ok := q.LookupPersonKey(k.FP); !ok {
			t.Errorf("LookupPersonKey(%s) failed", k.Name)
		}
		if pub, ok := q.LookupKey(k.FP); !ok || !bytes.Equal(pub.Marshal(), k.Pub.Marshal()) {
			t.Errorf("LookupKey(%s) failed", k.Name)
		}
	}
	if _, ok := q.LookupKey(f.root.FP); !ok {
		t.Error("LookupKey(root) failed")
	}
	if _, ok := q.LookupPersonKey(f.root.FP); ok {
		t.Error("LookupPersonKey(root) succeeded")
	}
	if _, ok := q.LookupKey(newTestKey(t, "stranger").FP); ok {
		t.Error("LookupKey(stranger) succeeded")
	}
	a1, ok1 := q.PersonByFingerprint(f.alice1.FP)
	a2, ok2 := q.PersonByFingerprint(f.alice2.FP)
	if !ok1 || !ok2 || a1 != a2 || a1.Name != "alice" || len(a1.Keys) != 2 {
		t.Fatalf("alice's two keys: %v %v", a1, a2)
	}
	if _, ok := q.PersonByFingerprint(f.root.FP); ok {
		t.Error("PersonByFingerprint(root) succeeded")
	}
	if _, ok := q.Person("dave"); ok {
		t.Error("Person(dave) found")
	}
	if _, ok := q.Rule("nope"); ok {
		t.Error("Rule(nope) found")
	}
	// Clone is deep.
	c, err := q.Clone()
	must(t, err)
	must(t, c.RemoveRule(nil, "crypto", t0))
	if _, ok := q.Rule("crypto"); !ok {
		t.Fatal("editing a clone changed the original")
	}
}

// TestGolden pins the encoding of format version 1: the fixture must
// encode to exactly the stored files, and the stored files must parse. Run
// with -update after an intended change (there should be none in v1).
func TestGolden(t *testing.T) {
	f := newFixture(t)
	r, tg := encode(t, f.p)
	files := map[string][]byte{"golden-root.json": r, "golden-targets.json": tg}
	for name, data := range files {
		path := filepath.Join("testdata", name)
		if *updateGolden {
			must(t, os.WriteFile(path, data, 0o644))
			continue
		}
		want, err := os.ReadFile(path)
		must(t, err)
		if !bytes.Equal(data, want) {
			t.Errorf("%s changed: the fixture now encodes as\n%s", name, data)
		}
	}
	gr, err := os.ReadFile(filepath.Join("testdata", "golden-root.json"))
	must(t, err)
	gt, err := os.ReadFile(filepath.Join("testdata", "golden-targets.json"))
	must(t, err)
	p, err := Parse(gr, gt)
	must(t, err)
	if err := p.Root.VerifyDelegate(metadata.TARGETS, p.Targets); err != nil {
		t.Fatalf("golden targets signature: %v", err)
	}
}

func personSummary(p *Policy) map[string][]string {
	out := map[string][]string{}
	for _, x := range p.Persons() {
		for _, k := range x.Keys {
			out[x.Name] = append(out[x.Name], k.ID)
		}
		slices.Sort(out[x.Name])
	}
	return out
}

func ruleSummary(p *Policy) []Rule {
	var out []Rule
	for _, r := range p.Rules() {
		out = append(out, *r)
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// replaceOnce replaces the single occurrence of old in b.
func replaceOnce(t testing.TB, b []byte, old, new string) []byte {
	t.Helper()
	if n := bytes.Count(b, []byte(old)); n != 1 {
		t.Fatalf("test setup: %q occurs %d times in %s", old, n, b)
	}
	return bytes.Replace(b, []byte(old), []byte(new), 1)
}

// swapTopLevel re-orders {"signatures":…,"signed":…} as {"signed":…,"signatures":…}.
func swapTopLevel(t testing.TB, b []byte) []byte {
	t.Helper()
	var m struct {
		Signatures json.RawMessage `json:"signatures"`
		Signed     json.RawMessage `json:"signed"`
	}
	must(t, json.Unmarshal(b, &m))
	return []byte(`{"signed":` + string(m.Signed) + `,"signatures":` + string(m.Signatures) + `}`)
}

func persons(p *Policy) map[string]any {
	return p.Targets.Signed.UnrecognizedFields[fieldPersons].(map[string]any)
}

func rule(p *Policy, name string) *metadata.DelegatedRole {
	for i := range p.Targets.Signed.Delegations.Roles {
		if r := &p.Targets.Signed.Delegations.Roles[i]; r.Name == name {
			return r
		}
	}
	panic("no rule " + name)
}

// tufKeyOf converts a test key to a fresh go-tuf key.
func tufKeyOf(t testing.TB, k *testKey) *metadata.Key {
	t.Helper()
	mk, _, err := sign.TUFKey(k.Pub)
	must(t, err)
	return mk
}

// upperHexVariant is k's ed25519 key spelled in upper-case hex: the same
// public key under a different TUF key ID.
func upperHexVariant(t testing.TB, k *testKey) (*metadata.Key, string) {
	t.Helper()
	mk := tufKeyOf(t, k)
	v := &metadata.Key{Type: mk.Type, Scheme: mk.Scheme, Value: metadata.KeyVal{PublicKey: strings.ToUpper(mk.Value.PublicKey)}}
	id, err := v.ID()
	must(t, err)
	if id == k.ID {
		t.Fatal("test setup: variant has the same ID")
	}
	return v, id
}

type parseCase struct {
	name string
	// edit changes the decoded fixture before it is encoded.
	edit func(t *testing.T, f *fixture)
	// raw changes the encoded bytes.
	raw func(t *testing.T, f *fixture, root, targets []byte) ([]byte, []byte)
}

func parseCases() []parseCase {
	fakeID := strings.Repeat("ab", 32)
	rootRole := func(f *fixture) *metadata.Role { return f.p.Root.Signed.Roles[metadata.ROOT] }
	targetsRole := func(f *fixture) *metadata.Role { return f.p.Root.Signed.Roles[metadata.TARGETS] }
	return []parseCase{
		// Bytes: canonical JSON only.
		{name: "empty root", raw: func(_ *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) { return nil, tg }},
		{name: "empty targets", raw: func(_ *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) { return r, []byte{} }},
		{name: "null", raw: func(_ *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) { return []byte("null"), tg }},
		{name: "array", raw: func(_ *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) { return r, []byte("[]") }},
		{name: "empty object", raw: func(_ *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) { return []byte("{}"), tg }},
		{name: "files swapped", raw: func(_ *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) { return tg, r }},
		{name: "root twice", raw: func(_ *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) { return r, r }},
		{name: "trailing newline", raw: func(_ *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) { return append(r, '\n'), tg }},
		{name: "leading space", raw: func(_ *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) { return r, append([]byte(" "), tg...) }},
		{name: "BOM", raw: func(_ *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return append([]byte("\ufeff"), r...), tg
		}},
		{name: "pretty printed", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			var b bytes.Buffer
			must(t, json.Indent(&b, tg, "", "  "))
			return r, b.Bytes()
		}},
		{name: "space after colon", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return replaceOnce(t, r, `"_type":"root"`, `"_type": "root"`), tg
		}},
		{name: "top-level fields reordered", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return swapTopLevel(t, r), tg
		}},
		{name: "signed fields reordered", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return replaceOnce(t, r, `"_type":"root","consistent_snapshot":false`, `"consistent_snapshot":false,"_type":"root"`), tg
		}},
		{name: "escaped key", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return replaceOnce(t, r, `"_type":"root"`, `"\u005ftype":"root"`), tg
		}},
		{name: "escaped value", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return r, replaceOnce(t, tg, `"name":"main"`, `"name":"m\u0061in"`)
		}},
		{name: "version as float", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return r, replaceOnce(t, tg, `"version":1`, `"version":1.0`)
		}},
		{name: "version with exponent", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return r, replaceOnce(t, tg, `"version":1`, `"version":1e0`)
		}},
		{name: "key name case", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return r, replaceOnce(t, tg, `"version":1`, `"Version":1`)
		}},
		{name: "duplicate top-level key", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return replaceOnce(t, r, `{"signatures":`, `{"signatures":[],"signatures":`), tg
		}},
		{name: "duplicate key in signed", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return r, replaceOnce(t, tg, `"version":1`, `"version":1,"version":1`)
		}},
		{name: "duplicate person", raw: func(t *testing.T, f *fixture, r, tg []byte) ([]byte, []byte) {
			// encoding/json keeps the last alice; a different reader the first.
			return r, replaceOnce(t, tg, `"x-git-secure-persons":{`, `"x-git-secure-persons":{"alice":["`+f.bob.ID+`"],`)
		}},
		{name: "duplicate role", raw: func(t *testing.T, f *fixture, r, tg []byte) ([]byte, []byte) {
			return replaceOnce(t, r, `"roles":{`, `"roles":{"targets":{"keyids":["`+f.root.ID+`"],"threshold":1},`), tg
		}},
		{name: "unknown top-level field", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return append(bytes.TrimSuffix(r, []byte("}")), []byte(`,"zz":1}`)...), tg
		}},
		{name: "unknown top-level field in targets", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return r, append(bytes.TrimSuffix(tg, []byte("}")), []byte(`,"x-git-secure-format":"git-secure-policy/1"}`)...)
		}},
		{name: "trailing value", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return append(r, []byte("{}")...), tg
		}},
		{name: "truncated", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return r[:len(r)-1], tg
		}},
		{name: "invalid UTF-8", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return r, replaceOnce(t, tg, `"name":"main"`, "\"name\":\"ma\xffin\"")
		}},
		{name: "oversized root", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return append(r, bytes.Repeat([]byte(" "), MaxFileSize)...), tg
		}},
		{name: "oversized targets", raw: func(t *testing.T, _ *fixture, r, tg []byte) ([]byte, []byte) {
			return r, append(tg, bytes.Repeat([]byte(" "), MaxTargetsSize)...)
		}},
		{name: "oversized canonical targets", edit: func(t *testing.T, f *fixture) {
			// Canonical JSON just over 4 MiB: a rule with many long patterns.
			d := rule(f.p, "crypto")
			for i := 0; len(d.Paths)*400 < MaxTargetsSize+1000; i++ {
				d.Paths = append(d.Paths, fmt.Sprintf("file:%04d/%s", i, strings.Repeat("x", 480)))
			}
		}},

		// Signatures.
		{name: "duplicate signature", edit: func(t *testing.T, f *fixture) {
			f.p.Root.Signatures = append(f.p.Root.Signatures, f.p.Root.Signatures[0])
		}},
		{name: "signature with unknown field", edit: func(t *testing.T, f *fixture) {
			f.p.Targets.Signatures[0].UnrecognizedFields = map[string]any{"extra": "x"}
		}},

		// root.json structure.
		{name: "wrong type", edit: func(t *testing.T, f *fixture) { f.p.Root.Signed.Type = metadata.TARGETS }},
		{name: "root version 0", edit: func(t *testing.T, f *fixture) { f.p.Root.Signed.Version = 0 }},
		{name: "root version negative", edit: func(t *testing.T, f *fixture) { f.p.Root.Signed.Version = -1 }},
		{name: "targets version 0", edit: func(t *testing.T, f *fixture) { f.p.Targets.Signed.Version = 0 }},
		{name: "root without format", edit: func(t *testing.T, f *fixture) { f.p.Root.Signed.UnrecognizedFields = nil }},
		{name: "root format version 2", edit: func(t *testing.T, f *fixture) {
			f.p.Root.Signed.UnrecognizedFields[fieldFormat] = "git-secure-policy/2"
		}},
		{name: "root format not a string", edit: func(t *testing.T, f *fixture) {
			f.p.Root.Signed.UnrecognizedFields[fieldFormat] = 1
		}},
		{name: "root extension field", edit: func(t *testing.T, f *fixture) {
			f.p.Root.Signed.UnrecognizedFields["x-extra"] = true
		}},
		{name: "root persons field", edit: func(t *testing.T, f *fixture) {
			f.p.Root.Signed.UnrecognizedFields[fieldPersons] = map[string]any{}
		}},
		{name: "extra role snapshot", edit: func(t *testing.T, f *fixture) {
			f.p.Root.Signed.Roles[metadata.SNAPSHOT] = &metadata.Role{KeyIDs: []string{f.root.ID}, Threshold: 1}
		}},
		{name: "extra role timestamp", edit: func(t *testing.T, f *fixture) {
			f.p.Root.Signed.Roles[metadata.TIMESTAMP] = &metadata.Role{KeyIDs: []string{f.root.ID}, Threshold: 1}
		}},
		{name: "snapshot instead of targets", edit: func(t *testing.T, f *fixture) {
			f.p.Root.Signed.Roles[metadata.SNAPSHOT] = targetsRole(f)
			delete(f.p.Root.Signed.Roles, metadata.TARGETS)
		}},
		{name: "no targets role", edit: func(t *testing.T, f *fixture) { delete(f.p.Root.Signed.Roles, metadata.TARGETS) }},
		{name: "no root role", edit: func(t *testing.T, f *fixture) { delete(f.p.Root.Signed.Roles, metadata.ROOT) }},
		{name: "null root role", edit: func(t *testing.T, f *fixture) { f.p.Root.Signed.Roles[metadata.ROOT] = nil }},
		{name: "no roles", edit: func(t *testing.T, f *fixture) { f.p.Root.Signed.Roles = nil }},
		{name: "root threshold 0", edit: func(t *testing.T, f *fixture) { rootRole(f).Threshold = 0 }},
		{name: "root threshold negative", edit: func(t *testing.T, f *fixture) { rootRole(f).Threshold = -1 }},
		{name: "root threshold above keys", edit: func(t *testing.T, f *fixture) { rootRole(f).Threshold = 2 }},
		{name: "targets threshold 0", edit: func(t *testing.T, f *fixture) { targetsRole(f).Threshold = 0 }},
		{name: "targets threshold above keys", edit: func(t *testing.T, f *fixture) { targetsRole(f).Threshold = 2 }},
		{name: "role without keys", edit: func(t *testing.T, f *fixture) { targetsRole(f).KeyIDs = []string{} }},
		{name: "role with unknown key", edit: func(t *testing.T, f *fixture) { targetsRole(f).KeyIDs = []string{fakeID} }},
		{name: "role with repeated key", edit: func(t *testing.T, f *fixture) {
			rootRole(f).KeyIDs = []string{f.root.ID, f.root.ID}
			rootRole(f).Threshold = 2
		}},
		{name: "role with unknown field", edit: func(t *testing.T, f *fixture) {
			rootRole(f).UnrecognizedFields = map[string]any{"x": 1}
		}},
		{name: "root key stored under wrong ID", edit: func(t *testing.T, f *fixture) {
			k := f.p.Root.Signed.Keys[f.root.ID]
			delete(f.p.Root.Signed.Keys, f.root.ID)
			f.p.Root.Signed.Keys[fakeID] = k
			rootRole(f).KeyIDs = []string{fakeID}
			targetsRole(f).KeyIDs = []string{fakeID}
		}},
		{name: "root key stored under another key's ID", edit: func(t *testing.T, f *fixture) {
			f.p.Root.Signed.Keys[f.root.ID] = tufKeyOf(t, f.bob)
		}},
		{name: "root key no role uses", edit: func(t *testing.T, f *fixture) {
			f.p.Root.Signed.Keys[f.bob.ID] = tufKeyOf(t, f.bob)
		}},
		{name: "null root key", edit: func(t *testing.T, f *fixture) { f.p.Root.Signed.Keys[f.root.ID] = nil }},
		{name: "root key with unknown field", edit: func(t *testing.T, f *fixture) {
			f.p.Root.Signed.Keys[f.root.ID].UnrecognizedFields = map[string]any{"x": 1}
		}},
		{name: "root key value with unknown field", edit: func(t *testing.T, f *fixture) {
			f.p.Root.Signed.Keys[f.root.ID].Value.UnrecognizedFields = map[string]any{"private": "x"}
		}},
		{name: "root key unsupported type", edit: func(t *testing.T, f *fixture) {
			k := &metadata.Key{Type: "ecdsa-sha2-nistp384", Scheme: "ecdsa-sha2-nistp384", Value: metadata.KeyVal{PublicKey: "x"}}
			id, _ := k.ID()
			f.p.Root.Signed.Keys = map[string]*metadata.Key{id: k}
			rootRole(f).KeyIDs = []string{id}
			targetsRole(f).KeyIDs = []string{id}
		}},
		{name: "root key short ed25519", edit: func(t *testing.T, f *fixture) {
			k := &metadata.Key{Type: metadata.KeyTypeEd25519, Scheme: metadata.KeySchemeEd25519, Value: metadata.KeyVal{PublicKey: "abcd"}}
			id, _ := k.ID()
			f.p.Root.Signed.Keys = map[string]*metadata.Key{id: k}
			rootRole(f).KeyIDs = []string{id}
			targetsRole(f).KeyIDs = []string{id}
		}},
		{name: "root key ed25519 with ecdsa scheme", edit: func(t *testing.T, f *fixture) {
			k := tufKeyOf(t, f.root)
			k.Scheme = metadata.KeySchemeECDSA_SHA2_P256
			id, _ := k.ID()
			f.p.Root.Signed.Keys = map[string]*metadata.Key{id: k}
			rootRole(f).KeyIDs = []string{id}
			targetsRole(f).KeyIDs = []string{id}
		}},

		// targets.json structure.
		{name: "targets with a target", edit: func(t *testing.T, f *fixture) {
			f.p.Targets.Signed.Targets = map[string]*metadata.TargetFiles{"x": {Length: 1, Hashes: metadata.Hashes{"sha256": make([]byte, 32)}}}
		}},
		{name: "no delegations", edit: func(t *testing.T, f *fixture) { f.p.Targets.Signed.Delegations = nil }},
		{name: "succinct roles", edit: func(t *testing.T, f *fixture) {
			f.p.Targets.Signed.Delegations.Roles = nil
			f.p.Targets.Signed.Delegations.SuccinctRoles = &metadata.SuccinctRoles{KeyIDs: []string{}, Threshold: 1, BitLength: 1, NamePrefix: "x"}
		}},
		{name: "delegations unknown field", edit: func(t *testing.T, f *fixture) {
			f.p.Targets.Signed.Delegations.UnrecognizedFields = map[string]any{"x": 1}
		}},
		{name: "targets without format", edit: func(t *testing.T, f *fixture) {
			delete(f.p.Targets.Signed.UnrecognizedFields, fieldFormat)
		}},
		{name: "targets format version 2", edit: func(t *testing.T, f *fixture) {
			f.p.Targets.Signed.UnrecognizedFields[fieldFormat] = "git-secure-policy/2"
		}},
		{name: "targets unknown extension field", edit: func(t *testing.T, f *fixture) {
			f.p.Targets.Signed.UnrecognizedFields["x-git-secure-unknown"] = map[string]any{}
		}},
		{name: "no persons field", edit: func(t *testing.T, f *fixture) {
			delete(f.p.Targets.Signed.UnrecognizedFields, fieldPersons)
		}},
		{name: "persons not an object", edit: func(t *testing.T, f *fixture) {
			f.p.Targets.Signed.UnrecognizedFields[fieldPersons] = []any{"alice"}
		}},
		{name: "person key missing", edit: func(t *testing.T, f *fixture) {
			persons(f.p)["carol"] = []any{fakeID}
		}},
		{name: "person key missing from delegations", edit: func(t *testing.T, f *fixture) {
			delete(f.p.Targets.Signed.Delegations.Keys, f.carol.ID)
		}},
		{name: "person with no keys", edit: func(t *testing.T, f *fixture) { persons(f.p)["carol"] = []any{} }},
		{name: "person keys null", edit: func(t *testing.T, f *fixture) { persons(f.p)["carol"] = nil }},
		{name: "person key not a string", edit: func(t *testing.T, f *fixture) { persons(f.p)["carol"] = []any{1.0} }},
		{name: "person keys a string", edit: func(t *testing.T, f *fixture) { persons(f.p)["carol"] = f.carol.ID }},
		{name: "key owned by two persons", edit: func(t *testing.T, f *fixture) {
			persons(f.p)["bob"] = []any{f.bob.ID, f.carol.ID}
		}},
		{name: "key listed twice by one person", edit: func(t *testing.T, f *fixture) {
			persons(f.p)["carol"] = []any{f.carol.ID, f.carol.ID}
		}},
		{name: "key owned by nobody", edit: func(t *testing.T, f *fixture) {
			k := newTestKey(t, "dave")
			f.p.Targets.Signed.Delegations.Keys[k.ID] = tufKeyOf(t, k)
		}},
		{name: "person key stored under wrong ID", edit: func(t *testing.T, f *fixture) {
			ks := f.p.Targets.Signed.Delegations.Keys
			ks[fakeID] = ks[f.carol.ID]
			delete(ks, f.carol.ID)
			persons(f.p)["carol"] = []any{fakeID}
			for _, n := range []string{"crypto", "tagged-docs"} {
				d := rule(f.p, n)
				d.KeyIDs = slices.DeleteFunc(d.KeyIDs, func(id string) bool { return id == f.carol.ID })
				d.KeyIDs = append(d.KeyIDs, fakeID)
			}
		}},
		{name: "person key with unknown field", edit: func(t *testing.T, f *fixture) {
			f.p.Targets.Signed.Delegations.Keys[f.carol.ID].UnrecognizedFields = map[string]any{"x": 1}
		}},
		{name: "person name empty", edit: renamePerson("carol", "")},
		{name: "person name with space", edit: renamePerson("carol", "carol smith")},
		{name: "person name with slash", edit: renamePerson("carol", "carol/x")},
		{name: "person name with colon", edit: renamePerson("carol", "team:carol")},
		{name: "person name non-ASCII", edit: renamePerson("carol", "carolé")},
		{name: "person name too long", edit: renamePerson("carol", strings.Repeat("c", 65))},
		{name: "person name with newline", edit: renamePerson("carol", "carol\n")},

		// Rules.
		{name: "rule name empty", edit: renameRule("crypto", "")},
		{name: "rule name with space", edit: renameRule("crypto", "my rule")},
		{name: "rule name with slash", edit: renameRule("crypto", "a/b")},
		{name: "rule name non-ASCII", edit: renameRule("crypto", "crypté")},
		{name: "rule name too long", edit: renameRule("crypto", strings.Repeat("r", 65))},
		{name: "rule name with newline", edit: renameRule("crypto", "crypto\n")},
		{name: "rule defined twice", edit: renameRule("crypto", "main")},
		{name: "rule terminating", edit: func(t *testing.T, f *fixture) { rule(f.p, "crypto").Terminating = true }},
		{name: "rule path_hash_prefixes", edit: func(t *testing.T, f *fixture) {
			d := rule(f.p, "crypto")
			d.Paths, d.PathHashPrefixes = nil, []string{"ab"}
		}},
		{name: "rule unknown field", edit: func(t *testing.T, f *fixture) {
			rule(f.p, "crypto").UnrecognizedFields["x-git-secure-unknown"] = []any{}
		}},
		{name: "rule without allow", edit: func(t *testing.T, f *fixture) {
			delete(rule(f.p, "crypto").UnrecognizedFields, fieldAllow)
		}},
		{name: "rule allows nobody", edit: func(t *testing.T, f *fixture) {
			d := rule(f.p, "crypto")
			d.UnrecognizedFields[fieldAllow] = []any{}
			d.KeyIDs = []string{}
		}},
		{name: "rule allow not strings", edit: func(t *testing.T, f *fixture) {
			rule(f.p, "crypto").UnrecognizedFields[fieldAllow] = []any{1.0}
		}},
		{name: "rule allow a string", edit: func(t *testing.T, f *fixture) {
			rule(f.p, "crypto").UnrecognizedFields[fieldAllow] = "carol"
		}},
		{name: "rule allows unknown person", edit: func(t *testing.T, f *fixture) {
			rule(f.p, "crypto").UnrecognizedFields[fieldAllow] = []any{"carol", "alice", "mallory"}
		}},
		{name: "rule allows a team", edit: func(t *testing.T, f *fixture) {
			rule(f.p, "crypto").UnrecognizedFields[fieldAllow] = []any{"carol", "alice", "team:admins"}
		}},
		{name: "rule allows person twice", edit: func(t *testing.T, f *fixture) {
			rule(f.p, "crypto").UnrecognizedFields[fieldAllow] = []any{"carol", "alice", "carol"}
		}},
		{name: "rule keyids missing a key", edit: func(t *testing.T, f *fixture) {
			d := rule(f.p, "crypto")
			d.KeyIDs = slices.DeleteFunc(d.KeyIDs, func(id string) bool { return id == f.alice2.ID })
		}},
		{name: "rule keyids with extra key", edit: func(t *testing.T, f *fixture) {
			d := rule(f.p, "crypto")
			d.KeyIDs = append(d.KeyIDs, f.bob.ID)
		}},
		{name: "rule keyids with root key", edit: func(t *testing.T, f *fixture) {
			d := rule(f.p, "crypto")
			d.KeyIDs = append(d.KeyIDs, f.root.ID)
		}},
		{name: "rule keyids repeated", edit: func(t *testing.T, f *fixture) {
			d := rule(f.p, "crypto")
			d.KeyIDs = append(d.KeyIDs, f.carol.ID)
		}},
		{name: "rule keyids of other persons", edit: func(t *testing.T, f *fixture) {
			rule(f.p, "crypto").KeyIDs = []string{f.alice1.ID, f.alice2.ID, f.bob.ID}
		}},
		{name: "rule keyids empty", edit: func(t *testing.T, f *fixture) { rule(f.p, "crypto").KeyIDs = []string{} }},
		{name: "rule threshold 0", edit: func(t *testing.T, f *fixture) { rule(f.p, "crypto").Threshold = 0 }},
		{name: "rule threshold negative", edit: func(t *testing.T, f *fixture) { rule(f.p, "crypto").Threshold = -1 }},
		{name: "rule threshold above allowed", edit: func(t *testing.T, f *fixture) { rule(f.p, "crypto").Threshold = 3 }},
		{name: "rule threshold counts keys not persons", edit: func(t *testing.T, f *fixture) {
			// alice has two keys: three keys, but only two persons.
			rule(f.p, "crypto").Threshold = 3
		}},
		{name: "rule without patterns", edit: func(t *testing.T, f *fixture) { rule(f.p, "crypto").Paths = nil }},
		{name: "rule with empty patterns", edit: func(t *testing.T, f *fixture) { rule(f.p, "crypto").Paths = []string{} }},
		{name: "pattern without prefix", edit: func(t *testing.T, f *fixture) { rule(f.p, "crypto").Paths = []string{"src/crypto/**"} }},
		{name: "ref pattern without prefix", edit: func(t *testing.T, f *fixture) { rule(f.p, "main").Paths = []string{"refs/heads/main"} }},
		{name: "pattern with other prefix", edit: func(t *testing.T, f *fixture) { rule(f.p, "main").Paths = []string{"ref:refs/heads/main"} }},
		{name: "pattern with prefix in upper case", edit: func(t *testing.T, f *fixture) { rule(f.p, "main").Paths = []string{"GIT:refs/heads/main"} }},
		{name: "one bad pattern among good", edit: func(t *testing.T, f *fixture) {
			rule(f.p, "main").Paths = []string{"git:refs/heads/main", "refs/heads/dev"}
		}},
		{name: "empty ref pattern", edit: func(t *testing.T, f *fixture) { rule(f.p, "main").Paths = []string{"git:"} }},
		{name: "empty path pattern", edit: func(t *testing.T, f *fixture) { rule(f.p, "crypto").Paths = []string{"file:"} }},
		{name: "short ref pattern", edit: func(t *testing.T, f *fixture) { rule(f.p, "main").Paths = []string{"git:heads/main"} }},
		{name: "ref pattern on refs/secure", edit: func(t *testing.T, f *fixture) { rule(f.p, "main").Paths = []string{"git:refs/secure/rsl"} }},
		{name: "ref pattern with bracket", edit: func(t *testing.T, f *fixture) { rule(f.p, "main").Paths = []string{"git:refs/heads/[ab]"} }},
		{name: "ref pattern with dotdot", edit: func(t *testing.T, f *fixture) { rule(f.p, "main").Paths = []string{"git:refs/heads/../x"} }},
		{name: "absolute path pattern", edit: func(t *testing.T, f *fixture) { rule(f.p, "crypto").Paths = []string{"file:/src/crypto/**"} }},
		{name: "path pattern with dotdot", edit: func(t *testing.T, f *fixture) { rule(f.p, "crypto").Paths = []string{"file:src/../crypto"} }},
		{name: "path pattern with backslash", edit: func(t *testing.T, f *fixture) { rule(f.p, "crypto").Paths = []string{`file:src\crypto`} }},
		{name: "path pattern triple star", edit: func(t *testing.T, f *fixture) { rule(f.p, "crypto").Paths = []string{"file:src/***"} }},
		{name: "path pattern control character", edit: func(t *testing.T, f *fixture) { rule(f.p, "crypto").Paths = []string{"file:src/\x01"} }},
		{name: "path pattern too long", edit: func(t *testing.T, f *fixture) {
			rule(f.p, "crypto").Paths = []string{"file:" + strings.Repeat("a", MaxPatternLen+1)}
		}},
	}
}

func renamePerson(from, to string) func(*testing.T, *fixture) {
	return func(t *testing.T, f *fixture) {
		ps := persons(f.p)
		ps[to] = ps[from]
		delete(ps, from)
		for i := range f.p.Targets.Signed.Delegations.Roles {
			d := &f.p.Targets.Signed.Delegations.Roles[i]
			allow := d.UnrecognizedFields[fieldAllow].([]any)
			for j, x := range allow {
				if x == from {
					allow[j] = to
				}
			}
		}
	}
}

func renameRule(from, to string) func(*testing.T, *fixture) {
	return func(t *testing.T, f *fixture) { rule(f.p, from).Name = to }
}

func TestParseRejects(t *testing.T) {
	good := newFixture(t)
	goodRoot, goodTargets := encode(t, good.p)
	if _, err := Parse(goodRoot, goodTargets); err != nil {
		t.Fatalf("fixture does not parse: %v", err)
	}
	seen := map[string]bool{}
	for _, tc := range parseCases() {
		if seen[tc.name] {
			t.Fatalf("duplicate case %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if tc.edit != nil {
				tc.edit(t, f)
			}
			r, tg, err := f.p.Encode()
			if err != nil {
				t.Fatalf("test setup: encode: %v", err)
			}
			if tc.raw != nil {
				r, tg = tc.raw(t, f, r, tg)
			}
			if bytes.Equal(r, goodRoot) && bytes.Equal(tg, goodTargets) {
				t.Fatal("test setup: the case changes nothing")
			}
			p, err := Parse(r, tg)
			if err == nil {
				t.Fatalf("Parse accepted it:\n%s\n%s", r, tg)
			}
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			if p != nil {
				t.Fatal("Parse returned a policy with an error")
			}
			t.Logf("refused: %.300s", err)
		})
	}
}

// TestParseAcceptsVariants: changes that keep a policy valid.
func TestParseAcceptsVariants(t *testing.T) {
	tests := []struct {
		name string
		edit func(t *testing.T, f *fixture)
	}{
		{"no rules", func(t *testing.T, f *fixture) { f.p.Targets.Signed.Delegations.Roles = nil }},
		{"no signatures", func(t *testing.T, f *fixture) {
			f.p.Root.Signatures = []metadata.Signature{}
			f.p.Targets.Signatures = []metadata.Signature{}
		}},
		{"later versions", func(t *testing.T, f *fixture) {
			f.p.Root.Signed.Version = 7
			f.p.Targets.Signed.Version = 1 << 40
		}},
		{"rule keyids in any order", func(t *testing.T, f *fixture) {
			slices.Reverse(rule(f.p, "crypto").KeyIDs)
		}},
		{"rule name of 64 characters", renameRule("crypto", strings.Repeat("r", 64))},
		{"person name with dots", renamePerson("carol", "carol.o-brien_2")},
		{"separate root and rules keys", func(t *testing.T, f *fixture) {
			k := newTestKey(t, "rules")
			f.p.Root.Signed.Keys[k.ID] = tufKeyOf(t, k)
			f.p.Root.Signed.Roles[metadata.TARGETS].KeyIDs = []string{k.ID}
		}},
		{"person key also a root key", func(t *testing.T, f *fixture) {
			f.p.Root.Signed.Keys[f.bob.ID] = tufKeyOf(t, f.bob)
			f.p.Root.Signed.Roles[metadata.ROOT].KeyIDs = []string{f.root.ID, f.bob.ID}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			tt.edit(t, f)
			r, tg := encode(t, f.p)
			p, err := Parse(r, tg)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			r2, tg2 := encode(t, p)
			if !bytes.Equal(r, r2) || !bytes.Equal(tg, tg2) {
				t.Fatal("does not re-encode identically")
			}
		})
	}
}

// TestParseRejectsSameKeyUnderTwoIDs: one public key may be spelled in
// several ways (hex case for ed25519; PEM layout and the "ecdsa" alias type
// for ECDSA), each with its own TUF key ID. roleStatus in internal/verify
// counts signatures per key ID, so a root or rules role listing one key
// twice lets one key holder meet a threshold of two; two persons sharing a
// key make PersonByFingerprint depend on map order.
func TestParseRejectsSameKeyUnderTwoIDs(t *testing.T) {
	t.Run("root role", func(t *testing.T) {
		f := newFixture(t)
		k, id := upperHexVariant(t, f.root)
		f.p.Root.Signed.Keys[id] = k
		role := f.p.Root.Signed.Roles[metadata.ROOT]
		role.KeyIDs = append(role.KeyIDs, id)
		role.Threshold = 2
		r, tg := encode(t, f.p)
		if p, err := Parse(r, tg); err == nil {
			keys, th := p.RoleKeys(metadata.ROOT)
			t.Fatalf("Parse accepted a root role of %d keys (threshold %d) that are one key %s, %s: one holder meets the threshold",
				len(keys), th, keys[0].Fingerprint, keys[1].Fingerprint)
		} else if !errors.Is(err, ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
	})
	t.Run("two persons", func(t *testing.T) {
		f := newFixture(t)
		k, id := upperHexVariant(t, f.bob)
		f.p.Targets.Signed.Delegations.Keys[id] = k
		persons(f.p)["mallory"] = []any{id}
		r, tg := encode(t, f.p)
		if p, err := Parse(r, tg); err == nil {
			who, _ := p.PersonByFingerprint(f.bob.FP)
			t.Fatalf("Parse accepted bob's key as mallory's too; PersonByFingerprint(bob's key) = %s", who.Name)
		} else if !errors.Is(err, ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
	})
}

// TestParseRejectsSameECDSAKeyUnderTwoIDs: ECDSA keys have more spellings
// than ed25519 ones: the "ecdsa" type alias and PEM layout variants.
func TestParseRejectsSameECDSAKeyUnderTwoIDs(t *testing.T) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	pub, err := ssh.NewPublicKey(&priv.PublicKey)
	must(t, err)
	variants := []struct {
		name   string
		change func(k *metadata.Key)
	}{
		{"ecdsa type alias", func(k *metadata.Key) { k.Type = metadata.KeyTypeECDSA_SHA2_P256_COMPAT }},
		{"PEM without final newline", func(k *metadata.Key) { k.Value.PublicKey = strings.TrimSuffix(k.Value.PublicKey, "\n") }},
		{"PEM with CRLF", func(k *metadata.Key) { k.Value.PublicKey = strings.ReplaceAll(k.Value.PublicKey, "\n", "\r\n") }},
	}
	for _, v := range variants {
		for _, where := range []string{"other person", "same person", "rules role"} {
			t.Run(v.name+"/"+where, func(t *testing.T) {
				f := newFixture(t)
				must(t, f.p.AddPerson(nil, "erin", []ssh.PublicKey{pub}, t0))
				orig, origID, err := sign.TUFKey(pub)
				must(t, err)
				alt := &metadata.Key{Type: orig.Type, Scheme: orig.Scheme, Value: metadata.KeyVal{PublicKey: orig.Value.PublicKey}}
				v.change(alt)
				altID, err := alt.ID()
				must(t, err)
				if altID == origID {
					t.Fatal("test setup: same ID")
				}
				if _, err := newKey(alt); err != nil {
					t.Skipf("this spelling is refused on its own: %v", err)
				}
				switch where {
				case "other person":
					f.p.Targets.Signed.Delegations.Keys[altID] = alt
					persons(f.p)["mallory"] = []any{altID}
				case "same person":
					f.p.Targets.Signed.Delegations.Keys[altID] = alt
					persons(f.p)["erin"] = []any{origID, altID}
				case "rules role":
					f.p.Root.Signed.Keys[origID] = orig
					f.p.Root.Signed.Keys[altID] = alt
					role := f.p.Root.Signed.Roles[metadata.TARGETS]
					role.KeyIDs = append(role.KeyIDs, origID, altID)
					role.Threshold = 2
				}
				r, tg := encode(t, f.p)
				_, err = Parse(r, tg)
				if err == nil {
					t.Fatal("Parse accepted one ECDSA key under two key IDs")
				}
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("error %v does not wrap ErrMalformed", err)
				}
			})
		}
	}
}

// expiresForms are forms of signed.expires other than the one git-secure
// writes (2027-01-02T03:04:05Z for the fixtures): go-tuf's decoder reads
// most of them (RFC 3339), some encode back to the same bytes.
var expiresForms = []string{
	"2027-01-02T03:04:05+02:00",
	"2027-01-02T03:04:05-01:30",
	"2027-01-02T03:04:05+00:00",
	"2027-01-02T03:04:05-00:00",
	"2027-01-02T03:04:05.000Z",
	"2027-01-02T03:04:05.5Z",
	"2027-01-02T03:04:05.000000001Z",
	"2027-01-02T05:04:05.5+02:00",
	"2027-01-02T03:04:05z",
	"2027-01-02t03:04:05Z",
	"2027-01-02 03:04:05Z",
	"2027-01-02T03:04:05",
	"2027-1-2T03:04:05Z",
	"2027-02-30T03:04:05Z",
	"2027-01-02T24:00:00Z",
	"2027-01-02T03:04:60Z",
	"+2027-01-02T03:04:05Z",
	"10000-01-02T03:04:05Z",
	"",
}

// withExpires returns doc with its signed.expires written as v.
func withExpires(t testing.TB, doc []byte, v string) []byte {
	t.Helper()
	return replaceOnce(t, doc, `"expires":"2027-01-02T03:04:05Z"`, `"expires":"`+v+`"`)
}

// TestParseExpiresForm checks that root.json, targets.json and rule files
// accept signed.expires only as git-secure writes it (UTC, whole seconds,
// a Z), whatever the local zone, and that the error names the file and
// the field: when decoding it (Parse, ParseFiles) and before (CheckStaged,
// what a server checks of a staged change).
func TestParseExpiresForm(t *testing.T) {
	for _, zone := range []string{"UTC", "Etc/GMT-2", "Europe/London"} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Skipf("zone %s: %v", zone, err)
		}
		saved := time.Local
		time.Local = loc // +00:00 decodes into the local zone when it matches
		t.Cleanup(func() { time.Local = saved })
		d := newDeleg(t)
		d.p.Root.Signed.Expires = time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
		d.p.Targets.Signed.Expires = d.p.Root.Signed.Expires
		for _, f := range d.p.RuleFiles() {
			f.Meta.Signed.Expires = d.p.Root.Signed.Expires
		}
		r, tg := encode(t, d.p)
		files, err := d.p.EncodeRuleFiles()
		must(t, err)
		if _, err := ParseFiles(r, tg, files); err != nil {
			t.Fatalf("%s: the form git-secure writes: %v", zone, err)
		}
		repo := &memRepo{}
		for _, v := range expiresForms {
			for _, file := range []string{RootFile, TargetsFile, "rules/crypto.json"} {
				t.Run(zone+"/"+file+"/"+v, func(t *testing.T) {
					r, tg, fs := r, tg, maps.Clone(files)
					switch file {
					case RootFile:
						r = withExpires(t, r, v)
					case TargetsFile:
						tg = withExpires(t, tg, v)
					default:
						fs["crypto"] = withExpires(t, fs["crypto"], v)
					}
					want := fmt.Sprintf("policy: malformed metadata: %s: signed.expires must be a UTC time in whole seconds written YYYY-MM-DDThh:mm:ssZ, as git-secure writes it, not %q", file, v)
					_, err := ParseFiles(r, tg, fs)
					if !errors.Is(err, ErrMalformed) || err.Error() != want {
						t.Errorf("ParseFiles = %v\nwant %s", err, want)
					}
					err = CheckStaged(repo, saveFiles(t, repo, r, tg, fs))
					if !errors.Is(err, ErrMalformed) || err.Error() != want {
						t.Errorf("CheckStaged = %v\nwant %s", err, want)
					}
				})
			}
		}
	}
	// A value that is not a string at all, or none.
	f := newFixture(t)
	r, tg := encode(t, f.p)
	for doc, want := range map[string]string{
		string(replaceOnce(t, r, `"expires":"`+f.p.Root.Signed.Expires.Format(expiresLayout)+`"`, `"expires":1798859045`)): "root.json: signed.expires must be a UTC time in whole seconds written YYYY-MM-DDThh:mm:ssZ, as git-secure writes it, not 1798859045",
		string(replaceOnce(t, r, `"expires":"`+f.p.Root.Signed.Expires.Format(expiresLayout)+`",`, ``)):                    "root.json: signed.expires must be a UTC time in whole seconds written YYYY-MM-DDThh:mm:ssZ, as git-secure writes it; it is missing",
	} {
		if _, err := Parse([]byte(doc), tg); !errors.Is(err, ErrMalformed) || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("Parse = %v, want %q", err, want)
		}
	}
	// A decoded time (a policy built in memory, not read) in another zone
	// or with a fraction is refused as well, naming the file.
	for _, exp := range []time.Time{
		t0.Add(DefaultLifetime).In(time.FixedZone("", 3600)),
		t0.Add(DefaultLifetime).In(time.FixedZone("UTC", 0)),
		t0.Add(DefaultLifetime + time.Millisecond),
	} {
		for name, check := range map[string]func() error{
			"root": func() error {
				_, err := checkRoot(&metadata.RootType{Type: metadata.ROOT, Version: 1, Expires: exp}, &metadata.TargetsType{Type: metadata.TARGETS, Version: 1})
				return err
			},
			"targets": func() error {
				_, err := checkTargets(&metadata.TargetsType{Type: metadata.TARGETS, Version: 1, Expires: exp, Delegations: &metadata.Delegations{}})
				return err
			},
		} {
			want := fmt.Sprintf("%s.json: signed.expires must be a UTC time in whole seconds written YYYY-MM-DDThh:mm:ssZ, as git-secure writes it, not %q", name, exp.Format(time.RFC3339Nano))
			if err := check(); !errors.Is(err, ErrMalformed) || !strings.HasSuffix(err.Error(), want) {
				t.Errorf("%s expires %s: %v, want %q", name, exp.Format(time.RFC3339Nano), err, want)
			}
		}
	}
}

// TestRuleNamesPerSpec: docs/format.md gives rule names as
// [A-Za-z0-9][A-Za-z0-9._-]{0,63}: a leading letter or digit (so that no
// name looks like a flag or a hidden file).
func TestRuleNamesPerSpec(t *testing.T) {
	for _, name := range []string{"_ci", ".x", "-x"} {
		f := newFixture(t)
		renameRule("crypto", name)(t, f)
		r, tg := encode(t, f.p)
		if _, err := Parse(r, tg); err == nil {
			t.Errorf("rule name %q accepted", name)
		}
	}
}

// legacy returns p with the scope field of rule name removed, as a policy
// signed before path rules were scoped stores it.
func legacy(t testing.TB, p *Policy, name string) *Policy {
	t.Helper()
	c, err := p.Clone()
	must(t, err)
	for i := range c.Targets.Signed.Delegations.Roles {
		if d := &c.Targets.Signed.Delegations.Roles[i]; d.Name == name {
			if _, ok := d.UnrecognizedFields[fieldScope]; !ok {
				t.Fatalf("rule %s has no %s field", name, fieldScope)
			}
			delete(d.UnrecognizedFields, fieldScope)
		}
	}
	r, tg := encode(t, c)
	q, err := Parse(r, tg)
	must(t, err)
	return q
}

func TestRuleCovers(t *testing.T) {
	f := newFixture(t)
	p, err := New(f.root.Pub, t0)
	must(t, err)
	must(t, p.AddPerson(nil, "a", []ssh.PublicKey{f.alice1.Pub}, t0))
	must(t, p.AddPerson(nil, "b", []ssh.PublicKey{f.bob.Pub}, t0))
	must(t, p.AddRule(nil, Rule{Name: "r", Refs: []string{"refs/heads/main", "refs/tags/v*"}, Allow: []string{"a"}, Threshold: 1}, t0))
	must(t, p.AddRule(nil, Rule{Name: "p", Paths: []string{"src/crypto/**", "*.md", "keys/**"}, Allow: []string{"a"}, Threshold: 1}, t0))
	must(t, p.AddRule(nil, Rule{Name: "b", Refs: []string{"refs/heads/release/*"}, Paths: []string{"docs/**"}, Allow: []string{"a", "b"}, Threshold: 2}, t0))
	old := legacy(t, p, "p")
	get := func(p *Policy, name string) *Rule {
		r, ok := p.Rule(name)
		if !ok {
			t.Fatalf("no rule %s", name)
		}
		return r
	}
	refOnly, pathOnly, both, oldPath := get(p, "r"), get(p, "p"), get(p, "b"), get(old, "p")
	neither := &Rule{Name: "n"}
	if refOnly.IsPathRule() || !pathOnly.IsPathRule() || !both.IsPathRule() || neither.IsPathRule() {
		t.Fatal("IsPathRule")
	}
	if pathOnly.EveryRef || !oldPath.EveryRef || get(old, "r").EveryRef || get(old, "b").EveryRef {
		t.Fatal("EveryRef: only a stored path rule without ref patterns and without the scope field has it")
	}
	refs := []struct {
		ref                                    string
		refOnly, pathOnly, oldPath, both, none bool
	}{
		// A path rule without ref patterns covers the refs some rule's ref
		// pattern names; an older one every ref.
		{"refs/heads/main", true, true, true, false, false},
		{"refs/heads/main2", false, false, true, false, false},
		{"refs/heads/Main", false, false, true, false, false}, // refs are case-sensitive
		{"refs/heads/review/docs", false, false, true, false, false},
		{"refs/tags/v1.0", true, true, true, false, false},
		{"refs/tags/v1/x", false, false, true, false, false},
		{"refs/heads/release/1.0", false, true, true, true, false}, // named by rule b's ref pattern
		{"refs/heads/release/1.0/hotfix", false, false, true, false, false},
		{"refs/heads/RELEASE/1.0", false, false, true, false, false},
		{"refs/secure/policy", false, false, true, false, false},
		{"", false, false, true, false, false},
		// A forge's own refs: no rule covers them unless it names them.
		{"refs/pull/1/head", false, false, false, false, false},
		{"refs/pull/1/merge", false, false, false, false, false},
		{"refs/merge-requests/7/head", false, false, false, false, false},
		{"refs/changes/01/1/1", false, false, false, false, false},
		{"refs/keep-around/0123456789abcdef0123456789abcdef01234567", false, false, false, false, false},
		{"refs/pullx/1", false, false, true, false, false}, // not a forge namespace
	}
	for _, tt := range refs {
		for _, c := range []struct {
			what string
			pol  *Policy
			r    *Rule
			want bool
		}{
			{"ref-only rule", p, refOnly, tt.refOnly},
			{"path-only rule", p, pathOnly, tt.pathOnly},
			{"older path-only rule", old, oldPath, tt.oldPath},
			{"ref+path rule", p, both, tt.both},
			{"empty rule", p, neither, tt.none},
		} {
			if got := c.pol.Covers(c.r, tt.ref); got != c.want {
				t.Errorf("%s: Covers(%q) = %v, want %v", c.what, tt.ref, got, c.want)
			}
		}
	}
	paths := []struct {
		path                    string
		refOnly, pathOnly, both bool
	}{
		{"src/crypto/aes.go", false, true, false},
		{"SRC/Crypto/AES.go", false, true, false}, // ASCII case folded
		{"src/crypto", false, true, false},        // a file or symlink in the protected directory's place
		{"src/cryptography/x", false, false, false},
		{"README.md", false, true, false},
		{"README.MD", false, true, false},
		{"docs/README.md", false, false, true}, // *.md does not cross '/'
		{"docs/a/b.txt", false, false, true},
		{"Docs/x", false, false, true},
		{"refs/heads/main", false, false, false}, // ref patterns are not path patterns
		{"src/crypto/ä/x", false, true, false},
		{"SRC/CRYPTO/X", false, true, false},
		{"src/cryp\u0422o/x", false, false, false}, // Cyrillic Te is not t
		{"KEYS/id", false, true, false},
		{"\u212aeys/id", false, true, false}, // Kelvin sign is K to APFS and NTFS
	}
	for _, tt := range paths {
		if got := refOnly.CoversPath(tt.path); got != tt.refOnly {
			t.Errorf("ref-only rule CoversPath(%q) = %v", tt.path, got)
		}
		if got := pathOnly.CoversPath(tt.path); got != tt.pathOnly {
			t.Errorf("path-only rule CoversPath(%q) = %v", tt.path, got)
		}
		if got := both.CoversPath(tt.path); got != tt.both {
			t.Errorf("ref+path rule CoversPath(%q) = %v", tt.path, got)
		}
	}
	if !both.Allows("a") || !both.Allows("b") || both.Allows("c") || both.Allows("A") || neither.Allows("") {
		t.Error("Allows")
	}
}

func TestRulesFor(t *testing.T) {
	f := newFixture(t)
	withAll := f.p.Clone
	tests := []struct {
		name string
		pol  func(t *testing.T) *Policy
		ref  string
		want []string
	}{
		{"main", nil, "refs/heads/main", []string{"main", "crypto"}},
		{"release", nil, "refs/heads/release/1/2", []string{"main", "crypto"}},
		{"release tag", nil, "refs/tags/v2", []string{"crypto", "tagged-docs"}},
		// A review branch or another tag: no rule names it, so the path
		// rule without ref patterns does not judge it.
		{"review branch", nil, "refs/heads/dev", nil},
		{"other tag", nil, "refs/tags/x", nil},
		{"pull request", nil, "refs/pull/1/head", nil},
		// The older meaning, kept by a policy signed before.
		{"older rule, review branch", func(t *testing.T) *Policy { return legacy(t, f.p, "crypto") }, "refs/heads/dev", []string{"crypto"}},
		{"older rule, pull request", func(t *testing.T) *Policy { return legacy(t, f.p, "crypto") }, "refs/pull/1/head", nil},
		// The older meaning written out: --ref 'refs/**'.
		{"every ref written out", func(t *testing.T) *Policy {
			p, err := withAll()
			must(t, err)
			must(t, p.AddRule(nil, Rule{Name: "secrets", Refs: []string{"refs/**"}, Paths: []string{"secrets/**"}, Allow: []string{"carol"}}, t0))
			return p
		}, "refs/heads/dev", []string{"crypto", "secrets"}},
		{"every ref written out, pull request", func(t *testing.T) *Policy {
			p, err := withAll()
			must(t, err)
			must(t, p.AddRule(nil, Rule{Name: "secrets", Refs: []string{"refs/**"}, Paths: []string{"secrets/**"}, Allow: []string{"carol"}}, t0))
			return p
		}, "refs/pull/1/head", nil},
		{"pull requests named", func(t *testing.T) *Policy {
			p, err := withAll()
			must(t, err)
			must(t, p.AddRule(nil, Rule{Name: "prs", Refs: []string{"refs/pull/*/head"}, Allow: []string{"carol"}}, t0))
			return p
		}, "refs/pull/1/head", []string{"crypto", "prs"}},
		{"no rule names a ref", func(t *testing.T) *Policy {
			p, err := withAll()
			must(t, err)
			must(t, p.RemoveRule(nil, "main", t0))
			must(t, p.RemoveRule(nil, "tagged-docs", t0))
			return p
		}, "refs/heads/main", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := f.p
			if tt.pol != nil {
				p = tt.pol(t)
			}
			var got []string
			for _, r := range p.RulesFor(tt.ref) {
				got = append(got, r.Name)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("RulesFor(%s) = %v, want %v", tt.ref, got, tt.want)
			}
			if p.Protected(tt.ref) != (len(tt.want) > 0) {
				t.Errorf("Protected(%s) = %v", tt.ref, p.Protected(tt.ref))
			}
		})
	}
}

// TestPathScopeStoredForm checks that the scope a path rule was signed
// with survives edits of other parts of the policy, and that the field is
// refused where it has no meaning.
func TestPathScopeStoredForm(t *testing.T) {
	f := newFixture(t)
	if d := rule(f.p, "crypto"); d.UnrecognizedFields[fieldScope] != scopeProtected {
		t.Fatalf("new path rule stored without %s: %v", fieldScope, d.UnrecognizedFields)
	}
	if d := rule(f.p, "tagged-docs"); d.UnrecognizedFields[fieldScope] != nil {
		t.Fatalf("path rule with ref patterns stored with %s", fieldScope)
	}
	old := legacy(t, f.p, "crypto")
	must(t, old.AddPerson(nil, "dave", []ssh.PublicKey{newTestKey(t, "dave").Pub}, t0))
	must(t, old.RemoveRule(nil, "tagged-docs", t0))
	if r, _ := old.Rule("crypto"); !r.EveryRef || !old.Protected("refs/heads/dev") {
		t.Fatal("an edit changed the meaning of an older path rule")
	}
	if err := f.p.AddRule(nil, Rule{Name: "x", Paths: []string{"x/**"}, Allow: []string{"bob"}, EveryRef: true}, t0); !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), "--ref '**'") {
		t.Fatalf("AddRule with EveryRef: %v", err)
	}
	for _, tt := range []struct {
		name, rule string
		value      any
	}{
		{"on a rule with ref patterns", "main", scopeProtected},
		{"on a path rule with ref patterns", "tagged-docs", scopeProtected},
		{"unknown value", "crypto", "every-ref"},
		{"not a string", "crypto", []any{scopeProtected}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := f.p.Clone()
			must(t, err)
			rule(c, tt.rule).UnrecognizedFields[fieldScope] = tt.value
			r, tg := encode(t, c)
			if _, err := Parse(r, tg); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), fieldScope) {
				t.Fatalf("Parse: %v", err)
			}
		})
	}
}

// memRepo is a minimal object store for Load and Save.
type memRepo struct {
	objs map[gitrepo.Hash]memObj
}

type memObj struct {
	typ  string
	data []byte
}

func (m *memRepo) WriteObject(typ string, data []byte) (gitrepo.Hash, error) {
	d := sha256.Sum256(append([]byte(typ+"\x00"), data...))
	var h gitrepo.Hash
	copy(h[:], d[:])
	if m.objs == nil {
		m.objs = map[gitrepo.Hash]memObj{}
	}
	m.objs[h] = memObj{typ, bytes.Clone(data)}
	return h, nil
}

func (m *memRepo) WriteTree(entries []gitrepo.TreeEntry) (gitrepo.Hash, error) {
	raw, err := gitrepo.EncodeTree(entries)
	if err != nil {
		return gitrepo.ZeroHash, err
	}
	return m.WriteObject("tree", raw)
}

func (m *memRepo) ReadObject(h gitrepo.Hash, maxSize int64) (string, []byte, error) {
	o, ok := m.objs[h]
	if !ok {
		return "", nil, gitrepo.ErrNotFound
	}
	if int64(len(o.data)) > maxSize {
		return "", nil, gitrepo.ErrTooLarge
	}
	return o.typ, o.data, nil
}

func (m *memRepo) ReadTree(h gitrepo.Hash) ([]gitrepo.TreeEntry, error) {
	o, ok := m.objs[h]
	if !ok || o.typ != "tree" {
		return nil, gitrepo.ErrNotFound
	}
	return gitrepo.ParseTree(o.data)
}

func (m *memRepo) ReadCommit(h gitrepo.Hash) (*gitrepo.Commit, error) {
	o, ok := m.objs[h]
	if !ok || o.typ != "commit" {
		return nil, gitrepo.ErrNotFound
	}
	c, err := gitrepo.ParseCommit(o.data)
	if err != nil {
		return nil, err
	}
	c.Hash = h
	return c, nil
}

var testWho = gitrepo.Ident{Name: "Policy Test", Email: "policy@example.com", When: time.Unix(1_700_000_000, 0).UTC()}

func TestSaveLoad(t *testing.T) {
	type repo interface {
		Reader
		Writer
	}
	backends := map[string]repo{"mem": &memRepo{}}
	if !testing.Short() {
		sb := testutil.NewSandbox(t)
		g, err := gitrepo.OpenWithEnv(sb.InitRepo("repo", 1), sb.Environ())
		must(t, err)
		t.Cleanup(func() { _ = g.Close() })
		backends["git"] = g
	}
	for name, r := range backends {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			h1, err := Save(r, f.p, gitrepo.ZeroHash, testWho, "policy 1")
			must(t, err)
			must(t, f.p.RemoveRule(f.p, "crypto", t0))
			h2, err := Save(r, f.p, h1, testWho, "policy 2\n")
			must(t, err)
			c, err := r.ReadCommit(h2)
			must(t, err)
			if len(c.Parents) != 1 || c.Parents[0] != h1 || c.Message != "policy 2\n" || len(c.Signature) != 0 {
				t.Fatalf("policy commit %+v", c)
			}
			c1, err := r.ReadCommit(h1)
			must(t, err)
			if len(c1.Parents) != 0 || c1.Message != "policy 1\n" {
				t.Fatalf("first policy commit %+v", c1)
			}
			p, err := Load(r, h2)
			must(t, err)
			a, b := encode(t, p)
			wa, wb := encode(t, f.p)
			if !bytes.Equal(a, wa) || !bytes.Equal(b, wb) {
				t.Fatal("Load(Save(p)) differs from p")
			}
			if _, ok := p.Rule("crypto"); ok {
				t.Fatal("loaded the wrong policy")
			}
		})
	}
}

func TestLoadRejects(t *testing.T) {
	f := newFixture(t)
	root, targets := encode(t, f.p)
	r := &memRepo{}
	blob := func(data []byte) gitrepo.Hash {
		h, err := r.WriteObject("blob", data)
		must(t, err)
		return h
	}
	rh, th := blob(root), blob(targets)
	sub, err := r.WriteTree([]gitrepo.TreeEntry{{Mode: 0o100644, Name: "x", Hash: rh}})
	must(t, err)
	commitOf := func(entries ...gitrepo.TreeEntry) gitrepo.Hash {
		tree, err := r.WriteTree(entries)
		must(t, err)
		h, err := r.WriteObject("commit", gitrepo.EncodeCommit(tree, nil, testWho, testWho, "policy\n"))
		must(t, err)
		return h
	}
	ok := commitOf(gitrepo.TreeEntry{Mode: 0o100644, Name: RootFile, Hash: rh}, gitrepo.TreeEntry{Mode: 0o100644, Name: TargetsFile, Hash: th})
	if _, err := Load(r, ok); err != nil {
		t.Fatalf("valid policy commit: %v", err)
	}
	tests := []struct {
		name string
		h    gitrepo.Hash
	}{
		{"only root", commitOf(gitrepo.TreeEntry{Mode: 0o100644, Name: RootFile, Hash: rh})},
		{"extra file", commitOf(gitrepo.TreeEntry{Mode: 0o100644, Name: RootFile, Hash: rh}, gitrepo.TreeEntry{Mode: 0o100644, Name: TargetsFile, Hash: th}, gitrepo.TreeEntry{Mode: 0o100644, Name: "README", Hash: th})},
		{"executable", commitOf(gitrepo.TreeEntry{Mode: 0o100755, Name: RootFile, Hash: rh}, gitrepo.TreeEntry{Mode: 0o100644, Name: TargetsFile, Hash: th})},
		{"symlink", commitOf(gitrepo.TreeEntry{Mode: 0o120000, Name: RootFile, Hash: rh}, gitrepo.TreeEntry{Mode: 0o100644, Name: TargetsFile, Hash: th})},
		{"subtree", commitOf(gitrepo.TreeEntry{Mode: 0o040000, Name: RootFile, Hash: sub}, gitrepo.TreeEntry{Mode: 0o100644, Name: TargetsFile, Hash: th})},
		{"other names", commitOf(gitrepo.TreeEntry{Mode: 0o100644, Name: "root.JSON", Hash: rh}, gitrepo.TreeEntry{Mode: 0o100644, Name: TargetsFile, Hash: th})},
		{"files swapped", commitOf(gitrepo.TreeEntry{Mode: 0o100644, Name: RootFile, Hash: th}, gitrepo.TreeEntry{Mode: 0o100644, Name: TargetsFile, Hash: rh})},
		{"tree as blob", commitOf(gitrepo.TreeEntry{Mode: 0o100644, Name: RootFile, Hash: sub}, gitrepo.TreeEntry{Mode: 0o100644, Name: TargetsFile, Hash: th})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Load(r, tt.h)
			if err == nil || p != nil {
				t.Fatalf("Load accepted it: %v", err)
			}
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Load error %v does not wrap ErrMalformed", err)
			}
		})
	}
	if _, err := Load(r, blob([]byte("x"))); err == nil {
		t.Fatal("Load of a blob accepted")
	}
}

// expiresSeeds returns p's root.json r and targets.json tg, one of them
// with signed.expires in another form than git-secure's (checkExpires),
// signed or not.
func expiresSeeds(t testing.TB, p *Policy, r, tg []byte) [][2][]byte {
	var out [][2][]byte
	exp := `"expires":"` + p.Root.Signed.Expires.Format(expiresLayout) + `"`
	for _, v := range []string{"2027-01-02T03:04:05+02:00", "2027-01-02T03:04:05+00:00", "2027-01-02T03:04:05.000Z", "2027-01-02T03:04:05.5Z"} {
		out = append(out, [2][]byte{replaceOnce(t, r, exp, `"expires":"`+v+`"`), tg}, [2][]byte{r, replaceOnce(t, tg, exp, `"expires":"`+v+`"`)})
	}
	return out
}

// fuzzPolicySeeds returns valid (root, targets) pairs.
func fuzzPolicySeeds(t testing.TB) [][2][]byte {
	var out [][2][]byte
	f := newFixture(t)
	r, tg := encode(t, f.p)
	out = append(out, [2][]byte{r, tg})
	p, err := New(newTestKey(t, "fuzz").Pub, t0)
	must(t, err)
	r, tg = encode(t, p)
	out = append(out, [2][]byte{r, tg})
	gr, err1 := os.ReadFile(filepath.Join("testdata", "golden-root.json"))
	gt, err2 := os.ReadFile(filepath.Join("testdata", "golden-targets.json"))
	if err1 == nil && err2 == nil {
		out = append(out, [2][]byte{gr, gt})
	}
	// Forge apps and accounts, bound and with ids, and in the older forms
	// (the key line alone, the login alone).
	fp, err := New(newTestKey(t, "fuzz-root").Pub, t0)
	must(t, err)
	fq, err := fp.Clone()
	must(t, err)
	must(t, fq.AddPerson(fp, "bob", []ssh.PublicKey{newTestKey(t, "fuzz-bob").Pub}, t0))
	must(t, fq.AddPerson(fp, "carol", []ssh.PublicKey{newTestKey(t, "fuzz-carol").Pub}, t0))
	must(t, fq.SetForgeAccount(fp, "bob", "github", "bob-gh", "583231", t0))
	must(t, fq.SetForgeAccount(fp, "carol", "gitlab", "carol.gl", "", t0))
	must(t, fq.AddForgeApp(fp, "ci-bridge", newTestKey(t, "fuzz-bridge").Pub, "gitlab", "group/sub/widget", t0))
	must(t, fq.AddForgeApp(fp, "old-bridge", newTestKey(t, "fuzz-old").Pub, "github", "acme/widget", t0))
	r, tg = encode(t, fq)
	out = append(out, [2][]byte{r, tg})
	old := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(newTestKey(t, "fuzz-old").Pub)))
	out = append(out, [2][]byte{bytes.Replace(r, []byte(`{"forge":"github","key":"`+old+`","repository":"acme/widget"}`), []byte(`"`+old+`"`), 1), tg})
	// An older stored path rule (every ref, no scope field).
	if lt, err := os.ReadFile(filepath.Join("testdata", "legacy-path-rule-targets.json")); err1 == nil && err == nil {
		out = append(out, [2][]byte{gr, lt})
	}
	return out
}

// FuzzParse: whatever Parse accepts re-encodes to the same bytes and is a
// consistent policy that edits keep parseable. Inputs are multi-KB JSON, so
// minimizing each new input takes long: TestMain bounds it to 200 runs.
func FuzzParse(f *testing.F) {
	seeds := fuzzPolicySeeds(f)
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	// Near misses: a few of the rejected cases.
	fx := newFixture(f)
	r, tg := encode(f, fx.p)
	f.Add(r, append(tg, ' '))
	f.Add(bytes.Replace(r, []byte(`"threshold":1`), []byte(`"threshold":0`), 1), tg)
	f.Add(r, bytes.Replace(tg, []byte(`"git:`), []byte(`"`), 1))
	f.Add(r, bytes.Replace(tg, []byte(`"x-git-secure-persons":{`), []byte(`"x-git-secure-persons":{"a":["b"],`), 1))
	for _, s := range expiresSeeds(f, fx.p, r, tg) {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, root, targets []byte) {
		rIn, tIn := bytes.Clone(root), bytes.Clone(targets)
		p, err := Parse(root, targets)
		if !bytes.Equal(rIn, root) || !bytes.Equal(tIn, targets) {
			t.Fatal("Parse modified its input")
		}
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			if p != nil {
				t.Fatal("policy returned with an error")
			}
			return
		}
		r2, t2, err := p.Encode()
		if err != nil {
			t.Fatalf("Encode of a parsed policy: %v", err)
		}
		if !bytes.Equal(r2, root) || !bytes.Equal(t2, targets) {
			t.Fatalf("accepted input re-encodes differently:\n%s\n%s", r2, t2)
		}
		// Structural invariants of an accepted policy.
		for _, role := range []string{metadata.ROOT, metadata.TARGETS} {
			keys, th := p.RoleKeys(role)
			if th < 1 || th > len(keys) {
				t.Fatalf("role %s: threshold %d with %d keys", role, th, len(keys))
			}
			for _, k := range keys {
				if _, ok := p.LookupKey(k.Fingerprint); !ok {
					t.Fatalf("role key %s not found by fingerprint", k.Fingerprint)
				}
			}
		}
		for _, x := range p.Persons() {
			if len(x.Keys) == 0 {
				t.Fatalf("person %s without keys", x.Name)
			}
			for _, k := range x.Keys {
				if _, ok := p.LookupPersonKey(k.Fingerprint); !ok {
					t.Fatalf("person key %s not found", k.Fingerprint)
				}
			}
		}
		for _, r := range p.Rules() {
			if r.Threshold < 1 || r.Threshold > len(r.Allow) || len(r.Refs)+len(r.Paths) == 0 {
				t.Fatalf("rule %+v", r)
			}
			for _, name := range r.Allow {
				if _, ok := p.Person(name); !ok {
					t.Fatalf("rule %s allows unknown %s", r.Name, name)
				}
			}
			for _, pat := range r.Refs {
				if ValidRefPattern(pat) != nil {
					t.Fatalf("invalid ref pattern %q accepted", pat)
				}
			}
			for _, pat := range r.Paths {
				if ValidPathPattern(pat) != nil {
					t.Fatalf("invalid path pattern %q accepted", pat)
				}
			}
			_ = p.Covers(r, "refs/heads/main")
			_ = p.Covers(r, "refs/pull/1/head")
			_ = r.CoversPath("src/main.go")
		}
		// Edits on an accepted policy keep it parseable.
		c, err := p.Clone()
		if err != nil {
			t.Fatalf("Clone: %v", err)
		}
		if rules := c.Rules(); len(rules) > 0 {
			if err := c.RemoveRule(p, rules[0].Name, t0); err != nil {
				t.Fatalf("RemoveRule: %v", err)
			}
		}
		if err := c.SetRoleThreshold(p, metadata.ROOT, 1, t0); err != nil {
			t.Fatalf("SetRoleThreshold: %v", err)
		}
		if _, err := c.Clone(); err != nil {
			t.Fatalf("edited policy does not parse: %v", err)
		}
	})
}

func TestValidName(t *testing.T) {
	// The rule validName replaced: ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$.
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	cases := []string{
		"", "a", "A", "0", "alice", "team.dev_2-x", ".a", "_a", "-a", "a.", "a b", "a/b",
		"é", "a\x00", strings.Repeat("a", 64), strings.Repeat("a", 65), "a" + strings.Repeat("-", 63),
	}
	for _, c := range cases {
		if got, want := validName(c), re.MatchString(c); got != want {
			t.Errorf("validName(%q) = %v, want %v", c, got, want)
		}
	}
}

func FuzzValidName(f *testing.F) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	f.Add("alice")
	f.Add("a..-_")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validName(s), re.MatchString(s); got != want {
			t.Fatalf("validName(%q) = %v, want %v", s, got, want)
		}
	})
}

// TestLegacyPathRuleVector reads a policy signed before path rules were
// scoped (its path rule crypto has no ref patterns and no scope field):
// its signature still holds and the rule keeps its meaning, every ref
// except a forge's own.
func TestLegacyPathRuleVector(t *testing.T) {
	gr, err := os.ReadFile(filepath.Join("testdata", "golden-root.json"))
	must(t, err)
	gt, err := os.ReadFile(filepath.Join("testdata", "legacy-path-rule-targets.json"))
	must(t, err)
	p, err := Parse(gr, gt)
	must(t, err)
	if err := p.Root.VerifyDelegate(metadata.TARGETS, p.Targets); err != nil {
		t.Fatalf("legacy targets signature: %v", err)
	}
	r, ok := p.Rule("crypto")
	if !ok || !r.EveryRef {
		t.Fatalf("crypto: EveryRef not set on the older stored form")
	}
	for ref, want := range map[string]bool{"refs/heads/dev": true, "refs/heads/main": true, "refs/pull/1/head": false} {
		if got := p.Covers(r, ref); got != want {
			t.Errorf("Covers(crypto, %s) = %v, want %v", ref, got, want)
		}
	}
	again, tg := encode(t, p)
	if !bytes.Equal(again, gr) || !bytes.Equal(tg, gt) {
		t.Error("the older stored form does not re-encode to the same bytes")
	}
}
