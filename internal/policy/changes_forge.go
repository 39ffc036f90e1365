package policy

import (
	"fmt"
	"slices"

	"github.com/git-secure/git-secure/internal/attest"
)

// forgeChanges describes what a staged change does to the forge apps (a
// root decision) and to the persons' forge accounts (a rules decision):
// an app whose key the stager holds records forge reviews approving
// anything as any mapped person, and an account moved to the stager's
// makes its reviews count as that person's, so neither may pass for a
// renewal.
func forgeChanges(base, staged *Policy) []string {
	var out []string
	keyOf := func(p *Policy) map[string]*ForgeApp {
		m := map[string]*ForgeApp{}
		for _, a := range p.ForgeApps() {
			m[a.Name] = a
		}
		return m
	}
	bk, sk := keyOf(base), keyOf(staged)
	for _, a := range staged.ForgeApps() {
		switch old, ok := bk[a.Name]; {
		case !ok:
			out = append(out, fmt.Sprintf("adds forge app %s (key %s, bound to %s)", a.Name, a.Fingerprint, a.Binding()))
		case old.Fingerprint != a.Fingerprint:
			out = append(out, fmt.Sprintf("changes forge app %s to key %s", a.Name, a.Fingerprint))
		case old.Forge != a.Forge || old.Repository != a.Repository:
			out = append(out, fmt.Sprintf("binds forge app %s to %s (was %s)", a.Name, a.Binding(), old.Binding()))
		}
	}
	for _, a := range base.ForgeApps() {
		if _, ok := sk[a.Name]; !ok {
			out = append(out, "removes forge app "+a.Name)
		}
	}
	var names []string
	for _, p := range []*Policy{staged, base} {
		for _, person := range p.Persons() {
			if !slices.Contains(names, person.Name) {
				names = append(names, person.Name)
			}
		}
	}
	slices.Sort(names)
	for _, name := range names {
		for _, forge := range attest.Forges {
			was, now := base.ForgeAccount(name, forge), staged.ForgeAccount(name, forge)
			switch {
			case was == now:
			case was == ForgeAccount{}:
				out = append(out, fmt.Sprintf("sets the %s account of %s to %s", forge, name, now))
			case now == ForgeAccount{}:
				out = append(out, fmt.Sprintf("removes the %s account of %s (was %s)", forge, name, was))
			default:
				out = append(out, fmt.Sprintf("changes the %s account of %s to %s (was %s)", forge, name, now, was))
			}
		}
	}
	return out
}
