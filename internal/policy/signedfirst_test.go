package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/strictjson"
)

// TestParseSignedAccepts checks that a policy signed as git-secure signs
// today reads the same through ParseSigned as through ParseFiles, with or
// without the previous policy, and through LoadSigned.
func TestParseSignedAccepts(t *testing.T) {
	f := newFixture(t)
	r, tg := encode(t, f.p)
	for _, prev := range []*Policy{nil, f.p} {
		p, err := ParseSigned(prev, r, tg, nil)
		must(t, err)
		a, b := encode(t, p)
		if !bytes.Equal(a, r) || !bytes.Equal(b, tg) {
			t.Fatal("ParseSigned read another policy")
		}
	}
	repo := &memRepo{}
	h, err := Save(repo, f.p, gitrepo.ZeroHash, testWho, "policy 1")
	must(t, err)
	if _, err := LoadSigned(repo, h, f.p); err != nil {
		t.Fatal(err)
	}
}

// TestParseSignedRefusesBeforeDecoding checks the order: a targets.json
// whose signatures do not cover it is refused for its signatures, even
// when decoding would have refused it for another reason (go-tuf cannot
// read its expiry; a hostile one of many small values would have cost
// 150 MB to decode: BenchmarkRefuseHostileTargets).
func TestParseSignedRefusesBeforeDecoding(t *testing.T) {
	f := newFixture(t)
	r, tg := encode(t, f.p)
	for name, bad := range map[string][]byte{
		"bad expiry": replaceOnce(t, tg, `"expires":"`, `"expires":"not a time `),
		"hostile":    hostileTargetsWithin(t, tg, "0"),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseFiles(r, bad, nil); err == nil || errors.Is(err, ErrUnsigned) {
				t.Fatalf("ParseFiles = %v, want a decoding error", err)
			}
			_, err := ParseSigned(nil, r, bad, nil)
			want := "targets.json: rules: 0 of 1 signatures (threshold 1), checked before decoding it; not yet signed by: " + f.root.FP
			if !errors.Is(err, ErrUnsigned) || !strings.Contains(err.Error(), want) {
				t.Fatalf("ParseSigned = %v, want %q", err, want)
			}
		})
	}
}

// TestParseSignedRefusesRoot checks root.json's two thresholds: a root
// that replaces prev's must carry prev's root keys (checked before it is
// decoded), and every root its own.
func TestParseSignedRefusesRoot(t *testing.T) {
	f := newFixture(t)
	other := newTestKey(t, "mallory")
	q, err := New(other.Pub, t0)
	must(t, err)
	must(t, q.SignRoot(other.TUF))
	must(t, q.SignTargets(other.TUF))
	r, tg := encode(t, q)
	if _, err := ParseSigned(nil, r, tg, nil); err != nil {
		t.Fatalf("a self-signed first policy: %v", err)
	}
	_, err = ParseSigned(f.p, replaceOnce(t, r, `"expires":"`, `"expires":"not a time `), tg, nil)
	want := "root.json: root (old keys): 0 of 1 signatures (threshold 1), checked before decoding it; not yet signed by: " + f.root.FP
	if !errors.Is(err, ErrUnsigned) || !strings.Contains(err.Error(), want) {
		t.Fatalf("ParseSigned(another root) = %v, want %q", err, want)
	}
	must(t, q.SignRoot(f.root.TUF)) // the old key signs; the new one no longer has
	q.Root.Signatures = q.Root.Signatures[1:]
	r, _ = encode(t, q)
	_, err = ParseSigned(f.p, r, tg, nil)
	want = "root.json: root: 0 of 1 signatures (threshold 1), checked before decoding it; not yet signed by: " + other.FP
	if !errors.Is(err, ErrUnsigned) || !strings.Contains(err.Error(), want) {
		t.Fatalf("ParseSigned(root without its own keys) = %v, want %q", err, want)
	}
}

