package tufjson

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/git-secure/git-secure/internal/strictjson"
)

// reference is what git-secure accepted before Targets: go-tuf's decoder,
// and its encoding of the value must be the input.
func reference(data []byte) (*metadata.Metadata[metadata.TargetsType], bool) {
	m, err := (&metadata.Metadata[metadata.TargetsType]{}).FromBytes(data)
	if err != nil {
		return nil, false
	}
	again, err := m.ToBytes(false)
	if err != nil || !bytes.Equal(again, data) {
		return nil, false
	}
	return m, true
}

// agrees fails t unless Targets, when it accepts data, returns what the
// reference decoder returns; it reports whether Targets accepted.
func agrees(t testing.TB, data []byte) bool {
	t.Helper()
	got, ok := Targets(data)
	if !ok {
		return false
	}
	want, wantOK := reference(data)
	if !wantOK {
		t.Fatalf("Targets accepted what go-tuf does not read back as the same bytes:\n%s", data)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Targets decoded\n%#v\ngo-tuf decoded\n%#v\nfrom\n%s", got, want, data)
	}
	return true
}

// sample returns targets metadata in git-secure's shape: delegations with
// keys, roles with and without paths and with unknown fields of every
// JSON kind, unknown top-level fields, and signatures.
func sample(t testing.TB) []byte {
	t.Helper()
	m := metadata.Targets(time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC))
	m.Signed.Version = 42
	m.Signed.UnrecognizedFields = map[string]any{
		"x-git-secure-format":  "git-secure-policy/2",
		"x-git-secure-persons": map[string]any{"alice": []any{"k1"}, "bob <b&b>": []any{}},
		"x-git-secure-revoked": []any{map[string]any{"from": float64(17), "fp": "SHA256:x/y+z"}, nil, true, false, -3.5, 1e300},
		"x-git-secure-teams":   map[string]any{},
		"x-nested":             map[string]any{"a": map[string]any{"b": []any{[]any{}, "é\u2028\"\\\n\t\x01"}}},
	}
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := metadata.KeyFromPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	id, err := k.ID()
	if err != nil {
		t.Fatal(err)
	}
	m.Signed.Delegations = &metadata.Delegations{
		Keys: map[string]*metadata.Key{id: k, "other-id": {Type: "ssh-ed25519", Scheme: "x", Value: metadata.KeyVal{PublicKey: "AAAA<>"}}},
		Roles: []metadata.DelegatedRole{
			{Name: "main", KeyIDs: []string{id}, Threshold: 2, UnrecognizedFields: map[string]any{"x-git-secure-allow": []any{"alice", "bob"}, "x-git-secure-refs": []any{"refs/heads/main"}}},
			{Name: "src", KeyIDs: []string{}, Threshold: 1, Terminating: true, Paths: []string{"src/**", "a&b"}},
			{Name: "none", KeyIDs: []string{id, "other-id"}, Threshold: 0, Paths: []string{}},
		},
	}
	m.Signatures = []metadata.Signature{{KeyID: id, Signature: bytes.Repeat([]byte{0xab, 0x01}, 32)}, {KeyID: "b", Signature: []byte{}}}
	data, err := m.ToBytes(false)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestTargetsMatchesGoTUF(t *testing.T) {
	data := sample(t)
	if !agrees(t, data) {
		t.Fatalf("Targets refused go-tuf's own encoding:\n%s", data)
	}
	// Without delegations and unknown fields: what go-tuf writes for a
	// fresh targets role.
	plain, err := metadata.Targets(time.Date(2030, 1, 1, 0, 0, 0, 123, time.UTC)).ToBytes(false)
	if err != nil {
		t.Fatal(err)
	}
	if !agrees(t, plain) {
		t.Fatalf("Targets refused go-tuf's own encoding:\n%s", plain)
	}
	// An expiry with a zone offset: go-tuf writes it back as it is.
	offset := bytes.Replace(data, []byte(`"expires":"2031-05-06T07:08:09Z"`), []byte(`"expires":"2031-05-06T09:08:09+02:00"`), 1)
	if bytes.Equal(offset, data) || !agrees(t, offset) {
		t.Fatalf("Targets refused an expiry with an offset:\n%s", offset)
	}
}

