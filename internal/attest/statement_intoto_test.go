package attest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	intoto "github.com/in-toto/attestation/go/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// The statement layer is written and checked without in-toto's protobuf
// types (intoto.go). These tests hold it to them: the in-toto library is a
// test dependency only.

// inTotoEncode is how statements were written with the in-toto types: the
// go/v1 Statement with a structpb predicate, validated, protojson, and
// compacted (protojson varies its whitespace on purpose).
func inTotoEncode(name, alg, digest, predicateType string, pred map[string]any) ([]byte, error) {
	ps, err := structpb.NewStruct(pred)
	if err != nil {
		return nil, err
	}
	st := &intoto.Statement{
		Type:          intoto.StatementTypeUri,
		Subject:       []*intoto.ResourceDescriptor{{Name: name, Digest: map[string]string{alg: digest}}},
		PredicateType: predicateType,
		Predicate:     ps,
	}
	if err := st.Validate(); err != nil {
		return nil, err
	}
	raw, err := protojson.Marshal(st)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// inTotoAccepts is how statements were checked with the in-toto types.
func inTotoAccepts(data []byte) error {
	var st intoto.Statement
	if err := protojson.Unmarshal(data, &st); err != nil {
		return err
	}
	return st.Validate()
}

// oddStrings are strings whose JSON quoting differs between encoders:
// control characters, quotes and backslashes, HTML characters (escaped by
// encoding/json, not by protojson), U+2028, U+FFFD, non-BMP runes.
var oddStrings = []string{
	"", "plain", "a\"b", `a\b`, "\x00\x01\x1f\x7f", "\b\f\n\r\t", "<script>&amp;</script>",
	"\u2028\u2029", "\ufffd", "é ü ß 日本", "😀", "a/b", "\u0080\u00ff",
}

func TestStatementEncodingMatchesInToto(t *testing.T) {
	preds := []map[string]any{
		{},
		{"formatVersion": FormatVersion, "ref": "refs/heads/main", "from": hx(1), "to": hx(2)},
		{"n": 0, "neg": -1, "big": int64(maxDurationMs), "min": int64(-maxDurationMs), "i32": -2147483648, "huge": int64(1) << 62},
		{"t": true, "f": false, "nil": nil, "empty": []any{}, "nested": map[string]any{"z": 1, "a": []any{"x", 2, map[string]any{}}}},
		{"B": 1, "a": 2, "_": 3, "aa": 4, "A": 5, "é": 6, "0": 7},
	}
	for i, s := range oddStrings {
		preds = append(preds, map[string]any{"s": s, s: i, "list": []any{s, s}})
	}
	for _, name := range append([]string{"refs/heads/main", "tree"}, oddStrings...) {
		for i, pred := range preds {
			want, werr := inTotoEncode(name, "gitCommit", hx(3), PredicateApproval, pred)
			got, gerr := encodeStatement(name, "gitCommit", hx(3), PredicateApproval, pred)
			if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) {
				t.Errorf("name %q pred %d:\n got %s (%v)\nwant %s (%v)", name, i, got, gerr, want, werr)
			}
		}
	}
	// What in-toto refuses is refused: bad digests, no predicate type,
	// invalid UTF-8 anywhere.
	for _, c := range []struct{ name, alg, digest, ptype string }{
		{"n", "gitCommit", hx(1)[:38], PredicateApproval},
		{"n", "gitCommit", hx(1) + "00", PredicateApproval},
		{"n", "gitTree", "zz" + hx(1)[2:], PredicateApproval},
		{"n", "gitCommit", hx(1), ""},
		{"\xff", "gitCommit", hx(1), PredicateApproval},
		{"n", "gitCommit", hx(1), "\xfe"},
	} {
		_, werr := inTotoEncode(c.name, c.alg, c.digest, c.ptype, map[string]any{})
		_, gerr := encodeStatement(c.name, c.alg, c.digest, c.ptype, map[string]any{})
		if werr == nil || !errors.Is(gerr, ErrMalformed) {
			t.Errorf("%+v: in-toto %v, ours %v; want both refused", c, werr, gerr)
		}
	}
	for _, pred := range []map[string]any{{"\xff": 1}, {"k": "\xc3"}, {"k": []any{"ok", "\xed\xa0\x80"}}} {
		_, werr := inTotoEncode("n", "gitCommit", hx(1), PredicateApproval, pred)
		_, gerr := encodeStatement("n", "gitCommit", hx(1), PredicateApproval, pred)
		if werr == nil || !errors.Is(gerr, ErrMalformed) {
			t.Errorf("%q: in-toto %v, ours %v; want both refused", pred, werr, gerr)
		}
	}
}

