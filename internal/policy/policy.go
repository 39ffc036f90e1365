// Package policy holds git-secure's policy: TUF root and targets metadata
// (go-tuf v2 types) that name the root keys, the keys trusted for rules, the
// persons with their keys, and the rules. It decodes strictly, encodes
// canonically and edits; it never decides whether metadata is trusted
// (signatures, thresholds, versions and expiry are internal/verify's job)
// and does no I/O. A *Policy is not safe for concurrent mutation.
package policy

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/strictjson"
	"github.com/git-secure/git-secure/internal/tufjson"
)

// Names of the refs and files that hold policy.
const (
	Ref         = "refs/secure/policy"
	StagingRef  = "refs/secure/policy-staging"
	RootFile    = "root.json"
	TargetsFile = "targets.json"
	Format      = "git-secure-policy/1"
	// MaxFileSize bounds root.json and each rule file, MaxTargetsSize
	// targets.json, which holds the persons: 4 MiB holds MaxPersons
	// persons with one ed25519 key each (9 900 take 2.7 MB, 3.3 MB with
	// names of 64 characters), fewer with RSA keys or long keyless
	// identities. The bytes bound what a hostile file makes every reader
	// spend: go-tuf decodes a file twice and re-encodes it, some 100
	// bytes a byte for small values, so a collection over maxItems is
	// refused before it decodes (a 4 MiB [0,0,...] cost 424 MB of
	// allocations, 180 MB peak and 2 s; 20 000 keys 208 MiB:
	// TestPolicyTooManyKeys). 10 000 honest persons cost 156 MB and
	// 0.6 s (BenchmarkParseTargetsBound), about what a hostile file of
	// collections within the bound costs. A policy already holds up to 16 MiB
	// of rule files (MaxRuleFilesSize), each at most 1 MiB.
	MaxFileSize    = 1 << 20
	MaxTargetsSize = 4 << 20

	// MaxRules, MaxPersons and MaxKeys bound what one policy may hold.
	MaxRules   = 1000
	MaxPersons = 10000
	MaxKeys    = 10000
	// maxItems bounds the members of any one object and the elements of
	// any one array of a policy file: the keys, persons and rules above
	// are its largest collections.
	maxItems = max(MaxKeys, MaxPersons, MaxRules)

	// DefaultLifetime is how long new or changed metadata stays valid.
	DefaultLifetime = 365 * 24 * time.Hour
)

const (
	fieldFormat  = "x-git-secure-format"
	fieldPersons = "x-git-secure-persons"
	fieldAllow   = "x-git-secure-allow"

	rolePrefixRef  = "git:"
	rolePrefixPath = "file:"

	// fieldScope marks a path rule without ref patterns written since path
	// rules were scoped to the protected refs (see Policy.Covers). A rule
	// of that shape stored without it is older and keeps its meaning:
	// every ref (Rule.EveryRef).
	fieldScope     = "x-git-secure-path-scope"
	scopeProtected = "protected-refs"
)

// ErrMalformed is wrapped by every decoding and validation error.
var ErrMalformed = errors.New("policy: malformed metadata")

// ErrInvalidChange is wrapped when an edit is refused (unknown person,
// duplicate name, threshold larger than the group, ...).
var ErrInvalidChange = errors.New("policy: invalid change")

// validName reports whether name is a valid person, team, rule or key name:
// 1-64 ASCII letters, digits, '.', '_' or '-', starting with a letter or
// digit. (Written out rather than as a regexp: the bounded repetition
// compiled at every start of the binary, which every hook pays.)
func validName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// Key is one public key known to a policy.
type Key struct {
	ID          string // TUF key ID
	Public      ssh.PublicKey
	Fingerprint string // SSH SHA256 fingerprint
	TUF         *metadata.Key
}

// Person is a named human or machine with one or more keys; all its keys
// count as one signer.
type Person struct {
	Name string
	Keys []*Key
}

// Rule says who must sign off on changes to some refs and/or files.
type Rule struct {
	Name      string
	Refs      []string // ref patterns
	Paths     []string // file path patterns
	Allow     []string // person names and team:NAME groups
	Threshold int      // distinct allowed persons required
	// Require demands, on top of the threshold, N distinct persons from
	// each group; one person fills at most one requirement.
	Require []Requirement
	// TestsBy names groups one of whose persons must have attested a
	// passing test run on the new commit's tree.
	TestsBy []string
	// TreeApprovals lets approvals bound to the new commit's tree count
	// (they survive a rebase or an amended message that keeps the tree).
	TreeApprovals bool
	// SignedPush requires each entry the rule covers to have been pushed
	// with git push --signed: a push certificate by a person of the
	// policy, stored by the server in refs/secure/pushcerts, that states
	// exactly the entry's update (internal/pushcert).
	SignedPush bool
	// EveryRef marks a path rule without ref patterns stored before path
	// rules were scoped (it has no x-git-secure-path-scope field): it
	// keeps the meaning it was signed with and covers every ref, as
	// --ref '**' does. New rules never set it.
	EveryRef bool

	// File is the rule file that holds the rule ("" for targets.json).
	File string
	// Chain names the delegations from targets.json down to File: the
	// chain that decided that the rule governs (see RulesFor).
	Chain []string
	// Org marks a rule of an organisation rule file (Chain starts at the
	// organisation's rules keys), in a policy made by Inherit.
	Org bool
	// Untrusted, on a rule RulesFor makes for a delegation whose rule file
	// counts for nothing, says why: the rule is never met (fail closed).
	Untrusted string
	// scope clips a delegated rule to its namespace (RulesFor).
	scope *ruleScope
}