// TestTargetsRefuses: each document differs from go-tuf's encoding of
// what it decodes to, or holds what git-secure refuses anyway; Targets
// must leave it to go-tuf's decoder.
func TestTargetsRefuses(t *testing.T) {
	data := string(sample(t))
	sig := data[strings.Index(data, `"sig":"`)+7:]
	sig = sig[:strings.IndexByte(sig, '"')]
	for _, c := range []struct{ name, old, new string }{
		{"blank space", `"_type":"targets"`, `"_type": "targets"`},
		{"keys out of order", `"_type":"targets","delegations"`, `"delegations"`},
		{"upper-case hex signature", sig, strings.ToUpper(sig)},
		{"odd-length signature", sig, sig[1:]},
		{"repeated signature key ID", `"keyid":"b"`, `"keyid":"` + data[strings.Index(data, `"keyid":"`)+9:strings.Index(data, `"keyid":"`)+9+64] + `"`},
		{"version as a float", `"version":42`, `"version":42.0`},
		{"version with an exponent", `"version":42`, `"version":4.2e1`},
		{"negative zero threshold", `"threshold":0`, `"threshold":-0`},
		{"integer float written long", `"from":17`, `"from":17.0`},
		{"float written with a capital E", `1e+300`, `1E+300`},
		{"escaped plain letter", `"main"`, `"m\u0061in"`},
		{"unescaped HTML", `\u003c`, `<`},
		{"escaped slash", `src/**`, `src\/**`},
		{"field in another case", `"terminating":true`, `"Terminating":true,"terminating":true`},
		{"unknown field folding to a known one", `"x-git-secure-allow"`, `"ſcheme":1,"x-git-secure-allow"`},
		{"role field folding to a known one", `"x-git-secure-allow"`, `"NAME":"x","x-git-secure-allow"`},
		{"null keyids", `"keyids":[]`, `"keyids":null`},
		{"null delegations", `"delegations":{`, `"delegations":null,"x":{`},
		{"targets named", `"targets":{}`, `"targets":{"a":{}}`},
		{"path hash prefixes", `"paths":[]`, `"path_hash_prefixes":[]`},
		{"missing threshold", `"threshold":2,`, ``},
		{"missing spec_version", `"spec_version"`, `"spec_versioN"`},
		{"wrong type", `"_type":"targets"`, `"_type":"root"`},
		{"unknown envelope field", `{"signatures"`, `{"a":1,"signatures"`},
		{"unknown signature field", `"keyid":"b"`, `"a":1,"keyid":"b"`},
		{"unknown key field", `"keytype"`, `"a":1,"keytype"`},
		{"unknown delegations field", `"keys":{`, `"a":1,"keys":{`},
		{"trailing data", `]}}`, `]}} `},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(data, c.old) {
				t.Fatalf("the sample holds no %q:\n%s", c.old, data)
			}
			bad := []byte(strings.Replace(data, c.old, c.new, 1))
			if agrees(t, bad) {
				t.Fatalf("Targets accepted\n%s", bad)
			}
		})
	}
}

// TestTargetsRefusesTruncated: no prefix of a valid document is read as
// one, nor panics.
func TestTargetsRefusesTruncated(t *testing.T) {
	data := sample(t)
	for n := range len(data) {
		if _, ok := Targets(data[:n]); ok {
			t.Fatalf("Targets accepted the first %d bytes", n)
		}
	}
}

func TestLowerHex(t *testing.T) {
	if got := lowerHex("0aF9"); got != "0af9" {
		t.Fatalf("lowerHex = %q", got)
	}
	if hex.EncodeToString([]byte{0xAB}) != lowerHex("AB") {
		t.Fatal("lowerHex disagrees with hex.EncodeToString")
	}
}

// FuzzTargets: whatever Targets accepts, go-tuf decodes to the same
// value and encodes back to the same bytes.
func FuzzTargets(f *testing.F) {
	f.Add(sample(f))
	f.Add([]byte(`{"signatures":[],"signed":{"_type":"targets","expires":"2030-01-01T00:00:00Z","spec_version":"1.0.31","targets":{},"version":1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if strictjson.Check(data, 1<<20) != nil {
			return // Targets' callers check first
		}
		agrees(t, data)
	})
}
