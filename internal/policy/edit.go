package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/theupdateframework/go-tuf/v2/metadata"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/sign"
)

// Edits change a staged copy of the policy. base is the policy in force
// (the one the change will replace): the first edit of root or targets
// relative to base bumps that metadata's version by one, renews its expiry
// and drops its signatures, so every staged change is signed afresh.

func (p *Policy) touchRoot(base *Policy, now time.Time) {
	if base != nil && p.Root.Signed.Version <= base.Root.Signed.Version {
		p.Root.Signed.Version = base.Root.Signed.Version + 1
	}
	p.Root.Signed.Expires = expiry(now)
	p.Root.Signatures = []metadata.Signature{}
}

func (p *Policy) touchTargets(base *Policy, now time.Time) {
	if base != nil && p.Targets.Signed.Version <= base.Targets.Signed.Version {
		p.Targets.Signed.Version = base.Targets.Signed.Version + 1
	}
	p.Targets.Signed.Expires = expiry(now)
	p.Targets.Signatures = []metadata.Signature{}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidChange, fmt.Sprintf(format, args...))
}

// rebuildTargets writes persons and rules back into the targets metadata
// and re-indexes.
func (p *Policy) rebuildTargets(persons []*Person, rules []*Rule) (err error) {
	// A refused rebuild leaves p as it was.
	savedDeleg, savedFields := p.Targets.Signed.Delegations, p.Targets.Signed.UnrecognizedFields
	defer func() {
		if err != nil {
			p.Targets.Signed.Delegations, p.Targets.Signed.UnrecognizedFields = savedDeleg, savedFields
		}
	}()
	keys := map[string]*metadata.Key{}
	rawPersons := map[string]any{}
	byName := map[string]*Person{}
	for _, person := range persons {
		ids := make([]any, 0, len(person.Keys))
		for _, k := range person.Keys {
			keys[k.ID] = k.TUF
			ids = append(ids, k.ID)
		}
		rawPersons[person.Name] = ids
		byName[person.Name] = person
	}
	roles := make([]metadata.DelegatedRole, 0, len(rules)+len(p.delegations))
	for _, r := range rules {
		roles = append(roles, p.ruleRole(byName, r))
	}
	for _, d := range p.delegations {
		roles = append(roles, delegationRole(d, p.ruleKeyIDsFrom(byName, &Rule{Allow: d.Signers})))
	}
	p.Targets.Signed.Delegations = &metadata.Delegations{Keys: keys, Roles: roles}
	top := map[string]any{fieldFormat: p.targetsFormat(), fieldPersons: rawPersons}
	if len(p.teams) > 0 {
		teams := map[string]any{}
		for _, t := range p.teams {
			teams[t.Name] = anyList(t.Members)
		}
		top[fieldTeams] = teams
	}
	if len(p.global) > 0 {
		var gl []any
		for _, g := range p.global {
			obj := map[string]any{"name": g.Name, "type": g.Type}
			if len(g.Refs) > 0 {
				obj["refs"] = anyList(g.Refs)
			}
			if g.N > 0 {
				obj["n"] = strconv.Itoa(g.N)
			}
			gl = append(gl, obj)
		}
		top[fieldGlobal] = gl
	}
	if len(p.revoked) > 0 {
		var rv []any
		for _, r := range p.revoked {
			rv = append(rv, map[string]any{"key": r.Fingerprint, "fromEntry": strconv.FormatUint(r.FromEntry, 10)})
		}
		top[fieldRevoked] = rv
	}
	// Forge accounts are kept as they are (forge.go edits them).
	if v, ok := p.Targets.Signed.UnrecognizedFields[fieldForgeAccounts]; ok {
		top[fieldForgeAccounts] = v
	}
	p.Targets.Signed.UnrecognizedFields = top
	// A change that no reader could load (every clone would refuse the
	// policy) is refused here, saying why.
	if tg, err := p.Targets.ToBytes(false); err == nil && len(tg) > MaxTargetsSize {
		return invalid("targets.json would be %d bytes, over the limit of %d (%d persons, %d keys): remove persons or keys no rule needs", len(tg), MaxTargetsSize, len(persons), len(keys))
	}
	// Round-trip through the encoder so the indexes see exactly what a
	// reader of the stored bytes will see.
	q, err := p.Clone()
	if err != nil {
		return err
	}
	*p = *q
	return nil
}

