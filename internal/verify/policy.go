package verify

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/cjson"
	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/git-secure/git-secure/internal/policy"
)

// RuleFileRole prefixes a rule file's name in RoleStatus.Role.
const RuleFileRole = "rule file "

// RoleStatus says how far a metadata file is from its threshold.
type RoleStatus struct {
	Role      string   // "root" or "targets" (rules)
	Threshold int      // signatures required
	SignedBy  []string // fingerprints of role keys with a valid signature
	Missing   []string // fingerprints of role keys that have not signed
}

// Met reports whether the threshold is reached.
func (s RoleStatus) Met() bool { return len(s.SignedBy) >= s.Threshold }

func (s RoleStatus) String() string {
	title := s.Role
	if s.Role == metadata.TARGETS {
		title = "rules"
	}
	return fmt.Sprintf("%s: %d of %d signatures (threshold %d); not yet signed by: %s",
		title, len(s.SignedBy), s.Threshold, s.Threshold, strings.Join(s.Missing, ", "))
}

// signedPayload is what TUF signatures cover.
func signedPayload[T metadata.Roles](m *metadata.Metadata[T]) ([]byte, error) {
	return cjson.EncodeCanonical(m.Signed)
}

// roleStatus checks each signature of m made by a key of role in the
// delegating root. Invalid signatures simply do not count, nor do those of
// keys revoked reports (nil: none) revoked.
func roleStatus[T metadata.Roles](delegator *policy.Policy, role string, m *metadata.Metadata[T], revoked func(fp string) bool) (RoleStatus, error) {
	keys, threshold := delegator.RoleKeys(role)
	st := RoleStatus{Role: role, Threshold: threshold}
	payload, err := signedPayload(m)
	if err != nil {
		return st, fmt.Errorf("%w: encode %s: %v", ErrMalformed, role, err)
	}
	sigs := map[string][]byte{}
	for _, s := range m.Signatures {
		sigs[s.KeyID] = s.Signature
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k.Fingerprint] {
			continue // one key counts once, however it is listed
		}
		seen[k.Fingerprint] = true
		sig, ok := sigs[k.ID]
		switch {
		case ok && revoked != nil && revoked(k.Fingerprint):
			st.Missing = append(st.Missing, k.Fingerprint+" (revoked)")
		case ok && k.VerifyMetadata(payload, sig):
			st.SignedBy = append(st.SignedBy, k.Fingerprint)
		default:
			st.Missing = append(st.Missing, k.Fingerprint)
		}
	}
	sort.Strings(st.SignedBy)
	sort.Strings(st.Missing)
	return st, nil
}

// PolicyStatus reports, for a proposed policy next replacing prev (nil for
// the first policy), the signature status of every threshold the change
// needs: the new root by its own root keys, a changed root also by the old
// root keys, and the rules by the new root's rules keys. Signatures on
// changed rules or rule files by a key either policy revokes do not count
// (PolicyStatusRevoked).
func PolicyStatus(prev, next *policy.Policy) ([]RoleStatus, error) {
	return PolicyStatusRevoked(prev, next, RevokedIn(prev, next))
}

// RevokedIn reports whether a policy of ps revokes the key fp, from any
// entry: what a change about to be recorded can know without the log.
func RevokedIn(ps ...*policy.Policy) func(fp string) bool {
	return func(fp string) bool {
		for _, p := range ps {
			if p != nil && p.RevokedFrom(fp) != 0 {
				return true
			}
		}
		return false
	}
}

