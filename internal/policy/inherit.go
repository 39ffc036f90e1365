package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Inherit returns the policy that judges an entry of a repository whose
// own policy is local and that inherits the organisation policy org: the
// organisation's persons, teams, global rules and rules come first, the
// repository's own are added below them. local's root (root and rules
// keys, freshness, forge apps) and its rule files stay its own; the
// result is for judging entries only and carries no valid targets
// signature (policy changes are judged on local itself).
//
// Rules add up (every rule covering an update must be met), so nothing
// local can weaken an organisation rule except by taking one of its names;
// Inherit refuses that: a local person of an organisation person's name
// with other keys or with forge accounts, a key two persons of different
// names hold, a team of an organisation team's name with other members, a
// rule, global rule or delegation with an organisation rule's name, a
// rule file or rule with an organisation rule file's name. The
// organisation's rule files are carried in as the organisation judged
// them (carryOrgFiles): the repository cannot sign, re-judge or widen
// them, and a file that names a person the organisation removed counts
// for nothing there too (its namespace fails closed), whatever persons
// the repository lists. An organisation policy that itself inherits is
// refused (not supported).
func Inherit(org, local *Policy) (*Policy, error) {
	if local.inherited || org.inherited {
		return nil, fmt.Errorf("policy: Inherit of a policy that already inherits")
	}
	if org.Org() != nil {
		return nil, fmt.Errorf("policy: the organisation policy itself inherits an organisation policy; nesting is not supported")
	}
	if err := orgFilesUnclashed(org, local); err != nil {
		return nil, err
	}
	out, err := local.Clone()
	if err != nil {
		return nil, err
	}
	revoked := map[string]bool{}
	for _, r := range org.revoked {
		revoked[r.Fingerprint] = true
	}
	persons, err := mergePersons(org.persons, local.persons, revoked)
	if err != nil {
		return nil, err
	}
	if err := orgPersonsUnmapped(org, local); err != nil {
		return nil, err
	}
	teams, err := mergeTeams(org.teams, local.teams)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, g := range org.global {
		names[g.Name] = true
	}
	for _, g := range local.global {
		if names[g.Name] {
			return nil, inheritConflict("global rule %s is the organisation's: give the repository's global rule another name", g.Name)
		}
	}
	names = map[string]bool{}
	for _, r := range org.rules {
		names[r.Name] = true
	}
	for _, r := range local.rules {
		if names[r.Name] {
			return nil, inheritConflict("rule %s is the organisation's: give the repository's rule another name", r.Name)
		}
	}
	for _, d := range local.delegations {
		if names[d.Name] {
			return nil, inheritConflict("delegation %s has the name of an organisation rule: give it another name", d.Name)
		}
	}
	out.teams = teams
	out.global = append(slices.Clone(org.global), local.global...)
	rules := append(slices.Clone(org.rules), local.rules...)
	if err := out.rebuildTargets(persons, rules); err != nil {
		return nil, fmt.Errorf("policy: inherit the organisation policy: %w", err)
	}
	out.inherited = true
	from := make(map[string]uint64, len(revoked))
	for fp := range revoked {
		from[fp] = org.RevokedFrom(fp)
	}
	out.dropOrgRevoked(from)
	out.rejudgeLocalFiles(revoked)
	out.carryOrgFiles(org)
	return out, nil
}

// rejudgeLocalFiles judges the repository's rule files again once the
// keys the organisation revoked are dropped: they were judged against
// the combined persons with those keys (rebuildTargets), so a file signed
// only by such a key counted, for instance one a repository person of an
// organisation person's name signed and the repository then removed (the
// organisation's person of that name, same keys, made it count again).
// Such a file now counts for nothing (its namespace fails closed), saying
// which revoked key of whom signed it.
func (p *Policy) rejudgeLocalFiles(revoked map[string]bool) {
	if len(revoked) == 0 || len(p.nodes) == 0 {
		return
	}
	untrusted := map[string]bool{}
	for _, n := range p.nodes {
		f := n.file
		if f.Meta == nil { // missing: counts for nothing already
			untrusted[n.d.Name] = true
			continue
		}
		var byRevoked []string
		for person, fps := range f.SignedKeys {
			for _, fp := range fps {
				if revoked[fp] {
					byRevoked = append(byRevoked, fmt.Sprintf("key %s of %s", fp, person))
				}
			}
		}
		slices.Sort(byRevoked)
		was := f.Untrusted
		f.Untrusted = ""
		p.judgeRuleFile(n, f)
		n.blocked = n.d.Parent != "" && untrusted[n.d.Parent]
		if n.blocked && f.Untrusted == "" {
			f.Untrusted = "a rule file above it counts for nothing"
		}
		if f.Untrusted != "" && was == "" && len(byRevoked) > 0 {
			f.Untrusted += fmt.Sprintf(" (the organisation policy revokes %s, which signed it)", strings.Join(byRevoked, ", "))
		}
		untrusted[n.d.Name] = f.Untrusted != ""
	}
	p.rulesFor = &rulesCache{byRef: map[string][]*Rule{}}
}