// TestStatementsMatchInToto: every statement type, as the package writes
// it, is what the in-toto types write.
func TestStatementsMatchInToto(t *testing.T) {
	st := time.Date(2026, 12, 6, 16, 0, 0, 123456789, time.FixedZone("x", 3600))
	for i, enc := range []func() ([]byte, error){
		Approval{Ref: "refs/heads/main", From: h(1), To: h(2)}.Statement,
		Approval{Ref: "refs/tags/v1", To: h(2), ToTree: h(3)}.Statement,
		TestRun{Tree: h(1), Commit: h(2), Command: oddStrings, ExitCode: -3, DurationMs: maxDurationMs,
			Tools: map[string]string{"go": "go1.26", "<&>": "\u2028"}, StartedAt: st}.Statement,
		ForgeReview{Ref: "refs/heads/main", From: h(1), To: h(2), Forge: "github", Account: "alice", Review: "1",
			PullRequest: "7", State: "approved", Repository: "o/r", AccountID: "42"}.Statement,
		Summary{Repository: "git+https://h/r.git", Ref: "refs/heads/main", Commit: h(1), Entry: 9, EntryID: h(2),
			RSLTip: h(3), PolicyCommit: h(4), RootVersion: 2, RulesVersion: 3, Verified: st, Version: "v1 <dev>"}.Statement,
	} {
		got, err := enc()
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		v, err := decodeStrict(got)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		top := v.(object)
		sub := top["subject"].([]any)[0].(object)
		var alg, digest string
		for k, d := range sub["digest"].(object) {
			alg, digest = k, d.(string)
		}
		// The predicate as structpb holds it: through encoding/json.
		var pred map[string]any
		if err := json.Unmarshal(mustMarshal(t, top["predicate"]), &pred); err != nil {
			t.Fatal(err)
		}
		want, err := inTotoEncode(sub["name"].(string), alg, digest, top["predicateType"].(string), pred)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%d:\n got %s\nwant %s", i, got, want)
		}
		if err := inTotoAccepts(got); err != nil {
			t.Errorf("%d: in-toto refuses %s: %v", i, got, err)
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseStatementAgreesWithInToto: a statement the strict reader accepts
// but protojson does not (an escaped lone surrogate, a number no float64
// holds) is refused, as it was when the in-toto types read it.
func TestParseStatementAgreesWithInToto(t *testing.T) {
	base, err := Summary{Repository: "git+https://h/r.git", Ref: "refs/heads/main", Commit: h(1), Entry: 9, EntryID: h(2),
		RSLTip: h(3), PolicyCommit: h(4), RootVersion: 2, RulesVersion: 3, Verified: time.Unix(9, 0), Version: "VERSION"}.Statement()
	if err != nil {
		t.Fatal(err)
	}
	withVersion := func(v string) []byte { return bytes.Replace(base, []byte(`"VERSION"`), []byte(v), 1) }
	for name, c := range map[string]struct {
		data []byte
		ok   bool
	}{
		"as written":                {base, true},
		"escaped pair":              {withVersion(`"\ud83d\ude00"`), true},
		"escaped pair, upper case":  {withVersion(`"\uD83D\uDE00"`), true},
		"escaped non-surrogate":     {withVersion(`"\u00e9\uffff\ufffd"`), true},
		"lone high surrogate":       {withVersion(`"\ud800"`), false},
		"lone high, then text":      {withVersion(`"\ud800abcdefgh"`), false},
		"lone low surrogate":        {withVersion(`"\udc00"`), false},
		"reversed pair":             {withVersion(`"\ude00\ud83d"`), false},
		"high then non-surrogate":   {withVersion(`"\ud83d\u0041"`), false},
		"high then escaped quote":   {withVersion(`"\ud83d\"xxxx"`), false},
		"surrogate in a key":        {bytes.Replace(base, []byte(`"git-secure"`), []byte(`"\udfff"`), 1), false},
		"escaped backslash then u":  {withVersion(`"\\ud800"`), true},
		"number":                    {withVersion(`1.5e300`), true},
		"number too large":          {withVersion(`1e400`), false},
		"negative number too large": {withVersion(`-1e400`), false},
		"tiny number":               {withVersion(`1e-400`), true},
		"long integer":              {withVersion(`123456789012345678901234567890`), true},
		"nested number too large":   {withVersion(`[{"x":[1,2e999]}]`), false},
	} {
		_, _, _, err := parseStatement(c.data, PredicateVSA, "gitCommit")
		ierr := inTotoAccepts(c.data)
		if (ierr == nil) != c.ok {
			t.Fatalf("%s: the case is wrong: in-toto says %v", name, ierr)
		}
		if c.ok && err != nil || !c.ok && !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %s: err = %v, want ok=%v", name, c.data, err, c.ok)
		}
		if !c.ok && err != nil && !strings.Contains(err.Error(), "statement:") {
			t.Errorf("%s: refused for another reason: %v", name, err)
		}
	}
}

// FuzzStatementInToto: whatever the package accepts, in-toto accepts, and
// every predicate it writes is what in-toto writes.
func FuzzStatementInToto(f *testing.F) {
	f.Add(fuzzApproval(f), "x", "y", int64(1))
	f.Add(fuzzTestRun(f), "\u2028<", "\x01", int64(-5))
	f.Add([]byte(`{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"n","digest":{"gitCommit":"`+hx(1)+`"}}],"predicateType":"`+PredicateVSA+`","predicate":{"formatVersion":1,"x":"\ud800"}}`), "\ufffd", "\\\"", int64(1)<<60)
	f.Fuzz(func(t *testing.T, data []byte, s1, s2 string, n int64) {
		for _, pt := range []struct{ ptype, alg string }{
			{PredicateApproval, "gitCommit"}, {PredicateTestRun, "gitTree"}, {PredicateForgeReview, "gitCommit"}, {PredicateVSA, "gitCommit"},
		} {
			if _, _, _, err := parseStatement(data, pt.ptype, pt.alg); err == nil {
				if ierr := inTotoAccepts(data); ierr != nil {
					t.Fatalf("accepted as %s, in-toto refuses: %v\n%s", pt.ptype, ierr, data)
				}
			}
		}
		pred := map[string]any{s1: s2, "n": n, s2: []any{s1, map[string]any{s1: n, "b": true}}}
		want, werr := inTotoEncode(s1, "gitCommit", hx(7), PredicateApproval, pred)
		got, gerr := encodeStatement(s1, "gitCommit", hx(7), PredicateApproval, pred)
		if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("encoding differs:\n got %s (%v)\nwant %s (%v)", got, gerr, want, werr)
		}
	})
}