// IsPathRule reports whether r protects files (rather than whole refs).
func (r *Rule) IsPathRule() bool { return len(r.Paths) > 0 }

// coversByPattern reports whether a ref pattern of r covers ref: matches
// it, or, for a ref under a forge's namespace (ForgeRefPrefixes), names
// that namespace explicitly (NamesExplicitly).
func (r *Rule) coversByPattern(ref string) bool {
	if prefix, ok := ForgePrefix(ref); ok {
		return r.NamesExplicitly(ref, prefix)
	}
	for _, p := range r.Refs {
		if Match(p, ref) {
			return true
		}
	}
	return false
}

// CoversPath reports whether a path pattern of r matches path, or a
// spelling of it that a checkout stores as the same file ([MatchFold]).
//
// It also covers a .gitattributes file in a directory above files the
// pattern may match: its lines change what checkouts write for them
// (working-tree-encoding, eol, filter) and what git archive, and a forge's
// release tarballs, put in (export-ignore drops a protected file,
// export-subst rewrites it), while the protected files stay unchanged.
//
// It also covers a file, symlink or submodule whose key is a directory that
// a pattern names literally above the files it protects (src and src/crypto
// for src/crypto/**): a checkout that stores ſrc or SRC as src lets such
// an entry take the directory's place, and the protected paths then show
// what it points to. Only the literal leading components count, so a
// pattern such as **/secret.txt covers no directories.
func (r *Rule) CoversPath(path string) bool { return r.coversPath(path, true) }

// coversPath is CoversPath; without attributes it leaves out the
// .gitattributes files that only lie above the patterns' files (a
// terminating delegation does not hold them: ruleScope.coversPath).
func (r *Rule) coversPath(path string, attributes bool) bool {
	if r.scope != nil && !r.scope.coversPath(path) {
		return false
	}
	if r.Untrusted != "" {
		return true // the whole namespace, which scope checked
	}
	key := FoldPath(path)
	for _, p := range r.Paths {
		if matchFoldKey(p, path, key) || protectsDirectory(FoldPath(p), key) || (attributes && attributesReach(FoldPath(p), key)) {
			return true
		}
	}
	return false
}

// Policy is one decoded policy: root and targets metadata plus indexes.
type Policy struct {
	Root    *metadata.Metadata[metadata.RootType]
	Targets *metadata.Metadata[metadata.TargetsType]

	// signedFirst is set while ParseSigned indexes: each rule file's
	// signatures are checked before it is decoded.
	signedFirst bool

	persons []*Person
	rules   []*Rule
	teams   []*Team
	global  []*GlobalRule
	revoked []Revocation
	byFP    map[string]*Key    // every key: root, targets and persons
	ownerFP map[string]*Person // person keys only

	personKeys  map[string]*Key          // person keys by TUF key ID
	delegations []*Delegation            // targets.json's delegations, in order
	files       map[string]*RuleFile     // rule files by name
	nodes       []*node                  // every delegation in the TUF search order
	rulesFor    *rulesCache              // RulesFor's answers by ref (rule files only)
	forge       *forgeIndex              // forge bridges and accounts (forge.go)
	inherited   bool                     // made by Inherit (inherit.go)
	orgRevoked  map[string]OrgRevocation // keys the inherited organisation policy revokes
}

// Persons returns the persons, sorted by name.
func (p *Policy) Persons() []*Person { return p.persons }

// Rules returns the rules of targets.json in order (see RuleFile for the
// rules of a rule file, RulesFor for the rules that govern a ref).
func (p *Policy) Rules() []*Rule { return p.rules }

// Person returns the named person.
func (p *Policy) Person(name string) (*Person, bool) {
	for _, x := range p.persons {
		if x.Name == name {
			return x, true
		}
	}
	return nil, false
}

// Rule returns the named rule.
func (p *Policy) Rule(name string) (*Rule, bool) {
	for _, r := range p.rules {
		if r.Name == name {
			return r, true
		}
	}
	return nil, false
}

// PersonByFingerprint returns the person owning the key with SSH
// fingerprint fp.
func (p *Policy) PersonByFingerprint(fp string) (*Person, bool) {
	x, ok := p.ownerFP[fp]
	return x, ok
}