// ruleRole is the stored form of r; byName (persons being written) gives
// the keyids, nil for a rule file's rule (no keyids).
func (p *Policy) ruleRole(byName map[string]*Person, r *Rule) metadata.DelegatedRole {
	var pats []string
	for _, x := range r.Refs {
		pats = append(pats, rolePrefixRef+x)
	}
	for _, x := range r.Paths {
		pats = append(pats, rolePrefixPath+x)
	}
	fields := map[string]any{fieldAllow: anyList(r.Allow)}
	if len(r.Require) > 0 {
		var reqs []string
		for _, q := range r.Require {
			reqs = append(reqs, q.String())
		}
		fields[fieldRequire] = anyList(reqs)
	}
	if len(r.TestsBy) > 0 {
		fields[fieldTests] = anyList(r.TestsBy)
	}
	if r.TreeApprovals {
		fields[fieldTrees] = "true"
	}
	if r.SignedPush {
		fields[fieldSigned] = "true"
	}
	if len(r.Refs) == 0 && len(r.Paths) > 0 && !r.EveryRef {
		fields[fieldScope] = scopeProtected
	}
	var ids []string
	if byName != nil {
		ids = p.ruleKeyIDsFrom(byName, r)
	}
	return metadata.DelegatedRole{Name: r.Name, KeyIDs: ids, Threshold: r.Threshold, Paths: pats, UnrecognizedFields: fields}
}

// AddPerson adds a person with one or more keys. A key may belong to one
// person only.
func (p *Policy) AddPerson(base *Policy, name string, keys []ssh.PublicKey, now time.Time) error {
	return p.AddPersons(base, []NewPerson{{Name: name, Keys: keys}}, now)
}

// NewPerson is a person to add: a name and its keys.
type NewPerson struct {
	Name string
	Keys []ssh.PublicKey
}

// AddPersons adds persons in one change (one rebuild of targets.json: an
// organisation's directory is imported in time linear in its size, where
// one AddPerson per person would rebuild the whole list each time).
func (p *Policy) AddPersons(base *Policy, add []NewPerson, now time.Time) error {
	persons := slices.Clone(p.persons)
	names := map[string]bool{}
	fps := map[string]string{}
	for _, np := range add {
		if !validName(np.Name) {
			return invalid("person name %q: use letters, digits, '.', '_' or '-' (at most 64)", np.Name)
		}
		if _, ok := p.Person(np.Name); ok || names[np.Name] {
			return invalid("person %s already exists (remove it first to change its keys)", np.Name)
		}
		names[np.Name] = true
		if len(np.Keys) == 0 {
			return invalid("person %s needs at least one key", np.Name)
		}
		person := &Person{Name: np.Name}
		for _, pub := range np.Keys {
			k, err := p.newPersonKey(pub)
			if err != nil {
				return err
			}
			if owner, ok := fps[k.Fingerprint]; ok {
				if owner == np.Name {
					return invalid("key %s given twice", k.Fingerprint)
				}
				return invalid("key %s already belongs to person %s", k.Fingerprint, owner)
			}
			fps[k.Fingerprint] = np.Name
			person.Keys = append(person.Keys, k)
		}
		persons = append(persons, person)
	}
	if err := p.rebuildTargets(persons, p.rules); err != nil {
		return err
	}
	p.touchTargets(base, now)
	return nil
}

