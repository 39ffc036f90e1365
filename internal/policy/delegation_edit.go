package policy

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/theupdateframework/go-tuf/v2/metadata"
)

// Edits of delegations and rule files. As for targets.json, the first
// edit of a rule file relative to base bumps its version past base's,
// renews its expiry and drops its signatures: its signers sign it afresh.

// touchFile marks rule file f as changed relative to base.
func (p *Policy) touchFile(base *Policy, f *RuleFile, now time.Time) {
	if base != nil {
		if b, ok := base.files[f.Name]; ok && f.Meta.Signed.Version <= b.Meta.Signed.Version {
			f.Meta.Signed.Version = b.Meta.Signed.Version + 1
		}
	}
	f.Meta.Signed.Expires = expiry(now)
	f.Meta.Signatures = []metadata.Signature{}
}

// reindex round-trips p through its stored bytes, so that every index
// (and every rule file's trust) is what a reader of them sees.
func (p *Policy) reindex() error {
	q, err := p.Clone()
	if err != nil {
		return err
	}
	*p = *q
	return nil
}

// editFile applies change to the named rule file ("" for targets.json's
// rules and delegations) and marks the file changed.
func (p *Policy) editFile(base *Policy, file string, now time.Time, change func(rules *[]*Rule, dels *[]*Delegation) error) error {
	if file == "" {
		rules, dels := slices.Clone(p.rules), slices.Clone(p.delegations)
		if err := change(&rules, &dels); err != nil {
			return err
		}
		p.delegations = dels
		if err := p.rebuildTargets(p.persons, rules); err != nil {
			return err
		}
		p.touchTargets(base, now)
		return nil
	}
	f, ok := p.files[file]
	if !ok {
		return invalid("no rule file named %s (see git secure policy list)", file)
	}
	if err := change(&f.Rules, &f.Delegations); err != nil {
		return err
	}
	p.encodeRuleFile(f)
	p.touchFile(base, f, now)
	return p.reindex()
}

// chainOf returns the delegation chain down to file ("" for none).
func (p *Policy) chainOf(file string) []*Delegation {
	for _, n := range p.nodes {
		if n.d.Name == file {
			return n.chain
		}
	}
	return nil
}

// Delegate adds a delegation of d's namespace, listed last in parent (""
// for targets.json), to a new, empty rule file d.Name. The namespace must
// lie within parent's own. The new file must be signed by d's signers
// before the change applies.
func (p *Policy) Delegate(base *Policy, parent string, d Delegation, now time.Time) error {
	if !validName(d.Name) {
		return invalid("rule file name %q: use letters, digits, '.', '_' or '-' (at most 64)", d.Name)
	}
	if _, taken := p.files[d.Name]; taken {
		return invalid("a rule file named %s already exists", d.Name)
	}
	if len(d.Refs)+len(d.Paths) == 0 {
		return invalid("delegation %s needs at least one --ref or --path pattern", d.Name)
	}
	for _, pat := range d.Refs {
		if err := ValidRefPattern(pat); err != nil {
			return invalid("%v", err)
		}
	}
	for _, pat := range d.Paths {
		if err := ValidPathPattern(pat); err != nil {
			return invalid("%v", err)
		}
	}
	if len(d.Signers) == 0 {
		return invalid("delegation %s needs at least one --key PERSON (or team:NAME)", d.Name)
	}
	if d.Threshold == 0 {
		d.Threshold = 1
	}
	for _, g := range d.Signers {
		if _, ok := p.Members(g); !ok {
			return invalid("delegation %s: unknown person or team %s (add it with git secure policy add-person or add-team)", d.Name, g)
		}
	}
	if err := p.checkSigners(&d); err != nil {
		return invalid("delegation %s: %v", d.Name, err)
	}
	if parent != "" {
		if _, ok := p.files[parent]; !ok {
			return invalid("no rule file named %s (see git secure policy list)", parent)
		}
		if depth := len(p.chainOf(parent)); depth >= MaxDelegationDepth {
			return invalid("delegations may nest at most %d deep", MaxDelegationDepth)
		}
		if why := outsideNamespace(p.chainOf(parent), d.Refs, d.Paths, len(d.Paths) == 0); why != "" {
			return invalid("delegation %s %s: a rule file can only delegate within its own namespace", d.Name, why)
		}
	}
	if len(p.files) >= MaxRuleFiles {
		return invalid("a policy holds at most %d rule files", MaxRuleFiles)
	}
	d.Parent = parent
	version := int64(1)
	if base != nil {
		// A file of that name in force before gets a newer version, so
		// that no copy signed under the old delegation passes as new.
		if b, ok := base.files[d.Name]; ok {
			version = b.Meta.Signed.Version + 1
		}
	}
	f := newRuleFile(d.Name, version, now)
	p.encodeRuleFile(f)
	p.files[d.Name] = f
	dd := d
	return p.editFile(base, parent, now, func(rules *[]*Rule, dels *[]*Delegation) error {
		if slices.ContainsFunc(*rules, func(r *Rule) bool { return r.Name == d.Name }) {
			return invalid("%s already names a rule of that file", d.Name)
		}
		*dels = append(*dels, &dd)
		return nil
	})
}

// RemoveDelegation removes the delegation to the named rule file, the file
// and every file it delegates to.
func (p *Policy) RemoveDelegation(base *Policy, name string, now time.Time) error {
	d, ok := p.Delegation(name)
	if !ok {
		return invalid("no delegation named %s (see git secure policy list)", name)
	}
	for _, n := range p.nodes {
		if slices.Contains(n.chain, d) {
			delete(p.files, n.d.Name)
		}
	}
	return p.editFile(base, d.Parent, now, func(_ *[]*Rule, dels *[]*Delegation) error {
		*dels = slices.DeleteFunc(*dels, func(x *Delegation) bool { return x.Name == name })
		return nil
	})
}