// TestParseSignedRefusesFirstRootBeforeDecoding checks that a first
// root.json (no previous root vouches for it) is refused for its own
// signatures before it is decoded, its keys read from its raw signed
// part: a root whose signature no longer covers it is refused as unsigned
// even when decoding would have refused it for another reason (go-tuf
// cannot read its expiry) or cost far more (BenchmarkRefuseHostileRoot),
// and a root role or key that checkRoot would refuse is refused as
// malformed before decoding.
func TestParseSignedRefusesFirstRootBeforeDecoding(t *testing.T) {
	f := newFixture(t)
	r, tg := encode(t, f.p)
	want := "root.json: root: 0 of 1 signatures (threshold 1), checked before decoding it; not yet signed by: " + f.root.FP
	for name, bad := range map[string][]byte{
		"bad expiry": replaceOnce(t, r, `"expires":"`, `"expires":"not a time `),
		"hostile":    paddedWithin(t, r, "0", MaxFileSize),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseFiles(bad, tg, nil); err == nil || errors.Is(err, ErrUnsigned) {
				t.Fatalf("ParseFiles = %v, want a decoding error", err)
			}
			_, err := ParseSigned(nil, bad, tg, nil)
			if !errors.Is(err, ErrUnsigned) || !strings.Contains(err.Error(), want) {
				t.Fatalf("ParseSigned = %v, want %q", err, want)
			}
		})
	}
	mallory := newTestKey(t, "mallory")
	for name, c := range map[string]struct {
		bad  []byte
		want string
	}{
		"hostile without roles": {hostileWithin(t, r, "0", MaxFileSize), "root role, read before decoding: signed must hold roles and keys"},
		"threshold 0": {replaceOnce(t, r, `"root":{"keyids":["`+f.root.ID+`"],"threshold":1}`, `"root":{"keyids":["`+f.root.ID+`"],"threshold":0}`),
			"root role, read before decoding: threshold 0 with 1 keys"},
		"threshold over the keys": {replaceOnce(t, r, `"root":{"keyids":["`+f.root.ID+`"],"threshold":1}`, `"root":{"keyids":["`+f.root.ID+`"],"threshold":2}`),
			"root role, read before decoding: threshold 2 with 1 keys"},
		"key twice": {replaceOnce(t, r, `"root":{"keyids":["`+f.root.ID+`"],"threshold":1}`, `"root":{"keyids":["`+f.root.ID+`","`+f.root.ID+`"],"threshold":1}`),
			"root role, read before decoding: unknown or repeated key " + f.root.ID},
		"unknown key": {replaceOnce(t, r, `"root":{"keyids":["`+f.root.ID+`"],"threshold":1}`, `"root":{"keyids":["`+mallory.ID+`"],"threshold":1}`),
			"root role, read before decoding: unknown or repeated key " + mallory.ID},
		"unknown role field": {replaceOnce(t, r, `"root":{"keyids":["`+f.root.ID+`"],"threshold":1}`, `"root":{"keyids":["`+f.root.ID+`"],"threshold":1,"x":1}`),
			"root role, read before decoding: roles.root must hold exactly keyids and threshold"},
		"no root role": {replaceOnce(t, r, `"root":{"keyids":["`+f.root.ID+`"],"threshold":1}`, `"rooT":{"keyids":["`+f.root.ID+`"],"threshold":1}`),
			"root role, read before decoding: roles.root: "},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseSigned(nil, c.bad, tg, nil)
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ParseSigned = %v, want %q", err, c.want)
			}
		})
	}
	// Mallory's key stored under the root key's ID.
	rk, _, err := sign.TUFKey(f.root.Pub)
	must(t, err)
	mk, _, err := sign.TUFKey(mallory.Pub)
	must(t, err)
	rj, err := json.Marshal(rk)
	must(t, err)
	mj, err := json.Marshal(mk)
	must(t, err)
	_, err = ParseSigned(nil, replaceOnce(t, r, string(rj), string(mj)), tg, nil)
	want = "root role, read before decoding: key stored as " + f.root.ID + " has ID " + mallory.ID
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), want) {
		t.Fatalf("ParseSigned(a key under another ID) = %v, want %q", err, want)
	}
}

