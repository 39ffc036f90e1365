package policy

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/cjson"
	"github.com/theupdateframework/go-tuf/v2/metadata"
)

// Rule files (TUF delegated targets metadata): targets.json, and any rule
// file, may delegate a namespace (ref and/or path patterns) to a named rule
// file signed by its own persons with its own threshold. The file's rules
// count only inside the namespace, and only while the file carries valid
// signatures of its threshold of those persons.

const (
	// FormatDelegated is targets.json's format when it delegates to rule
	// files: a reader of git-secure-policy/1 refuses it (fails closed).
	FormatDelegated = "git-secure-policy/2"
	// RulesFormat is a rule file's format.
	RulesFormat = "git-secure-rules/1"
	// RulesDir is the directory of a policy commit that holds rule files.
	RulesDir = "rules"

	// MaxRuleFiles bounds the rule files of one policy, MaxDelegationDepth
	// how deep delegations nest below targets.json.
	MaxRuleFiles       = 1000
	MaxDelegationDepth = 8
	// MaxRuleFilesSize bounds the bytes of all rule files of a policy
	// together: anyone may push a staged change, which every clone
	// fetches and reads, so 1000 files of 1 MiB each must not be what a
	// reader holds.
	MaxRuleFilesSize = 16 << 20

	fieldSigners  = "x-git-secure-signers"   // role: persons and teams who sign the rule file
	fieldRuleFile = "x-git-secure-rule-file" // rule file: its own name, signed (no file passes as another)
)

// Delegation hands a namespace to a rule file.
type Delegation struct {
	Name        string   // the rule file's name
	Parent      string   // the delegating rule file; "" for targets.json
	Refs        []string // ref patterns of the namespace (none: every ref)
	Paths       []string // path patterns of the namespace (none: whole refs)
	Signers     []string // persons and team:NAME groups whose signatures count
	Threshold   int      // distinct signer persons required
	Terminating bool     // a match ends the search (TUF terminating)
}

// ns is the namespace as a rule, for its matchers.
func (d *Delegation) ns() *Rule { return &Rule{Refs: d.Refs, Paths: d.Paths} }

// Patterns returns the namespace as stored (git: and file: prefixed).
func (d *Delegation) Patterns() []string {
	var out []string
	for _, x := range d.Refs {
		out = append(out, rolePrefixRef+x)
	}
	for _, x := range d.Paths {
		out = append(out, rolePrefixPath+x)
	}
	return out
}

// RuleFile is one decoded rule file.
type RuleFile struct {
	Name        string
	Meta        *metadata.Metadata[metadata.TargetsType]
	Rules       []*Rule
	Delegations []*Delegation
	// Untrusted says why the file counts for nothing ("" when its
	// delegation's threshold signed it and every ancestor counts).
	Untrusted string
	// SignedBy and Missing are the signer persons with and without a valid
	// signature on the file.
	SignedBy, Missing []string
	// SignedKeys holds, for each person of SignedBy, the fingerprints of
	// every key of theirs with a valid signature on the file: a verifier
	// that knows which keys were revoked when the file changed counts only
	// the others (verify.CheckPolicyRevoked).
	SignedKeys map[string][]string
	// Outside lists what of the file lies beyond its delegation's
	// namespace; verification ignores it there and warns.
	Outside []string
}

// node is one delegation in the TUF search order (pre-order, delegations
// in listed order).
type node struct {
	d     *Delegation
	chain []*Delegation // from targets.json's delegation down to d
	file  *RuleFile
	// shadows are the terminating delegations earlier in the search
	// order, listed in d's file or a file above it, that are not
	// ancestors: one that matches an item ends the search before d is
	// reached.
	shadows []*node
	blocked bool // an ancestor counts for nothing: d is never reached
	// org marks a rule file of the organisation policy carried into an
	// inheriting repository's combined policy (Inherit), as judged there.
	org bool
}

// chainRefs reports whether every namespace of the chain admits ref.
func chainRefs(chain []*Delegation, ref string) bool {
	for _, d := range chain {
		if len(d.Refs) > 0 && !d.ns().coversByPattern(ref) {
			return false
		}
	}
	return true
}

