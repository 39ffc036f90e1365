package hooks

import (
	"strings"
	"testing"
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

// FuzzParseRefLines: hook input comes from git, but a hostile wrapper or
// server configuration could feed anything; it must never panic, and what
// it accepts re-encodes to the same bytes.
func FuzzParseRefLines(f *testing.F) {
	f.Add([]byte(strings.Repeat("a", 40) + " " + strings.Repeat("b", 40) + " refs/heads/main\n"))
	f.Add([]byte("x y z\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		lines, err := ParseRefLines(in)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, l := range lines {
			b.WriteString(l.Old.String() + " " + l.New.String() + " " + l.Ref + "\n")
		}
		if b.String() != string(in) {
			t.Fatalf("accepted %q but re-encodes to %q", in, b.String())
		}
	})
}

// FuzzParseTransaction: reference-transaction input is accepted only when
// it re-encodes to exactly what was read (nothing skipped or repaired).
func FuzzParseTransaction(f *testing.F) {
	f.Add([]byte(strings.Repeat("a", 40) + " " + strings.Repeat("b", 40) + " refs/heads/main\n"))
	f.Add([]byte(strings.Repeat("0", 40) + " " + strings.Repeat("b", 40) + " HEAD\n"))
	f.Add([]byte("x y z\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		lines, err := parseTransaction(in)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, l := range lines {
			b.WriteString(l.Old.String() + " " + l.New.String() + " " + l.Ref + "\n")
		}
		if b.String() != string(in) {
			t.Fatalf("accepted %q but re-encodes to %q", in, b.String())
		}
	})
}