// LookupKey returns any key the policy knows (root, rules or person key) by
// SSH fingerprint; its shape fits sign.VerifySSHSig.
func (p *Policy) LookupKey(fp string) (ssh.PublicKey, bool) {
	k, ok := p.byFP[fp]
	if !ok {
		return nil, false
	}
	return k.Public, true
}

// OpenPGPSubkeyOwner returns the fingerprint of the person's OpenPGP key
// that holds the signing subkey with OpenPGP fingerprint subkey, for
// signatures that name only the subkey (gpg's, for git). The caller still
// looks the returned key up (LookupPersonKey, with its own revocation
// rules); this only finds its name. A subkey that more than one key
// claims has no owner (go-crypto requires a signing subkey's
// cross-signature, so that takes the subkey's secret; refused anyway).
func (p *Policy) OpenPGPSubkeyOwner(subkey []byte) (string, bool) {
	owner := ""
	for _, person := range p.persons {
		for _, k := range person.Keys {
			if pk, ok := k.Public.(*sign.OpenPGPKey); ok && pk.HasSigningSubkey(subkey) {
				if owner != "" {
					return "", false
				}
				owner = k.Fingerprint
			}
		}
	}
	return owner, owner != ""
}

// LookupPersonKey is LookupKey restricted to persons' keys.
func (p *Policy) LookupPersonKey(fp string) (ssh.PublicKey, bool) {
	if _, ok := p.ownerFP[fp]; !ok {
		return nil, false
	}
	return p.LookupKey(fp)
}

// RoleKeys returns the keys and threshold of a root role ("root" or
// "targets").
func (p *Policy) RoleKeys(role string) ([]*Key, int) {
	r := p.Root.Signed.Roles[role]
	if r == nil {
		return nil, 0
	}
	keys := make([]*Key, 0, len(r.KeyIDs))
	for _, id := range r.KeyIDs {
		if k, err := newKey(p.Root.Signed.Keys[id]); err == nil {
			keys = append(keys, k)
		}
	}
	return keys, r.Threshold
}

// Covers reports whether rule r of p applies to updates of ref:
//
//   - a rule with ref patterns when one of them matches ref;
//   - a path rule without ref patterns when a ref pattern of at least one
//     rule of p matches ref (the refs that ship: main, releases), or every
//     ref when it is an older rule that keeps that meaning (Rule.EveryRef).
//
// A ref under a forge's namespace (ForgeRefPrefixes: refs/pull/, ...)
// is matched only by a pattern that names the namespace explicitly
// (Rule.NamesExplicitly): refs/** and ** do not. A path rule that should
// judge every other ref says so with --ref 'refs/**'.
func (p *Policy) Covers(r *Rule, ref string) bool {
	return p.covers(r, ref, func() bool { return p.namedByRefPattern(ref) })
}

// covers is Covers with the "covered by some rule's ref pattern" answer
// computed at most once per ref by the caller.
func (p *Policy) covers(r *Rule, ref string, named func() bool) bool {
	if r.scope != nil && !chainRefs(r.scope.n.chain, ref) {
		return false
	}
	switch {
	case r.Untrusted != "":
		return true // the namespace, which scope checked
	case len(r.Refs) > 0:
		return r.coversByPattern(ref)
	case !r.IsPathRule():
		return false
	case r.EveryRef:
		_, forge := ForgePrefix(ref)
		return !forge
	}
	return named()
}

// namedByRefPattern reports whether a ref pattern of some rule that
// governs ref covers it: a rule of targets.json, or a rule of a rule file
// that the delegation search reaches for ref (namedByRuleFile). A path
// rule without ref patterns covers exactly those refs, wherever the rule
// that names them is kept: a release team's file that protects
// refs/heads/release/* makes those refs ship as main does.
func (p *Policy) namedByRefPattern(ref string) bool {
	for _, r := range p.rules {
		if r.coversByPattern(ref) {
			return true
		}
	}
	if len(p.nodes) == 0 {
		return false
	}
	if p.rulesFor != nil {
		if named, ok := p.rulesFor.getNamed(ref); ok {
			return named
		}
		named := p.namedByRuleFile(ref)
		p.rulesFor.putNamed(ref, named)
		return named
	}
	return p.namedByRuleFile(ref)
}

// namedByRuleFile reports whether a rule of a rule file names ref in a
// ref pattern where that rule governs: its delegation is reached for ref
// as delegatedRulesFor reaches it (the namespaces of its chain hold ref,
// no earlier terminating delegation ends the search before it), and it is
// not a whole-ref rule beyond a path namespace (ignored there). A file
// that counts for nothing names nothing: its namespace fails closed
// anyway (delegatedRulesFor).
func (p *Policy) namedByRuleFile(ref string) bool {
	for _, n := range p.nodes {
		if n.blocked || n.file == nil || n.file.Untrusted != "" || !chainRefs(n.chain, ref) || n.shadowedWhole(ref) {
			continue
		}
		pathScoped := chainHasPaths(n.chain)
		for _, r := range n.file.Rules {
			if pathScoped && !r.IsPathRule() {
				continue
			}
			if len(r.Refs) > 0 && r.coversByPattern(ref) {
				return true
			}
		}
	}
	return false
}