// chainPaths reports whether every namespace of the chain admits path.
func chainPaths(chain []*Delegation, path string) bool {
	return chainPathsOf(chain, path, true)
}

// chainHolds reports whether every namespace of the chain holds path
// itself: a .gitattributes file above its files is admitted (its rules
// judge it) but not held, so that a terminating delegation for docs/**
// does not end the search for the crypto delegation's rules on the root's
// .gitattributes.
func chainHolds(chain []*Delegation, path string) bool {
	return chainPathsOf(chain, path, false)
}

func chainPathsOf(chain []*Delegation, path string, attributes bool) bool {
	for _, d := range chain {
		if len(d.Paths) > 0 && !d.ns().coversPath(path, attributes) {
			return false
		}
	}
	return true
}

func chainHasPaths(chain []*Delegation) bool {
	return slices.ContainsFunc(chain, func(d *Delegation) bool { return len(d.Paths) > 0 })
}

// Delegations returns the delegations of a rule file ("" for targets.json)
// in order.
func (p *Policy) Delegations(file string) []*Delegation {
	if file == "" {
		return p.delegations
	}
	if f, ok := p.files[file]; ok {
		return f.Delegations
	}
	return nil
}

// Delegation returns the delegation to the named rule file.
func (p *Policy) Delegation(name string) (*Delegation, bool) {
	for _, n := range p.nodes {
		if n.d.Name == name {
			return n.d, true
		}
	}
	return nil, false
}

// RuleFile returns the named rule file.
func (p *Policy) RuleFile(name string) (*RuleFile, bool) {
	f, ok := p.files[name]
	return f, ok
}

// RuleFiles returns every rule file in the TUF search order.
func (p *Policy) RuleFiles() []*RuleFile {
	out := make([]*RuleFile, 0, len(p.nodes))
	for _, n := range p.nodes {
		out = append(out, n.file)
	}
	return out
}

// Chain returns the names of the delegations from targets.json down to the
// named rule file.
func (p *Policy) Chain(file string) []string {
	for _, n := range p.nodes {
		if n.d.Name == file {
			out := make([]string, len(n.chain))
			for i, d := range n.chain {
				out[i] = d.Name
			}
			return out
		}
	}
	return nil
}

// Warnings lists what verification ignores in the rule files: rules and
// delegations beyond their namespace, files that count for nothing.
func (p *Policy) Warnings() []string {
	var out []string
	for _, n := range p.nodes {
		what := "rule file"
		if n.org {
			what = "organisation rule file"
		}
		for _, o := range n.file.Outside {
			out = append(out, fmt.Sprintf("%s %s: %s", what, n.d.Name, o))
		}
		if n.file.Untrusted != "" && !n.blocked {
			out = append(out, fmt.Sprintf("%s %s counts for nothing (%s): every update in its namespace fails until it is signed", what, n.d.Name, n.file.Untrusted))
		}
	}
	return out
}

