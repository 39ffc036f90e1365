package tufjson

import (
	"bytes"
	"crypto/ed25519"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/git-secure/git-secure/internal/strictjson"
)

// referenceRoot is what git-secure accepted before Root: go-tuf's
// decoder, and its encoding of the value must be the input.
func referenceRoot(data []byte) (*metadata.Metadata[metadata.RootType], bool) {
	m, err := (&metadata.Metadata[metadata.RootType]{}).FromBytes(data)
	if err != nil {
		return nil, false
	}
	again, err := m.ToBytes(false)
	if err != nil || !bytes.Equal(again, data) {
		return nil, false
	}
	return m, true
}

// agreesRoot fails t unless Root, when it accepts data, returns what the
// reference decoder returns; it reports whether Root accepted.
func agreesRoot(t testing.TB, data []byte) bool {
	t.Helper()
	got, ok := Root(data)
	if !ok {
		return false
	}
	want, wantOK := referenceRoot(data)
	if !wantOK {
		t.Fatalf("Root accepted what go-tuf does not read back as the same bytes:\n%s", data)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Root decoded\n%#v\ngo-tuf decoded\n%#v\nfrom\n%s", got, want, data)
	}
	return true
}

// sampleRoot returns root metadata in git-secure's shape: two ed25519
// keys, the four top-level roles (one with unknown fields of every JSON
// kind), unknown fields of the signed part, and signatures.
func sampleRoot(t testing.TB) []byte {
	t.Helper()
	m := metadata.Root(time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC))
	m.Signed.Version = 7
	m.Signed.UnrecognizedFields = map[string]any{
		"x-git-secure-format": "git-secure-policy/2",
		"x-nested":            map[string]any{"a": []any{nil, true, false, -3.5, 1e300, "é\u2028\"\\\n\t\x01<&>"}},
	}
	var ids []string
	for range 2 {
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
		m.Signed.Keys[id] = k
		ids = append(ids, id)
	}
	m.Signed.Roles[metadata.ROOT].KeyIDs = ids
	m.Signed.Roles[metadata.ROOT].Threshold = 2
	m.Signed.Roles[metadata.TARGETS].KeyIDs = ids[:1]
	m.Signed.Roles[metadata.TARGETS].UnrecognizedFields = map[string]any{"x-role": map[string]any{"k": []any{}}}
	m.Signed.Roles[metadata.TIMESTAMP].Threshold = 0
	m.Signatures = []metadata.Signature{{KeyID: ids[0], Signature: bytes.Repeat([]byte{0xab, 0x01}, 32)}, {KeyID: "b", Signature: []byte{}}}
	data, err := m.ToBytes(false)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestRootMatchesGoTUF(t *testing.T) {
	data := sampleRoot(t)
	if !agreesRoot(t, data) {
		t.Fatalf("Root refused go-tuf's own encoding:\n%s", data)
	}
	// A fresh root as go-tuf makes it: no keys, empty key lists.
	plain, err := metadata.Root(time.Date(2030, 1, 1, 0, 0, 0, 123, time.UTC)).ToBytes(false)
	if err != nil {
		t.Fatal(err)
	}
	if !agreesRoot(t, plain) {
		t.Fatalf("Root refused go-tuf's own encoding:\n%s", plain)
	}
	offset := bytes.Replace(data, []byte(`"expires":"2031-05-06T07:08:09Z"`), []byte(`"expires":"2031-05-06T09:08:09+02:00"`), 1)
	if bytes.Equal(offset, data) || !agreesRoot(t, offset) {
		t.Fatalf("Root refused an expiry with an offset:\n%s", offset)
	}
	cs := bytes.Replace(data, []byte(`"consistent_snapshot":true`), []byte(`"consistent_snapshot":false`), 1)
	if bytes.Equal(cs, data) || !agreesRoot(t, cs) {
		t.Fatalf("Root refused consistent_snapshot false:\n%s", cs)
	}
}

// TestRootRefuses: each document differs from go-tuf's encoding of what
// it decodes to, or holds what Root leaves to go-tuf; Root must refuse.
func TestRootRefuses(t *testing.T) {
	data := string(sampleRoot(t))
	sig := data[strings.Index(data, `"sig":"`)+7:]
	sig = sig[:strings.IndexByte(sig, '"')]
	for _, c := range []struct{ name, old, new string }{
		{"blank space", `"_type":"root"`, `"_type": "root"`},
		{"keys out of order", `"_type":"root","consistent_snapshot":true`, `"consistent_snapshot":true,"_type":"root"`},
		{"upper-case hex signature", sig, strings.ToUpper(sig)},
		{"repeated signature key ID", `"keyid":"b"`, `"keyid":"` + data[strings.Index(data, `"keyid":"`)+9:strings.Index(data, `"keyid":"`)+9+64] + `"`},
		{"version as a float", `"version":7`, `"version":7.0`},
		{"threshold with an exponent", `"threshold":2`, `"threshold":2e0`},
		{"negative zero threshold", `"threshold":0`, `"threshold":-0`},
		{"boolean as a string", `"consistent_snapshot":true`, `"consistent_snapshot":"true"`},
		{"escaped plain letter", `"root"`, `"r\u006fot"`},
		{"unescaped HTML", `\u003c`, `<`},
		{"field in another case", `"version":7`, `"version":7,"versioN":7`},
		{"unknown field folding to a known one", `"x-git-secure-format"`, `"ſpec_version":1,"x-git-secure-format"`},
		{"role field folding to a known one", `"x-role"`, `"THRESHOLD":1,"x-role"`},
		{"null keyids", `"keyids":[]`, `"keyids":null`},
		{"null keys", `"keys":{`, `"keys":null,"l":{`},
		{"null role", `"roles":{"root":{`, `"roles":{"r":null,"root":{`},
		{"missing threshold", `,"threshold":2`, ``},
		{"missing consistent_snapshot", `"consistent_snapshot":true,`, ``},
		{"wrong type", `"_type":"root"`, `"_type":"targets"`},
		{"unknown envelope field", `{"signatures"`, `{"a":1,"signatures"`},
		{"unknown signature field", `"keyid":"b"`, `"a":1,"keyid":"b"`},
		{"unknown key field", `"keytype"`, `"a":1,"keytype"`},
		{"private key value", `"public"`, `"private":"x","public"`},
		{"trailing data", `}}`, `}} `},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(data, c.old) {
				t.Fatalf("the sample holds no %q:\n%s", c.old, data)
			}
			bad := []byte(strings.Replace(data, c.old, c.new, 1))
			if agreesRoot(t, bad) {
				t.Fatalf("Root accepted\n%s", bad)
			}
		})
	}
}

// TestRootRefusesTruncated: no prefix of a valid document is read as one,
// nor panics.
func TestRootRefusesTruncated(t *testing.T) {
	data := sampleRoot(t)
	for n := range len(data) {
		if _, ok := Root(data[:n]); ok {
			t.Fatalf("Root accepted the first %d bytes", n)
		}
	}
}

// FuzzRoot: whatever Root accepts, go-tuf decodes to the same value and
// encodes back to the same bytes.
func FuzzRoot(f *testing.F) {
	f.Add(sampleRoot(f))
	f.Add([]byte(`{"signatures":[],"signed":{"_type":"root","consistent_snapshot":true,"expires":"2030-01-01T00:00:00Z","keys":{},"roles":{"root":{"keyids":[],"threshold":1}},"spec_version":"1.0.31","version":1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if strictjson.Check(data, 1<<20) != nil {
			return // Root's callers check first
		}
		agreesRoot(t, data)
	})
}