// TestParseSignedRefusesNonCanonical checks that a signed part not in
// canonical key order is refused as such before any signature counts:
// its signatures could only cover another ordering of its bytes.
func TestParseSignedRefusesNonCanonical(t *testing.T) {
	f := newFixture(t)
	r, tg := encode(t, f.p)
	bad := replaceOnce(t, tg, `"version":1,`, ``)
	bad = replaceOnce(t, bad, `"signed":{`, `"signed":{"version":1,`)
	_, err := ParseSigned(nil, r, bad, nil)
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "targets.json is not in canonical form") {
		t.Fatalf("ParseSigned = %v, want a refusal of the key order", err)
	}
	_, err = ParseSigned(nil, r, []byte(`{"signatures":[],"signed":{},"x":1}`), nil)
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "must hold exactly signed and signatures") {
		t.Fatalf("ParseSigned = %v, want a refusal of the extra member", err)
	}
}

// hostileTargetsWithin returns tg's signatures over a signed part whose
// unknown field holds arrays of copies of v, each within maxItems,
// MaxTargetsSize bytes in all: strictjson.CheckItems lets it through.
func hostileTargetsWithin(t testing.TB, tg []byte, v string) []byte {
	t.Helper()
	return hostileWithin(t, tg, v, MaxTargetsSize)
}

// hostileWithin is hostileTargetsWithin for any metadata file doc, limit
// bytes in all.
func hostileWithin(t testing.TB, tg []byte, v string, limit int) []byte {
	t.Helper()
	i := bytes.Index(tg, []byte(`"signed":{`))
	if i < 0 {
		t.Fatal("no signed part")
	}
	head := append(append([]byte{}, tg[:i]...), `"signed":{"x-pad":[[`...)
	tail := []byte(`]]}}`)
	out := head
	for n := 0; len(out)+len(v)+3+len(tail) <= limit; n++ {
		switch {
		case n == 0:
		case n%maxItems == 0:
			out = append(out, "],["...)
		default:
			out = append(out, ',')
		}
		out = append(out, v...)
	}
	out = append(out, tail...)
	if err := strictjson.CheckItems(out, limit, maxItems); err != nil {
		t.Fatalf("hostile file refused by strictjson already: %v", err)
	}
	return out
}

// FuzzParseSigned: ParseSigned (signatures over the raw signed bytes,
// then decoding) agrees with ParseFiles followed by go-tuf's own
// signature check: what one accepts the other does, as the same policy.
// New inputs are minimized for 200 runs (TestMain).
func FuzzParseSigned(f *testing.F) {
	fx := newFixture(f)
	r, tg := encode(f, fx.p)
	f.Add(r, tg)
	f.Add(r, replaceOnce(f, tg, `"version":1,`, `"version":2,`))
	f.Add(r, replaceOnce(f, tg, `"signed":{`, `"signed":{"version":1,`))
	for _, s := range fuzzPolicySeeds(f) {
		f.Add(s[0], s[1])
	}
	for _, s := range expiresSeeds(f, fx.p, r, tg) {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, root, targets []byte) { checkParseSigned(t, root, targets) })
}

// checkParseSigned is FuzzParseSigned's body.
func checkParseSigned(t testing.TB, root, targets []byte) {
	p, err := ParseSigned(nil, root, targets, nil)
	if err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnsigned) {
		t.Fatalf("error %v wraps neither ErrMalformed nor ErrUnsigned", err)
	}
	q, qerr := ParseFiles(root, targets, nil)
	if qerr == nil {
		qerr = q.Root.VerifyDelegate(metadata.ROOT, q.Root)
	}
	if qerr == nil {
		qerr = q.Root.VerifyDelegate(metadata.TARGETS, q.Targets)
	}
	if (err == nil) != (qerr == nil) {
		t.Fatalf("ParseSigned: %v; ParseFiles and go-tuf: %v", err, qerr)
	}
	if err != nil {
		return
	}
	a, b := encode(t, p)
	if !bytes.Equal(a, root) || !bytes.Equal(b, targets) {
		t.Fatal("ParseSigned accepted what re-encodes differently")
	}
}

