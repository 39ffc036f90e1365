package policy

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxPatternLen bounds a pattern's length.
const MaxPatternLen = 512

// Match reports whether name matches pattern: `*` matches any run of
// characters except '/', `**` any run including '/', `?` one character
// except '/', everything else itself. go-tuf's path matcher cannot be used:
// it needs equal segment counts and has no `**`.
func Match(pattern, name string) bool { return match(pattern, name, false) }

// MatchFold reports whether name, or a spelling that some checkout would
// store as the same file, matches pattern: Match with ASCII case folded,
// or Match of the pattern's and the name's [FoldPath] keys (full Unicode
// case folding, normalization, HFS+ ignorable code points, NTFS trailing
// dots and spaces and streams). It matches whatever the ASCII-only fold
// matched, and more, never less: a rule covers every name a
// case-insensitive or Windows checkout would merge with one it protects.
func MatchFold(pattern, name string) bool { return matchFoldKey(pattern, name, FoldPath(name)) }

// matchFoldKey is MatchFold with the name's key computed by the caller, once
// for all the patterns it tries.
func matchFoldKey(pattern, name, nameKey string) bool {
	if match(pattern, name, true) {
		return true
	}
	patKey := FoldPath(pattern)
	if patKey == asciiLower(pattern) && nameKey == asciiLower(name) {
		return false // the keys are what the ASCII fold just compared
	}
	return match(patKey, nameKey, false)
}

func match(pattern, name string, fold bool) bool {
	if !literalEnds(pattern, name, fold) {
		return false
	}
	return matchDP(pattern, name, fold)
}

// literalEnds is a quick necessary condition for match when pattern is
// ASCII: name starts with the pattern's characters before its first
// wildcard and ends with those after its last (ASCII case folded with
// fold), byte for byte, which is character for character when they are
// ASCII. A diff of a million paths asks every path rule about each: most
// fail here without the quadratic match. It reports true when it cannot
// tell (a pattern with other characters).
func literalEnds(pattern, name string, fold bool) bool {
	for i := 0; i < len(pattern); i++ {
		if pattern[i] >= utf8.RuneSelf {
			return true
		}
	}
	first := strings.IndexAny(pattern, "*?")
	if first < 0 {
		return len(name) == len(pattern) && asciiEqual(pattern, name, fold)
	}
	pre, suf := pattern[:first], pattern[strings.LastIndexAny(pattern, "*?")+1:]
	return len(name) >= len(pre)+len(suf) && asciiEqual(pre, name[:len(pre)], fold) && asciiEqual(suf, name[len(name)-len(suf):], fold)
}

// asciiEqual compares a and b byte for byte (with ASCII letters folded to
// lower case when fold is set).
func asciiEqual(a, b string, fold bool) bool {
	if !fold {
		return a == b
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// matchDP is match without the quick test.
func matchDP(pattern, name string, fold bool) bool {
	if fold {
		pattern, name = asciiLower(pattern), asciiLower(name)
	}
	// Dynamic programming over (pattern position, name position): linear in
	// len(pattern)*len(name), no exponential backtracking on hostile input.
	p, n := []rune(pattern), []rune(name)
	prev := make([]bool, len(n)+1)
	cur := make([]bool, len(n)+1)
	prev[0] = true
	for i := 0; i < len(p); {
		tok, width := p[i], 1
		if tok == '*' && i+1 < len(p) && p[i+1] == '*' {
			width = 2
		}
		for j := range cur {
			cur[j] = false
		}
		switch {
		case width == 2: // **
			for j := 0; j <= len(n); j++ {
				cur[j] = prev[j] || (j > 0 && cur[j-1])
			}
		case tok == '*':
			for j := 0; j <= len(n); j++ {
				cur[j] = prev[j] || (j > 0 && cur[j-1] && n[j-1] != '/')
			}
		case tok == '?':
			for j := 1; j <= len(n); j++ {
				cur[j] = prev[j-1] && n[j-1] != '/'
			}
		default:
			for j := 1; j <= len(n); j++ {
				cur[j] = prev[j-1] && n[j-1] == tok
			}
		}
		prev, cur = cur, prev
		i += width
	}
	return prev[len(n)]
}

func asciiLower(s string) string {
	// ASCII text (every path of a tree bomb, matched against every
	// pattern) is lowered bytewise, and returned as it is when it has no
	// upper case: strings.Map's rune loop was most of a walk's CPU.
	// Anything else goes through strings.Map (which also replaces
	// invalid UTF-8), as before.
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return strings.Map(lowerASCIIRune, s)
		}
		upper = upper || ('A' <= c && c <= 'Z')
	}
	if !upper {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func lowerASCIIRune(r rune) rune {
	if r >= 'A' && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}

func validPattern(kind, pat string) error {
	if pat == "" || len(pat) > MaxPatternLen || !utf8.ValidString(pat) {
		return fmt.Errorf("%s pattern %q: must be 1 to %d bytes of UTF-8", kind, pat, MaxPatternLen)
	}
	for _, c := range pat {
		if c < 0x20 || c == 0x7f || c == '\\' || c == '[' || c == ']' {
			return fmt.Errorf("%s pattern %q: control characters, \\, [ and ] are not allowed", kind, pat)
		}
	}
	if strings.Contains(pat, "***") {
		return fmt.Errorf("%s pattern %q: *** is not a pattern", kind, pat)
	}
	for _, seg := range strings.Split(pat, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%s pattern %q: empty, . or .. path segment", kind, pat)
		}
	}
	return nil
}

// ValidRefPattern checks a ref pattern: a full ref name (refs/...) that may
// hold wildcards.
func ValidRefPattern(pat string) error {
	if err := validPattern("ref", pat); err != nil {
		return err
	}
	if !strings.HasPrefix(pat, "refs/") {
		return fmt.Errorf("ref pattern %q: must start with refs/ (for example refs/heads/main or refs/tags/v*)", pat)
	}
	if strings.HasPrefix(pat, "refs/secure/") {
		return fmt.Errorf("ref pattern %q: refs/secure/ is git-secure's own metadata, guarded by the root and rules keys", pat)
	}
	return nil
}

// ValidPathPattern checks a file path pattern: relative, slash-separated,
// no empty, . or .. segments.
func ValidPathPattern(pat string) error {
	if err := validPattern("path", pat); err != nil {
		return err
	}
	if strings.HasPrefix(pat, "/") {
		return fmt.Errorf("path pattern %q: must be relative to the repository root (drop the leading /)", pat)
	}
	return nil
}
