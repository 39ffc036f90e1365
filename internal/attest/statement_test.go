package attest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

func h(c byte) gitrepo.Hash {
	var x gitrepo.Hash
	for i := range x {
		x[i] = c
	}
	return x
}

func hx(c byte) string { return hexOf(h(c)) }

const (
	zero40 = "0000000000000000000000000000000000000000"
)

func TestApprovalGolden(t *testing.T) {
	a := Approval{Ref: "refs/heads/main", From: h(0xaa), To: h(0xbb)}
	got, err := a.Statement()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"refs/heads/main","digest":{"gitCommit":"` + hx(0xbb) +
		`"}}],"predicateType":"https://git-secure.dev/attestation/approval/v1","predicate":{"formatVersion":1,"from":"` + hx(0xaa) +
		`","ref":"refs/heads/main","to":"` + hx(0xbb) + `"}}`
	if string(got) != want {
		t.Fatalf("statement:\n got %s\nwant %s", got, want)
	}
}

func TestTestRunGolden(t *testing.T) {
	tr := TestRun{
		Tree: h(0x11), Commit: h(0x22), Command: []string{"go", "test", "./..."},
		ExitCode: 0, DurationMs: 1234, Tools: map[string]string{"go": "go1.26.8", "git": "2.47"},
		StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 500_000_000, time.FixedZone("x", 3600)),
	}
	got, err := tr.Statement()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"tree","digest":{"gitTree":"` + hx(0x11) +
		`"}}],"predicateType":"https://git-secure.dev/attestation/test-run/v1","predicate":{"command":["go","test","./..."],"commit":"` + hx(0x22) +
		`","durationMs":1234,"exitCode":0,"formatVersion":1,"startedAt":"2026-01-02T02:04:05.5Z","tools":{"git":"2.47","go":"go1.26.8"},"tree":"` + hx(0x11) + `"}}`
	if string(got) != want {
		t.Fatalf("statement:\n got %s\nwant %s", got, want)
	}
}

func TestApprovalRoundTrip(t *testing.T) {
	for _, a := range []Approval{
		{Ref: "refs/heads/main", From: h(1), To: h(2)},
		{Ref: "refs/heads/feature/x", From: gitrepo.ZeroHash, To: h(2)},      // creation
		{Ref: "refs/tags/v1.0", From: h(1), To: gitrepo.ZeroHash},            // deletion
		{Ref: "refs/heads/main", From: h(1), To: h(2), ToTree: h(3)},         // tree-bound
		{Ref: "refs/heads/ünïcode", From: h(1), To: h(2)},                    // UTF-8 ref
		{Ref: "refs/heads/a<b>&c", From: h(0xfe), To: h(0xef), ToTree: h(9)}, // HTML chars
	} {
		st, err := a.Statement()
		if err != nil {
			t.Fatalf("%+v: %v", a, err)
		}
		got, err := ParseApproval(st)
		if err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		if got != a {
			t.Fatalf("round trip: got %+v want %+v", got, a)
		}
		if err := got.Matches(a.Ref, a.From, a.To); err != nil {
			t.Fatal(err)
		}
		if err := got.Matches(a.Ref, a.To, a.From); !errors.Is(err, ErrMismatch) {
			t.Fatalf("Matches swapped: %v", err)
		}
		if err := got.Matches(a.Ref+"x", a.From, a.To); !errors.Is(err, ErrMismatch) {
			t.Fatalf("Matches other ref: %v", err)
		}
		// ParseTestRun must refuse an approval.
		if _, err := ParseTestRun(st); !errors.Is(err, ErrMalformed) {
			t.Fatalf("ParseTestRun(approval) = %v", err)
		}
	}
}

func TestTestRunRoundTrip(t *testing.T) {
	for _, tr := range []TestRun{
		{Tree: h(1), Commit: h(2), Command: []string{"go", "test", "./..."}, ExitCode: 0, DurationMs: 10,
			Tools: map[string]string{"go": "go1.26.8"}, StartedAt: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)},
		{Tree: h(1), Commit: gitrepo.ZeroHash, Command: []string{"make"}, ExitCode: -1, DurationMs: maxDurationMs,
			Tools: map[string]string{}, StartedAt: time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)},
		{Tree: h(1), Commit: h(3), Command: []string{"sh", "-c", "exit 3", ""}, ExitCode: 3, DurationMs: 0,
			Tools: map[string]string{"": "", "a\"b": "\\\n"}, StartedAt: time.Unix(1, 0).UTC()},
	} {
		st, err := tr.Statement()
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseTestRun(st)
		if err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		if !reflect.DeepEqual(got, tr) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, tr)
		}
		if _, err := ParseApproval(st); !errors.Is(err, ErrMalformed) {
			t.Fatalf("ParseApproval(test run) = %v", err)
		}
	}
}

