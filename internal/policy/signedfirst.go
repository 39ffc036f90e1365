package policy

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/secure-systems-lab/go-securesystemslib/cjson"
	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/git-secure/git-secure/internal/strictjson"
)

// ErrUnsigned is wrapped when a policy file is refused because the keys
// that delegate it (the previous root for a changed root.json, the root
// for itself and for targets.json, the signers for a rule file) did not
// sign it to their threshold: before it is decoded, or, for root.json's
// own keys, once more after (the message says which).
var ErrUnsigned = errors.New("policy: signatures below the threshold")

// envelope is a metadata file read without go-tuf's decoder: the
// canonical bytes its signatures cover, and its signatures by key ID.
// Reading it costs about the file's size, whatever the file holds;
// go-tuf's decoder spends some 40 bytes a byte on a file of small values,
// so a hostile file is refused for its signatures before that decoder
// runs (BenchmarkRefuseHostileTargets).
type envelope struct {
	name    string
	signed  []byte // the signed part as written in the file
	payload []byte
	sigs    map[string][][]byte // every signature of a key ID
	entries int                 // the signatures as written, hex or not
	size    int                 // the file's size
}

// readEnvelope reads data, a metadata file of at most limit bytes,
// strictly (strictjson.CheckItems): it must hold exactly "signed" and
// "signatures", its signed part in canonical key order.
func readEnvelope(name string, data []byte, limit int) (*envelope, error) {
	if err := strictjson.CheckItems(data, limit, maxItems); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, name, err)
	}
	members, err := strictjson.Members(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, name, err)
	}
	signed, okSigned := members["signed"]
	rawSigs, okSigs := members["signatures"]
	if !okSigned || !okSigs || len(members) != 2 {
		return nil, fmt.Errorf("%w: %s must hold exactly signed and signatures", ErrMalformed, name)
	}
	payload, err := strictjson.Canonical(signed)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not in canonical form: %v", ErrMalformed, name, err)
	}
	var sigs []struct {
		KeyID string `json:"keyid"`
		Sig   string `json:"sig"`
	}
	if err := json.Unmarshal(rawSigs, &sigs); err != nil {
		return nil, fmt.Errorf("%w: %s: signatures: %v", ErrMalformed, name, err)
	}
	e := &envelope{name: name, signed: signed, payload: payload, sigs: make(map[string][][]byte, len(sigs)), entries: len(sigs), size: len(data)}
	for _, s := range sigs {
		// Every signature of a key ID is tried, so that this check is
		// never stricter than the one after decoding; one that is not
		// hex counts for nothing.
		if sig, err := hex.DecodeString(s.Sig); err == nil {
			e.sigs[s.KeyID] = append(e.sigs[s.KeyID], sig)
		}
	}
	return e, nil
}

// signedBy reports whether one of e's signatures under k's key ID is k's
// over e's payload.
func (e *envelope) signedBy(k *Key) bool {
	for _, sig := range e.sigs[k.ID] {
		if k.VerifyMetadata(e.payload, sig) {
			return true
		}
	}
	return false
}

// check returns an error wrapping ErrUnsigned unless keys (what names
// their role: "root", "root (old keys)", "rules") signed e to threshold, each
// key fingerprint counted once. Revoked keys count here: this check only
// refuses early what verify.CheckPolicyRevoked would refuse. keys were
// read before e was decoded (from a policy already trusted, or from e's
// raw signed part).
func (e *envelope) check(what string, keys []*Key, threshold int) error {
	return e.count(what, keys, threshold, "checked before decoding it")
}

// checkDecoded is check with keys go-tuf decoded from e itself, after
// check passed with the keys read from e's raw signed part: it fails only
// when the two readings differ, and says so, not that it ran before
// decoding.
func (e *envelope) checkDecoded(what string, keys []*Key, threshold int) error {
	return e.count(what, keys, threshold, "counted again after decoding it, with its keys as decoded (read before decoding, they had signed it)")
}

// count is check and checkDecoded; when says at which point keys were
// counted.
func (e *envelope) count(what string, keys []*Key, threshold int, when string) error {
	if threshold < 1 {
		// No role, or one a valid policy cannot hold (checkRoot): with
		// nothing to meet, the file would be decoded unchecked.
		return fmt.Errorf("%w: %s: the %s keys have no threshold", ErrMalformed, e.name, what)
	}
	seen := map[string]bool{}
	var missing []string
	signed := 0
	for _, k := range keys {
		if seen[k.Fingerprint] {
			continue
		}
		seen[k.Fingerprint] = true
		if e.signedBy(k) {
			signed++
		} else {
			missing = append(missing, k.Fingerprint)
		}
	}
	if signed >= threshold {
		return nil
	}
	// Worded as verify.RoleStatus words a threshold not met.
	return fmt.Errorf("%w: %s: %s: %d of %d signatures (threshold %d), %s; not yet signed by: %s",
		ErrUnsigned, e.name, what, signed, threshold, threshold, when, strings.Join(missing, ", "))
}