// TestParseSignedRuleFiles checks that rule files are read in the order
// they are delegated, each refused for its signatures before it is
// decoded: a file whose delegation's signers did not sign it is refused
// as such even when decoding would have refused it for another reason,
// and a file below it is never reached.
func TestParseSignedRuleFiles(t *testing.T) {
	d := newDeleg(t)
	r, tg := encode(t, d.p)
	files, err := d.p.EncodeRuleFiles()
	must(t, err)
	if _, err := ParseSigned(d.p, r, tg, files); err != nil {
		t.Fatalf("a signed three-level delegation: %v", err)
	}
	for name, c := range map[string]struct {
		file, want string
	}{
		"security": {"security", "rules/security.json: delegation security: 0 of 1 signatures (threshold 1), checked before decoding it; not yet signed by: dave"},
		"crypto":   {"crypto", "rules/crypto.json: delegation crypto: 0 of 1 signatures (threshold 1), checked before decoding it; not yet signed by: erin"},
	} {
		t.Run(name, func(t *testing.T) {
			bad := maps.Clone(files)
			bad[c.file] = replaceOnce(t, files[c.file], `"expires":"`, `"expires":"not a time `)
			if _, err := ParseFiles(r, tg, bad); err == nil || errors.Is(err, ErrUnsigned) {
				t.Fatalf("ParseFiles = %v, want a decoding error", err)
			}
			_, err := ParseSigned(d.p, r, tg, bad)
			if !errors.Is(err, ErrUnsigned) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ParseSigned = %v, want %q", err, c.want)
			}
		})
	}
	// A file no decoded file delegates is refused, decoded or not.
	extra := maps.Clone(files)
	extra["stray"] = files["crypto"]
	if _, err := ParseSigned(d.p, r, tg, extra); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "rule file stray is not delegated by any file") {
		t.Fatalf("ParseSigned with a stray file = %v", err)
	}
}

// FuzzParseSignedRuleFile: with a fuzzed rules/crypto.json under the
// three-level delegation, ParseSigned is never stricter than ParseFiles
// with every rule file counting (what verify.CheckPolicy needs), and what
// it accepts ParseFiles accepts; a file refused for its signatures counts
// for nothing in ParseFiles either.
func FuzzParseSignedRuleFile(f *testing.F) {
	d := newDeleg(f)
	r, tg := encode(f, d.p)
	files, err := d.p.EncodeRuleFiles()
	must(f, err)
	f.Add(files["crypto"])
	f.Add(replaceOnce(f, files["crypto"], `"version":1`, `"version":2`))
	f.Add(files["security"])
	exp := `"expires":"` + d.p.Targets.Signed.Expires.Format(expiresLayout) + `"`
	for _, v := range []string{"2027-01-02T03:04:05+02:00", "2027-01-02T03:04:05+00:00", "2027-01-02T03:04:05.000Z"} {
		f.Add(replaceOnce(f, files["crypto"], exp, `"expires":"`+v+`"`))
	}
	f.Fuzz(func(t *testing.T, crypto []byte) { checkParseSignedRuleFile(t, d, r, tg, files, crypto) })
}

// checkParseSignedRuleFile is FuzzParseSignedRuleFile's body: files with
// crypto in place of rules/crypto.json, under d's root r and targets tg.
func checkParseSignedRuleFile(t testing.TB, d *deleg, r, tg []byte, files map[string][]byte, crypto []byte) {
	fs := maps.Clone(files)
	fs["crypto"] = crypto
	_, err := ParseSigned(d.p, r, tg, fs)
	if err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnsigned) {
		t.Fatalf("error %v wraps neither ErrMalformed nor ErrUnsigned", err)
	}
	q, qerr := ParseFiles(r, tg, fs)
	counts := qerr == nil
	if counts {
		for _, rf := range q.RuleFiles() {
			counts = counts && rf.Untrusted == ""
		}
	}
	if counts && err != nil || err == nil && qerr != nil || errors.Is(err, ErrUnsigned) && counts {
		t.Fatalf("ParseSigned: %v; ParseFiles: %v, every file counting: %v", err, qerr, counts)
	}
}

