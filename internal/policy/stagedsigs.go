package policy

import (
	"bytes"
	"maps"
	"slices"
	"sort"

	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// StagedRaw is a staged policy change read without decoding it: the
// envelope of each of its files (root.json, targets.json, rules/NAME.json),
// after CheckStaged's checks. Reading one costs about the files' size
// whatever they hold, so a server may read any staged change pushed; what
// it learns from one is which keys signed which signed part, never what
// the signed part means.
type StagedRaw struct {
	files map[string]*envelope
}

// ReadStagedRaw reads commit h's files as CheckStaged checks them, and
// keeps their envelopes.
func ReadStagedRaw(r Reader, h gitrepo.Hash) (*StagedRaw, error) {
	root, targets, ruleFiles, err := readFiles(r, h)
	if err != nil {
		return nil, err
	}
	files, err := stagedEnvelopes(root, targets, ruleFiles)
	if err != nil {
		return nil, err
	}
	return &StagedRaw{files: files}, nil
}

// SameSigned reports whether s and t hold the same files with the same
// signed parts (their signatures may differ).
func (s *StagedRaw) SameSigned(t *StagedRaw) bool {
	if len(s.files) != len(t.files) {
		return false
	}
	for name, e := range s.files {
		f, ok := t.files[name]
		if !ok || !bytes.Equal(e.payload, f.payload) {
			return false
		}
	}
	return true
}

// SignedBy returns, for each file of s, the fingerprints of the keys
// among keys with a valid signature over it (counted over the raw signed
// part), and whether every signature s holds is one of those, one a key:
// a signature no key of keys made, not hex, or a key's second, makes it
// false. A file with more signatures than keys is not counted at all (and
// all is false), so that a hostile file costs no more verifications than
// there are keys.
func (s *StagedRaw) SignedBy(keys []*Key) (map[string][]string, bool) {
	out := map[string][]string{}
	all := true
	for name, e := range s.files {
		if e.entries > len(keys) {
			all = false
			continue
		}
		valid := 0
		for _, k := range keys {
			if slices.Contains(out[name], k.Fingerprint) {
				continue // a key under two IDs
			}
			for _, sig := range e.sigs[k.ID] {
				if k.VerifyMetadata(e.payload, sig) {
					valid++
					out[name] = append(out[name], k.Fingerprint)
					break
				}
			}
		}
		all = all && valid == e.entries
	}
	return out, all
}

// TrustedSigners returns, sorted, the fingerprints of the keys base (the
// policy in force, whose files as written are baseRaw) trusts with its
// metadata (MetadataKeys), less the keys it revokes (but on root.json,
// whose rotation is how a compromised root key goes), that signed a part of
// s that counts for the change from base: a file s changes or adds, or
// targets.json unchanged with a signature base's targets.json does not
// carry byte for byte (a root.json or rule file left as it is counts for
// nothing: every change that leaves it has those signatures). Signatures
// are counted over the raw signed parts: s is never decoded, and a key s
// brings in counts for nothing.
func (s *StagedRaw) TrustedSigners(base *Policy, baseRaw *StagedRaw) []string {
	keys := base.MetadataKeys()
	set := map[string]bool{}
	for name, e := range s.files {
		was := baseRaw.files[name]
		unchanged := was != nil && bytes.Equal(was.payload, e.payload)
		if unchanged && name != TargetsFile {
			continue
		}
		var carried *envelope
		if unchanged {
			carried = was
		}
		for _, fp := range trustedSigs(base, keys, name, e, carried, false) {
			set[fp] = true
		}
	}
	out := slices.Collect(maps.Keys(set))
	sort.Strings(out)
	return out
}

// trustedSigs returns the fingerprints of the keys among keys (base's
// MetadataKeys) with a valid signature over e, file name of a staged
// change: not revoked by base (but on root.json), at most maxSigsPerKey
// of a key ID tried, and none that carried (base's file, when e's signed
// part is its) holds byte for byte. With first it stops at the first.
func trustedSigs(base *Policy, keys []*Key, name string, e, carried *envelope, first bool) []string {
	var out []string
	for _, k := range keys {
		if name != RootFile && base.RevokedFrom(k.Fingerprint) != 0 {
			continue // as verify.PolicyStatusRevoked: root keeps its own
		}
		sigs := e.sigs[k.ID]
		if len(sigs) > maxSigsPerKey {
			sigs = sigs[:maxSigsPerKey]
		}
		for _, sig := range sigs {
			if carried != nil && slices.ContainsFunc(carried.sigs[k.ID], func(b []byte) bool { return bytes.Equal(b, sig) }) {
				continue
			}
			if k.VerifyMetadata(e.payload, sig) {
				out = append(out, k.Fingerprint)
				if first {
					return out
				}
				break
			}
		}
	}
	return out
}

// Unsigned returns how many bytes of s's files no key of base vouches for
// (the policy in force, whose files as written are baseRaw): files whose
// signed part is not base's and that hold no valid signature by a key
// TrustedSigners counts; and their names, sorted. Anyone may write such
// bytes, and go-tuf's decoder spends up to some 100 bytes a byte on them,
// so a server decodes a staged change that replaces another
// (porcelain.StagingReplaceable) only when it holds at most
// MaxUnsignedReplacement such bytes.
func (s *StagedRaw) Unsigned(base *Policy, baseRaw *StagedRaw) (int, []string) {
	keys := base.MetadataKeys()
	n := 0
	var names []string
	for name, e := range s.files {
		if was := baseRaw.files[name]; was != nil && bytes.Equal(was.payload, e.payload) {
			continue
		}
		if len(trustedSigs(base, keys, name, e, nil, true)) > 0 {
			continue
		}
		n += e.size
		names = append(names, name)
	}
	sort.Strings(names)
	return n, names
}

// MaxUnsignedReplacement is how many bytes that no key of the policy in
// force signed (StagedRaw.Unsigned) a staged change may hold when it
// replaces another while keeping every signature of it. Such a
// replacement is decoded before it is accepted (a copy of a co-signed
// change that does not decode must not take its place); this bounds what
// anyone with push access can make the server decode with a copy of a
// signed change, whose signatures it keeps, and junk: some 25 MB of
// go-tuf's allocations, where a 4 MiB file cost 370 MB. The bound is
// absolute, not relative to the change replaced, which a chain of
// accepted copies could ratchet. A real change holding more than this
// unsigned (a rule file of signers the policy in force does not know yet)
// is signed first, or applied in steps.
const MaxUnsignedReplacement = 256 << 10

// maxSigsPerKey is how many signatures of one key ID TrustedSigners tries
// on a file: git-secure writes one a key, and a planted change with
// thousands under a trusted key's ID must not cost as many verifications
// (some 50 µs each). Trying fewer than a file holds only counts fewer
// signatures worth keeping: the change is then easier to replace, never
// harder.
const maxSigsPerKey = 2

// MetadataKeys returns the keys p trusts with its metadata: its root and
// rules keys, and the keys of its rule files' signers.
func (p *Policy) MetadataKeys() []*Key {
	var out []*Key
	seen := map[string]bool{}
	add := func(k *Key) {
		if key := k.ID + " " + k.Fingerprint; !seen[key] {
			seen[key] = true
			out = append(out, k)
		}
	}
	for _, role := range []string{metadata.ROOT, metadata.TARGETS} {
		keys, _ := p.RoleKeys(role)
		for _, k := range keys {
			add(k)
		}
	}
	for _, f := range p.RuleFiles() {
		d, ok := p.Delegation(f.Name)
		if !ok {
			continue
		}
		for _, name := range p.AllowedPersons(&Rule{Allow: d.Signers}) {
			if person, ok := p.Person(name); ok {
				for _, k := range person.Keys {
					add(k)
				}
			}
		}
	}
	return out
}