// decodeSigned decodes the file e was read from, after its signatures
// were checked. Nothing decoded differs from what was signed: decode
// requires go-tuf's encoding of what it decoded to be the file, byte for
// byte, so the decoded signed part encodes to the very bytes e.payload
// was made from (the OLPC canonical form of encoding/json's output is
// what cjson.EncodeCanonical makes of the decoded value: FuzzCanonical,
// and FuzzParseSigned against go-tuf's own check). Encoding it again with
// cjson here cost a policy of 10 000 persons 60 MB more to read
// (BenchmarkParseTargetsBound); verify.CheckPolicy does it once, when it
// counts the signatures.
//
// readEnvelope already checked data with strictjson.CheckItems at the
// same bound, so it is not scanned again.
func decodeSigned[T metadata.Roles](e *envelope, data []byte) (*metadata.Metadata[T], error) {
	return decodeChecked[T](e.name, data)
}

// ParseSigned is ParseFiles for a policy that must be signed: it checks
// each file's signatures over its raw signed bytes before decoding it,
// with keys already trusted. A root.json that differs from prev's (prev
// nil: the first policy, or one whose predecessor was verified
// elsewhere) must carry the threshold of prev's root keys; root.json
// must carry its own root keys' threshold and targets.json its rules
// keys'. The error wraps ErrUnsigned when one does not, and names the
// file and the missing keys. Thresholds met here are necessary, not
// sufficient: verify.CheckPolicyRevoked still decides (revocations,
// versions, expiry, rule files).
func ParseSigned(prev *Policy, rootJSON, targetsJSON []byte, ruleFiles map[string][]byte) (*Policy, error) {
	root, err := parseSignedRoot(prev, rootJSON)
	if err != nil {
		return nil, err
	}
	te, err := readEnvelope(TargetsFile, targetsJSON, MaxTargetsSize)
	if err != nil {
		return nil, err
	}
	keys, threshold := (&Policy{Root: root}).RoleKeys(metadata.TARGETS)
	if err := te.check("rules", keys, threshold); err != nil {
		return nil, err
	}
	targets, err := decodeSigned[metadata.TargetsType](te, targetsJSON)
	if err != nil {
		return nil, err
	}
	p := &Policy{Root: root, Targets: targets, signedFirst: true}
	err = p.index(ruleFiles)
	p.signedFirst = false
	if err != nil {
		return nil, err
	}
	return p, nil
}

// decodeRuleFilesSigned decodes the rule files in the order they are
// delegated, each only after its delegation's threshold of signer persons
// signed it: a rule file short of it is refused before it is decoded (it
// would count for nothing, and verify.CheckPolicy refuses a policy with a
// rule file that does not count). A file no decoded file delegates is
// left undecoded; indexRuleFiles then refuses it.
func (p *Policy) decodeRuleFilesSigned(raw map[string][]byte) error {
	queue := slices.Clone(p.delegations)
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		data, ok := raw[d.Name]
		if _, done := p.files[d.Name]; !ok || done {
			continue // missing, or delegated twice: indexRuleFiles says which
		}
		name := RulesDir + "/" + d.Name + ".json"
		e, err := readEnvelope(name, data, MaxFileSize)
		if err != nil {
			return err
		}
		if err := p.checkRuleFileSigners(e, d); err != nil && !p.namesMissing(d.Signers) {
			return err
		}
		// A delegation naming a signer the policy no longer has (a person
		// or team removed since) can never be met: its file is decoded to
		// count for nothing (judgeRuleFile) and fail closed, which is how
		// a removal reaches a file its signers cannot or will not change
		// (verify accepts it only unchanged: ClosedByRemoval). Its bytes
		// are bounded as every file's (MaxFileSize, MaxRuleFilesSize).
		f, err := p.decodeRuleFile(d.Name, data)
		if err != nil {
			return err
		}
		p.files[d.Name] = f
		queue = append(queue, f.Delegations...)
	}
	for name := range raw {
		if _, ok := p.files[name]; !ok {
			return fmt.Errorf("%w: rule file %s is not delegated by any file", ErrMalformed, name)
		}
	}
	return nil
}

// checkRuleFileSigners returns an error wrapping ErrUnsigned unless d's
// threshold of its signer persons signed e, each counted once whichever
// of their keys signed (as judgeRuleFile counts).
func (p *Policy) checkRuleFileSigners(e *envelope, d *Delegation) error {
	signers := p.AllowedPersons(&Rule{Allow: d.Signers})
	signed := map[string]bool{}
	for id := range e.sigs {
		k, ok := p.personKeys[id]
		if !ok {
			continue
		}
		owner := p.ownerFP[k.Fingerprint]
		if owner == nil || signed[owner.Name] || !slices.Contains(signers, owner.Name) {
			continue
		}
		if e.signedBy(k) {
			signed[owner.Name] = true
		}
	}
	if d.Threshold >= 1 && len(signed) >= d.Threshold {
		return nil
	}
	var missing []string
	for _, name := range signers {
		if !signed[name] {
			missing = append(missing, name)
		}
	}
	return fmt.Errorf("%w: %s: delegation %s: %d of %d signatures (threshold %d), checked before decoding it; not yet signed by: %s",
		ErrUnsigned, e.name, d.Name, len(signed), d.Threshold, d.Threshold, strings.Join(missing, ", "))
}

