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

// Attack: anyone may stage a change, and a signer sees what it does only
// through Changes (policy list --staged, and the refusals that show a
// foreign change). A change that trusted a forge app whose key the
// stager holds (who could then record forge reviews approving anything
// as any mapped person), or that moved a person's forge account to the
// stager's, was listed as "renews the expiry". Now Changes names forge
// apps and accounts added, changed and removed.
func TestChangesShowForge(t *testing.T) {
	f := newFixture(t)
	base, err := f.p.Clone()
	must(t, err)
	must(t, base.SetForgeAccount(f.p, "bob", "github", "bob-gh", "", t0))
	app := newTestKey(t, "bridge")
	rogue := newTestKey(t, "rogue bridge")
	must(t, base.AddForgeApp(f.p, "ci-bridge", app.Pub, "github", "acme/widget", t0))
	later := t0.Add(time.Hour)
	for _, tc := range []struct {
		name string
		edit func(p *Policy) error
		want []string
	}{
		{"a forge app added", func(p *Policy) error { return p.AddForgeApp(base, "helper", rogue.Pub, "github", "acme/widget", later) },
			[]string{"adds forge app helper (key " + rogue.FP + ", bound to github acme/widget)"}},
		{"a forge app rebound", func(p *Policy) error { return p.BindForgeApp(base, "ci-bridge", "github", "acme/other", later) },
			[]string{"binds forge app ci-bridge to github acme/other (was github acme/widget)"}},
		{"a forge account's id set", func(p *Policy) error { return p.SetForgeAccount(base, "bob", "github", "bob-gh", "583231", later) },
			[]string{"changes the github account of bob to bob-gh (id 583231) (was bob-gh)"}},
		{"a forge app's key replaced", func(p *Policy) error {
			if err := p.RemoveForgeApp(base, "ci-bridge", later); err != nil {
				return err
			}
			return p.AddForgeApp(base, "ci-bridge", rogue.Pub, "github", "acme/widget", later)
		}, []string{"changes forge app ci-bridge to key " + rogue.FP}},
		{"a forge app removed", func(p *Policy) error { return p.RemoveForgeApp(base, "ci-bridge", later) },
			[]string{"removes forge app ci-bridge"}},
		{"a forge account moved", func(p *Policy) error { return p.SetForgeAccount(base, "bob", "github", "mallory-gh", "", later) },
			[]string{"changes the github account of bob to mallory-gh (was bob-gh)"}},
		{"a forge account added", func(p *Policy) error { return p.SetForgeAccount(base, "carol", "github", "carol-gh", "", later) },
			[]string{"sets the github account of carol to carol-gh"}},
		{"a forge account removed", func(p *Policy) error { return p.SetForgeAccount(base, "bob", "github", "", "", later) },
			[]string{"removes the github account of bob (was bob-gh)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := base.Clone()
			must(t, err)
			must(t, tc.edit(p))
			if got := Changes(base, p); !slices.Equal(got, tc.want) {
				t.Errorf("Changes = %q, want %q", got, tc.want)
			}
		})
	}
}