// PolicyStatusRevoked is PolicyStatus for a change made when the keys
// revoked reports were revoked (compromised): their signatures do not
// count on the rules metadata or a rule file that the change writes (new,
// or changed); metadata left as it was keeps the signatures made before.
// The root keeps its own (a root rotation is how a compromised root key
// goes).
func PolicyStatusRevoked(prev, next *policy.Policy, revoked func(fp string) bool) ([]RoleStatus, error) {
	var out []RoleStatus
	rootChanged := true
	if prev != nil {
		a, err := signedPayload(prev.Root)
		if err != nil {
			return nil, err
		}
		b, err := signedPayload(next.Root)
		if err != nil {
			return nil, err
		}
		rootChanged = !bytes.Equal(a, b)
	}
	if rootChanged {
		if prev != nil {
			st, err := roleStatus(prev, metadata.ROOT, next.Root, nil)
			if err != nil {
				return nil, err
			}
			st.Role = "root (old keys)"
			out = append(out, st)
		}
		st, err := roleStatus(next, metadata.ROOT, next.Root, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	targetsRevoked := revoked
	if prev != nil {
		a, err := signedPayload(prev.Targets)
		if err != nil {
			return nil, err
		}
		b, err := signedPayload(next.Targets)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(a, b) {
			targetsRevoked = nil // signed before; this change does not write it
		}
	}
	st, err := roleStatus(next, metadata.TARGETS, next.Targets, targetsRevoked)
	if err != nil {
		return nil, err
	}
	out = append(out, st)
	files, err := ruleFileStatuses(prev, next, revoked)
	if err != nil {
		return nil, err
	}
	return append(out, files...), nil
}

// CheckPolicy decides whether next may replace prev (nil for the first
// policy) at time at: thresholds met (PolicyStatus), versions only move
// forward (a changed root by exactly one, changed rules by at least one,
// unchanged metadata keeps its version), and neither file has expired at at.
// The error wraps ErrThreshold, ErrRollback or ErrExpired.
func CheckPolicy(prev, next *policy.Policy, at time.Time) error {
	return CheckPolicyRevoked(prev, next, at, RevokedIn(prev, next))
}

// CheckPolicyRevoked is CheckPolicy for a change recorded when the keys
// revoked reports were revoked (PolicyStatusRevoked).
func CheckPolicyRevoked(prev, next *policy.Policy, at time.Time, revoked func(fp string) bool) error {
	statuses, err := PolicyStatusRevoked(prev, next, revoked)
	if err != nil {
		return err
	}
	for _, st := range statuses {
		if !st.Met() {
			return fmt.Errorf("%w: %s", ErrThreshold, st)
		}
	}
	if prev != nil {
		if err := checkVersion("root", prev.Root, next.Root, true); err != nil {
			return err
		}
		if err := checkVersion("rules", prev.Targets, next.Targets, false); err != nil {
			return err
		}
	} else if next.Root.Signed.Version != 1 {
		return fmt.Errorf("%w: the first root must have version 1, not %d", ErrRollback, next.Root.Signed.Version)
	}
	// Belt and braces: go-tuf's own threshold check must agree with ours.
	if err := next.Root.VerifyDelegate(metadata.ROOT, next.Root); err != nil {
		return fmt.Errorf("%w: root: %v", ErrThreshold, err)
	}
	if err := next.Root.VerifyDelegate(metadata.TARGETS, next.Targets); err != nil {
		return fmt.Errorf("%w: rules: %v", ErrThreshold, err)
	}
	if err := checkRuleFiles(prev, next); err != nil {
		return err
	}
	return CheckExpiry(next, at)
}

// CheckExpiry fails with ErrExpired when root or rules expire before at.
func CheckExpiry(p *policy.Policy, at time.Time) error {
	if p.Root.Signed.IsExpired(at) {
		return fmt.Errorf("%w: the root metadata (version %d) expired on %s", ErrExpired, p.Root.Signed.Version, p.Root.Signed.Expires.Format(time.RFC3339))
	}
	if p.Targets.Signed.IsExpired(at) {
		return fmt.Errorf("%w: the rules metadata (version %d) expired on %s", ErrExpired, p.Targets.Signed.Version, p.Targets.Signed.Expires.Format(time.RFC3339))
	}
	return checkRuleFileExpiry(p, at)
}

func checkVersion[T metadata.Roles](what string, prev, next *metadata.Metadata[T], exact bool) error {
	a, err := signedPayload(prev)
	if err != nil {
		return err
	}
	b, err := signedPayload(next)
	if err != nil {
		return err
	}
	pv, nv := version(prev), version(next)
	switch {
	case bytes.Equal(a, b):
		return nil
	case nv < pv:
		return fmt.Errorf("%w: %s version %d replaces newer version %d", ErrRollback, what, nv, pv)
	case nv == pv:
		return fmt.Errorf("%w: %s changed but kept version %d", ErrRollback, what, nv)
	case exact && nv != pv+1:
		return fmt.Errorf("%w: root version %d may only be replaced by version %d, not %d", ErrRollback, pv, pv+1, nv)
	}
	return nil
}

func version[T metadata.Roles](m *metadata.Metadata[T]) int64 {
	switch s := any(&m.Signed).(type) {
	case *metadata.RootType:
		return s.Version
	case *metadata.TargetsType:
		return s.Version
	}
	return 0
}