func TestStatementRejectsInvalidValues(t *testing.T) {
	for _, a := range []Approval{
		{Ref: "heads/main", From: h(1), To: h(2)},
		{Ref: "refs/heads/main", From: h(1), To: h(1)},
		{Ref: "refs/heads/main"},
		{Ref: "refs/heads/main", From: h(1), ToTree: h(3)},
		{Ref: "refs/heads/../x", From: h(1), To: h(2)},
		{Ref: "refs/", From: h(1), To: h(2)},
		{Ref: "refs/" + strings.Repeat("a", MaxRefLength), From: h(1), To: h(2)},
	} {
		if _, err := a.Statement(); !errors.Is(err, ErrMalformed) {
			t.Errorf("%+v: err = %v, want ErrMalformed", a, err)
		}
	}
	ok := TestRun{Tree: h(1), Command: []string{"x"}, StartedAt: time.Unix(5, 0)}
	if _, err := ok.Statement(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*TestRun){
		"zero tree":     func(t *TestRun) { t.Tree = gitrepo.ZeroHash },
		"no command":    func(t *TestRun) { t.Command = nil },
		"neg duration":  func(t *TestRun) { t.DurationMs = -1 },
		"huge duration": func(t *TestRun) { t.DurationMs = maxDurationMs + 1 },
		"zero time":     func(t *TestRun) { t.StartedAt = time.Time{} },
		"year 10000":    func(t *TestRun) { t.StartedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		"huge exit":     func(t *TestRun) { t.ExitCode = 1 << 40 },
	} {
		tr := ok
		mut(&tr)
		if _, err := tr.Statement(); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", name, err)
		}
	}
}

func TestValidRef(t *testing.T) {
	good := []string{"refs/heads/main", "refs/x", "refs/heads/a.b", "refs/heads/a-b_c+d", "refs/pull/1/head", "refs/heads/ü"}
	bad := []string{"", "refs", "refs/", "refs//x", "refs/x/", "refs/x.", "refs/.x", "refs/x.lock", "refs/a..b",
		"refs/a@{1}", "refs/a b", "refs/a~1", "refs/a^", "refs/a:b", "refs/a?", "refs/a*", "refs/a[", "refs/a\\b",
		"refs/a\x00", "refs/a\x7f", "refs/a\n", "heads/main", "Refs/heads/main", "/refs/heads/main"}
	for _, r := range good {
		if err := ValidRef(r); err != nil {
			t.Errorf("ValidRef(%q) = %v", r, err)
		}
	}
	for _, r := range bad {
		if err := ValidRef(r); !errors.Is(err, ErrMalformed) {
			t.Errorf("ValidRef(%q) = %v, want ErrMalformed", r, err)
		}
	}
}

// approvalJSON builds an approval statement from pieces so tests can break
// one rule at a time.
func approvalJSON(top, subject, digest, pred string) string {
	return `{"_type":"https://in-toto.io/Statement/v1"` + top +
		`,"subject":[{"name":"refs/heads/main","digest":{"gitCommit":"` + hx(2) + `"` + digest + `}` + subject + `}]` +
		`,"predicateType":"https://git-secure.dev/attestation/approval/v1"` +
		`,"predicate":{"formatVersion":1,"ref":"refs/heads/main","from":"` + hx(1) + `","to":"` + hx(2) + `"` + pred + `}}`
}

