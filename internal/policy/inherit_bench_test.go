package policy

import (
	"fmt"
	"testing"

	"golang.org/x/crypto/ssh"
)

// benchOrg is an organisation policy at the limits: persons persons (alice
// and bob among them), the organisation's rule on main, and files rule
// files delegated to bob (src/teamN/**), each with a path rule on main,
// signed.
func benchOrg(b *testing.B, persons, files int) *Policy {
	b.Helper()
	root, alice, bob := newTestKey(b, "org-root"), newTestKey(b, "alice"), newTestKey(b, "bob")
	p, err := New(root.Pub, t0)
	must(b, err)
	add := []NewPerson{{Name: "alice", Keys: []ssh.PublicKey{alice.Pub}}, {Name: "bob", Keys: []ssh.PublicKey{bob.Pub}}}
	for i := len(add); i < persons; i++ {
		add = append(add, NewPerson{Name: fmt.Sprintf("person%d", i), Keys: []ssh.PublicKey{newTestKey(b, fmt.Sprintf("person%d", i)).Pub}})
	}
	must(b, p.AddPersons(nil, add, t0))
	must(b, p.AddRule(nil, Rule{Name: "org-main", Refs: []string{"refs/heads/main"}, Allow: []string{"alice", "bob"}, Threshold: 1}, t0))
	for i := 0; i < files; i++ {
		name := fmt.Sprintf("team%d", i)
		must(b, p.Delegate(nil, "", Delegation{Name: name, Paths: []string{fmt.Sprintf("src/team%d/**", i)}, Signers: []string{"bob"}}, t0))
		must(b, p.AddRuleIn(nil, name, Rule{Name: "code", Refs: []string{"refs/heads/main"}, Paths: []string{fmt.Sprintf("src/team%d/**", i)}, Allow: []string{"bob"}}, t0))
		must(b, p.SignRuleFile(name, bob.TUF))
	}
	must(b, p.SignRoot(root.TUF))
	must(b, p.SignTargets(root.TUF))
	return p
}

// BenchmarkInherit combines an organisation policy of 9 999 persons (the
// repository's carol makes policy.MaxPersons) with a repository's own, as verification does once
// per (repository policy, organisation version) an entry names, then asks
// which rules govern main: without organisation rule files, and with 100
// carried into the combination as the organisation judged them.
func BenchmarkInherit(b *testing.B) {
	for _, files := range []int{0, 100} {
		b.Run(fmt.Sprintf("persons=%d/rulefiles=%d", MaxPersons-1, files), func(b *testing.B) {
			org := benchOrg(b, MaxPersons-1, files)
			local, _ := localPolicy(b)
			b.ReportAllocs()
			for b.Loop() {
				m, err := Inherit(org, local)
				if err != nil {
					b.Fatal(err)
				}
				if rs := m.RulesFor("refs/heads/main"); len(rs) != 1+files {
					b.Fatalf("%d rules govern main, want %d", len(rs), 1+files)
				}
			}
		})
	}
}
