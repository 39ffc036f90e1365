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
				// Unchanged: signed before. One that counts for nothing
				// because the change removed a person or team it names
				// is not written by the change either: nobody signs it,
				// its namespace fails closed (checkRuleFiles).
				if bytes.Equal(a, b) && (f.Untrusted == "" || next.ClosedByRemoval(prev, f)) {
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
		out = append(out, RoleStatus{Role: RuleFileRole + f.Name, Threshold: threshold, SignedBy: signed, Missing: missing})
	}
	return out, nil
}

// checkRuleFiles requires every rule file of next to count (its
// delegation's threshold signed it, every file above it counts, its rules
// name persons the policy has) and a changed file's version to grow. One
// exception: an unchanged file that counts for nothing only because the
// change removed a person or team it names (policy.ClosedByRemoval); its
// namespace fails closed until its owners mend it, and removing a person
// must not wait for them.
//
// A file the change writes (new, or changed) must not expire before the
// rules metadata in force (the earlier of prev's and next's targets.json):
// a rule file past its expiry expires the whole policy, so a file's
// signers could otherwise stop every update of the repository, far beyond
// their namespace, by signing a file that expires soon. git-secure's own
// edits give a file the same lifetime as the rules, from a later time.
func checkRuleFiles(prev, next *policy.Policy) error {
	rulesExpire := next.Targets.Signed.Expires
	if prev != nil && prev.Targets.Signed.Expires.Before(rulesExpire) {
		rulesExpire = prev.Targets.Signed.Expires
	}
	for _, f := range next.RuleFiles() {
		if f.Untrusted != "" && !next.ClosedByRemoval(prev, f) {
			return fmt.Errorf("%w: rule file %s: %s", ErrThreshold, f.Name, f.Untrusted)
		}
		changed := true
		if prev != nil {
			if old, ok := prev.RuleFile(f.Name); ok && old.Meta != nil {
				if err := checkVersion("rule file "+f.Name, old.Meta, f.Meta, false); err != nil {
					return err
				}
				a, err := signedPayload(old.Meta)
				if err != nil {
					return err
				}
				b, err := signedPayload(f.Meta)
				if err != nil {
					return err
				}
				changed = !bytes.Equal(a, b)
			}
		}
		if exp := f.Meta.Signed.Expires; changed && exp.Before(rulesExpire) {
			return fmt.Errorf("%w: rule file %s expires on %s, before the rules metadata in force (%s): it would expire the whole policy first; edit it with git-secure (git secure policy add-rule or remove-rule --file %s gives it the rules' lifetime) and sign it again",
				ErrMalformed, f.Name, exp.Format(time.RFC3339), rulesExpire.Format(time.RFC3339), f.Name)
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