// HasRefPatterns reports whether some rule, of targets.json or of a rule
// file, has ref patterns (without one, path rules without ref patterns
// cover no ref).
func (p *Policy) HasRefPatterns() bool {
	for _, r := range p.rules {
		if len(r.Refs) > 0 {
			return true
		}
	}
	for _, n := range p.nodes {
		if n.file == nil {
			continue
		}
		for _, r := range n.file.Rules {
			if len(r.Refs) > 0 {
				return true
			}
		}
	}
	return false
}

// RulesFor returns the rules that cover updates of ref (Covers), in
// policy order: targets.json's rules, then the rules of the rule files the
// delegation search reaches for ref (delegatedRulesFor), each clipped to
// its namespace.
func (p *Policy) RulesFor(ref string) []*Rule {
	if p.rulesFor != nil {
		if rs, ok := p.rulesFor.get(ref); ok {
			return rs
		}
		rs := p.rulesForUncached(ref)
		p.rulesFor.put(ref, rs)
		return slices.Clone(rs)
	}
	return p.rulesForUncached(ref)
}

func (p *Policy) rulesForUncached(ref string) []*Rule {
	known, named := false, false
	once := func() bool {
		if !known {
			known, named = true, p.namedByRefPattern(ref)
		}
		return named
	}
	var out []*Rule
	for _, r := range p.rules {
		if p.covers(r, ref, once) {
			out = append(out, r)
		}
	}
	return p.delegatedRulesFor(ref, out, once)
}

// Protected reports whether any rule covers ref.
func (p *Policy) Protected(ref string) bool { return len(p.RulesFor(ref)) > 0 }

// New returns an unsigned version-1 policy whose root and rules are held by
// rootKey with threshold 1, and which has no persons and no rules.
func New(rootKey ssh.PublicKey, now time.Time) (*Policy, error) {
	k, id, err := sign.TUFKey(rootKey)
	if err != nil {
		return nil, err
	}
	if err := checkRoleKeyKind(k, sign.Fingerprint(rootKey)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidChange, err)
	}
	exp := expiry(now)
	root := metadata.Root(exp)
	root.Signed.Roles = map[string]*metadata.Role{
		metadata.ROOT:    {KeyIDs: []string{id}, Threshold: 1},
		metadata.TARGETS: {KeyIDs: []string{id}, Threshold: 1},
	}
	root.Signed.Keys = map[string]*metadata.Key{id: k}
	root.Signed.ConsistentSnapshot = false
	root.Signed.UnrecognizedFields = map[string]any{fieldFormat: Format}
	targets := metadata.Targets(exp)
	targets.Signed.Delegations = &metadata.Delegations{Keys: map[string]*metadata.Key{}, Roles: []metadata.DelegatedRole{}}
	targets.Signed.UnrecognizedFields = map[string]any{fieldFormat: Format, fieldPersons: map[string]any{}}
	p := &Policy{Root: root, Targets: targets}
	if err := p.index(nil); err != nil {
		return nil, err
	}
	return p, nil
}

func expiry(now time.Time) time.Time { return now.Add(DefaultLifetime).UTC().Truncate(time.Second) }

// Parse decodes root.json and targets.json strictly: bounded size, no
// duplicate keys, canonical bytes (re-encoding gives the input), and a
// consistent structure. It checks no signature of root or targets. A
// policy that delegates to rule files is read with ParseFiles: without
// them each delegated namespace fails closed.
func Parse(rootJSON, targetsJSON []byte) (*Policy, error) {
	return ParseFiles(rootJSON, targetsJSON, nil)
}

// ParseFiles is Parse with the rule files (rules/NAME.json by NAME). Each
// is decoded as strictly; its signatures are checked against its
// delegation (a rule file with too few counts for nothing: RuleFile.
// Untrusted), since which rules govern a ref depends on it.
func ParseFiles(rootJSON, targetsJSON []byte, ruleFiles map[string][]byte) (*Policy, error) {
	root, err := decode[metadata.RootType](RootFile, rootJSON, MaxFileSize)
	if err != nil {
		return nil, err
	}
	targets, err := decode[metadata.TargetsType](TargetsFile, targetsJSON, MaxTargetsSize)
	if err != nil {
		return nil, err
	}
	p := &Policy{Root: root, Targets: targets}
	if err := p.index(ruleFiles); err != nil {
		return nil, err
	}
	return p, nil
}

func decode[T metadata.Roles](name string, data []byte, limit int) (*metadata.Metadata[T], error) {
	// go-tuf's decoder spends some 100 bytes per byte of a document of
	// small members; no collection of a valid policy holds more than
	// maxItems, so a hostile one is refused before that decoder runs.
	if err := strictjson.CheckItems(data, limit, maxItems); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, name, err)
	}
	return decodeChecked[T](name, data)
}

