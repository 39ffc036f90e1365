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
// delegating root. Invalid signatures simply do not count.
func roleStatus[T metadata.Roles](delegator *policy.Policy, role string, m *metadata.Metadata[T]) (RoleStatus, error) {
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
		if ok && k.VerifyMetadata(payload, sig) {
			st.SignedBy = append(st.SignedBy, k.Fingerprint)
		} else {
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
// root keys, and the rules by the new root's rules keys.
func PolicyStatus(prev, next *policy.Policy) ([]RoleStatus, error) {
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
			st, err := roleStatus(prev, metadata.ROOT, next.Root)
			if err != nil {
				return nil, err
			}
			st.Role = "root (old keys)"
			out = append(out, st)
		}
		st, err := roleStatus(next, metadata.ROOT, next.Root)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	st, err := roleStatus(next, metadata.TARGETS, next.Targets)
	if err != nil {
		return nil, err
	}
	out = append(out, st)
	files, err := ruleFileStatuses(prev, next)
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
	statuses, err := PolicyStatus(prev, next)
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
