package policy

import (
	"strings"
	"testing"
)

// TestMatchQuickTestAgrees: match with its quick test of the literal ends
// answers as the dynamic programme alone does, on ASCII and non-ASCII
// patterns and names (invalid UTF-8, U+FFFD, case, wildcards at either
// end, literal patterns).
func TestMatchQuickTestAgrees(t *testing.T) {
	patterns := []string{
		"src/crypto/**", "**/*.key", "docs/*.md", "a/b/c", "*/x/**", "?", "**", "*", "src/?ey", "SRC/Crypto/**",
		"x*y*z", "**/secret.txt", "\ufffd/**", "caf\u00e9/**", "**/\u017f.key", "a**b", "lib/*/x/**",
	}
	names := []string{
		"src/crypto/aes.c", "SRC/CRYPTO/aes.c", "src/crypto", "src/cryptoX/a", "a/b.key", "b.KEY", "key",
		"docs/x.md", "docs/sub/x.md", "a/b/c", "A/B/C", "a/b/c/d", "q/x/r", "x", "", "src/key", "src/kEy",
		"xaybzc", "xyz", "deep/secret.txt", "\xff/a", "\ufffd/a", "caf\u00e9/x", "CAF\u00c9/x", "z/\u017f.key",
		"ab", "a/b", "a/x/b", "lib/q/x/y", "lib/x/y", "\xffsrc/crypto/a", "src/crypto/\xff",
	}
	for _, p := range patterns {
		for _, n := range names {
			for _, fold := range []bool{false, true} {
				if got, want := match(p, n, fold), matchDP(p, n, fold); got != want {
					t.Errorf("match(%q, %q, %v) = %v, the full match says %v", p, n, fold, got, want)
				}
			}
		}
	}
	// Longer random-ish names against every pattern.
	for i := range 2000 {
		var b strings.Builder
		for j := range i%17 + 1 {
			b.WriteString([]string{"src", "/", "crypto", "a", ".key", "K", "*", "x", "\u00e9", "\xfe", "md", "?"}[(i*7+j*3)%12])
		}
		n := b.String()
		for _, p := range patterns {
			for _, fold := range []bool{false, true} {
				if got, want := match(p, n, fold), matchDP(p, n, fold); got != want {
					t.Errorf("match(%q, %q, %v) = %v, the full match says %v", p, n, fold, got, want)
				}
			}
		}
	}
}