// paddedWithin returns doc with its signed part kept and a last member
// zz-pad added, arrays of copies of v each within maxItems, limit bytes in
// all: its signatures no longer cover it; strictjson.CheckItems lets it
// through.
func paddedWithin(t testing.TB, doc []byte, v string, limit int) []byte {
	t.Helper()
	if !bytes.HasSuffix(doc, []byte("}}")) {
		t.Fatal("the signed part is not last")
	}
	out := append(bytes.Clone(doc[:len(doc)-2]), `,"zz-pad":[[`...)
	tail := []byte(`]]}}`)
	for n := 0; len(out)+len(v)+3+len(tail) <= limit; n++ {
		switch {
		case n == 0:
		case n%maxItems == 0:
			out = append(out, "],["...)
		default:
			out = append(out, ',')
		}
		out = append(out, v...)
	}
	out = append(out, tail...)
	if err := strictjson.CheckItems(out, limit, maxItems); err != nil {
		t.Fatalf("padded file refused by strictjson already: %v", err)
	}
	return out
}

// BenchmarkFuzzSignedBodies runs the bodies of FuzzParseSigned and
// FuzzParseSignedRuleFile once over each of their seeds a loop: what one
// fuzzing exec costs, outside the fuzzer (which cannot be profiled).
func BenchmarkFuzzSignedBodies(b *testing.B) {
	fx := newFixture(b)
	r, tg := encode(b, fx.p)
	seeds := append(fuzzPolicySeeds(b), [2][]byte{r, tg})
	d := newDeleg(b)
	dr, dtg := encode(b, d.p)
	files, err := d.p.EncodeRuleFiles()
	must(b, err)
	b.Run("ParseSigned", func(b *testing.B) {
		for b.Loop() {
			for _, s := range seeds {
				checkParseSigned(b, s[0], s[1])
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(seeds)), "us/exec")
	})
	b.Run("ParseSignedRuleFile", func(b *testing.B) {
		for b.Loop() {
			checkParseSignedRuleFile(b, d, dr, dtg, files, files["crypto"])
		}
	})
}

// TestRootCountWording checks that each count of root.json's signatures
// says when it ran: before decoding (keys from the previous root, or read
// from the file's raw signed part), or after (keys as go-tuf decoded
// them, which can only fail when the two readings differ). Mallory's key
// stands for keys that did not sign.
func TestRootCountWording(t *testing.T) {
	f := newFixture(t)
	r, _ := encode(t, f.p)
	e, err := readEnvelope(RootFile, r, MaxFileSize)
	must(t, err)
	mk, err := newKey(tufKeyOf(t, newTestKey(t, "mallory")))
	must(t, err)
	rk, err := newKey(tufKeyOf(t, f.root))
	must(t, err)
	for name, c := range map[string]struct {
		count func(string, []*Key, int) error
		want  string
	}{
		"before": {e.check, "root.json: root: 0 of 1 signatures (threshold 1), checked before decoding it; not yet signed by: " + mk.Fingerprint},
		"after":  {e.checkDecoded, "root.json: root: 0 of 1 signatures (threshold 1), counted again after decoding it, with its keys as decoded (read before decoding, they had signed it); not yet signed by: " + mk.Fingerprint},
	} {
		t.Run(name, func(t *testing.T) {
			if err := c.count("root", []*Key{rk}, 1); err != nil {
				t.Fatalf("count by the root key = %v", err)
			}
			err := c.count("root", []*Key{mk}, 1)
			if !errors.Is(err, ErrUnsigned) || err.Error() != "policy: signatures below the threshold: "+c.want {
				t.Fatalf("count = %v, want %q", err, c.want)
			}
		})
	}
}
