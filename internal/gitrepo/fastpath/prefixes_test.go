package fastpath

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestPrefixesMatchesLinearScan: the sorted lookup agrees with trying every
// prefix, on prefixes that cover one another and names around them.
func TestPrefixesMatchesLinearScan(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	parts := []string{"refs/", "heads/", "pull/", "a", "ab", "b", "/", "1", "12", "x/"}
	word := func() string {
		var b strings.Builder
		for n := rng.Intn(5); n >= 0; n-- {
			b.WriteString(parts[rng.Intn(len(parts))])
		}
		return b.String()
	}
	for round := 0; round < 300; round++ {
		var prefixes []string
		for n := rng.Intn(8); n > 0; n-- {
			prefixes = append(prefixes, word())
		}
		ps := NewPrefixes(prefixes)
		for i := 0; i < 50; i++ {
			name := word()
			want := false
			for _, p := range prefixes {
				want = want || strings.HasPrefix(name, p)
			}
			if got := ps.Match(name); got != want {
				t.Fatalf("prefixes %q, name %q: Match %v, want %v", prefixes, name, got, want)
			}
		}
	}
}

func BenchmarkPrefixes10k(b *testing.B) {
	var prefixes, names []string
	for i := 0; i < 10_000; i++ {
		prefixes = append(prefixes, fmt.Sprintf("refs/pull/%d/", i))
		names = append(names, fmt.Sprintf("refs/pull/%d/head", i))
	}
	for i := 0; i < b.N; i++ {
		ps := NewPrefixes(prefixes)
		for _, n := range names {
			if !ps.Match(n) {
				b.Fatal(n)
			}
		}
	}
}

// BenchmarkPrefixesLinear10k is the scan Prefixes replaced, for comparison.
func BenchmarkPrefixesLinear10k(b *testing.B) {
	var prefixes, names []string
	for i := 0; i < 10_000; i++ {
		prefixes = append(prefixes, fmt.Sprintf("refs/pull/%d/", i))
		names = append(names, fmt.Sprintf("refs/pull/%d/head", i))
	}
	for i := 0; i < b.N; i++ {
		for _, n := range names {
			found := false
			for _, p := range prefixes {
				if strings.HasPrefix(n, p) {
					found = true
					break
				}
			}
			if !found {
				b.Fatal(n)
			}
		}
	}
}