func TestParseApprovalStrict(t *testing.T) {
	base := approvalJSON("", "", "", "")
	if a, err := ParseApproval([]byte(base)); err != nil || a != (Approval{Ref: "refs/heads/main", From: h(1), To: h(2)}) {
		t.Fatalf("base: %+v %v", a, err)
	}
	// Non-canonical but valid spellings are accepted.
	for name, s := range map[string]string{
		"whitespace":      strings.ReplaceAll(base, ",", " ,\n\t"),
		"escaped key":     strings.Replace(base, `"ref":`, `"\u0072ef":`, 1),
		"key order":       strings.Replace(base, `"formatVersion":1,"ref":"refs/heads/main"`, `"ref":"refs/heads/main","formatVersion":1`, 1),
		"toTree":          approvalJSON("", "", "", `,"toTree":"`+hx(7)+`"`),
		"trailing spaces": base + " \n",
	} {
		if _, err := ParseApproval([]byte(s)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	rep := func(old, new string) string {
		if !strings.Contains(base, old) {
			t.Fatalf("base does not contain %q", old)
		}
		return strings.Replace(base, old, new, 1)
	}
	cases := map[string]string{
		"unknown predicate field":    approvalJSON("", "", "", `,"extra":1`),
		"unknown top-level field":    approvalJSON(`,"extra":1`, "", "", ""),
		"unknown subject field":      approvalJSON("", `,"uri":"x"`, "", ""),
		"extra digest":               approvalJSON("", "", `,"sha1":"`+hx(2)+`"`, ""),
		"duplicate predicate key":    approvalJSON("", "", "", `,"ref":"refs/heads/main"`),
		"duplicate escaped key":      approvalJSON("", "", "", `,"r\u0065f":"refs/heads/main"`),
		"duplicate top-level key":    approvalJSON(`,"_type":"https://in-toto.io/Statement/v1"`, "", "", ""),
		"duplicate digest key":       approvalJSON("", "", `,"gitCommit":"`+hx(2)+`"`, ""),
		"wrong _type":                rep(`Statement/v1"`, `Statement/v0.1"`),
		"type alias":                 rep(`"_type"`, `"type"`),
		"predicate_type alias":       rep(`"predicateType"`, `"predicate_type"`),
		"case-folded key":            rep(`"ref":`, `"Ref":`),
		"wrong predicateType":        rep(`approval/v1`, `approval/v2`),
		"test-run predicateType":     rep(`approval/v1`, `test-run/v1`),
		"subject name mismatch":      rep(`"name":"refs/heads/main"`, `"name":"refs/heads/other"`),
		"subject digest mismatch":    rep(`"gitCommit":"`+hx(2), `"gitCommit":"`+hx(3)),
		"subject digest algorithm":   rep(`"gitCommit"`, `"sha1"`),
		"two subjects":               rep(`"subject":[{`, `"subject":[{"name":"refs/heads/main","digest":{"gitCommit":"`+hx(2)+`"}},{`),
		"no subject":                 approvalJSON("", "", "", "")[:0] + strings.Replace(base, base[strings.Index(base, `[`):strings.Index(base, `]`)+1], `[]`, 1),
		"subject not array":          rep(`"subject":[{"name":"refs/heads/main","digest":{"gitCommit":"`+hx(2)+`"}}]`, `"subject":{"name":"refs/heads/main","digest":{"gitCommit":"`+hx(2)+`"}}`),
		"uppercase hash":             rep(`"from":"`+hx(1), `"from":"`+strings.ToUpper(hx(0xab))),
		"short hash":                 rep(`"from":"`+hx(1), `"from":"`+hx(1)[:39]),
		"long hash":                  rep(`"from":"`+hx(1), `"from":"`+hx(1)+"0"),
		"non-hex hash":               rep(`"from":"`+hx(1), `"from":"`+"g"+hx(1)[1:]),
		"hash as number":             rep(`"from":"`+hx(1)+`"`, `"from":1`),
		"non-refs name":              strings.ReplaceAll(base, "refs/heads/main", "heads/main"),
		"bad ref":                    strings.ReplaceAll(base, "refs/heads/main", "refs/heads/a..b"),
		"formatVersion 2":            rep(`"formatVersion":1`, `"formatVersion":2`),
		"formatVersion 1.0":          rep(`"formatVersion":1`, `"formatVersion":1.0`),
		"formatVersion 1e0":          rep(`"formatVersion":1`, `"formatVersion":1e0`),
		"formatVersion string":       rep(`"formatVersion":1`, `"formatVersion":"1"`),
		"formatVersion missing":      rep(`"formatVersion":1,`, ``),
		"to missing":                 rep(`,"to":"`+hx(2)+`"`, ``),
		"from equals to":             rep(`"from":"`+hx(1), `"from":"`+hx(2)),
		"zero toTree":                approvalJSON("", "", "", `,"toTree":"`+zero40+`"`),
		"toTree on deletion":         strings.ReplaceAll(approvalJSON("", "", "", `,"toTree":"`+hx(7)+`"`), hx(2), zero40),
		"trailing data":              base + "{}",
		"trailing garbage":           base + "x",
		"truncated":                  base[:len(base)-1],
		"not an object":              `[` + base + `]`,
		"null":                       `null`,
		"empty":                      ``,
		"invalid utf-8":              strings.Replace(base, "refs/heads/main", "refs/heads/\xff", 2),
		"predicate not object":       base[:strings.Index(base, `"predicate":{`)] + `"predicate":[]}`,
		"too large":                  approvalJSON(strings.Repeat(" ", MaxStatementSize), "", "", ""),
		"too large (pad at end)":     base + strings.Repeat(" ", MaxStatementSize),
		"deep nesting":               approvalJSON("", "", "", `,"x":`+strings.Repeat("[", 100)+strings.Repeat("]", 100)),
		"ref in predicate is number": rep(`"ref":"refs/heads/main"`, `"ref":5`),
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			a, err := ParseApproval([]byte(s))
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("ParseApproval(%.300s) = %+v, %v; want ErrMalformed", s, a, err)
			}
		})
	}
}

