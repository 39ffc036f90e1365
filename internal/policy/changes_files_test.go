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
	aes := func(who string) Rule {
		return Rule{Name: "aes", Refs: []string{"refs/heads/main"}, Paths: []string{"src/crypto/aes/**"}, Allow: []string{who}}
	}
	// withAES is d.p with erin's rule aes in her rule file.
	withAES, err := d.p.Clone()
	must(t, err)
	must(t, withAES.AddRuleIn(d.p, "crypto", aes("erin"), later))
	for _, tc := range []struct {
		name string
		base *Policy
		edit func(p, base *Policy) error
		want []string
	}{
		{"a rule in a rule file", d.p, func(p, base *Policy) error { return p.AddRuleIn(base, "crypto", aes("carol"), later) },
			[]string{"adds rule aes in rule file crypto (ref refs/heads/main, path src/crypto/aes/**, 1 of carol)"}},
		{"a rule in a rule file changed", withAES, func(p, base *Policy) error {
			if err := p.RemoveRuleIn(base, "crypto", "aes", later); err != nil {
				return err
			}
			return p.AddRuleIn(base, "crypto", aes("carol"), later)
		}, []string{"changes rule aes in rule file crypto to ref refs/heads/main, path src/crypto/aes/**, 1 of carol"}},
		{"a delegation", d.p, func(p, base *Policy) error {
			return p.Delegate(base, "", Delegation{Name: "release", Refs: []string{"refs/heads/release/*"}, Signers: []string{"bob"}, Threshold: 1, Terminating: true}, later)
		}, []string{"adds delegation release (ref refs/heads/release/*, signed by 1 of bob, terminating)"}},
		{"a delegation removed", d.p, func(p, base *Policy) error { return p.RemoveDelegation(base, "crypto", later) },
			[]string{"removes delegation crypto"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.base.Clone()
			must(t, err)
			must(t, tc.edit(p, tc.base))
			if got := Changes(tc.base, p); !slices.Equal(got, tc.want) {
				t.Errorf("Changes = %q, want %q", got, tc.want)
			}
		})
	}
}