// carryOrgFiles puts the organisation's rule files into p's delegation
// search as the organisation judged them (against its own delegations,
// persons and keys): first, so that TUF order is the organisation's
// files, then the repository's. Each tree keeps its own terminating
// delegations (a shadow is computed within its policy only), so neither
// side's delegation order switches off the other's rules. The nodes are
// copied: a later edit of org changes nothing here.
func (p *Policy) carryOrgFiles(org *Policy) {
	if len(org.nodes) == 0 {
		return
	}
	copies := make(map[*node]*node, len(org.nodes))
	out := make([]*node, 0, len(org.nodes)+len(p.nodes))
	for _, n := range org.nodes {
		f := *n.file
		f.Rules = slices.Clone(f.Rules)
		f.Delegations = slices.Clone(f.Delegations)
		f.Outside = slices.Clone(f.Outside)
		c := &node{d: n.d, chain: slices.Clone(n.chain), file: &f, blocked: n.blocked, org: true}
		copies[n] = c
		out = append(out, c)
	}
	for _, n := range org.nodes {
		for _, t := range n.shadows {
			copies[n].shadows = append(copies[n].shadows, copies[t])
		}
	}
	p.nodes = append(out, p.nodes...)
	p.rulesFor = &rulesCache{byRef: map[string][]*Rule{}}
}

// orgFilesUnclashed refuses a repository rule file, rule or delegation
// that takes the name of an organisation rule file, and a repository rule
// file of an organisation rule's name: the combined search names rules
// FILE:RULE and files by name, so one name would stand for two files.
func orgFilesUnclashed(org, local *Policy) error {
	orgFiles := map[string]*node{}
	for _, n := range org.nodes {
		orgFiles[n.d.Name] = n
	}
	for _, n := range local.nodes {
		if o, ok := orgFiles[n.d.Name]; ok {
			return inheritConflict("rule file %s is both the organisation's (delegated: rules keys -> %s) and the repository's (delegated: rules keys -> %s): give the repository's rule file another name",
				n.d.Name, strings.Join(chainNames(o.chain), " -> "), strings.Join(chainNames(n.chain), " -> "))
		}
		if _, ok := org.Rule(n.d.Name); ok {
			return inheritConflict("the repository's rule file %s has the name of the organisation's rule %s: give the repository's rule file another name", n.d.Name, n.d.Name)
		}
	}
	for _, r := range local.rules {
		if o, ok := orgFiles[r.Name]; ok {
			return inheritConflict("the repository's rule %s has the name of the organisation's rule file %s (delegated: rules keys -> %s): give the repository's rule another name",
				r.Name, r.Name, strings.Join(chainNames(o.chain), " -> "))
		}
	}
	return nil
}

func chainNames(chain []*Delegation) []string {
	out := make([]string, len(chain))
	for i, d := range chain {
		out[i] = d.Name
	}
	return out
}

// dropOrgRevoked makes the keys the organisation revoked (fingerprint ->
// the organisation's entry it is revoked from) no keys of their persons:
// they stay listed in the stored metadata (a person needs a key), but no
// lookup finds them, so nothing they sign (entries, approvals, test runs,
// push certificates) counts. Who held each is kept for the messages.
func (p *Policy) dropOrgRevoked(from map[string]uint64) {
	p.orgRevoked = make(map[string]OrgRevocation, len(from))
	for fp, n := range from {
		p.orgRevoked[fp] = OrgRevocation{Fingerprint: fp, FromEntry: n}
	}
	if len(from) == 0 {
		return
	}
	for _, person := range p.persons {
		kept := make([]*Key, 0, len(person.Keys))
		for _, k := range person.Keys {
			r, ok := p.orgRevoked[k.Fingerprint]
			if !ok {
				kept = append(kept, k)
				continue
			}
			r.Person = person.Name
			p.orgRevoked[k.Fingerprint] = r
			delete(p.ownerFP, k.Fingerprint)
			delete(p.byFP, k.Fingerprint)
			delete(p.personKeys, k.ID)
		}
		person.Keys = kept
	}
}

// OrgRevocation is a key the organisation policy revokes, as a repository
// that inherits it sees it.
type OrgRevocation struct {
	Fingerprint string
	// FromEntry is the organisation log's entry the revocation counts
	// from there (trust revoke-key --from-entry); in an inheriting
	// repository the key signs nothing from the first entry judged under
	// a version that revokes it, whatever this number.
	FromEntry uint64
	// Person held the key in the organisation policy ("" if none did).
	Person string
}

