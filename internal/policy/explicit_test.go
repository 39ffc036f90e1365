package policy

import "testing"

func TestNamesExplicitly(t *testing.T) {
	const tip = "refs/replace/0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name string
		rule Rule
		ref  string
		want bool
	}{
		{"exact ref", Rule{Refs: []string{tip}}, tip, true},
		{"namespace wildcard", Rule{Refs: []string{"refs/replace/*"}}, tip, true},
		{"namespace double wildcard", Rule{Refs: []string{"refs/replace/**"}}, tip, true},
		{"another replace ref", Rule{Refs: []string{"refs/replace/aaaa"}}, tip, false},
		{"catch-all refs/**", Rule{Refs: []string{"refs/**"}}, tip, false},
		{"catch-all **", Rule{Refs: []string{"**"}}, tip, false},
		{"wildcard before the namespace", Rule{Refs: []string{"refs/*/0123456789abcdef0123456789abcdef01234567"}}, tip, false},
		{"wildcard inside the prefix", Rule{Refs: []string{"refs/repl*/**"}}, tip, false},
		{"path rule covers every ref", Rule{Paths: []string{"src/**"}}, tip, false},
		{"other ref patterns", Rule{Refs: []string{"refs/heads/main", "refs/replace/*"}}, tip, true},
		{"prefix of the prefix", Rule{Refs: []string{"refs/replace/*"}}, "refs/replacement/x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rule.NamesExplicitly(tt.ref, ReplaceRefPrefix); got != tt.want {
				t.Errorf("NamesExplicitly(%q) with refs %q paths %q = %v, want %v", tt.ref, tt.rule.Refs, tt.rule.Paths, got, tt.want)
			}
		})
	}
}