// decodeChecked is decode for data strictjson.CheckItems accepted (with
// maxItems). Targets metadata (targets.json, rule files) and root.json in
// the form go-tuf writes them are read in one pass by tufjson.Targets and
// tufjson.Root, which return go-tuf's value and prove that go-tuf encodes
// it back to data; anything
// else goes through go-tuf's decoder and the comparison below, which
// refuse it (or accept it exactly as before).
func decodeChecked[T metadata.Roles](name string, data []byte) (*metadata.Metadata[T], error) {
	switch any((*T)(nil)).(type) {
	case *metadata.TargetsType:
		if m, ok := tufjson.Targets(data); ok {
			return any(m).(*metadata.Metadata[T]), nil
		}
	case *metadata.RootType:
		if m, ok := tufjson.Root(data); ok {
			return any(m).(*metadata.Metadata[T]), nil
		}
	}
	// An expires in another form than git-secure's fails to decode, or
	// (an offset of zero, a fraction of nothing) decodes and encodes back
	// otherwise: the error then names that field (diagnoseExpires).
	m, err := (&metadata.Metadata[T]{}).FromBytes(data)
	if err != nil {
		return nil, cmp.Or(diagnoseExpires(name, data), fmt.Errorf("%w: %s: %v", ErrMalformed, name, err))
	}
	again, err := m.ToBytes(false)
	if err != nil {
		return nil, cmp.Or(diagnoseExpires(name, data), fmt.Errorf("%w: %s: %v", ErrMalformed, name, err))
	}
	if !bytes.Equal(again, data) {
		return nil, cmp.Or(diagnoseExpires(name, data), fmt.Errorf("%w: %s is not in canonical form", ErrMalformed, name))
	}
	if len(m.UnrecognizedFields) != 0 {
		return nil, fmt.Errorf("%w: %s has unknown top-level fields", ErrMalformed, name)
	}
	for _, s := range m.Signatures {
		if len(s.UnrecognizedFields) != 0 {
			return nil, fmt.Errorf("%w: %s: signature has unknown fields", ErrMalformed, name)
		}
	}
	return m, nil
}

// Encode returns the canonical bytes of root.json and targets.json.
func (p *Policy) Encode() (root, targets []byte, err error) {
	if root, err = p.Root.ToBytes(false); err != nil {
		return nil, nil, fmt.Errorf("policy: encode root: %w", err)
	}
	if targets, err = p.Targets.ToBytes(false); err != nil {
		return nil, nil, fmt.Errorf("policy: encode targets: %w", err)
	}
	return root, targets, nil
}

// Clone returns a deep copy of p.
func (p *Policy) Clone() (*Policy, error) {
	r, t, err := p.Encode()
	if err != nil {
		return nil, err
	}
	files, err := p.EncodeRuleFiles()
	if err != nil {
		return nil, err
	}
	q, err := ParseFiles(r, t, files)
	if err != nil {
		return nil, err
	}
	q.inherited = p.inherited
	return q, nil
}

func newKey(k *metadata.Key) (*Key, error) {
	if k == nil {
		return nil, fmt.Errorf("%w: missing key", ErrMalformed)
	}
	if len(k.UnrecognizedFields) != 0 || len(k.Value.UnrecognizedFields) != 0 {
		return nil, fmt.Errorf("%w: key has unknown fields", ErrMalformed)
	}
	pub, err := sign.PublicKeyFromTUF(k)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	id, err := sign.KeyID(k)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return &Key{ID: id, Public: pub, Fingerprint: sign.Fingerprint(pub), TUF: k}, nil
}

// keyMap checks that every key is stored under its own ID.
func keyMap(where string, keys map[string]*metadata.Key) (map[string]*Key, error) {
	if len(keys) > MaxKeys {
		return nil, fmt.Errorf("%w: %s: more than %d keys", ErrMalformed, where, MaxKeys)
	}
	out := make(map[string]*Key, len(keys))
	fps := map[string]string{}
	for id, mk := range keys {
		k, err := newKey(mk)
		if err != nil {
			return nil, fmt.Errorf("%s key %s: %w", where, id, err)
		}
		if k.ID != id {
			return nil, fmt.Errorf("%w: %s key stored as %s has ID %s", ErrMalformed, where, id, k.ID)
		}
		// One key, two encodings (hex case, key type aliases) would count
		// twice toward a threshold.
		if other, dup := fps[k.Fingerprint]; dup {
			return nil, fmt.Errorf("%w: %s key %s is listed twice (as %s and %s)", ErrMalformed, where, k.Fingerprint, other, id)
		}
		fps[k.Fingerprint] = id
		out[id] = k
	}
	return out, nil
}