func TestParseTestRunStrict(t *testing.T) {
	good := TestRun{Tree: h(1), Commit: h(2), Command: []string{"go", "test"}, ExitCode: 1, DurationMs: 5,
		Tools: map[string]string{"go": "go1.26.8"}, StartedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	st, err := good.Statement()
	if err != nil {
		t.Fatal(err)
	}
	base := string(st)
	rep := func(old, new string) string {
		if !strings.Contains(base, old) {
			t.Fatalf("base does not contain %q", old)
		}
		return strings.Replace(base, old, new, 1)
	}
	// Accepted variants.
	for name, s := range map[string]string{
		"offset time":   rep(`"2026-01-01T00:00:00Z"`, `"2026-01-01T01:00:00+01:00"`),
		"zero commit":   rep(`"commit":"`+hx(2), `"commit":"`+zero40),
		"empty tools":   rep(`"tools":{"go":"go1.26.8"}`, `"tools":{}`),
		"negative exit": rep(`"exitCode":1`, `"exitCode":-1`),
	} {
		got, err := ParseTestRun([]byte(s))
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if name == "offset time" && !got.StartedAt.Equal(good.StartedAt) {
			t.Errorf("offset time parsed as %v", got.StartedAt)
		}
	}
	cases := map[string]string{
		"unknown field":        rep(`"formatVersion":1`, `"formatVersion":1,"extra":true`),
		"duplicate key":        rep(`"formatVersion":1`, `"formatVersion":1,"formatVersion":1`),
		"subject name":         rep(`"name":"tree"`, `"name":"Tree"`),
		"subject tree differs": rep(`"gitTree":"`+hx(1), `"gitTree":"`+hx(3)),
		"subject gitCommit":    rep(`"gitTree"`, `"gitCommit"`),
		"zero tree":            strings.ReplaceAll(base, hx(1), zero40),
		"empty command":        rep(`"command":["go","test"]`, `"command":[]`),
		"command not strings":  rep(`"command":["go","test"]`, `"command":["go",1]`),
		"command string":       rep(`"command":["go","test"]`, `"command":"go test"`),
		"exit code float":      rep(`"exitCode":1`, `"exitCode":1.5`),
		"exit code huge":       rep(`"exitCode":1`, `"exitCode":4294967296`),
		"exit code -0":         rep(`"exitCode":1`, `"exitCode":-0`),
		"duration negative":    rep(`"durationMs":5`, `"durationMs":-5`),
		"duration too big":     rep(`"durationMs":5`, `"durationMs":9007199254740992`),
		"duration leading 0":   rep(`"durationMs":5`, `"durationMs":05`),
		"tools not strings":    rep(`"tools":{"go":"go1.26.8"}`, `"tools":{"go":1}`),
		"tools array":          rep(`"tools":{"go":"go1.26.8"}`, `"tools":[]`),
		"tools duplicate":      rep(`"tools":{"go":"go1.26.8"}`, `"tools":{"go":"a","go":"b"}`),
		"bad time":             rep(`"2026-01-01T00:00:00Z"`, `"2026-01-01 00:00:00"`),
		"time missing zone":    rep(`"2026-01-01T00:00:00Z"`, `"2026-01-01T00:00:00"`),
		"missing startedAt":    rep(`,"startedAt":"2026-01-01T00:00:00Z"`, ``),
		"wrong predicateType":  rep(`test-run/v1`, `approval/v1`),
		"formatVersion 0":      rep(`"formatVersion":1`, `"formatVersion":0`),
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			if got, err := ParseTestRun([]byte(s)); !errors.Is(err, ErrMalformed) {
				t.Fatalf("ParseTestRun(%s) = %+v, %v; want ErrMalformed", s, got, err)
			}
		})
	}
}

func TestApprovalDirAndSignerFile(t *testing.T) {
	// Pin the directory hash so the format cannot drift silently:
	// printf 'git-secure-approval-v1\0refs/heads/main\0<from>\0<to>' | sha256sum
	d := ApprovalDir("refs/heads/main", gitrepo.ZeroHash, h(0xbb))
	if !strings.HasPrefix(d, "approvals/") || !isHexName(strings.TrimPrefix(d, "approvals/"), 64) {
		t.Fatalf("ApprovalDir = %q", d)
	}
	if d != "approvals/"+approvalDirGolden {
		t.Fatalf("ApprovalDir = %q, want approvals/%s", d, approvalDirGolden)
	}
	if ApprovalDir("refs/heads/main", h(0xbb), gitrepo.ZeroHash) == d || ApprovalDir("refs/heads/mai", gitrepo.ZeroHash, h(0xbb)) == d {
		t.Fatal("ApprovalDir collides")
	}
	if got := TestRunDir(h(0x12)); got != "tests/"+hx(0x12) {
		t.Fatalf("TestRunDir = %q", got)
	}
}

const approvalDirGolden = "91687bb2be691473184e24273a0ed0e86dfacea3a042a872a2f7b012c8afc8fd"