// RemovePerson removes a person; it is refused while a rule allows them.
func (p *Policy) RemovePerson(base *Policy, name string, now time.Time) error {
	if _, ok := p.Person(name); !ok {
		return invalid("no person named %s (see git secure policy list)", name)
	}
	for _, r := range p.rules {
		if slices.Contains(r.Allow, name) || slices.ContainsFunc(r.Require, func(q Requirement) bool { return q.Group == name }) || slices.Contains(r.TestsBy, name) {
			return invalid("rule %s names %s: remove the rule or change it first", r.Name, name)
		}
	}
	for _, t := range p.teams {
		if slices.Contains(t.Members, name) {
			return invalid("%s is a member of team %s: change the team first", name, t.Name)
		}
	}
	if use := p.groupUse(name); use != "" {
		return invalid("%s names %s: remove or change it first", use, name)
	}
	p.dropForgeAccounts(name)
	persons := slices.DeleteFunc(slices.Clone(p.persons), func(x *Person) bool { return x.Name == name })
	if err := p.rebuildTargets(persons, p.rules); err != nil {
		return err
	}
	p.touchTargets(base, now)
	return nil
}

// AddRule appends a rule to targets.json.
func (p *Policy) AddRule(base *Policy, r Rule, now time.Time) error {
	if _, ok := p.Rule(r.Name); ok {
		// No command edits a rule in place: say how to change it.
		return invalid("rule %s already exists: to change it, run git secure policy remove-rule %s, then add-rule %s again with the new flags (one apply puts both in force)", r.Name, r.Name, r.Name)
	}
	if slices.ContainsFunc(p.delegations, func(d *Delegation) bool { return d.Name == r.Name }) {
		return invalid("%s already names a delegation of targets.json", r.Name)
	}
	if err := p.checkNewRule(&r); err != nil {
		return err
	}
	rule := r
	rules := append(slices.Clone(p.rules), &rule)
	if err := p.rebuildTargets(p.persons, rules); err != nil {
		return err
	}
	p.touchTargets(base, now)
	return nil
}

// RemoveRule removes the named rule.
func (p *Policy) RemoveRule(base *Policy, name string, now time.Time) error {
	if _, ok := p.Rule(name); !ok {
		return invalid("no rule named %s (see git secure policy list)", name)
	}
	rules := slices.DeleteFunc(slices.Clone(p.rules), func(r *Rule) bool { return r.Name == name })
	if err := p.rebuildTargets(p.persons, rules); err != nil {
		return err
	}
	p.touchTargets(base, now)
	return nil
}

// AddRoleKey adds pub to a root role (metadata.ROOT or metadata.TARGETS).
func (p *Policy) AddRoleKey(base *Policy, role string, pub ssh.PublicKey, now time.Time) error {
	tk, id, err := sign.TUFKey(pub)
	if err != nil {
		return invalid("%v", err)
	}
	if err := checkRoleKeyKind(tk, sign.Fingerprint(pub)); err != nil {
		return invalid("%v", err)
	}
	r := p.Root.Signed.Roles[role]
	if r == nil {
		return invalid("unknown role %s", role)
	}
	if slices.Contains(r.KeyIDs, id) {
		return invalid("key %s is already a %s key", sign.Fingerprint(pub), roleTitle(role))
	}
	p.Root.Signed.Keys[id] = tk
	r.KeyIDs = append(r.KeyIDs, id)
	return p.reindexRoot(base, now)
}

// RemoveRoleKey removes the key with SSH fingerprint fp from a root role;
// the threshold must still be reachable.
func (p *Policy) RemoveRoleKey(base *Policy, role, fp string, now time.Time) error {
	r := p.Root.Signed.Roles[role]
	if r == nil {
		return invalid("unknown role %s", role)
	}
	keys, _ := p.RoleKeys(role)
	idx := slices.IndexFunc(keys, func(k *Key) bool { return k.Fingerprint == fp })
	if idx < 0 {
		return invalid("%s is not a %s key", fp, roleTitle(role))
	}
	id := keys[idx].ID
	if len(r.KeyIDs)-1 < r.Threshold {
		return invalid("removing %s would leave %d %s keys for a threshold of %d: lower the threshold or add a key first", fp, len(r.KeyIDs)-1, roleTitle(role), r.Threshold)
	}
	r.KeyIDs = slices.DeleteFunc(r.KeyIDs, func(x string) bool { return x == id })
	stillUsed := false
	for _, other := range p.Root.Signed.Roles {
		stillUsed = stillUsed || slices.Contains(other.KeyIDs, id)
	}
	if !stillUsed {
		delete(p.Root.Signed.Keys, id)
	}
	return p.reindexRoot(base, now)
}