func stringList(v any) ([]string, bool) {
	arr, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// index validates the structure and builds the lookup tables.
func (p *Policy) index(ruleFiles map[string][]byte) error {
	rs, ts := &p.Root.Signed, &p.Targets.Signed
	rootKeys, err := checkRoot(rs, ts)
	if err != nil {
		return err
	}
	targetsFormat, err := checkTargets(ts)
	if err != nil {
		return err
	}
	personKeys, err := p.decodePersons(ts)
	if err != nil {
		return err
	}
	if err := p.attachSigstore(personKeys); err != nil {
		return err
	}
	if err := p.decodeTeams(ts.UnrecognizedFields[fieldTeams]); err != nil {
		return err
	}
	if err := p.decodeGlobal(ts.UnrecognizedFields[fieldGlobal]); err != nil {
		return err
	}
	if err := p.decodeRevoked(ts.UnrecognizedFields[fieldRevoked]); err != nil {
		return err
	}
	if err := p.decodeRoles(ts); err != nil {
		return err
	}
	// One stored form: git-secure-policy/2 exactly when targets.json
	// delegates (a reader of /1 then refuses it instead of ignoring the
	// delegated namespaces).
	if want := p.targetsFormat(); targetsFormat != want {
		return fmt.Errorf("%w: targets.json: %s must be %q", ErrMalformed, fieldFormat, want)
	}
	if len(p.delegations) == 0 && len(ruleFiles) > 0 {
		return fmt.Errorf("%w: rule files without a delegation", ErrMalformed)
	}
	if err := p.indexRuleFiles(ruleFiles); err != nil {
		return err
	}

	// A key only the timestamp role uses vouches for freshness and
	// nothing else: it is not a key LookupKey knows (entries).
	p.byFP = map[string]*Key{}
	for id, k := range rootKeys {
		if slices.Contains(rs.Roles[metadata.ROOT].KeyIDs, id) || slices.Contains(rs.Roles[metadata.TARGETS].KeyIDs, id) {
			p.byFP[k.Fingerprint] = k
		}
	}
	for _, k := range personKeys {
		p.byFP[k.Fingerprint] = k
	}
	if err := p.decodeForge(rs, ts, rootKeys, personKeys); err != nil {
		return err
	}
	return checkFreshnessKeysOwn(rs, rootKeys, personKeys)
}

// checkRoot checks root.json (types, versions, expiry, format, roles) and
// returns its keys by ID.
func checkRoot(rs *metadata.RootType, ts *metadata.TargetsType) (map[string]*Key, error) {
	if rs.Type != metadata.ROOT || ts.Type != metadata.TARGETS {
		return nil, fmt.Errorf("%w: wrong metadata types", ErrMalformed)
	}
	if rs.Version < 1 || ts.Version < 1 {
		return nil, fmt.Errorf("%w: versions start at 1", ErrMalformed)
	}
	if err := checkExpires(RootFile, rs.Expires); err != nil {
		return nil, err
	}
	if f, _ := rs.UnrecognizedFields[fieldFormat].(string); f != Format {
		return nil, fmt.Errorf("%w: root.json: %s must be %q", ErrMalformed, fieldFormat, Format)
	}
	if err := checkFreshnessFields(rs); err != nil {
		return nil, err
	}
	if err := checkOrgField(rs.UnrecognizedFields); err != nil {
		return nil, err
	}
	rootKeys, err := keyMap("root", rs.Keys)
	if err != nil {
		return nil, err
	}
	for id, k := range rootKeys {
		if err := checkRoleKeyKind(k.TUF, k.Fingerprint); err != nil {
			return nil, fmt.Errorf("%w: root key %s: %v", ErrMalformed, id, err)
		}
	}
	used := map[string]bool{}
	for name, role := range rs.Roles {
		if len(role.UnrecognizedFields) != 0 {
			return nil, fmt.Errorf("%w: role %s has unknown fields", ErrMalformed, name)
		}
		if role.Threshold < 1 || role.Threshold > len(role.KeyIDs) {
			return nil, fmt.Errorf("%w: role %s: threshold %d with %d keys", ErrMalformed, name, role.Threshold, len(role.KeyIDs))
		}
		seen := map[string]bool{}
		for _, id := range role.KeyIDs {
			if rootKeys[id] == nil || seen[id] {
				return nil, fmt.Errorf("%w: role %s: unknown or repeated key %s", ErrMalformed, name, id)
			}
			seen[id] = true
			used[id] = true
		}
	}
	if len(used) != len(rootKeys) {
		return nil, fmt.Errorf("%w: root.json lists keys no role uses", ErrMalformed)
	}
	return rootKeys, nil
}

// checkTargets checks the shape of targets.json and returns its format.
func checkTargets(ts *metadata.TargetsType) (string, error) {
	if len(ts.Targets) != 0 || ts.Delegations == nil || ts.Delegations.SuccinctRoles != nil || len(ts.Delegations.UnrecognizedFields) != 0 {
		return "", fmt.Errorf("%w: targets.json must hold no targets and plain delegations", ErrMalformed)
	}
	if err := checkExpires(TargetsFile, ts.Expires); err != nil {
		return "", err
	}
	format, _ := ts.UnrecognizedFields[fieldFormat].(string)
	if format != Format && format != FormatDelegated {
		return "", fmt.Errorf("%w: targets.json: %s must be %q or %q", ErrMalformed, fieldFormat, Format, FormatDelegated)
	}
	for k := range ts.UnrecognizedFields {
		if k != fieldFormat && k != fieldPersons && k != fieldTeams && k != fieldGlobal && k != fieldRevoked && k != fieldForgeAccounts {
			return "", fmt.Errorf("%w: targets.json: unknown field %q", ErrMalformed, k)
		}
	}
	return format, nil
}

// decodePersons decodes the persons and their keys; every person key is
// owned by exactly one person.
func (p *Policy) decodePersons(ts *metadata.TargetsType) (map[string]*Key, error) {
	personKeys, err := keyMap("person", ts.Delegations.Keys)
	if err != nil {
		return nil, err
	}
	rawPersons, ok := ts.UnrecognizedFields[fieldPersons].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: targets.json: %s must be an object", ErrMalformed, fieldPersons)
	}
	if len(rawPersons) > MaxPersons {
		return nil, fmt.Errorf("%w: more than %d persons", ErrMalformed, MaxPersons)
	}
	p.persons = nil
	p.ownerFP = map[string]*Person{}
	p.personKeys = personKeys
	ownerID := map[string]string{}
	for name, v := range rawPersons {
		if !validName(name) {
			return nil, fmt.Errorf("%w: bad person name %q", ErrMalformed, name)
		}
		ids, ok := stringList(v)
		if !ok || len(ids) == 0 {
			return nil, fmt.Errorf("%w: person %s must list at least one key ID", ErrMalformed, name)
		}
		person := &Person{Name: name}
		for _, id := range ids {
			k := personKeys[id]
			if k == nil {
				return nil, fmt.Errorf("%w: person %s: unknown key %s", ErrMalformed, name, id)
			}
			if other, dup := ownerID[id]; dup {
				return nil, fmt.Errorf("%w: key %s belongs to both %s and %s", ErrMalformed, k.Fingerprint, other, name)
			}
			ownerID[id] = name
			person.Keys = append(person.Keys, k)
			p.ownerFP[k.Fingerprint] = person
		}
		p.persons = append(p.persons, person)
	}
	if len(ownerID) != len(personKeys) {
		return nil, fmt.Errorf("%w: targets.json lists keys no person owns", ErrMalformed)
	}
	sort.Slice(p.persons, func(i, j int) bool { return p.persons[i].Name < p.persons[j].Name })
	return personKeys, nil
}

