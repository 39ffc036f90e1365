package policy

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCoversPathOtherSpellings: a path rule on src/crypto/** covers every
// spelling of a protected file that a case-insensitive macOS checkout
// (APFS/HFS+) or a Windows one (NTFS/Win32) would store as that file, and
// still leaves ordinary other files alone.
func TestCoversPathOtherSpellings(t *testing.T) {
	r := &Rule{Name: "crypto", Paths: []string{"src/crypto/**"}}
	tests := []struct {
		name, path string
		want       bool
	}{
		{"the protected path", "src/crypto/aes.c", true},
		{"ASCII case", "SRC/Crypto/AES.C", true},
		{"U+017F long s folds to s", "\u017frc/crypto/aes.c", true},
		{"U+200C zero width non-joiner (HFS+ ignores it)", "src/cry\u200cpto/aes.c", true},
		{"U+200D zero width joiner", "src/crypto\u200d/aes.c", true},
		{"U+200E left-to-right mark", "\u200esrc/crypto/aes.c", true},
		{"U+202E right-to-left override", "src/cr\u202eypto/aes.c", true},
		{"U+206F nominal digit shapes", "src/crypto/aes.c\u206f", true},
		{"U+FEFF byte order mark (HFS+ ignores it)", "src/crypto\ufeff/aes.c", true},
		{"trailing dot (Win32 strips it)", "src/crypto./aes.c", true},
		{"trailing space (Win32 strips it)", "src/crypto /aes.c", true},
		{"trailing dots and spaces", "src/crypto. . ./aes.c", true},
		{"NTFS default stream", "src/crypto/aes.c::$DATA", true},
		{"NTFS named stream of the directory", "src/crypto:x/aes.c", true},
		{"backslash separators (Windows)", `src\crypto\aes.c`, true},
		{"everything at once", "\u017fRC/C\u200cRYPTO.\ufeff /aes.c", true},
		{"a symlink spelled like the top directory", "\u017frc", true},
		{"a file spelled like the protected directory", "src/Crypto.", true},
		{"ASCII case of the top directory", "SRC", true},
		{"the directory itself as a file", "src", true},
		{"a longer name", "srcs", false},
		{"another directory", "src/cryptography/aes.c", false},
		{"a sibling file", "src/crypto.c", false},
		{"a dotted sibling", "src/crypto.d/aes.c", false},
		{"a README", "README.md", false},
		{"similar but distinct letter (no fold)", "src/crypt\u00f6/aes.c", false},
	}
	for _, tt := range tests {
		if got := r.CoversPath(tt.path); got != tt.want {
			t.Errorf("%s: CoversPath(%q) = %v, want %v (key %q)", tt.name, tt.path, got, tt.want, FoldPath(tt.path))
		}
	}
}

// TestMatchFoldPatternSpellings: the pattern goes through the same key, so
// a pattern written in any spelling protects every spelling.
func TestMatchFoldPatternSpellings(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"caf\u00e9/**", "cafe\u0301/x", true},     // NFC pattern, NFD name (HFS+)
		{"cafe\u0301/**", "caf\u00e9/x", true},     // NFD pattern, NFC name
		{"CAF\u00c9/**", "caf\u00e9/x", true},      // non-ASCII case
		{"stra\u00dfe/*", "STRASSE/x", true},       // full folding: ß is ss
		{"\u03a3\u03b1/*", "\u03c3\u03b1/x", true}, // Σ and σ
		{"\u03a3\u03b1/*", "\u03c2\u03b1/x", true}, // and final ς
		{"keys/**", "\u212aEYS/x", true},           // U+212A KELVIN SIGN is K
		{"docs/*.md", "docs/a.md.", true},
		{"docs/*.md", "docs/a.txt", false},
		{"src/*", `src\a`, true}, // the old matcher's '*' already took '\'
	}
	for _, tt := range tests {
		if got := MatchFold(tt.pattern, tt.name); got != tt.want {
			t.Errorf("MatchFold(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestProtectsDirectory(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"src/crypto/**", "src", true},
		{"src/crypto/**", "src/crypto", true},
		{"src/crypto/**", "src/crypto/aes.c", false}, // a file under it: the ordinary match
		{"src/crypto/*.c", "src/crypto", true},
		{"src/aes.c", "src", true},
		{"src/aes.c", "src/aes.c", false},
		{"**/secret.txt", "docs", false},
		{"*/crypto/**", "src/crypto", false},
		{"src/*/keys/**", "src", true},
		{"src/*/keys/**", "src/x", false},
		{"README.md", "README.md", false},
	}
	for _, tt := range tests {
		if got := protectsDirectory(FoldPath(tt.pattern), FoldPath(tt.path)); got != tt.want {
			t.Errorf("protectsDirectory(%q, %q) = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
}

func TestFoldPath(t *testing.T) {
	tests := map[string]string{
		"src/Crypto/AES.c":           "src/crypto/aes.c",
		"\u017frc/crypto/aes.c":      "src/crypto/aes.c",
		"src/cry\u200cpto/aes.c":     "src/crypto/aes.c",
		"src/crypto\ufeff/aes.c":     "src/crypto/aes.c",
		"src/crypto./aes.c":          "src/crypto/aes.c",
		"src/crypto /aes.c":          "src/crypto/aes.c",
		"src/crypto/aes.c::$DATA":    "src/crypto/aes.c",
		"a/.../b":                    "a/.../b", // nothing would remain
		"a/:x":                       "a/:x",
		"\xff\xfe":                   "\ufffd\ufffd",
		"cafe\u0301":                 "caf\u00e9",
		"stra\u00dfe":                "strasse",
		"\u0130stanbul":              "i\u0307stanbul",
		"ordinary/path-with_.dots.c": "ordinary/path-with_.dots.c",
	}
	for in, want := range tests {
		if got := FoldPath(in); got != want {
			t.Errorf("FoldPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzFoldPath(f *testing.F) {
	for _, s := range []string{"src/crypto/aes.c", "\u017frc/crypto/aes.c", "src/cry\u200cpto/aes.c", "src/crypto\ufeff/aes.c",
		"src/crypto./aes.c", "src/crypto /aes.c", "a::$DATA", `a\b`, "cafe\u0301", "\u1fb3\u0345", "\u0390", "\xff", "\u0130I\u0131i"} {
		f.Add(s, "src/crypto/**")
	}
	f.Fuzz(func(t *testing.T, name, pattern string) {
		if len(name) > 256 || len(pattern) > 64 {
			return
		}
		k := FoldPath(name)
		if !utf8.ValidString(k) {
			t.Fatalf("FoldPath(%q) = %q, not UTF-8", name, k)
		}
		if again := FoldPath(k); again != k {
			t.Fatalf("not idempotent: FoldPath(%q) = %q, FoldPath of that = %q", name, k, again)
		}
		if lower, upper := FoldPath(asciiLower(name)), FoldPath(asciiUpper(name)); lower != k || upper != k {
			t.Fatalf("ASCII case changes the key of %q: %q, lower %q, upper %q", name, k, lower, upper)
		}
		if plainASCII(name) && k != asciiLower(name) {
			t.Fatalf("plain ASCII %q has key %q, want %q", name, k, asciiLower(name))
		}
		if strings.Count(k, "/") != strings.Count(strings.ReplaceAll(name, `\`, "/"), "/") {
			t.Fatalf("FoldPath(%q) = %q changes the number of components", name, k)
		}
		// Never less than the ASCII fold, and a name always covers itself.
		if match(pattern, name, true) && !MatchFold(pattern, name) {
			t.Fatalf("MatchFold(%q, %q) is false where the ASCII fold matched", pattern, name)
		}
		if !strings.ContainsAny(name, "*?") && !MatchFold(name, name) {
			t.Fatalf("MatchFold(%q, itself) is false", name)
		}
	})
}

func asciiUpper(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, s)
}

func TestShowPath(t *testing.T) {
	for in, want := range map[string]string{
		"src/crypto/aes.c":       "src/crypto/aes.c",
		"SRC/Crypto/AES.c":       "SRC/Crypto/AES.c",
		"src/cry\u200cpto/aes.c": `"src/cry\u200cpto/aes.c" (src/crypto/aes.c on a macOS or Windows checkout)`,
		"src/crypto /aes.c":      `"src/crypto /aes.c" (src/crypto/aes.c on a macOS or Windows checkout)`,
		"caf\u00e9/x":            "caf\u00e9/x", // already its own key
		"cafe\u0301/x":           `"cafe\u0301/x" (caf` + "\u00e9" + `/x on a macOS or Windows checkout)`,
	} {
		if got := ShowPath(in); got != want {
			t.Errorf("ShowPath(%q) = %s, want %s", in, got, want)
		}
	}
}

// BenchmarkCoversPath: what a path rule costs per changed file, for plain
// names (the ASCII fast path) and for names that need the full key.
func BenchmarkCoversPath(b *testing.B) {
	r := &Rule{Paths: []string{"src/crypto/**", "docs/*.md", "keys/**"}}
	for _, path := range []string{"internal/verify/decide.go", "\u6587\u6863/\u8bf4\u660e/\u30c6\u30b9\u30c8.md"} {
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				r.CoversPath(path)
			}
		})
	}
}

// TestRuleCoversAttributes: a .gitattributes file above protected files
// changes what checkouts and git archive make of them (export-ignore drops
// src/crypto/verify.go from a release tarball while the file is
// unchanged), so a path rule covers it; one beside unrelated files is free.
func TestRuleCoversAttributes(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"src/crypto/**", ".gitattributes", true},
		{"src/crypto/**", ".GitAttributes", true}, // the same file on a macOS or Windows checkout
		{"src/crypto/**", "src/.gitattributes", true},
		{"src/crypto/**", "src/crypto/.gitattributes", true},
		{"src/crypto/**", "src/crypto/aes/.gitattributes", true},
		{"src/crypto/**", "docs/.gitattributes", false},
		{"src/crypto/**", "src/net/.gitattributes", false},
		{"src/aes.c", "src/.gitattributes", true},
		{"src/aes.c", "src/x/.gitattributes", false},
		{"**/secret.txt", "docs/deep/.gitattributes", true},
		{"*/crypto/**", "lib/crypto/.gitattributes", true},
		{"src/crypto/**", "src/gitattributes", false},
		{"src/crypto/**", "README.md", false},
		// The root's .gitmodules says where submodules in protected
		// paths come from; git reads no other.
		{"src/crypto/**", ".gitmodules", true},
		{"src/crypto/**", ".GitModules", true},
		{"src/crypto/**", "src/.gitmodules", false},
		{"**/secret.txt", ".gitmodules", true},
	}
	for _, tt := range tests {
		r := &Rule{Name: "crypto", Paths: []string{tt.pattern}}
		if got := r.CoversPath(tt.path); got != tt.want {
			t.Errorf("rule on %q covers %q = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
}

// protectsDirectorySplit is protectsDirectory as it was, splitting the
// pattern into components (FuzzProtectsDirectory compares them).
func protectsDirectorySplit(patternKey, key string) bool {
	comps := strings.Split(patternKey, "/")
	dir := ""
	for _, c := range comps[:len(comps)-1] {
		if strings.ContainsAny(c, "*?") {
			return false
		}
		if dir != "" {
			dir += "/"
		}
		dir += c
		if dir == key {
			return true
		}
	}
	return false
}

// FuzzProtectsDirectory: protectsDirectory, which no longer splits the
// pattern, answers as the split did.
func FuzzProtectsDirectory(f *testing.F) {
	for _, seed := range [][2]string{
		{"src/crypto/**", "src"}, {"src/crypto/**", "src/crypto"}, {"src/aes.c", "src/aes.c"},
		{"*/crypto/**", "src/crypto"}, {"src/*/keys/**", "src"}, {"a//b", "a/"}, {"/x", ""}, {"", ""}, {"a/b", "a/b/"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, key string) {
		if got, want := protectsDirectory(pattern, key), protectsDirectorySplit(pattern, key); got != want {
			t.Fatalf("protectsDirectory(%q, %q) = %v, the split said %v", pattern, key, got, want)
		}
	})
}

// FuzzASCIILower: asciiLower, which lowers ASCII bytewise, answers as
// strings.Map over runes did (invalid UTF-8 replaced, non-ASCII kept).
func FuzzASCIILower(f *testing.F) {
	for _, seed := range []string{"", "src/crypto/aes.c", "SRC/Crypto/AES.C", "caf\u00e9/X", "\xff\xfeA", "A\x80", "\u017f", "@[`{"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := strings.Map(func(r rune) rune {
			if r >= 'A' && r <= 'Z' {
				return r + 'a' - 'A'
			}
			return r
		}, s)
		if got := asciiLower(s); got != want {
			t.Fatalf("asciiLower(%q) = %q, strings.Map said %q", s, got, want)
		}
	})
}
