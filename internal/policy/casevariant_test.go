package policy

import "testing"

func TestCaseVariantOf(t *testing.T) {
	d := newDeleg(t)
	p, err := d.p.Clone()
	must(t, err)
	must(t, p.Delegate(d.p, "", Delegation{Name: "releases", Refs: []string{"refs/heads/stable/*"}, Signers: []string{"dave"}, Threshold: 1}, t0))
	must(t, p.AddRuleIn(d.p, "security", Rule{Name: "hotfix", Refs: []string{"refs/heads/hotfix"}, Paths: []string{"src/crypto/**"}, Allow: []string{"dave"}}, t0))
	must(t, p.AddGlobalRule(d.p, GlobalRule{Name: "no-rewrite", Type: GlobalNoForcePush, Refs: []string{"refs/heads/keep"}}, t0))
	tests := []struct {
		ref, owner, pattern string
	}{
		// What the rules name as written, or do not name at all.
		{"refs/heads/main", "", ""},
		{"refs/heads/release/1.0", "", ""},
		{"refs/tags/v1", "", ""},
		{"refs/heads/dev", "", ""},
		{"refs/heads/Dev", "", ""},
		{"refs/pull/1/head", "", ""},
		// A second name for what they cover on a case-insensitive file
		// system, wherever the pattern is.
		{"refs/heads/Main", "rule main", "refs/heads/main"},
		{"refs/heads/MAIN", "rule main", "refs/heads/main"},
		{"refs/Heads/main", "rule main", "refs/heads/main"},
		{"refs/heads/Release/1.0", "rule main", "refs/heads/release/**"},
		{"refs/tags/V1", "rule tagged-docs", "refs/tags/v*"},
		{"refs/heads/KEEP", "global rule no-rewrite", "refs/heads/keep"},
		{"refs/heads/Stable/2", "delegation to rule file releases", "refs/heads/stable/*"},
		{"refs/heads/HotFix", "rule hotfix of rule file security", "refs/heads/hotfix"},
		// Beyond ASCII: the long s folds to s, the Kelvin sign to k.
		{"refs/heads/\u017ftable/2", "delegation to rule file releases", "refs/heads/stable/*"},
		{"refs/heads/\u212aeep", "global rule no-rewrite", "refs/heads/keep"},
	}
	for _, tc := range tests {
		t.Run(tc.ref, func(t *testing.T) {
			v, ok := p.CaseVariantOf(tc.ref)
			if ok != (tc.owner != "") || v.Owner != tc.owner || v.Pattern != tc.pattern {
				t.Fatalf("CaseVariantOf(%q) = %+v, %v; want %q %q", tc.ref, v, ok, tc.owner, tc.pattern)
			}
		})
	}
	var none *Policy
	if _, ok := none.CaseVariantOf("refs/heads/Main"); ok {
		t.Fatal("a nil policy names a variant")
	}
}

func TestReservedVariant(t *testing.T) {
	tests := []struct{ ref, want string }{
		{"refs/secure/rsl", ""},
		{"refs/secure/RSL", ""}, // inside the namespace: the exact prefix guards it
		{"refs/replace/0123", ""},
		{"refs/heads/secure/rsl", ""},
		{"refs/securex/rsl", ""},
		{"refs/Secure/rsl", "refs/secure/"},
		{"refs/SECURE/policy", "refs/secure/"},
		{"refs/secure./rsl", "refs/secure/"},
		{"refs/\u017fecure/rsl", "refs/secure/"},
		{"refs/Replace/0123", "refs/replace/"},
	}
	for _, tc := range tests {
		got, ok := ReservedVariant(tc.ref)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("ReservedVariant(%q) = %q, %v; want %q", tc.ref, got, ok, tc.want)
		}
	}
}
