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

func TestGlobalRuleForgeRefs(t *testing.T) {
	tests := []struct {
		name string
		refs []string
		ref  string
		want bool
	}{
		{"every ref, a branch", nil, "refs/heads/x", true},
		{"every ref, a pull request", nil, "refs/pull/1/head", false},
		{"every ref, a merge request", nil, "refs/merge-requests/1/head", false},
		{"every ref, a gerrit change", nil, "refs/changes/01/1/1", false},
		{"every ref, keep-around", nil, "refs/keep-around/abc", false},
		{"refs/**, a pull request", []string{"refs/**"}, "refs/pull/1/head", false},
		{"named, a pull request", []string{"refs/pull/*/head"}, "refs/pull/1/head", true},
		{"named, another kind", []string{"refs/pull/*/head"}, "refs/pull/1/merge", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &GlobalRule{Name: "g", Type: "x", Refs: tt.refs}
			if got := g.CoversRef(tt.ref); got != tt.want {
				t.Errorf("CoversRef(%q) with refs %q = %v, want %v", tt.ref, tt.refs, got, tt.want)
			}
		})
	}
}