// decodeDelegation decodes a delegation role of targets.json (inFile
// false: keyids must be the signer persons' keys, for TUF readers) or of a
// rule file (keyids empty: persons and their keys live in targets.json
// only, so a key change there does not make rule files malformed).
func (p *Policy) decodeDelegation(parent string, d *metadata.DelegatedRole, inFile bool) (*Delegation, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: delegation %s: %s", ErrMalformed, d.Name, fmt.Sprintf(format, args...))
	}
	if !validName(d.Name) {
		return nil, fmt.Errorf("%w: bad delegation name %q", ErrMalformed, d.Name)
	}
	if len(d.PathHashPrefixes) != 0 {
		return nil, fail("path_hash_prefixes are not used")
	}
	for k := range d.UnrecognizedFields {
		if k != fieldSigners {
			return nil, fail("unknown field %q", k)
		}
	}
	signers, ok := stringList(d.UnrecognizedFields[fieldSigners])
	if !ok || len(signers) == 0 {
		return nil, fail("%s must list at least one person or team", fieldSigners)
	}
	out := &Delegation{Name: d.Name, Parent: parent, Signers: signers, Threshold: d.Threshold, Terminating: d.Terminating}
	for _, pat := range d.Paths {
		switch {
		case strings.HasPrefix(pat, rolePrefixRef):
			out.Refs = append(out.Refs, pat[len(rolePrefixRef):])
		case strings.HasPrefix(pat, rolePrefixPath):
			out.Paths = append(out.Paths, pat[len(rolePrefixPath):])
		default:
			return nil, fail("pattern %q has neither git: nor file: prefix", pat)
		}
	}
	if len(out.Refs)+len(out.Paths) == 0 {
		return nil, fail("no patterns")
	}
	for _, pat := range out.Refs {
		if err := ValidRefPattern(pat); err != nil {
			return nil, fail("%v", err)
		}
	}
	for _, pat := range out.Paths {
		if err := ValidPathPattern(pat); err != nil {
			return nil, fail("%v", err)
		}
	}
	if inFile {
		if len(d.KeyIDs) != 0 {
			return nil, fail("keyids must be empty in a rule file (signers are named persons)")
		}
		if out.Threshold < 1 {
			return nil, fail("threshold %d", out.Threshold)
		}
		return out, nil
	}
	// In targets.json the persons are known: the delegation must be
	// satisfiable and list exactly its signers' keys.
	if err := p.checkSigners(out); err != nil {
		return nil, fail("%v", err)
	}
	want := p.ruleKeyIDs(&Rule{Allow: signers})
	got := slices.Clone(d.KeyIDs)
	sort.Strings(got)
	if !slices.Equal(want, got) {
		return nil, fail("keyids do not match the signers' keys")
	}
	return out, nil
}

// checkSigners checks that a delegation's signers exist, are not repeated
// and can meet its threshold.
func (p *Policy) checkSigners(d *Delegation) error {
	seen := map[string]bool{}
	for _, g := range d.Signers {
		if _, ok := p.Members(g); !ok || seen[g] {
			return fmt.Errorf("unknown or repeated signer %q", g)
		}
		seen[g] = true
	}
	if n := len(p.AllowedPersons(&Rule{Allow: d.Signers})); d.Threshold < 1 || d.Threshold > n {
		return fmt.Errorf("threshold %d cannot be met by %d signer persons", d.Threshold, n)
	}
	return nil
}

// decodeRuleFile decodes one rule file strictly. A file whose structure is
// wrong makes the whole policy malformed; one whose rules name persons the
// policy does not know (removed since) only counts for nothing.
func (p *Policy) decodeRuleFile(name string, data []byte) (*RuleFile, error) {
	m, err := decode[metadata.TargetsType](RulesDir+"/"+name+".json", data, MaxFileSize)
	if err != nil {
		return nil, err
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: rule file %s: %s", ErrMalformed, name, fmt.Sprintf(format, args...))
	}
	s := &m.Signed
	if s.Type != metadata.TARGETS || s.Version < 1 {
		return nil, fail("must be targets metadata with a version from 1")
	}
	if err := checkExpires(RulesDir+"/"+name+".json", s.Expires); err != nil {
		return nil, err
	}
	if len(s.Targets) != 0 || s.Delegations == nil || s.Delegations.SuccinctRoles != nil || len(s.Delegations.UnrecognizedFields) != 0 || len(s.Delegations.Keys) != 0 {
		return nil, fail("must hold no targets and no keys, and plain delegations")
	}
	if f, _ := s.UnrecognizedFields[fieldFormat].(string); f != RulesFormat {
		return nil, fail("%s must be %q", fieldFormat, RulesFormat)
	}
	if n, _ := s.UnrecognizedFields[fieldRuleFile].(string); n != name {
		return nil, fail("%s must be %q (a rule file cannot pass as another)", fieldRuleFile, name)
	}
	if len(s.UnrecognizedFields) != 2 {
		return nil, fail("unknown fields")
	}
	if len(s.Delegations.Roles) > MaxRules {
		return nil, fail("more than %d rules and delegations", MaxRules)
	}
	f := &RuleFile{Name: name, Meta: m}
	names := map[string]bool{}
	for i := range s.Delegations.Roles {
		role := &s.Delegations.Roles[i]
		if names[role.Name] {
			return nil, fail("%s defined twice", role.Name)
		}
		names[role.Name] = true
		if _, isDeleg := role.UnrecognizedFields[fieldSigners]; isDeleg {
			d, err := p.decodeDelegation(name, role, true)
			if err != nil {
				return nil, fmt.Errorf("rule file %s: %w", name, err)
			}
			f.Delegations = append(f.Delegations, d)
			continue
		}
		r, err := p.decodeRuleIn(role, true)
		if err != nil {
			return nil, fmt.Errorf("rule file %s: %w", name, err)
		}
		r.File = name
		f.Rules = append(f.Rules, r)
	}
	return f, nil
}

