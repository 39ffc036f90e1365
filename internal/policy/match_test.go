package policy

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want, fold    bool
	}{
		{"refs/heads/main", "refs/heads/main", true, true},
		{"refs/heads/main", "refs/heads/main2", false, false},
		{"refs/heads/*", "refs/heads/feature", true, true},
		{"refs/heads/*", "refs/heads/feature/x", false, false},
		{"refs/heads/**", "refs/heads/feature/x", true, true},
		{"refs/tags/v*", "refs/tags/v1.2.3", true, true},
		{"refs/tags/v*", "refs/tags/x1", false, false},
		{"refs/tags/v?", "refs/tags/v1", true, true},
		{"refs/tags/v?", "refs/tags/v12", false, false},
		{"src/crypto/**", "src/crypto/aes/aes.go", true, true},
		{"src/crypto/**", "src/crypto", false, false},
		{"src/crypto/**", "SRC/Crypto/x.go", false, true},
		{"**/secret.txt", "a/b/secret.txt", true, true},
		{"**", "anything/at/all", true, true},
		{"a*b", "a/b", false, false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.name); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
		if got := MatchFold(tt.pattern, tt.name); got != tt.fold {
			t.Errorf("MatchFold(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.fold)
		}
	}
}

func TestMatchHostileIsFast(t *testing.T) {
	// Backtracking matchers take exponential time on this; ours is quadratic.
	p := strings.Repeat("*a", 200) + "b"
	if Match(p, strings.Repeat("a", 400)) {
		t.Fatal("matched")
	}
}

func TestValidPatterns(t *testing.T) {
	for _, bad := range []string{"", "heads/main", "refs/heads/../x", "refs//x", "refs/secure/rsl", "refs/heads/[ab]", "refs/heads/\x01"} {
		if ValidRefPattern(bad) == nil {
			t.Errorf("ValidRefPattern(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"", "/abs", "a/../b", "a//b", "./a"} {
		if ValidPathPattern(bad) == nil {
			t.Errorf("ValidPathPattern(%q) accepted", bad)
		}
	}
	for _, good := range []string{"refs/heads/main", "refs/tags/v*", "refs/heads/**"} {
		if err := ValidRefPattern(good); err != nil {
			t.Errorf("ValidRefPattern(%q): %v", good, err)
		}
	}
}

func FuzzMatch(f *testing.F) {
	f.Add("refs/heads/**", "refs/heads/a/b")
	f.Fuzz(func(t *testing.T, p, n string) {
		if len(p) > 64 || len(n) > 256 {
			return
		}
		_ = Match(p, n)
		_ = MatchFold(p, n)
	})
}
