package policy

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/sign"
)

// Freshness is TUF's timestamp role: online keys (a server's or a bot's)
// trusted only to vouch for "the log tip was X at time T", never to sign
// entries, rules or roots. It lives in root.json as the role "timestamp"
// plus fieldMaxAge, both present or both absent.
const (
	// RoleTimestamp is the root.json role of the freshness keys.
	RoleTimestamp = metadata.TIMESTAMP
	// fieldMaxAge (root.json) is the oldest a freshness statement may be,
	// in seconds, written as a decimal string (canonical JSON has no
	// floats and git-secure writes numbers as strings).
	fieldMaxAge = "x-git-secure-timestamp-max-age"

	// MinFreshnessAge and MaxFreshnessAge bound the max age: below a
	// minute clock skew alone fails clients; above a year the policy's
	// own expiry already says more.
	MinFreshnessAge = time.Minute
	MaxFreshnessAge = 366 * 24 * time.Hour
)

// Freshness is the freshness setting of a policy.
type Freshness struct {
	Keys      []*Key
	Threshold int // distinct keys whose statements count (1 is enough)
	MaxAge    time.Duration
}

// Freshness returns the policy's freshness setting, or nil when it sets
// none (clients then do not ask for a freshness statement).
func (p *Policy) Freshness() *Freshness {
	if _, ok := p.Root.Signed.Roles[RoleTimestamp]; !ok {
		return nil
	}
	keys, threshold := p.RoleKeys(RoleTimestamp)
	age, _ := parseMaxAge(p.Root.Signed.UnrecognizedFields[fieldMaxAge])
	return &Freshness{Keys: keys, Threshold: threshold, MaxAge: age}
}

// LookupFreshnessKey returns a key of the timestamp role by SSH
// fingerprint; its shape fits sign.VerifySSHSig. No other lookup knows
// timestamp-only keys.
func (p *Policy) LookupFreshnessKey(fp string) (ssh.PublicKey, bool) {
	f := p.Freshness()
	if f == nil {
		return nil, false
	}
	for _, k := range f.Keys {
		if k.Fingerprint == fp {
			return k.Public, true
		}
	}
	return nil, false
}

func parseMaxAge(v any) (time.Duration, bool) {
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != s {
		return 0, false
	}
	d := time.Duration(n) * time.Second
	if d < MinFreshnessAge || d > MaxFreshnessAge {
		return 0, false
	}
	return d, true
}

// checkFreshnessFields validates root.json's extension fields and optional
// timestamp role: the role and the max age come together.
func checkFreshnessFields(rs *metadata.RootType) error {
	_, hasRole := rs.Roles[RoleTimestamp]
	v, hasAge := rs.UnrecognizedFields[fieldMaxAge]
	if hasRole != hasAge {
		return fmt.Errorf("%w: root.json: the %s role and %s come together", ErrMalformed, RoleTimestamp, fieldMaxAge)
	}
	if hasAge {
		if _, ok := parseMaxAge(v); !ok {
			return fmt.Errorf("%w: root.json: %s must be a decimal number of seconds from %d to %d", ErrMalformed, fieldMaxAge, int64(MinFreshnessAge/time.Second), int64(MaxFreshnessAge/time.Second))
		}
	}
	for k := range rs.UnrecognizedFields {
		if k != fieldFormat && k != fieldMaxAge && k != fieldForgeApps && k != fieldOrg && k != fieldSigstore {
			return fmt.Errorf("%w: root.json: unknown field %q", ErrMalformed, k)
		}
	}
	want := 2
	if hasRole {
		want = 3
	}
	if len(rs.Roles) != want || rs.Roles[metadata.ROOT] == nil || rs.Roles[metadata.TARGETS] == nil {
		return fmt.Errorf("%w: root.json must define exactly the roles root and targets, and optionally timestamp", ErrMalformed)
	}
	return nil
}

