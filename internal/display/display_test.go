package display

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"refs/heads/main", "refs/heads/main"},
		{"", ""},
		{"Alice Example <alice@example.com>", "Alice Example <alice@example.com>"},
		{"a\x1b[8mb", `a\x1b[8mb`},
		{"line\nnext", `line\x0anext`},
		{"tab\there", `tab\x09here`},
		{"cr\rret", `cr\x0dret`},
		{"nul\x00", `nul\x00`},
		{"del\x7f", `del\x7f`},
		{"refs/heads/\xc2\x9b31m", `refs/heads/\u009b31m`}, // C1 CSI
		{"refs/heads/\u202eniam", `refs/heads/\u202eniam`}, // right-to-left override
		{"ma\u200bin", `ma\u200bin`},                       // zero-width space
		{"\ufeffmain", `\ufeffmain`},                       // byte order mark
		{"a\u2028b", `a\u2028b`},                           // line separator
		{"no\u00a0break", `no\u00a0break`},                 // a space that is not U+0020
		{"tag\U000e0041", `tag\U000e0041`},                 // tag character (Cf)
		{"bad\xffutf8\xc3", `bad\xffutf8\xc3`},             // invalid UTF-8
		{`back\slash`, `back\\slash`},                      // so that \x1b typed literally differs
		{`\x1b`, `\\x1b`},                                  //
		{"refs/heads/main\u034f", `refs/heads/main\u034f`}, // combining grapheme joiner (invisible)
		{"main\u3164", `main\u3164`},                       // Hangul filler
		{"ma\u115fin\uffa0", `ma\u115fin\uffa0`},           // Hangul fillers
		{"main\ufe0f", `main\ufe0f`},                       // variation selector
		{"main\u17b4", `main\u17b4`},                       // Khmer inherent vowel (invisible)
		{"main\u2800", `main\u2800`},                       // blank Braille pattern
		{"Ünïcödé 名前 😀", "Ünïcödé 名前 😀"},                   // printable stays
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"#1  main\n  by alice\tok\n", "#1  main\n  by alice\tok\n"},
		{"a\x1b[2Jb\n", `a\x1b[2Jb` + "\n"},
		{`already \\ escaped \x1b`, `already \\ escaped \x1b`},
		{"x\u202ey\r\n", `x\u202ey\x0d` + "\n"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFprintf(t *testing.T) {
	var b strings.Builder
	Fprintf(&b, "%s moved by %s: %v (%d)\n", "refs/heads/\u202emain", "eve\x1b[8m", errors.New("bad\nline"), 3)
	want := `refs/heads/\u202emain moved by eve\x1b[8m: bad\x0aline (3)` + "\n"
	if b.String() != want {
		t.Fatalf("Fprintf = %q, want %q", b.String(), want)
	}
	// A format built elsewhere with raw repository text is still cleaned.
	b.Reset()
	Fprintf(&b, "pre-formatted "+"\x9b\xc2\x9b"+"\n")
	if want := `pre-formatted \x9b\u009b` + "\n"; b.String() != want {
		t.Fatalf("Fprintf = %q, want %q", b.String(), want)
	}
}

// unescape inverts Escape; it exists to prove that Escape loses nothing.
func unescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			return "", fmt.Errorf("dangling backslash")
		}
		var n int
		switch s[i+1] {
		case '\\':
			b.WriteByte('\\')
			i++
			continue
		case 'x':
			n = 2
		case 'u':
			n = 4
		case 'U':
			n = 8
		default:
			return "", fmt.Errorf("unknown escape %q", s[i:i+2])
		}
		if i+2+n > len(s) {
			return "", fmt.Errorf("short escape")
		}
		v, err := strconv.ParseUint(s[i+2:i+2+n], 16, 32)
		if err != nil {
			return "", err
		}
		if n == 2 {
			b.WriteByte(byte(v))
		} else {
			b.WriteRune(rune(v))
		}
		i += 1 + n
	}
	return b.String(), nil
}

// FuzzEscape checks that Escape's output holds nothing a terminal
// interprets (no control or format character, valid UTF-8) and that it can
// be read back to exactly its input: two strings that differ, even in one
// control character, never display the same.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"refs/heads/main", "a\x1b[8m", "\xc2\x9b", "\u202e", `\x1b`, "\xff\xfe", "\u200b\ufeff", "😀\U000e0041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Escape(%q) = %q: not valid UTF-8", s, out)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && !Safe(r)) {
				t.Fatalf("Escape(%q) = %q: contains %U", s, out, r)
			}
		}
		back, err := unescape(out)
		if err != nil || back != s {
			t.Fatalf("Escape(%q) = %q reads back as %q (%v)", s, out, back, err)
		}
		txt := Text(s)
		for _, r := range txt {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && !Safe(r)) {
				t.Fatalf("Text(%q) = %q: contains %U", s, txt, r)
			}
		}
	})
}
