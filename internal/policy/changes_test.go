package policy

import (
	"slices"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// TestChanges: what someone is shown before signing a staged change they
// did not make names every kind of change, and only the changes.
func TestChanges(t *testing.T) {
	f := newFixture(t)
	mal := newTestKey(t, "mallory")
	later := t0.Add(time.Hour)
	for _, tc := range []struct {
		name string
		edit func(p *Policy) error
		want []string
	}{
		{"nothing but the expiry", func(p *Policy) error { return p.Renew(f.p, false, later) }, []string{"renews the expiry"}},
		{"a person", func(p *Policy) error { return p.AddPerson(f.p, "mallory", []ssh.PublicKey{mal.Pub}, later) },
			[]string{"adds person mallory (" + mal.FP + ")"}},
		{"a person removed", func(p *Policy) error {
			if err := p.RemoveRule(f.p, "crypto", later); err != nil {
				return err
			}
			if err := p.RemoveRule(f.p, "tagged-docs", later); err != nil {
				return err
			}
			return p.RemovePerson(f.p, "carol", later)
		}, []string{"removes person carol", "removes rule crypto", "removes rule tagged-docs"}},
		{"a rule widened", func(p *Policy) error {
			if err := p.AddPerson(f.p, "mallory", []ssh.PublicKey{mal.Pub}, later); err != nil {
				return err
			}
			if err := p.RemoveRule(f.p, "main", later); err != nil {
				return err
			}
			return p.AddRule(f.p, Rule{Name: "main", Refs: []string{"refs/heads/main"}, Allow: []string{"mallory"}, Threshold: 1}, later)
		}, []string{"adds person mallory (" + mal.FP + ")", "changes rule main to ref refs/heads/main, 1 of mallory"}},
		{"a rules key", func(p *Policy) error { return p.AddRoleKey(f.p, "targets", mal.Pub, later) },
			[]string{"adds rules key " + mal.FP}},
		{"a global rule", func(p *Policy) error {
			return p.AddGlobalRule(f.p, GlobalRule{Name: "linear", Type: GlobalNoForcePush, Refs: []string{"refs/heads/*"}}, later)
		}, []string{"adds global rule linear (no-force-push on refs/heads/*)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := f.p.Clone()
			must(t, err)
			must(t, tc.edit(p))
			if got := Changes(f.p, p); !slices.Equal(got, tc.want) {
				t.Errorf("Changes = %q, want %q", got, tc.want)
			}
		})
	}
}
