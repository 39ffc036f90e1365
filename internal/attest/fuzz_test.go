package attest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

func FuzzParseEnvelope(f *testing.F) {
	a := seedSigner(f, 1)
	for _, st := range [][]byte{fuzzApproval(f), fuzzTestRun(f)} {
		env, err := Sign(st, a)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(env)
		f.Add(bytes.ReplaceAll(env, []byte(","), []byte(" , ")))
		f.Add(bytes.Replace(env, []byte(`"payload"`), []byte(`"payload":"","p\u0061yload"`), 1))
		f.Add(bytes.Replace(env, []byte(`}]`), []byte(`},{"keyid":"","sig":""}]`), 1))
	}
	f.Add([]byte(`{"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[{"keyid":"SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","sig":"U1NIU0lH"}]}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"a":{"b":[1,2,{"c":null}]}}`))
	trusted := func(fp string) (ssh.PublicKey, bool) {
		if fp == ssh.FingerprintSHA256(a.PublicKey()) {
			return a.PublicKey(), true
		}
		return nil, false
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := ParseEnvelope(data)
		if err != nil {
			if e != nil || !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v with envelope %v", err, e)
			}
			return
		}
		out, err := e.Marshal()
		if err != nil {
			t.Fatalf("accepted envelope does not re-encode: %v", err)
		}
		e2, err := ParseEnvelope(out)
		if err != nil {
			t.Fatalf("re-encoded envelope rejected: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(e, e2) {
			t.Fatalf("re-encoding changed the envelope:\n%+v\n%+v", e, e2)
		}
		if out2, _ := e2.Marshal(); !bytes.Equal(out, out2) {
			t.Fatalf("encoding not stable:\n%s\n%s", out, out2)
		}
		if isCompactCanonicalEnvelope(data) && !bytes.Equal(data, out) {
			t.Fatalf("canonical input re-encodes differently:\n%s\n%s", data, out)
		}
		// Verification of arbitrary accepted input must not panic, and must
		// not succeed unless the key really signed it.
		if pub, err := e.Verify(trusted); err == nil {
			if !bytes.Equal(pub.Marshal(), a.PublicKey().Marshal()) {
				t.Fatal("verified with an untrusted key")
			}
		}
	})
}

// isCompactCanonicalEnvelope reports whether data looks like Marshal output:
// keys in the canonical order and no whitespace (base64 and fingerprints
// contain no spaces, quotes or backslashes).
func isCompactCanonicalEnvelope(data []byte) bool {
	s := string(data)
	return strings.HasPrefix(s, `{"payloadType":"application/vnd.in-toto+json","payload":"`) &&
		!strings.ContainsAny(s, " \t\r\n\\") && strings.Count(s, `"`) == 16 &&
		strings.Contains(s, `","signatures":[{"keyid":"`) && strings.Contains(s, `","sig":"`) && strings.HasSuffix(s, `"}]}`)
}

func fuzzApproval(tb testing.TB) []byte {
	st, err := Approval{Ref: "refs/heads/main", From: h(1), To: h(2)}.Statement()
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

func fuzzTestRun(tb testing.TB) []byte {
	st, err := TestRun{Tree: h(1), Commit: h(2), Command: []string{"go", "test", "./..."}, ExitCode: 1, DurationMs: 99,
		Tools: map[string]string{"go": "go1.26.8"}, StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}.Statement()
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

func FuzzParseApproval(f *testing.F) {
	base := fuzzApproval(f)
	f.Add(base)
	st, err := Approval{Ref: "refs/tags/v1", From: h(0xab), To: h(0xcd), ToTree: h(0xef)}.Statement()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(st)
	st, err = Approval{Ref: "refs/heads/new", To: h(0xcd)}.Statement()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(st)
	f.Add(bytes.ReplaceAll(base, []byte(","), []byte(",\n ")))
	f.Add(bytes.Replace(base, []byte(`"ref"`), []byte(`"r\u0065f"`), 1))
	f.Add(bytes.Replace(base, []byte(`"formatVersion":1`), []byte(`"formatVersion":1,"formatVersion":1`), 1))
	f.Add(fuzzTestRun(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseApproval(data)
		if err != nil {
			if a != (Approval{}) || !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v with approval %+v", err, a)
			}
			return
		}
		if _, err := ParseTestRun(data); err == nil {
			t.Fatal("input is both an approval and a test run")
		}
		out, err := a.Statement()
		if err != nil {
			t.Fatalf("accepted approval does not re-encode: %v", err)
		}
		a2, err := ParseApproval(out)
		if err != nil || a2 != a {
			t.Fatalf("re-encoded approval: %+v, %v; want %+v\n%s", a2, err, a, out)
		}
		if out2, _ := a2.Statement(); !bytes.Equal(out, out2) {
			t.Fatalf("encoding not stable:\n%s\n%s", out, out2)
		}
		if len(out) > len(data) {
			t.Fatalf("canonical form is longer than the input:\n%s\n%s", data, out)
		}
		// The input and its canonical form are the same JSON document: no
		// field was dropped, added or reinterpreted.
		v1, err1 := decodeStrict(data)
		v2, err2 := decodeStrict(out)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(v1, v2) {
			t.Fatalf("input and canonical form differ:\n%s\n%s", data, out)
		}
	})
}

func FuzzParseTestRun(f *testing.F) {
	f.Add(fuzzTestRun(f))
	f.Add(fuzzApproval(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ParseTestRun(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatal(err)
			}
			return
		}
		out, err := tr.Statement()
		if err != nil {
			t.Fatalf("accepted test run does not re-encode: %v", err)
		}
		tr2, err := ParseTestRun(out)
		if err != nil || !reflect.DeepEqual(tr, tr2) {
			t.Fatalf("re-encoded test run: %+v, %v; want %+v", tr2, err, tr)
		}
		if out2, _ := tr2.Statement(); !bytes.Equal(out, out2) {
			t.Fatalf("encoding not stable:\n%s\n%s", out, out2)
		}
	})
}

