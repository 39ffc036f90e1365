package hooks

import (
	"reflect"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

func TestParseRefLines(t *testing.T) {
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	tests := []struct {
		name, in string
		n        int
		ok       bool
	}{
		{"one", a + " " + b + " refs/heads/main\n", 1, true},
		{"two", a + " " + b + " refs/heads/main\n" + b + " " + a + " refs/tags/v1\n", 2, true},
		{"empty", "", 0, true},
		{"no final newline", a + " " + b + " refs/heads/main", 0, false},
		{"crlf", a + " " + b + " refs/heads/main\r\n", 0, false},
		{"escaping ref", a + " " + b + " refs/heads/../../config\n", 0, false},
		{"short hash", "abc " + b + " refs/heads/main\n", 0, false},
		{"extra field", a + " " + b + " refs/heads/main x\n", 0, false},
		{"nul", a + " " + b + " refs/heads/ma\x00in\n", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRefLines([]byte(tt.in))
			if (err == nil) != tt.ok || (err == nil && len(got) != tt.n) {
				t.Fatalf("ParseRefLines(%q) = %v, %v; want ok=%v with %d lines", tt.in, got, err, tt.ok, tt.n)
			}
		})
	}
}

// encodeRefLines writes lines back as git wrote them.
func encodeRefLines(lines []RefLine) string {
	var b strings.Builder
	for _, l := range lines {
		old, nw := l.Old.String(), l.New.String()
		if l.OldTarget != "" {
			old = "ref:" + l.OldTarget
		}
		if l.NewTarget != "" {
			nw = "ref:" + l.NewTarget
		}
		b.WriteString(old + " " + nw + " " + l.Ref + "\n")
	}
	return b.String()
}

// fuzzReencodes fuzzes a reader of reference lines: it must never panic,
// and what it accepts re-encodes to exactly what was read (nothing skipped
// or repaired).
func fuzzReencodes(f *testing.F, parse func([]byte) ([]RefLine, error), seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		lines, err := parse(in)
		if err != nil {
			return
		}
		if got := encodeRefLines(lines); got != string(in) {
			t.Fatalf("accepted %q but re-encodes to %q", in, got)
		}
	})
}

// FuzzParseRefLines: hook input comes from git, but a hostile wrapper or
// server configuration could feed anything.
func FuzzParseRefLines(f *testing.F) {
	fuzzReencodes(f, ParseRefLines, strings.Repeat("a", 40)+" "+strings.Repeat("b", 40)+" refs/heads/main\n", "x y z\n")
}

// FuzzParseTransaction: reference-transaction input (the server's).
func FuzzParseTransaction(f *testing.F) {
	fuzzReencodes(f, parseTransaction, strings.Repeat("a", 40)+" "+strings.Repeat("b", 40)+" refs/heads/main\n",
		strings.Repeat("0", 40)+" "+strings.Repeat("b", 40)+" HEAD\n", "x y z\n")
}

// FuzzParseClientTransaction: reference-transaction input with symbolic
// values.
func FuzzParseClientTransaction(f *testing.F) {
	fuzzReencodes(f, parseClientTransaction, "ref:refs/heads/a ref:refs/heads/b HEAD\n",
		strings.Repeat("0", 40)+" "+strings.Repeat("b", 40)+" HEAD\n", "x y z\n")
}

// Reference-transaction input: the server's reader takes object names
// only; the client's also symbolic values (git 2.46 and later).
func TestParseTransactions(t *testing.T) {
	a, z := strings.Repeat("a", 40), strings.Repeat("0", 40)
	tests := []struct {
		name, in       string
		server, client bool
	}{
		{"branch", a + " " + z + " refs/heads/main\n", true, true},
		{"HEAD", z + " " + a + " HEAD\n", true, true},
		{"symbolic", "ref:refs/heads/a ref:refs/heads/b HEAD\n", false, true},
		{"symbolic from nothing", z + " ref:refs/heads/b HEAD\n", false, true},
		{"empty target", "ref: " + a + " HEAD\n", false, false},
		{"empty name", a + " " + z + " \n", false, false},
		{"two spaces", a + "  " + z + " HEAD\n", false, false},
		{"tab", a + " " + z + " HE\tAD\n", false, false},
		{"four fields", a + " " + z + " HEAD x\n", false, false},
		{"no final newline", a + " " + z + " HEAD", false, false},
		{"bad name", "x" + a[1:] + " " + z + " HEAD\n", false, false},
	}
	for _, tt := range tests {
		if _, err := parseTransaction([]byte(tt.in)); (err == nil) != tt.server {
			t.Errorf("%s: parseTransaction(%q) err = %v, want ok=%v", tt.name, tt.in, err, tt.server)
		}
		if _, err := parseClientTransaction([]byte(tt.in)); (err == nil) != tt.client {
			t.Errorf("%s: parseClientTransaction(%q) err = %v, want ok=%v", tt.name, tt.in, err, tt.client)
		}
	}
}

// Pre-push input is read from the end of each line: the local side may be
// any source expression, the remote ref must be a ref, and a line that
// cannot be read fails (it used to be skipped, letting its ref through).
func TestParsePushLines(t *testing.T) {
	a, b, z := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("0", 40)
	tests := []struct {
		name, in string
		want     []PushLine // nil: refused
	}{
		{"update", "refs/heads/main " + a + " refs/heads/main " + b + "\n",
			[]PushLine{{"refs/heads/main", mustHash(t, a), "refs/heads/main", mustHash(t, b)}}},
		{"delete", "(delete) " + z + " refs/heads/old " + b + "\n",
			[]PushLine{{"(delete)", gitrepo.ZeroHash, "refs/heads/old", mustHash(t, b)}}},
		{"expression with a space", "HEAD^{/fix bug} " + a + " refs/heads/x " + z + "\n",
			[]PushLine{{"HEAD^{/fix bug}", mustHash(t, a), "refs/heads/x", gitrepo.ZeroHash}}},
		{"three fields", a + " refs/heads/main " + b + "\n", nil},
		{"remote not a ref", "refs/heads/main " + a + " main " + b + "\n", nil},
		{"bad hash", "refs/heads/main " + a[1:] + " refs/heads/main " + b + "\n", nil},
		{"crlf", "refs/heads/main " + a + " refs/heads/main " + b + "\r\n", nil},
		{"double space", "refs/heads/main  " + a + " refs/heads/main " + b + "\n", nil},
	}
	for _, tt := range tests {
		got, err := parsePushLines([]byte(tt.in))
		if tt.want == nil {
			if err == nil {
				t.Errorf("%s: parsePushLines(%q) = %+v, want an error", tt.name, tt.in, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: parsePushLines(%q) = %+v, %v; want %+v", tt.name, tt.in, got, err, tt.want)
		}
	}
}

// FuzzParsePushLines: what parsePushLines accepts re-encodes to its input.
func FuzzParsePushLines(f *testing.F) {
	f.Add([]byte("refs/heads/main " + strings.Repeat("a", 40) + " refs/heads/main " + strings.Repeat("b", 40) + "\n"))
	f.Add([]byte("a b c d\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		lines, err := parsePushLines(in)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, l := range lines {
			b.WriteString(l.LocalRef + " " + l.Local.String() + " " + l.RemoteRef + " " + l.Remote.String() + "\n")
		}
		if b.String() != string(in) {
			t.Fatalf("accepted %q but re-encodes to %q", in, b.String())
		}
	})
}

func mustHash(t *testing.T, s string) gitrepo.Hash {
	t.Helper()
	h, err := gitrepo.ParseHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