// decodeRoles decodes the delegated roles of targets.json: rules, and
// delegations to rule files (a role with signers). Names are unique.
func (p *Policy) decodeRoles(ts *metadata.TargetsType) error {
	if len(ts.Delegations.Roles) > MaxRules {
		return fmt.Errorf("%w: more than %d rules", ErrMalformed, MaxRules)
	}
	p.rules, p.delegations = nil, nil
	names := map[string]bool{}
	for i := range ts.Delegations.Roles {
		role := &ts.Delegations.Roles[i]
		if _, isDeleg := role.UnrecognizedFields[fieldSigners]; isDeleg {
			d, err := p.decodeDelegation("", role, false)
			if err != nil {
				return err
			}
			if names[d.Name] {
				return fmt.Errorf("%w: %s defined twice", ErrMalformed, d.Name)
			}
			names[d.Name] = true
			p.delegations = append(p.delegations, d)
			continue
		}
		r, err := p.decodeRule(role)
		if err != nil {
			return err
		}
		if names[r.Name] {
			return fmt.Errorf("%w: rule %s defined twice", ErrMalformed, r.Name)
		}
		names[r.Name] = true
		p.rules = append(p.rules, r)
	}
	return nil
}

func (p *Policy) decodeRule(d *metadata.DelegatedRole) (*Rule, error) {
	return p.decodeRuleIn(d, false)
}

// targetsFormat is the format targets.json is written in.
func (p *Policy) targetsFormat() string {
	if len(p.delegations) > 0 {
		return FormatDelegated
	}
	return Format
}

// decodeRuleIn decodes a rule of targets.json, or of a rule file (inFile:
// keyids empty, persons checked when the file is judged).
func (p *Policy) decodeRuleIn(d *metadata.DelegatedRole, inFile bool) (*Rule, error) {
	if !validName(d.Name) {
		return nil, fmt.Errorf("%w: bad rule name %q", ErrMalformed, d.Name)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: rule %s: %s", ErrMalformed, d.Name, fmt.Sprintf(format, args...))
	}
	if d.Terminating || len(d.PathHashPrefixes) != 0 {
		return nil, fail("terminating and path_hash_prefixes are not used")
	}
	for k := range d.UnrecognizedFields {
		if k != fieldAllow && k != fieldRequire && k != fieldTests && k != fieldTrees && k != fieldScope && k != fieldSigned {
			return nil, fail("unknown field %q", k)
		}
	}
	r, err := decodeRuleFields(d)
	if err != nil {
		return nil, fail("%v", err)
	}
	if err := decodeRulePatterns(r, d); err != nil {
		return nil, fail("%v", err)
	}
	if inFile {
		if len(d.KeyIDs) != 0 {
			return nil, fail("keyids must be empty in a rule file (persons are named)")
		}
		if r.Threshold < 1 {
			return nil, fail("threshold %d", r.Threshold)
		}
		if r.EveryRef {
			return nil, fail("a path rule without ref patterns needs %s", fieldScope)
		}
		return r, nil
	}
	if err := p.checkRuleGroups(r); err != nil {
		return nil, fail("%v", err)
	}
	if !p.keyIDsMatch(r, d.KeyIDs) {
		return nil, fail("keyids do not match the allowed persons' keys")
	}
	return r, nil
}

