package policy

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Extension fields of format git-secure-policy/1 beyond persons and allow.
// Each is present only when not empty, so a policy that does not use a
// feature keeps the same bytes.
const (
	fieldTeams   = "x-git-secure-teams"          // targets: team name -> persons
	fieldGlobal  = "x-git-secure-global"         // targets: global rules
	fieldRevoked = "x-git-secure-revoked"        // targets: key revocations
	fieldRequire = "x-git-secure-require"        // role: "GROUP=N" strings
	fieldTests   = "x-git-secure-tests-by"       // role: groups whose test runs are required
	fieldTrees   = "x-git-secure-tree-approvals" // role: "true" when tree-bound approvals count
	fieldSigned  = "x-git-secure-signed-push"    // role: "true" when entries need a stored push certificate
	teamPrefix   = "team:"
	maxTeams     = 1000
	maxGlobal    = 100
	maxRevoked   = 10000
)

// Requirement demands N distinct persons of Group (a person or team:NAME).
type Requirement struct {
	Group string
	N     int
}

func (q Requirement) String() string { return fmt.Sprintf("%s=%d", q.Group, q.N) }

// ParseRequirement parses "GROUP=N".
func ParseRequirement(s string) (Requirement, error) {
	g, n, ok := strings.Cut(s, "=")
	num, err := strconv.Atoi(n)
	if !ok || err != nil || num < 1 || num > 1000 || strconv.Itoa(num) != n || g == "" {
		return Requirement{}, fmt.Errorf("requirement %q: want GROUP=N, e.g. team:security=1", s)
	}
	return Requirement{Group: g, N: num}, nil
}

// Team is a named set of persons.
type Team struct {
	Name    string
	Members []string
}

// Global rule types.
const (
	GlobalNoForcePush = "no-force-push" // refs may only fast-forward
	GlobalMinPersons  = "min-persons"   // every protected update needs N persons
)

// GlobalRule applies on top of the rules to every ref its patterns match
// (every ref when it has none).
type GlobalRule struct {
	Name string
	Type string
	Refs []string
	N    int
}

// CoversRef reports whether g applies to ref. Like a rule (Policy.Covers),
// it covers a ref under a forge's namespace only when one of its patterns
// names that namespace explicitly.
func (g *GlobalRule) CoversRef(ref string) bool {
	if prefix, ok := ForgePrefix(ref); ok {
		return namesExplicitly(g.Refs, ref, prefix)
	}
	if len(g.Refs) == 0 {
		return true
	}
	for _, p := range g.Refs {
		if Match(p, ref) {
			return true
		}
	}
	return false
}

// Revocation says a key is compromised from an RSL entry on: what it signed
// from that entry on does not count, even where an older policy allowed it.
type Revocation struct {
	Fingerprint string
	FromEntry   uint64
}

// Teams returns the teams sorted by name.
func (p *Policy) Teams() []*Team { return p.teams }

