package policy

import (
	"slices"
	"testing"
	"time"
)

// TestChangesRuleFiles: a staged change to the delegations or to a team's
// rule file is shown as what it is, never as "renews the expiry" (a
// foreign change that only widens a rule file was shown so before).
func TestChangesRuleFiles(t *testing.T) {
	d := newDeleg(t)
	later := t0.Add(time.Hour)
	for _, tc := range []struct {
		name string
		edit func(p *Policy) error
		want []string
	}{
		{"a rule in a rule file", func(p *Policy) error {
			return p.AddRuleIn(d.p, "crypto", Rule{Name: "aes", Refs: []string{"refs/heads/main"}, Paths: []string{"src/crypto/aes/**"}, Allow: []string{"carol"}}, later)
		}, []string{"adds rule aes in rule file crypto (ref refs/heads/main, path src/crypto/aes/**, 1 of carol)"}},
		{"a rule in a rule file changed", func(p *Policy) error {
			if err := p.AddRuleIn(d.p, "crypto", Rule{Name: "aes", Refs: []string{"refs/heads/main"}, Paths: []string{"src/crypto/aes/**"}, Allow: []string{"erin"}}, later); err != nil {
				return err
			}
			base, err := p.Clone()
			if err != nil {
				return err
			}
			d.p = base
			if err := p.RemoveRuleIn(base, "crypto", "aes", later); err != nil {
				return err
			}
			return p.AddRuleIn(base, "crypto", Rule{Name: "aes", Refs: []string{"refs/heads/main"}, Paths: []string{"src/crypto/aes/**"}, Allow: []string{"carol"}}, later)
		}, []string{"changes rule aes in rule file crypto to ref refs/heads/main, path src/crypto/aes/**, 1 of carol"}},
		{"a delegation", func(p *Policy) error {
			return p.Delegate(d.p, "", Delegation{Name: "release", Refs: []string{"refs/heads/release/*"}, Signers: []string{"bob"}, Threshold: 1, Terminating: true}, later)
		}, []string{"adds delegation release (ref refs/heads/release/*, signed by 1 of bob, terminating)"}},
		{"a delegation removed", func(p *Policy) error { return p.RemoveDelegation(d.p, "crypto", later) },
			[]string{"removes delegation crypto"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := d.p
			p, err := base.Clone()
			must(t, err)
			must(t, tc.edit(p))
			if got := Changes(d.p, p); !slices.Equal(got, tc.want) {
				t.Errorf("Changes = %q, want %q", got, tc.want)
			}
			d.p = base
		})
	}
}