// RevokedByOrg reports whether the organisation policy p inherits (p is
// the result of Inherit) revokes key fp. Such a key is no key of its
// person in p: whatever the organisation's log numbers it from, nothing it
// signs counts in an inheriting repository from the first entry judged
// under a version that revokes it.
func (p *Policy) RevokedByOrg(fp string) bool {
	_, ok := p.orgRevoked[fp]
	return ok
}

// OrgRevoked returns the organisation's revocation of key fp, when the
// organisation policy p inherits revokes it.
func (p *Policy) OrgRevoked(fp string) (OrgRevocation, bool) {
	r, ok := p.orgRevoked[fp]
	return r, ok
}

// Inherited reports whether p is the result of Inherit: the policy that
// judges entries, not one to edit or store.
func (p *Policy) Inherited() bool { return p.inherited }

// ErrInheritConflict is wrapped when a repository's policy cannot be
// combined with its organisation's.
var ErrInheritConflict = fmt.Errorf("policy: conflicts with the organisation policy")

func inheritConflict(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInheritConflict, fmt.Sprintf(format, args...))
}

// mergePersons lists org's persons then local's; a person both list must
// hold the same keys, and no key may belong to two names. A local person
// may not hold a key the organisation revoked.
func mergePersons(org, local []*Person, revoked map[string]bool) ([]*Person, error) {
	out := slices.Clone(org)
	byName := map[string]*Person{}
	owner := map[string]string{}
	for _, p := range org {
		byName[p.Name] = p
		for _, k := range p.Keys {
			owner[k.Fingerprint] = p.Name
		}
	}
	for _, p := range local {
		for _, k := range p.Keys {
			if revoked[k.Fingerprint] {
				return nil, inheritConflict("key %s of the repository's person %s is revoked by the organisation policy: remove it from the repository's policy (git secure policy remove-key)", k.Fingerprint, p.Name)
			}
		}
		if o, ok := byName[p.Name]; ok {
			if !sameKeys(o, p) {
				return nil, inheritConflict("person %s is in the organisation policy with other keys: remove the repository's person %s, or give the same keys", p.Name, p.Name)
			}
			continue
		}
		for _, k := range p.Keys {
			if name, ok := owner[k.Fingerprint]; ok {
				return nil, inheritConflict("key %s of the repository's person %s is the organisation's person %s's: remove the repository's person", k.Fingerprint, p.Name, name)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

func sameKeys(a, b *Person) bool {
	fa, fb := make([]string, 0, len(a.Keys)), make([]string, 0, len(b.Keys))
	for _, k := range a.Keys {
		fa = append(fa, k.Fingerprint)
	}
	for _, k := range b.Keys {
		fb = append(fb, k.Fingerprint)
	}
	slices.Sort(fa)
	slices.Sort(fb)
	return slices.Equal(fa, fb)
}

// orgPersonsUnmapped refuses forge accounts the repository gives a person
// of the organisation (a copy of theirs with the same keys): a forge app
// of the repository (its root's) records the reviews of a mapped account
// as that person's approvals, so the repository's root key holders would
// meet the organisation's rules in their name with accounts of their own.
// The organisation's own mapping is not taken either: the repository's
// forge app is not the organisation's.
func orgPersonsUnmapped(org, local *Policy) error {
	if local.forge == nil {
		return nil
	}
	for _, p := range local.persons {
		if _, ok := org.Person(p.Name); !ok {
			continue
		}
		for _, forge := range slices.Sorted(maps.Keys(local.forge.accounts[p.Name])) {
			if a := local.ForgeAccount(p.Name, forge); a.Login != "" {
				return inheritConflict("the repository maps the organisation's person %s to the %s account %s: the repository's forge app would approve in their name for the organisation's rules; remove the repository's copy of the person (git secure policy remove-person %s)", p.Name, forge, a, p.Name)
			}
		}
	}
	return nil
}

// mergeTeams lists org's teams then local's; a team both list must have
// the same members (a repository must not add members to a team an
// organisation rule names).
func mergeTeams(org, local []*Team) ([]*Team, error) {
	out := slices.Clone(org)
	byName := map[string]*Team{}
	for _, t := range org {
		byName[t.Name] = t
	}
	for _, t := range local {
		if o, ok := byName[t.Name]; ok {
			a, b := slices.Clone(o.Members), slices.Clone(t.Members)
			slices.Sort(a)
			slices.Sort(b)
			if !slices.Equal(a, b) {
				return nil, inheritConflict("team %s is the organisation's with other members: give the repository's team another name", t.Name)
			}
			continue
		}
		out = append(out, t)
	}
	return out, nil
}