// SetRoleThreshold sets the threshold of a root role.
func (p *Policy) SetRoleThreshold(base *Policy, role string, n int, now time.Time) error {
	r := p.Root.Signed.Roles[role]
	if r == nil {
		return invalid("unknown role %s", role)
	}
	if n < 1 || n > len(r.KeyIDs) {
		return invalid("a %s threshold of %d cannot be met by %d keys", roleTitle(role), n, len(r.KeyIDs))
	}
	r.Threshold = n
	return p.reindexRoot(base, now)
}

func (p *Policy) reindexRoot(base *Policy, now time.Time) error {
	p.touchRoot(base, now)
	// Targets signatures are checked against the new root's targets role,
	// so they stay; only a root edit's own signatures are dropped.
	q, err := p.Clone()
	if err != nil {
		return err
	}
	*p = *q
	return nil
}

func roleTitle(role string) string {
	if role == metadata.TARGETS {
		return "rules"
	}
	return role
}

// SignRoot adds (or replaces) the signer's signature on root.json.
func (p *Policy) SignRoot(s signature.Signer) error {
	return signMeta(p.Root, s)
}

// SignTargets adds (or replaces) the signer's signature on targets.json.
func (p *Policy) SignTargets(s signature.Signer) error {
	return signMeta(p.Targets, s)
}

func signMeta[T metadata.Roles](m *metadata.Metadata[T], s signature.Signer) error {
	if kh, ok := s.(sign.TUFKeyHolder); ok {
		return signMetaKind(m, s, kh)
	}
	pub, err := s.PublicKey()
	if err != nil {
		return err
	}
	k, err := metadata.KeyFromPublicKey(pub)
	if err != nil {
		return err
	}
	id, err := k.ID()
	if err != nil {
		return err
	}
	// go-tuf appends; a second signature by one key makes the file unreadable.
	m.Signatures = slices.DeleteFunc(m.Signatures, func(x metadata.Signature) bool { return x.KeyID == id })
	if _, err := m.Sign(s); err != nil {
		return fmt.Errorf("policy: sign: %w", err)
	}
	return nil
}

// HasSignature reports whether the metadata carries a signature by key id.
func HasSignature[T metadata.Roles](m *metadata.Metadata[T], id string) bool {
	return slices.ContainsFunc(m.Signatures, func(x metadata.Signature) bool { return x.KeyID == id })
}

// Renew extends the expiry of the rules metadata (and of the root when
// root is set) by DefaultLifetime from now, as a new version.
func (p *Policy) Renew(base *Policy, root bool, now time.Time) error {
	if root {
		if err := p.reindexRoot(base, now); err != nil {
			return err
		}
	}
	p.touchTargets(base, now)
	return nil
}