// checkNewRule validates a rule being added and fills its defaults.
func (p *Policy) checkNewRule(r *Rule) error {
	if !validName(r.Name) {
		return invalid("rule name %q: use letters, digits, '.', '_' or '-' (at most 64)", r.Name)
	}
	if len(r.Refs)+len(r.Paths) == 0 {
		return invalid("rule %s needs at least one --ref or --path pattern", r.Name)
	}
	if r.EveryRef {
		// Only older stored rules carry it; a new one says --ref '**'.
		return invalid("rule %s: a path rule for every ref is written --ref '**'", r.Name)
	}
	for _, pat := range r.Refs {
		if err := ValidRefPattern(pat); err != nil {
			return invalid("%v", err)
		}
	}
	for _, pat := range r.Paths {
		if err := ValidPathPattern(pat); err != nil {
			return invalid("%v", err)
		}
	}
	if len(r.Allow) == 0 && len(r.Require) == 0 {
		return invalid("rule %s needs at least one --allow PERSON (or team:NAME) or --require GROUP=N", r.Name)
	}
	for _, g := range append(append(slices.Clone(r.Allow), r.TestsBy...), requireGroups(r.Require)...) {
		if _, ok := p.Members(g); !ok {
			if strings.HasPrefix(g, teamPrefix) {
				return invalid("rule %s: unknown team %s (add it with git secure policy add-team)", r.Name, strings.TrimPrefix(g, teamPrefix))
			}
			return invalid("rule %s: unknown person %s (add it with git secure policy add-person)", r.Name, g)
		}
	}
	if len(r.Allow) == 0 {
		// --require alone: the groups it names are the allowed persons.
		r.Allow = requireGroups(r.Require)
		if r.Threshold == 0 {
			for _, q := range r.Require {
				r.Threshold += q.N
			}
		}
	}
	if r.Threshold == 0 {
		r.Threshold = 1
	}
	if err := p.checkRuleGroups(r); err != nil {
		return invalid("rule %s: %v", r.Name, err)
	}
	return nil
}

// AddRuleIn appends a rule to the named rule file ("" for targets.json).
// A rule beyond the file's namespace is refused: a rule file never governs
// more than its delegation allows.
func (p *Policy) AddRuleIn(base *Policy, file string, r Rule, now time.Time) error {
	if file == "" {
		return p.AddRule(base, r, now)
	}
	if _, ok := p.files[file]; !ok {
		return invalid("no rule file named %s (see git secure policy list)", file)
	}
	if err := p.checkNewRule(&r); err != nil {
		return err
	}
	if why := outsideNamespace(p.chainOf(file), r.Refs, r.Paths, !r.IsPathRule()); why != "" {
		return invalid("rule %s %s: a rule file only governs its delegation's namespace (see git secure policy list --file %s)", r.Name, why, file)
	}
	rule := r
	rule.File = file
	return p.editFile(base, file, now, func(rules *[]*Rule, dels *[]*Delegation) error {
		if slices.ContainsFunc(*rules, func(x *Rule) bool { return x.Name == r.Name }) ||
			slices.ContainsFunc(*dels, func(x *Delegation) bool { return x.Name == r.Name }) {
			return invalid("rule file %s already has a rule or delegation named %s", file, r.Name)
		}
		*rules = append(*rules, &rule)
		return nil
	})
}

// RemoveRuleIn removes the named rule from the named rule file ("" for
// targets.json).
func (p *Policy) RemoveRuleIn(base *Policy, file, name string, now time.Time) error {
	if file == "" {
		return p.RemoveRule(base, name, now)
	}
	return p.editFile(base, file, now, func(rules *[]*Rule, _ *[]*Delegation) error {
		n := len(*rules)
		*rules = slices.DeleteFunc(*rules, func(r *Rule) bool { return r.Name == name })
		if len(*rules) == n {
			return invalid("rule file %s has no rule named %s (see git secure policy list --file %s)", file, name, file)
		}
		return nil
	})
}

// SignRuleFile adds (or replaces) the signer's signature on the named rule
// file.
func (p *Policy) SignRuleFile(name string, s signature.Signer) error {
	return p.SignRuleFiles([]string{name}, s)
}

// SignRuleFiles signs the named rule files with s and re-indexes the
// policy once: a re-index decodes the whole policy again (2.6 s with 10 000
// persons), so signing 100 files one by one cost 100 of them.
func (p *Policy) SignRuleFiles(names []string, s signature.Signer) error {
	for _, name := range names {
		f, ok := p.files[name]
		if !ok {
			return invalid("no rule file named %s (see git secure policy list)", name)
		}
		if err := signMeta(f.Meta, s); err != nil {
			return err
		}
	}
	return p.reindex()
}

// MaySign reports whether the person may sign the named rule file (is one
// of its delegation's signers).
func (p *Policy) MaySign(file, person string) bool {
	d, ok := p.Delegation(file)
	return ok && slices.Contains(p.AllowedPersons(&Rule{Allow: d.Signers}), person)
}

// groupUse names a delegation of targets.json that names group (a person
// or team:NAME) as a signer, or "": the rules keys own those and must
// change them first (targets.json cannot name a signer it lacks). A rule
// file that names group does not stop its removal: the file then counts
// for nothing and its namespace fails closed (RemovalEffects says which
// and who mends them), so that removing a person never waits for that
// person or their team.
func (p *Policy) groupUse(group string) string {
	for _, d := range p.delegations {
		if slices.Contains(d.Signers, group) {
			return fmt.Sprintf("delegation %s (of the top-level rules)", d.Name)
		}
	}
	return ""
}
