package verify

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/policy"
)

// ruleFileStatuses reports, for every rule file of next that is new or
// whose signed content differs from prev's (nil for the first policy), the
// signatures of its delegation's signer persons: the change needs their
// threshold, as TUF requires of delegated metadata.
// A signature by a key revoked (compromised) when the file changed does
// not count: its thief could otherwise rewrite the file.
func ruleFileStatuses(prev, next *policy.Policy, revoked func(fp string) bool) ([]RoleStatus, error) {
	var out []RoleStatus
	for _, f := range next.RuleFiles() {
		if prev != nil {
			if old, ok := prev.RuleFile(f.Name); ok && old.Meta != nil && f.Meta != nil {
				a, err := signedPayload(old.Meta)
				if err != nil {
					return nil, err
				}
				b, err := signedPayload(f.Meta)
				if err != nil {
					return nil, err
				}
				if bytes.Equal(a, b) && f.Untrusted == "" {
					continue
				}
			}
		}
		threshold, signed, missing, _ := next.RuleFileStatus(f.Name)
		if revoked != nil {
			var kept []string
			for _, person := range signed {
				var bad []string
				for _, fp := range f.SignedKeys[person] {
					if revoked(fp) {
						bad = append(bad, fp)
					}
				}
				if len(bad) < len(f.SignedKeys[person]) {
					kept = append(kept, person)
					continue
				}
				missing = append(missing, fmt.Sprintf("%s (key %s revoked)", person, strings.Join(bad, ", ")))
			}
			signed = kept
			sort.Strings(missing)
		}
		out = append(out, RoleStatus{Role: "rule file " + f.Name, Threshold: threshold, SignedBy: signed, Missing: missing})
	}
	return out, nil
}

// checkRuleFiles requires every rule file of next to count (its
// delegation's threshold signed it, every file above it counts, its rules
// name persons the policy has) and a changed file's version to grow.
func checkRuleFiles(prev, next *policy.Policy) error {
	for _, f := range next.RuleFiles() {
		if f.Untrusted != "" {
			return fmt.Errorf("%w: rule file %s: %s", ErrThreshold, f.Name, f.Untrusted)
		}
		if prev == nil {
			continue
		}
		if old, ok := prev.RuleFile(f.Name); ok && old.Meta != nil {
			if err := checkVersion("rule file "+f.Name, old.Meta, f.Meta, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRuleFileExpiry fails with ErrExpired when a rule file expires
// before at.
func checkRuleFileExpiry(p *policy.Policy, at time.Time) error {
	for _, f := range p.RuleFiles() {
		if f.Meta != nil && f.Meta.Signed.IsExpired(at) {
			return fmt.Errorf("%w: rule file %s (version %d) expired on %s", ErrExpired, f.Name, f.Meta.Signed.Version, f.Meta.Signed.Expires.Format(time.RFC3339))
		}
	}
	return nil
}