// decodeRuleFields decodes who a rule allows and what it requires.
func decodeRuleFields(d *metadata.DelegatedRole) (*Rule, error) {
	allow, ok := stringList(d.UnrecognizedFields[fieldAllow])
	if !ok || len(allow) == 0 {
		return nil, fmt.Errorf("%s must list at least one person", fieldAllow)
	}
	r := &Rule{Name: d.Name, Allow: allow, Threshold: d.Threshold}
	if v, present := d.UnrecognizedFields[fieldRequire]; present {
		reqs, ok := stringList(v)
		if !ok || len(reqs) == 0 {
			return nil, fmt.Errorf("%s must be a non-empty list", fieldRequire)
		}
		for _, x := range reqs {
			q, err := ParseRequirement(x)
			if err != nil || q.String() != x {
				return nil, fmt.Errorf("bad requirement %q", x)
			}
			r.Require = append(r.Require, q)
		}
	}
	if v, present := d.UnrecognizedFields[fieldTrees]; present {
		if v != "true" {
			return nil, fmt.Errorf("%s must be \"true\" when present", fieldTrees)
		}
		r.TreeApprovals = true
	}
	if v, present := d.UnrecognizedFields[fieldSigned]; present {
		if v != "true" {
			return nil, fmt.Errorf("%s must be \"true\" when present", fieldSigned)
		}
		r.SignedPush = true
	}
	if v, present := d.UnrecognizedFields[fieldTests]; present {
		if r.TestsBy, ok = stringList(v); !ok || len(r.TestsBy) == 0 {
			return nil, fmt.Errorf("%s must be a non-empty list", fieldTests)
		}
	}
	return r, nil
}

// decodeRulePatterns splits a rule's git: and file: patterns and checks
// each.
func decodeRulePatterns(r *Rule, d *metadata.DelegatedRole) error {
	for _, pat := range d.Paths {
		switch {
		case strings.HasPrefix(pat, rolePrefixRef):
			r.Refs = append(r.Refs, pat[len(rolePrefixRef):])
		case strings.HasPrefix(pat, rolePrefixPath):
			r.Paths = append(r.Paths, pat[len(rolePrefixPath):])
		default:
			return fmt.Errorf("pattern %q has neither git: nor file: prefix", pat)
		}
	}
	if len(r.Refs)+len(r.Paths) == 0 {
		return errors.New("no patterns")
	}
	if err := decodeScope(r, d.UnrecognizedFields); err != nil {
		return err
	}
	for _, pat := range r.Refs {
		if err := ValidRefPattern(pat); err != nil {
			return err
		}
	}
	for _, pat := range r.Paths {
		if err := ValidPathPattern(pat); err != nil {
			return err
		}
	}
	return nil
}

// keyIDsMatch reports whether a rule's stored keyids are exactly the keys
// of the persons it allows, each once.
func (p *Policy) keyIDsMatch(r *Rule, keyIDs []string) bool {
	want := map[string]bool{}
	for _, id := range p.ruleKeyIDs(r) {
		want[id] = true
	}
	got := map[string]bool{}
	for _, id := range keyIDs {
		got[id] = true
	}
	if len(got) != len(keyIDs) || len(got) != len(want) {
		return false
	}
	for id := range want {
		if !got[id] {
			return false
		}
	}
	return true
}

// decodeScope sets r.EveryRef for a path rule without ref patterns stored
// without the scope field, and refuses the field anywhere else: a rule has
// exactly one stored form.
func decodeScope(r *Rule, fields map[string]any) error {
	v, present := fields[fieldScope]
	bare := len(r.Refs) == 0 && len(r.Paths) > 0
	switch {
	case present && !bare:
		return fmt.Errorf("%s is only for a path rule without ref patterns", fieldScope)
	case present && v != scopeProtected:
		return fmt.Errorf("%s must be %q", fieldScope, scopeProtected)
	case bare && !present:
		r.EveryRef = true
	}
	return nil
}

// Allows reports whether r names person directly in its allow list (not
// through a team). Counting uses Policy.RuleAllows, which expands teams.
func (r *Rule) Allows(person string) bool { return slices.Contains(r.Allow, person) }
