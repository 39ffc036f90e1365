package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/secure-systems-lab/go-securesystemslib/cjson"
)

// canonicalCases are documents whose canonical form differs from the
// bytes in a way a one-pass rewrite could get wrong: escapes that
// encoding/json writes and cjson does not (<, >, &, control characters,
// U+2028), escaped quotes and backslashes, blank space, big integers.
var canonicalCases = []string{
	`{"a":"\u003c\u003e\u0026","b":"\n\t\u0001","c":"\u2028\u2029","d":"\"\\/"}`,
	` { "a" : [ 1 , -2 , 9223372036854775807 ] , "b" : { } , "c" : [ ] } `,
	`{"":null,"a":true,"b":false,"é":"\ud800"}`,
	`[{"keyid":"00","sig":"ab"},{"x":[[],[{}]]}]`,
	`"\u00e9\ud83d\ude00"`, `0`, `-0`, `[]`,
}

// TestCanonicalMatchesCJSON checks Canonical against what TUF signs:
// cjson.EncodeCanonical of the same value.
func TestCanonicalMatchesCJSON(t *testing.T) {
	for _, doc := range canonicalCases {
		compareCanonical(t, []byte(doc))
	}
}

// TestCanonicalRefuses checks the refusals, each for its reason.
func TestCanonicalRefuses(t *testing.T) {
	for doc, want := range map[string]string{
		`{"b":1,"a":2}`:           `key "a" follows "b"`,
		`{"a":{"y":1,"x":2}}`:     `key "x" follows "y"`,
		`{"a":1.5}`:               `1.5 is not an integer`,
		`[1e3]`:                   `1e3 is not an integer`,
		`[9223372036854775808]`:   `not an integer within 64 bits`,
		`{"a":1`:                  `not a JSON document`,
		`{"a":1} {}`:              `not a JSON document`,
		`{"\u0062":1,"\u0061":2}`: `key "a" follows "b"`,
	} {
		_, err := Canonical([]byte(doc))
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("Canonical(%s) = %v, want an error saying %q", doc, err, want)
		}
	}
}

func TestMembers(t *testing.T) {
	m, err := Members([]byte(` {"signatures" : [ {"keyid":"a"} ], "signed":{"x":"}"} } `))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || string(m["signatures"]) != `[ {"keyid":"a"} ]` || string(m["signed"]) != `{"x":"}"}` {
		t.Fatalf("Members = %q", m)
	}
	for _, doc := range []string{`[]`, `"x"`, `{"a":}`, ``} {
		if _, err := Members([]byte(doc)); !errors.Is(err, ErrInvalid) {
			t.Errorf("Members(%s) = %v, want ErrInvalid", doc, err)
		}
	}
}

func FuzzCanonical(f *testing.F) {
	for _, doc := range append(canonicalCases, fastCases...) {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareCanonical(t, data)
		if m, err := Members(data); err == nil {
			for k, v := range m {
				if !json.Valid(v) {
					t.Fatalf("%q: member %q is %q, not a value", data, k, v)
				}
			}
		}
	})
}

// compareCanonical checks that Canonical, on a document Check accepts,
// agrees with cjson whenever it succeeds, and that it succeeds on what
// encoding/json writes (how policy files are stored): a file signed
// today keeps verifying.
func compareCanonical(t *testing.T, data []byte) {
	t.Helper()
	if Check(data, 1<<20) != nil {
		return
	}
	want, werr := cjson.EncodeCanonical(json.RawMessage(data))
	got, err := Canonical(data)
	if err == nil && (werr != nil || !bytes.Equal(got, want)) {
		t.Fatalf("%q: Canonical %q, cjson %q (%v)", data, got, want, werr)
	}
	if werr != nil {
		return
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		t.Fatalf("%q: Check accepted what encoding/json cannot decode", data)
	}
	written, merr := json.Marshal(v)
	if merr != nil {
		t.Fatalf("%q: %v", data, merr)
	}
	got, err = Canonical(written)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%q written by encoding/json as %q: Canonical %q (%v), cjson %q", data, written, got, err, want)
	}
}
