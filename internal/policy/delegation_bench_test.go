package policy

import (
	"fmt"
	"testing"
)

// BenchmarkParseRuleFiles decodes a policy with 100 rule files (every file
// checked strictly, its signature verified, its namespace checked): what
// verification pays once per policy entry.
func BenchmarkParseRuleFiles(b *testing.B) {
	fx := newFixture(b)
	base := fx.p
	p, err := base.Clone()
	must(b, err)
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("team%d", i)
		must(b, p.Delegate(base, "", Delegation{Name: name, Paths: []string{fmt.Sprintf("src/team%d/**", i)}, Signers: []string{"bob"}}, t0))
		must(b, p.AddRuleIn(base, name, Rule{Name: "code", Refs: []string{"refs/heads/main"}, Paths: []string{fmt.Sprintf("src/team%d/**", i)}, Allow: []string{"bob"}}, t0))
	}
	for i := 0; i < 100; i++ {
		must(b, p.SignRuleFile(fmt.Sprintf("team%d", i), fx.bob.TUF))
	}
	r, tg := encode(b, p)
	files, err := p.EncodeRuleFiles()
	must(b, err)
	b.ReportAllocs()
	for b.Loop() {
		q, err := ParseFiles(r, tg, files)
		if err != nil || len(q.RuleFiles()) != 100 || q.RuleFiles()[99].Untrusted != "" {
			b.Fatal(err)
		}
	}
}

// BenchmarkRulesForRefsNamedNowhere asks RulesFor for 1 000 refs that no
// rule names, in a policy with a path rule without ref patterns and 100
// rule files: the worst case of namedByRefPattern, which walks every rule
// file's rules for such a ref (verify asks once per ref; answers cached).
func BenchmarkRulesForRefsNamedNowhere(b *testing.B) {
	fx := newFixture(b)
	base := fx.p
	p, err := base.Clone()
	must(b, err)
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("team%d", i)
		must(b, p.Delegate(base, "", Delegation{Name: name, Paths: []string{fmt.Sprintf("src/team%d/**", i)}, Signers: []string{"bob"}}, t0))
		must(b, p.AddRuleIn(base, name, Rule{Name: "code", Refs: []string{"refs/heads/main"}, Paths: []string{fmt.Sprintf("src/team%d/**", i)}, Allow: []string{"bob"}}, t0))
		must(b, p.SignRuleFile(name, fx.bob.TUF))
	}
	r, tg := encode(b, p)
	files, err := p.EncodeRuleFiles()
	must(b, err)
	refs := make([]string, 1000)
	for i := range refs {
		refs[i] = fmt.Sprintf("refs/heads/review/topic-%d", i)
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		q, err := ParseFiles(r, tg, files)
		must(b, err)
		b.StartTimer()
		for _, ref := range refs {
			if len(q.RulesFor(ref)) != 0 {
				b.Fatal(ref)
			}
		}
	}
}