// decodeRuleFiles decodes raw (file name -> JSON) into p.files, within
// the limits on their number and total size.
func (p *Policy) decodeRuleFiles(raw map[string][]byte) error {
	p.files = map[string]*RuleFile{}
	if len(raw) > MaxRuleFiles {
		return fmt.Errorf("%w: more than %d rule files", ErrMalformed, MaxRuleFiles)
	}
	total := 0
	for _, data := range raw {
		if total += len(data); total > MaxRuleFilesSize {
			return fmt.Errorf("%w: rule files hold more than %d bytes together", ErrMalformed, MaxRuleFilesSize)
		}
	}
	for name := range raw {
		if !validName(name) {
			return fmt.Errorf("%w: bad rule file name %q", ErrMalformed, name)
		}
	}
	if p.signedFirst {
		return p.decodeRuleFilesSigned(raw)
	}
	for name, data := range raw {
		f, err := p.decodeRuleFile(name, data)
		if err != nil {
			return err
		}
		p.files[name] = f
	}
	return nil
}

// indexRuleFiles decodes the rule files, checks that they form a tree
// under targets.json's delegations (each file delegated exactly once, no
// file left over), decides which files count (signatures) and builds the
// search order.
func (p *Policy) indexRuleFiles(raw map[string][]byte) error {
	p.nodes, p.rulesFor = nil, nil
	if err := p.decodeRuleFiles(raw); err != nil {
		return err
	}
	delegated := map[string]bool{}
	var walk func(ds []*Delegation, chain []*Delegation, blocked bool) error
	walk = func(ds []*Delegation, chain []*Delegation, blocked bool) error {
		if len(chain) >= MaxDelegationDepth && len(ds) > 0 {
			return fmt.Errorf("%w: delegations nest deeper than %d", ErrMalformed, MaxDelegationDepth)
		}
		for _, d := range ds {
			if delegated[d.Name] {
				return fmt.Errorf("%w: rule file %s is delegated twice", ErrMalformed, d.Name)
			}
			delegated[d.Name] = true
			n := &node{d: d, chain: append(slices.Clone(chain), d), blocked: blocked}
			f, ok := p.files[d.Name]
			if !ok {
				// Missing: counts for nothing, its namespace fails closed.
				f = &RuleFile{Name: d.Name, Untrusted: "the file " + RulesDir + "/" + d.Name + ".json is missing"}
			} else {
				p.judgeRuleFile(n, f)
			}
			n.file = f
			if blocked && f.Untrusted == "" {
				f.Untrusted = "a rule file above it counts for nothing"
			}
			p.nodes = append(p.nodes, n)
			if len(p.nodes) > MaxRuleFiles {
				return fmt.Errorf("%w: more than %d delegations", ErrMalformed, MaxRuleFiles)
			}
			if err := walk(f.Delegations, n.chain, blocked || f.Untrusted != ""); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(p.delegations, nil, false); err != nil {
		return err
	}
	if len(p.nodes) > 0 {
		p.rulesFor = &rulesCache{byRef: map[string][]*Rule{}}
	}
	for name := range p.files {
		if !delegated[name] {
			return fmt.Errorf("%w: rule file %s is not delegated by any file", ErrMalformed, name)
		}
	}
	// Shadows: the terminating delegations before each node in the search
	// order that are not its ancestors and sit in a file above it (the
	// node is a later delegation of that file, or below one). A file's
	// signers order only their own file's delegations: a terminating
	// delegation deep in a team's file must not switch off a requirement
	// that a file above it (targets.json's rules keys) delegated later.
	for i, n := range p.nodes {
		for _, t := range p.nodes[:i] {
			if t.d.Terminating && !slices.Contains(n.chain, t.d) && inFileAbove(t, n) {
				n.shadows = append(n.shadows, t)
			}
		}
	}
	return nil
}

// inFileAbove reports whether t's parent file is n's or one above it:
// t's chain without t is a prefix of n's chain.
func inFileAbove(t, n *node) bool {
	parent := t.chain[:len(t.chain)-1]
	if len(parent) > len(n.chain) {
		return false
	}
	for i, d := range parent {
		if n.chain[i] != d {
			return false
		}
	}
	return true
}

// judgeRuleFile checks f's signatures against its delegation and its
// content against the namespace.
func (p *Policy) judgeRuleFile(n *node, f *RuleFile) {
	d := n.d
	signers := map[string]bool{}
	for _, x := range p.AllowedPersons(&Rule{Allow: d.Signers}) {
		signers[x] = true
	}
	payload, err := cjson.EncodeCanonical(f.Meta.Signed)
	signed := map[string]bool{}
	f.SignedKeys = nil
	if err == nil {
		for _, s := range f.Meta.Signatures {
			k, ok := p.personKeys[s.KeyID]
			if !ok {
				continue
			}
			owner := p.ownerFP[k.Fingerprint]
			if owner == nil || !signers[owner.Name] || slices.Contains(f.SignedKeys[owner.Name], k.Fingerprint) {
				continue
			}
			if k.VerifyMetadata(payload, s.Signature) {
				signed[owner.Name] = true
				if f.SignedKeys == nil {
					f.SignedKeys = map[string][]string{}
				}
				f.SignedKeys[owner.Name] = append(f.SignedKeys[owner.Name], k.Fingerprint)
			}
		}
	}
	f.SignedBy, f.Missing = nil, nil
	for name := range signers {
		if signed[name] {
			f.SignedBy = append(f.SignedBy, name)
		} else {
			f.Missing = append(f.Missing, name)
		}
	}
	sort.Strings(f.SignedBy)
	sort.Strings(f.Missing)
	switch {
	case err != nil:
		f.Untrusted = fmt.Sprintf("cannot encode it: %v", err)
	case p.checkSigners(d) != nil:
		f.Untrusted = fmt.Sprintf("its delegation cannot be met: %v", p.checkSigners(d))
	case len(f.SignedBy) < d.Threshold:
		f.Untrusted = fmt.Sprintf("signed by %d of the %d persons its delegation %s requires (signers %s; not signed by %s)",
			len(f.SignedBy), d.Threshold, d.Name, strings.Join(d.Signers, ", "), strings.Join(f.Missing, ", "))
	}
	if f.Untrusted != "" {
		return
	}
	// Rules naming persons or teams removed since make the file count for
	// nothing rather than the policy unreadable.
	for _, r := range f.Rules {
		if err := p.checkRuleGroups(r); err != nil {
			f.Untrusted = fmt.Sprintf("rule %s: %v", r.Name, err)
			return
		}
	}
	for _, sub := range f.Delegations {
		if err := p.checkSigners(sub); err != nil {
			f.Untrusted = fmt.Sprintf("delegation %s: %v", sub.Name, err)
			return
		}
	}
	f.Outside = nil
	for _, r := range f.Rules {
		if why := outsideNamespace(n.chain, r.Refs, r.Paths, !r.IsPathRule()); why != "" {
			f.Outside = append(f.Outside, fmt.Sprintf("rule %s %s: ignored there", r.Name, why))
		}
	}
	for _, sub := range f.Delegations {
		if why := outsideNamespace(n.chain, sub.Refs, sub.Paths, len(sub.Paths) == 0); why != "" {
			f.Outside = append(f.Outside, fmt.Sprintf("delegation %s %s: ignored there", sub.Name, why))
		}
	}
}

// outsideNamespace says how patterns (of a rule, or of a delegation; whole
// when they restrict whole refs) reach beyond the namespace chain, or ""
// when they stay inside it.
func outsideNamespace(chain []*Delegation, refs, paths []string, whole bool) string {
	for i := len(chain) - 1; i >= 0; i-- { // the nearest namespace first
		d := chain[i]
		if len(d.Refs) > 0 {
			if len(refs) == 0 {
				return fmt.Sprintf("covers refs beyond %s's %s (name refs inside it with --ref)", d.Name, strings.Join(d.Refs, " "))
			}
			for _, r := range refs {
				if !withinAny(d.Refs, r, false) {
					return fmt.Sprintf("covers %s, beyond %s's refs %s", r, d.Name, strings.Join(d.Refs, " "))
				}
			}
		}
		if len(d.Paths) > 0 {
			if whole {
				return fmt.Sprintf("restricts whole refs, beyond %s's paths %s (add --path patterns inside them)", d.Name, strings.Join(d.Paths, " "))
			}
			for _, x := range paths {
				if !withinAny(d.Paths, x, true) {
					return fmt.Sprintf("covers %s, beyond %s's paths %s", x, d.Name, strings.Join(d.Paths, " "))
				}
			}
		}
	}
	return ""
}

// encodeRuleFile writes f's rules and delegations back into its metadata.
func (p *Policy) encodeRuleFile(f *RuleFile) {
	roles := make([]metadata.DelegatedRole, 0, len(f.Rules)+len(f.Delegations))
	for _, r := range f.Rules {
		role := p.ruleRole(nil, r)
		role.KeyIDs = []string{}
		roles = append(roles, role)
	}
	for _, d := range f.Delegations {
		roles = append(roles, delegationRole(d, []string{}))
	}
	f.Meta.Signed.Delegations = &metadata.Delegations{Keys: map[string]*metadata.Key{}, Roles: roles}
	f.Meta.Signed.UnrecognizedFields = map[string]any{fieldFormat: RulesFormat, fieldRuleFile: f.Name}
}

func delegationRole(d *Delegation, keyIDs []string) metadata.DelegatedRole {
	return metadata.DelegatedRole{
		Name: d.Name, KeyIDs: keyIDs, Threshold: d.Threshold, Terminating: d.Terminating, Paths: d.Patterns(),
		UnrecognizedFields: map[string]any{fieldSigners: anyList(d.Signers)},
	}
}

// newRuleFile returns an empty, unsigned rule file.
func newRuleFile(name string, version int64, now time.Time) *RuleFile {
	m := metadata.Targets(expiry(now))
	m.Signed.Version = version
	f := &RuleFile{Name: name, Meta: m}
	return f
}

// EncodeRuleFiles returns the canonical bytes of every rule file by name.
func (p *Policy) EncodeRuleFiles() (map[string][]byte, error) {
	out := make(map[string][]byte, len(p.files))
	for name, f := range p.files {
		b, err := f.Meta.ToBytes(false)
		if err != nil {
			return nil, fmt.Errorf("policy: encode rule file %s: %w", name, err)
		}
		out[name] = b
	}
	return out, nil
}

// RuleFileStatus returns, for the named rule file, the threshold of its
// delegation, the signer persons with a valid signature and those without.
func (p *Policy) RuleFileStatus(name string) (threshold int, signedBy, missing []string, ok bool) {
	for _, n := range p.nodes {
		if n.d.Name == name {
			return n.d.Threshold, n.file.SignedBy, n.file.Missing, true
		}
	}
	return 0, nil, nil, false
}

// Expires is the earliest expiry of the policy's metadata (root, rules
// and every rule file): from then on CheckExpiry-style checks refuse it.
func (p *Policy) Expires() time.Time {
	exp := p.Root.Signed.Expires
	if t := p.Targets.Signed.Expires; t.Before(exp) {
		exp = t
	}
	for _, f := range p.RuleFiles() {
		if f.Meta != nil && f.Meta.Signed.Expires.Before(exp) {
			exp = f.Meta.Signed.Expires
		}
	}
	return exp
}
