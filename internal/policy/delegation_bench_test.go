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