func anyList(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func requireGroups(reqs []Requirement) []string {
	var out []string
	for _, q := range reqs {
		if !slices.Contains(out, q.Group) {
			out = append(out, q.Group)
		}
	}
	return out
}

// ruleKeyIDsFrom is ruleKeyIDs over the persons being written.
func (p *Policy) ruleKeyIDsFrom(byName map[string]*Person, r *Rule) []string {
	persons := map[string]bool{}
	add := func(g string) {
		if name, ok := strings.CutPrefix(g, teamPrefix); ok {
			if t, ok := p.Team(name); ok {
				for _, m := range t.Members {
					persons[m] = true
				}
			}
			return
		}
		persons[g] = true
	}
	for _, g := range r.Allow {
		add(g)
	}
	for _, q := range r.Require {
		add(q.Group)
	}
	ids := []string{}
	for name := range persons {
		if person := byName[name]; person != nil {
			for _, k := range person.Keys {
				ids = append(ids, k.ID)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// AddTeam adds a team of existing persons.
func (p *Policy) AddTeam(base *Policy, name string, members []string, now time.Time) error {
	if !validName(name) {
		return invalid("team name %q: use letters, digits, '.', '_' or '-' (at most 64)", name)
	}
	if _, ok := p.Team(name); ok {
		return invalid("team %s already exists", name)
	}
	if len(members) == 0 {
		return invalid("team %s needs at least one --member PERSON", name)
	}
	seen := map[string]bool{}
	for _, m := range members {
		if _, ok := p.Person(m); !ok {
			return invalid("team %s: unknown person %s (add it with git secure policy add-person)", name, m)
		}
		if seen[m] {
			return invalid("team %s: %s given twice", name, m)
		}
		seen[m] = true
	}
	p.teams = append(slices.Clone(p.teams), &Team{Name: name, Members: slices.Clone(members)})
	if err := p.rebuildTargets(p.persons, p.rules); err != nil {
		return err
	}
	p.touchTargets(base, now)
	return nil
}

// RemoveTeam removes a team no rule names.
func (p *Policy) RemoveTeam(base *Policy, name string, now time.Time) error {
	if _, ok := p.Team(name); !ok {
		return invalid("no team named %s (see git secure policy list)", name)
	}
	g := teamPrefix + name
	for _, r := range p.rules {
		if slices.Contains(r.Allow, g) || slices.Contains(r.TestsBy, g) || slices.Contains(requireGroups(r.Require), g) {
			return invalid("rule %s names team %s: remove or change the rule first", r.Name, name)
		}
	}
	if use := p.groupUse(g); use != "" {
		return invalid("%s names team %s: remove or change it first", use, name)
	}
	p.teams = slices.DeleteFunc(slices.Clone(p.teams), func(t *Team) bool { return t.Name == name })
	if err := p.rebuildTargets(p.persons, p.rules); err != nil {
		return err
	}
	p.touchTargets(base, now)
	return nil
}

// AddGlobalRule adds a rule that applies on top of all others.
func (p *Policy) AddGlobalRule(base *Policy, g GlobalRule, now time.Time) error {
	if err := validGlobal(&g); err != nil {
		return invalid("%v", err)
	}
	for _, x := range p.global {
		if x.Name == g.Name {
			return invalid("global rule %s already exists", g.Name)
		}
	}
	p.global = append(slices.Clone(p.global), &g)
	if err := p.rebuildTargets(p.persons, p.rules); err != nil {
		return err
	}
	p.touchTargets(base, now)
	return nil
}

// RemoveGlobalRule removes a global rule.
func (p *Policy) RemoveGlobalRule(base *Policy, name string, now time.Time) error {
	n := len(p.global)
	p.global = slices.DeleteFunc(slices.Clone(p.global), func(g *GlobalRule) bool { return g.Name == name })
	if len(p.global) == n {
		return invalid("no global rule named %s", name)
	}
	if err := p.rebuildTargets(p.persons, p.rules); err != nil {
		return err
	}
	p.touchTargets(base, now)
	return nil
}

// RevokeKey records that the key with fingerprint fp is compromised from
// RSL entry fromEntry on. The key stays listed (earlier entries still
// verify); remove it from its person or role as well.
func (p *Policy) RevokeKey(base *Policy, fp string, fromEntry uint64, now time.Time) error {
	if fromEntry < 1 {
		return invalid("revocation needs the first entry it applies to (--from-entry N)")
	}
	// A key rotated out earlier may be found compromised later: it need
	// not be listed any more, only well formed.
	if !strings.HasPrefix(fp, "SHA256:") || len(fp) != len("SHA256:")+43 {
		return invalid("%q is not an SSH SHA256 fingerprint (SHA256: and 43 base64 characters)", fp)
	}
	if from := p.RevokedFrom(fp); from != 0 && from <= fromEntry {
		return invalid("key %s is already revoked from entry #%d", fp, from)
	}
	p.revoked = append(slices.Clone(p.revoked), Revocation{Fingerprint: fp, FromEntry: fromEntry})
	if err := p.rebuildTargets(p.persons, p.rules); err != nil {
		return err
	}
	p.touchTargets(base, now)
	return nil
}