// checkFreshnessKeysOwn refuses a policy in which a freshness key is
// also a root key, a rules (targets) key or a person's key: the freshness
// key is online (on a server), and any of those would let whoever takes
// the server sign entries, rules or roots too.
func checkFreshnessKeysOwn(rs *metadata.RootType, rootKeys, personKeys map[string]*Key) error {
	ts := rs.Roles[RoleTimestamp]
	if ts == nil {
		return nil
	}
	persons := map[string]bool{}
	for _, k := range personKeys {
		persons[k.Fingerprint] = true
	}
	for _, id := range ts.KeyIDs {
		k := rootKeys[id]
		switch {
		case slices.Contains(rs.Roles[metadata.ROOT].KeyIDs, id):
			return fmt.Errorf("%w: freshness key %s is also a root key: give freshness a key of its own", ErrMalformed, k.Fingerprint)
		case slices.Contains(rs.Roles[metadata.TARGETS].KeyIDs, id):
			return fmt.Errorf("%w: freshness key %s is also a rules (targets) key: give freshness a key of its own", ErrMalformed, k.Fingerprint)
		case persons[k.Fingerprint]:
			return fmt.Errorf("%w: freshness key %s is also a person's key: a freshness key signs no entry; give the person another key", ErrMalformed, k.Fingerprint)
		}
	}
	if ts.Threshold > 1 {
		return fmt.Errorf("%w: root.json: a freshness threshold above 1 (%d) is not supported: statements carry one signature", ErrMalformed, ts.Threshold)
	}
	return nil
}

// SetFreshness makes keys (threshold of them) the freshness keys and maxAge
// the oldest a statement may be, replacing any earlier setting. It is a
// root change: it needs the root thresholds like any other.
func (p *Policy) SetFreshness(base *Policy, keys []ssh.PublicKey, threshold int, maxAge time.Duration, now time.Time) error {
	if len(keys) == 0 {
		return invalid("freshness needs at least one key")
	}
	if threshold < 1 || threshold > len(keys) {
		return invalid("a freshness threshold of %d cannot be met by %d keys", threshold, len(keys))
	}
	// Statements are signed by one key (the server's post-receive hook
	// replaces the stored statement): a higher threshold could never be
	// met, and every client would refuse every state.
	if threshold > 1 {
		return invalid("a freshness threshold above 1 is not supported yet (statements are signed by one key); give several keys with --threshold 1")
	}
	if maxAge < MinFreshnessAge || maxAge > MaxFreshnessAge || maxAge%time.Second != 0 {
		return invalid("a freshness max age must be whole seconds from %v to %v, not %v", MinFreshnessAge, MaxFreshnessAge, maxAge)
	}
	p.dropFreshness()
	role := &metadata.Role{Threshold: threshold}
	for _, pub := range keys {
		tk, id, err := sign.TUFKey(pub)
		if err != nil {
			return invalid("%v", err)
		}
		if slices.Contains(role.KeyIDs, id) {
			return invalid("key %s is given twice", sign.Fingerprint(pub))
		}
		// An online key sits on a server: one that also signs entries,
		// rules or roots would bring those powers there.
		if _, ok := p.LookupKey(sign.Fingerprint(pub)); ok {
			return invalid("key %s already signs entries or policy: give freshness a key of its own (ssh-keygen -t ed25519 -f timestamp_ed25519)", sign.Fingerprint(pub))
		}
		p.Root.Signed.Keys[id] = tk
		role.KeyIDs = append(role.KeyIDs, id)
	}
	p.Root.Signed.Roles[RoleTimestamp] = role
	p.Root.Signed.UnrecognizedFields[fieldMaxAge] = strconv.FormatInt(int64(maxAge/time.Second), 10)
	return p.reindexRoot(base, now)
}

// RemoveFreshness removes the freshness setting: clients stop asking for
// statements. It is a root change.
func (p *Policy) RemoveFreshness(base *Policy, now time.Time) error {
	if p.Freshness() == nil {
		return invalid("the policy sets no freshness")
	}
	p.dropFreshness()
	return p.reindexRoot(base, now)
}

// dropFreshness removes the timestamp role, its keys that no other role
// uses, and the max age.
func (p *Policy) dropFreshness() {
	rs := &p.Root.Signed
	r := rs.Roles[RoleTimestamp]
	if r == nil {
		return
	}
	delete(rs.Roles, RoleTimestamp)
	delete(rs.UnrecognizedFields, fieldMaxAge)
	for _, id := range r.KeyIDs {
		used := false
		for _, other := range rs.Roles {
			used = used || slices.Contains(other.KeyIDs, id)
		}
		if !used {
			delete(rs.Keys, id)
		}
	}
}