// Team returns the named team.
func (p *Policy) Team(name string) (*Team, bool) {
	for _, t := range p.teams {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// GlobalRules returns the global rules in order.
func (p *Policy) GlobalRules() []*GlobalRule { return p.global }

// Revocations returns the key revocations.
func (p *Policy) Revocations() []Revocation { return p.revoked }

// Members returns the persons of group: a person name or team:NAME.
func (p *Policy) Members(group string) ([]string, bool) {
	if name, ok := strings.CutPrefix(group, teamPrefix); ok {
		t, ok := p.Team(name)
		if !ok {
			return nil, false
		}
		return t.Members, true
	}
	if _, ok := p.Person(group); ok {
		return []string{group}, true
	}
	return nil, false
}

// AllowedPersons returns the distinct persons a rule allows (teams
// expanded), sorted.
func (p *Policy) AllowedPersons(r *Rule) []string {
	set := map[string]bool{}
	for _, g := range r.Allow {
		m, _ := p.Members(g)
		for _, x := range m {
			set[x] = true
		}
	}
	out := slices.AppendSeq(make([]string, 0, len(set)), maps.Keys(set))
	slices.Sort(out)
	return out
}

// RuleAllows reports whether person counts toward r's threshold.
func (p *Policy) RuleAllows(r *Rule, person string) bool {
	return slices.Contains(p.AllowedPersons(r), person)
}

func (p *Policy) decodeTeams(v any) error {
	p.teams = nil
	if v == nil {
		return nil
	}
	raw, ok := v.(map[string]any)
	if !ok || len(raw) == 0 || len(raw) > maxTeams {
		return fmt.Errorf("%w: %s must be a non-empty object of at most %d teams", ErrMalformed, fieldTeams, maxTeams)
	}
	for name, members := range raw {
		if !validName(name) {
			return fmt.Errorf("%w: bad team name %q", ErrMalformed, name)
		}
		list, ok := stringList(members)
		if !ok || len(list) == 0 {
			return fmt.Errorf("%w: team %s must list at least one person", ErrMalformed, name)
		}
		seen := map[string]bool{}
		for _, m := range list {
			if _, ok := p.Person(m); !ok || seen[m] {
				return fmt.Errorf("%w: team %s: unknown or repeated person %q", ErrMalformed, name, m)
			}
			seen[m] = true
		}
		p.teams = append(p.teams, &Team{Name: name, Members: list})
	}
	sort.Slice(p.teams, func(i, j int) bool { return p.teams[i].Name < p.teams[j].Name })
	return nil
}

func (p *Policy) decodeGlobal(v any) error {
	p.global = nil
	if v == nil {
		return nil
	}
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 || len(arr) > maxGlobal {
		return fmt.Errorf("%w: %s must be a non-empty list of at most %d rules", ErrMalformed, fieldGlobal, maxGlobal)
	}
	names := map[string]bool{}
	for _, x := range arr {
		obj, ok := x.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: %s entries must be objects", ErrMalformed, fieldGlobal)
		}
		g := &GlobalRule{}
		for k, val := range obj {
			switch k {
			case "name":
				g.Name, _ = val.(string)
			case "type":
				g.Type, _ = val.(string)
			case "refs":
				if g.Refs, ok = stringList(val); !ok {
					return fmt.Errorf("%w: global rule refs must be strings", ErrMalformed)
				}
			case "n":
				s, _ := val.(string)
				n, err := strconv.Atoi(s)
				if err != nil || strconv.Itoa(n) != s || n < 1 || n > 1000 {
					return fmt.Errorf("%w: global rule n must be a decimal string from 1 to 1000", ErrMalformed)
				}
				g.N = n
			default:
				return fmt.Errorf("%w: global rule: unknown field %q", ErrMalformed, k)
			}
		}
		if err := validGlobal(g); err != nil {
			return fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		if names[g.Name] {
			return fmt.Errorf("%w: global rule %s defined twice", ErrMalformed, g.Name)
		}
		names[g.Name] = true
		p.global = append(p.global, g)
	}
	return nil
}

func validGlobal(g *GlobalRule) error {
	if !validName(g.Name) {
		return fmt.Errorf("bad global rule name %q", g.Name)
	}
	for _, pat := range g.Refs {
		if err := ValidRefPattern(pat); err != nil {
			return err
		}
	}
	switch g.Type {
	case GlobalNoForcePush:
		if g.N != 0 {
			return fmt.Errorf("global rule %s: %s takes no number", g.Name, g.Type)
		}
	case GlobalMinPersons:
		if g.N < 1 {
			return fmt.Errorf("global rule %s: %s needs a number of persons", g.Name, g.Type)
		}
	default:
		return fmt.Errorf("global rule %s: unknown type %q (want %s or %s)", g.Name, g.Type, GlobalNoForcePush, GlobalMinPersons)
	}
	return nil
}

func (p *Policy) decodeRevoked(v any) error {
	p.revoked = nil
	if v == nil {
		return nil
	}
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 || len(arr) > maxRevoked {
		return fmt.Errorf("%w: %s must be a non-empty list", ErrMalformed, fieldRevoked)
	}
	for _, x := range arr {
		obj, ok := x.(map[string]any)
		if !ok || len(obj) != 2 {
			return fmt.Errorf("%w: revocations are objects with key and fromEntry", ErrMalformed)
		}
		fp, _ := obj["key"].(string)
		from, _ := obj["fromEntry"].(string)
		n, err := strconv.ParseUint(from, 10, 64)
		if !strings.HasPrefix(fp, "SHA256:") || len(fp) > 100 || err != nil || n < 1 || strconv.FormatUint(n, 10) != from {
			return fmt.Errorf("%w: bad revocation %v", ErrMalformed, obj)
		}
		p.revoked = append(p.revoked, Revocation{Fingerprint: fp, FromEntry: n})
	}
	return nil
}

// RevokedFrom returns the entry from which key fp is revoked (0 if not).
func (p *Policy) RevokedFrom(fp string) uint64 {
	var from uint64
	for _, r := range p.revoked {
		if r.Fingerprint == fp && (from == 0 || r.FromEntry < from) {
			from = r.FromEntry
		}
	}
	return from
}

// checkRuleGroups checks that every group a rule names exists, that no
// group is named twice, and that its threshold and requirements can be met.
func (p *Policy) checkRuleGroups(r *Rule) error {
	seen := map[string]bool{}
	for _, g := range r.Allow {
		if _, ok := p.Members(g); !ok || seen[g] {
			return fmt.Errorf("unknown or repeated person or team %q", g)
		}
		seen[g] = true
	}
	allowed := len(p.AllowedPersons(r))
	if r.Threshold < 1 || r.Threshold > allowed {
		return fmt.Errorf("threshold %d cannot be met by %d allowed persons", r.Threshold, allowed)
	}
	seen = map[string]bool{}
	for _, q := range r.Require {
		m, ok := p.Members(q.Group)
		if !ok || seen[q.Group] {
			return fmt.Errorf("requirement names unknown or repeated group %q", q.Group)
		}
		seen[q.Group] = true
		if q.N > len(m) {
			return fmt.Errorf("requirement %s cannot be met: %s has %d persons", q, q.Group, len(m))
		}
	}
	seen = map[string]bool{}
	for _, g := range r.TestsBy {
		if _, ok := p.Members(g); !ok || seen[g] {
			return fmt.Errorf("tests-by names unknown or repeated group %q", g)
		}
		seen[g] = true
	}
	return nil
}

// ruleKeyIDs returns the sorted key IDs of every person who can count
// toward a rule (its allowed persons and its requirement groups).
func (p *Policy) ruleKeyIDs(r *Rule) []string {
	persons := map[string]bool{}
	for _, x := range p.AllowedPersons(r) {
		persons[x] = true
	}
	for _, q := range r.Require {
		m, _ := p.Members(q.Group)
		for _, x := range m {
			persons[x] = true
		}
	}
	var ids []string
	for name := range persons {
		if person, ok := p.Person(name); ok {
			for _, k := range person.Keys {
				ids = append(ids, k.ID)
			}
		}
	}
	sort.Strings(ids)
	return ids
}