// FuzzLoadHistory: the history file is read strictly (anything odd reads
// as no file), never panics, and what it reads is written back to a file
// that reads the same.
func FuzzLoadHistory(f *testing.F) {
	f.Add([]byte("tip " + strings.Repeat("a", 40) + "\n" + strings.Repeat("b", 40) + " approvals/" + strings.Repeat("c", 64) + "/" + strings.Repeat("d", 64) + ".json\n"))
	f.Add([]byte("tip " + strings.Repeat("0", 40) + "\n"))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "secure"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(historyFile(dir), data, 0o644); err != nil {
			t.Fatal(err)
		}
		tip, h := loadHistory(dir)
		if h == nil {
			return
		}
		saveHistory(dir, tip, h)
		tip2, h2 := loadHistory(dir)
		if tip2 != tip || h2 == nil || len(h2.set) != len(h.set) {
			t.Fatalf("history does not read back: %v %d, then %v %v", tip, len(h.set), tip2, h2)
		}
		for k := range h.set {
			if !h2.set[k] {
				t.Fatalf("%v lost on the way back", k)
			}
		}
	})
}

// FuzzParseForgeReview: whatever ParseForgeReview accepts (including the
// optional repository and accountId) re-encodes to a statement that
// parses to the same record, stably, with the same JSON document, and
// names a valid repository and account id of its forge when it has them.
func FuzzParseForgeReview(f *testing.F) {
	legacy := ForgeReview{Ref: "refs/heads/main", From: h(1), To: h(2), Forge: "github", Account: "bob-gh", Review: "101", PullRequest: "7", State: ReviewApproved}
	bound := legacy
	bound.Repository, bound.AccountID, bound.ToTree = "acme/widget", "583231", h(3)
	gl := bound
	gl.Forge, gl.Account, gl.Repository, gl.State = "gitlab", "bob.gl", "group/sub/widget", ReviewWithdrawn
	for _, fr := range []ForgeReview{legacy, bound, gl} {
		st, err := fr.Statement()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(st)
		f.Add(bytes.Replace(st, []byte(`"repository"`), []byte(`"repository":"","r\u0065pository"`), 1))
		f.Add(bytes.Replace(st, []byte(`"accountId":"583231"`), []byte(`"accountId":583231`), 1))
	}
	f.Add(fuzzApproval(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := ParseForgeReview(data)
		if err != nil {
			if fr != (ForgeReview{}) || !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v with forge review %+v", err, fr)
			}
			return
		}
		if fr.Repository != "" && ValidForgeRepository(fr.Forge, fr.Repository) != nil {
			t.Fatalf("accepted repository %q of %s", fr.Repository, fr.Forge)
		}
		if fr.AccountID != "" && ValidForgeAccountID(fr.AccountID) != nil {
			t.Fatalf("accepted account id %q", fr.AccountID)
		}
		out, err := fr.Statement()
		if err != nil {
			t.Fatalf("accepted forge review does not re-encode: %v", err)
		}
		fr2, err := ParseForgeReview(out)
		if err != nil || fr2 != fr {
			t.Fatalf("re-encoded forge review: %+v, %v; want %+v\n%s", fr2, err, fr, out)
		}
		if out2, _ := fr2.Statement(); !bytes.Equal(out, out2) {
			t.Fatalf("encoding not stable:\n%s\n%s", out, out2)
		}
		v1, err1 := decodeStrict(data)
		v2, err2 := decodeStrict(out)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(v1, v2) {
			t.Fatalf("input and canonical form differ:\n%s\n%s", data, out)
		}
	})
}
