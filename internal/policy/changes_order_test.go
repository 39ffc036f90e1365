package policy

import (
	"slices"
	"testing"
	"time"
)

// Attack: the order of the delegations is their precedence (a terminating
// delegation listed earlier shadows the later ones for the items both
// match), but a staged change that only reorders them was listed as no
// change at all. Anyone may stage a change; the rules keys, shown nothing
// by policy list --staged, signed one that put the release team's
// terminating delegation (refs/heads/**) before the security team's
// (src/crypto/**), whose rules then stopped applying to src/crypto on
// every branch. Now Changes names the new order and the old.
func TestChangesShowDelegationOrder(t *testing.T) {
	d := newDeleg(t)
	later := t0.Add(time.Hour)
	base, err := d.p.Clone()
	must(t, err)
	must(t, base.Delegate(d.p, "", Delegation{Name: "release", Refs: []string{"refs/heads/**"}, Signers: []string{"bob"}, Threshold: 1, Terminating: true}, later))
	must(t, base.SignRuleFile("release", d.bob.TUF))
	staged, err := base.Clone()
	must(t, err)
	roles := staged.Targets.Signed.Delegations.Roles
	var idx []int
	for i, r := range roles {
		if r.Name == "security" || r.Name == "release" {
			idx = append(idx, i)
		}
	}
	roles[idx[0]], roles[idx[1]] = roles[idx[1]], roles[idx[0]]
	staged.Targets.Signed.Version++
	must(t, staged.reindex())
	if got := []string{staged.Delegations("")[0].Name, staged.Delegations("")[1].Name}; !slices.Equal(got, []string{"release", "security"}) {
		t.Fatalf("the staged change's order is %v", got)
	}
	want := "changes the order of the delegations of targets.json to release, security (was security, release): an earlier terminating delegation shadows the later ones"
	if got := Changes(base, staged); !slices.Contains(got, want) {
		t.Errorf("Changes = %q, want it to contain %q", got, want)
	}
}
