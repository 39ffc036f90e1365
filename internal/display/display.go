// Package display makes text from a repository safe to show on a terminal.
//
// Everything a repository holds is written by someone else: ref names,
// person names, committer identities, paths, reasons. Printed raw, an
// escape sequence (ESC, or a C1 control such as U+009B) can hide or rewrite
// what the user reads, and a format character such as U+202E can make one
// name look like another. Escape turns every such character into a visible
// escape; it is the one place human output of git-secure quotes repository
// text. JSON output does not need it: JSON escapes what it must.
//
// The package has no state and is safe for concurrent use.
package display

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every character that is not safe to print shown as
// an escape: C0 controls (newline and tab included), DEL and bytes that are
// not valid UTF-8 as \xNN; C1 controls, format characters (Unicode category
// Cf: U+200B, U+202E, U+FEFF, ...), line and paragraph separators, spaces
// other than U+0020, private-use and unassigned code points as \uNNNN (or
// \UNNNNNNNN). A backslash is doubled, so that two different strings never
// display the same.
func Escape(s string) string { return escape(s, false) }

// Text is Escape for text git-secure composed itself around escaped
// repository strings: it keeps newlines and tabs and does not double
// backslashes, but escapes every other unsafe character. It is the last
// line of defence at the writer, not a substitute for Escape.
func Text(s string) string { return escape(s, true) }

// escape is Escape, or Text when text is set; a string with nothing to
// escape is returned as is, without a copy.
func escape(s string, text bool) string {
	if (!text && isPlain(s)) || (text && isPlainText(s)) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	escapeTo(&b, s, text)
	return b.String()
}

// Args returns args with every string and error escaped (an error becomes
// its escaped message), for fmt's formatting verbs. Other values are kept:
// numbers, hashes and times print no control characters.
func Args(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			out[i] = Escape(v)
		case []string:
			q := make([]string, len(v))
			for j, s := range v {
				q[j] = Escape(s)
			}
			out[i] = q
		case error:
			if v != nil {
				out[i] = Escape(v.Error())
			} else {
				out[i] = v
			}
		default:
			out[i] = a
		}
	}
	return out
}

// Fprintf formats like fmt.Fprintf with every string and error argument
// escaped (Args), then writes the result through Text: repository text
// cannot reach w raw, while the format's own newlines stay.
func Fprintf(w io.Writer, format string, args ...any) (int, error) {
	return io.WriteString(w, Text(fmt.Sprintf(format, Args(args)...)))
}

// isPlain reports whether s is printable ASCII without a backslash, which
// Escape returns unchanged (the common case, checked without allocating).
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

func isPlainText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

func escapeTo(b *strings.Builder, s string, text bool) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case text && (c == '\n' || c == '\t'):
				b.WriteByte(c)
			case c < 0x20 || c == 0x7f:
				fmt.Fprintf(b, `\x%02x`, c)
			case c == '\\' && !text:
				b.WriteString(`\\`)
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(b, `\x%02x`, c)
		case Safe(r):
			b.WriteString(s[i : i+n])
		case r > 0xffff:
			fmt.Fprintf(b, `\U%08x`, r)
		default:
			fmt.Fprintf(b, `\u%04x`, r)
		}
		i += n
	}
}

// Safe reports whether r (outside ASCII's controls) may be shown as
// itself: a letter, mark, number, punctuation or symbol that is not a
// format character. Spaces other than U+0020 are not safe: they hide
// where a name ends.
func Safe(r rune) bool {
	if r == ' ' {
		return true
	}
	return unicode.IsPrint(r) && !unicode.Is(unicode.Cf, r) && !invisible(r)
}

// invisible reports code points that render as nothing though they are
// neither controls nor format characters: Unicode's other default
// ignorables (U+034F, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0,
// U+17B4, U+17B5, ...), variation selectors, and the blank Braille pattern
// U+2800. "refs/heads/main" followed by one of them reads as main.
func invisible(r rune) bool {
	return r == 0x2800 || unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}