// parseSignedRoot checks root.json's signatures by prev's root keys (when
// it changed), then by its own root keys, both before decoding it: its own
// keys and threshold are read from its raw signed part (rawRootKeys), so
// that a first root, which no earlier root vouches for, is refused for its
// signatures before go-tuf's decoder runs, as every other file is. After
// decoding, its own keys are counted again as decoded (checkDecoded: an
// error then says the count came after decoding).
func parseSignedRoot(prev *Policy, rootJSON []byte) (*metadata.Metadata[metadata.RootType], error) {
	re, err := readEnvelope(RootFile, rootJSON, MaxFileSize)
	if err != nil {
		return nil, err
	}
	if prev != nil {
		was, err := cjson.EncodeCanonical(prev.Root.Signed)
		if err != nil {
			return nil, fmt.Errorf("%w: encode the previous root: %v", ErrMalformed, err)
		}
		if !bytes.Equal(was, re.payload) {
			keys, threshold := prev.RoleKeys(metadata.ROOT)
			if err := re.check("root (old keys)", keys, threshold); err != nil {
				return nil, err
			}
		}
	}
	keys, threshold, err := rawRootKeys(re)
	if err != nil {
		return nil, err
	}
	if err := re.check("root", keys, threshold); err != nil {
		return nil, err
	}
	root, err := decodeSigned[metadata.RootType](re, rootJSON)
	if err != nil {
		return nil, err
	}
	keys, threshold = (&Policy{Root: root}).RoleKeys(metadata.ROOT)
	if err := re.checkDecoded("root", keys, threshold); err != nil {
		return nil, err
	}
	return root, nil
}

// rawRootKeys reads the root role's keys and threshold from the signed part
// of root.json as written, without decoding the rest of it: only the
// members signed.roles.root and signed.keys[ID] for the role's key IDs
// are decoded, each strictly as checkRoot would judge it once decoded (the
// role holds exactly keyids and threshold, 1 <= threshold <= its keys, no
// key ID twice; each key is stored under its own ID, with no unknown
// field, of a kind a root key may be). Anything else is refused as
// malformed.
func rawRootKeys(e *envelope) ([]*Key, int, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: root role, read before decoding: %s", ErrMalformed, e.name, fmt.Sprintf(format, a...))
	}
	signed, err := strictjson.Members(e.signed)
	if err != nil {
		return nil, 0, bad("signed: %v", err)
	}
	rawRoles, rawKeys := signed["roles"], signed["keys"]
	if rawRoles == nil || rawKeys == nil {
		return nil, 0, bad("signed must hold roles and keys")
	}
	roles, err := strictjson.Members(rawRoles)
	if err != nil {
		return nil, 0, bad("roles: %v", err)
	}
	role, err := strictjson.Members(roles[metadata.ROOT])
	if err != nil {
		return nil, 0, bad("roles.root: %v", err)
	}
	if len(role) != 2 || role["keyids"] == nil || role["threshold"] == nil {
		return nil, 0, bad("roles.root must hold exactly keyids and threshold")
	}
	var ids []string
	var threshold int
	if err := json.Unmarshal(role["keyids"], &ids); err != nil {
		return nil, 0, bad("keyids: %v", err)
	}
	if err := json.Unmarshal(role["threshold"], &threshold); err != nil {
		return nil, 0, bad("threshold: %v", err)
	}
	if threshold < 1 || threshold > len(ids) {
		return nil, 0, bad("threshold %d with %d keys", threshold, len(ids))
	}
	stored, err := strictjson.Members(rawKeys)
	if err != nil {
		return nil, 0, bad("keys: %v", err)
	}
	keys := make([]*Key, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		raw, ok := stored[id]
		if !ok || seen[id] {
			return nil, 0, bad("unknown or repeated key %s", id)
		}
		seen[id] = true
		var mk metadata.Key
		if err := json.Unmarshal(raw, &mk); err != nil {
			return nil, 0, bad("key %s: %v", id, err)
		}
		k, err := newKey(&mk)
		if err != nil {
			return nil, 0, bad("key %s: %v", id, err)
		}
		if k.ID != id {
			return nil, 0, bad("key stored as %s has ID %s", id, k.ID)
		}
		if err := checkRoleKeyKind(k.TUF, k.Fingerprint); err != nil {
			return nil, 0, bad("key %s: %v", id, err)
		}
		keys = append(keys, k)
	}
	return keys, threshold, nil
}

// namesMissing reports whether a group of groups (persons, team:NAME) is
// not in p.
func (p *Policy) namesMissing(groups []string) bool {
	for _, g := range groups {
		if _, ok := p.Members(g); !ok {
			return true
		}
	}
	return false
}
