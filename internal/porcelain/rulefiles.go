package porcelain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/verify"
)

// signRuleFiles signs, with s, the rule files of the staged change that
// still need signatures and whose delegation lists s's person as a signer
// (only the file named only when it is set, and then it must be one).
// It reports whether it signed anything.
func signRuleFiles(st *Staged, s sign.Signer, only string) (bool, error) {
	fp := sign.Fingerprint(s.PublicKey())
	person, isPerson := st.Policy.PersonByFingerprint(fp)
	if only != "" {
		if _, ok := st.Policy.RuleFile(only); !ok {
			return false, usage("no rule file named %s in the staged change (see git secure policy list --staged)", only)
		}
		if !isPerson || !st.Policy.MaySign(only, person.Name) {
			d, _ := st.Policy.Delegation(only)
			return false, fmt.Errorf("%w: your key %s is not the key of a signer of rule file %s (its delegation lists %s)", ErrRefused, fp, only, strings.Join(d.Signers, ", "))
		}
	}
	if !isPerson {
		return false, nil
	}
	statuses, err := st.Status()
	if err != nil {
		return false, err
	}
	var names []string
	for _, x := range statuses {
		name, ok := strings.CutPrefix(x.Role, verify.RuleFileRole)
		if !ok || (only != "" && name != only) || !st.Policy.MaySign(name, person.Name) {
			continue
		}
		names = append(names, name)
	}
	if only != "" && len(names) == 0 {
		// Nothing pending in it: sign it anyway, as asked.
		names = []string{only}
	}
	if len(names) == 0 {
		return false, nil
	}
	tufSigner, err := sign.TUFSigner(s)
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	// All at once: each signing re-indexes the whole policy.
	if err := st.Policy.SignRuleFiles(names, tufSigner); err != nil {
		return false, err
	}
	return true, nil
}

// sameRuleFiles reports whether a and b hold the same rule files: the same
// bytes, or with signedOnly the same signed content (signatures may
// differ).
func sameRuleFiles(a, b *policy.Policy, signedOnly bool) bool {
	fa, fb := a.RuleFiles(), b.RuleFiles()
	if len(fa) != len(fb) {
		return false
	}
	for _, x := range fa {
		y, ok := b.RuleFile(x.Name)
		if !ok || x.Meta == nil || y.Meta == nil {
			return false
		}
		var p, q []byte
		var err1, err2 error
		if signedOnly {
			p, err1 = json.Marshal(x.Meta.Signed)
			q, err2 = json.Marshal(y.Meta.Signed)
		} else {
			p, err1 = x.Meta.ToBytes(false)
			q, err2 = y.Meta.ToBytes(false)
		}
		if err1 != nil || err2 != nil || !bytes.Equal(p, q) {
			return false
		}
	}
	return true
}

// checkInsideNamespaces refuses a change that brings into a rule file (new
// or changed) a rule or delegation beyond its delegation's namespace:
// verification would ignore it there, so applying it can only mislead.
// A file left unchanged is not judged (narrowing a delegation must stay
// possible; verification warns about what its file then loses).
func checkInsideNamespaces(st *Staged) error {
	for _, f := range st.Policy.RuleFiles() {
		if len(f.Outside) == 0 {
			continue
		}
		if old, ok := st.Base.RuleFile(f.Name); ok && old.Meta != nil && f.Meta != nil {
			a, err1 := json.Marshal(old.Meta.Signed)
			b, err2 := json.Marshal(f.Meta.Signed)
			if err1 == nil && err2 == nil && bytes.Equal(a, b) {
				continue
			}
		}
		return fmt.Errorf("%w: rule file %s reaches beyond its delegation: %s (a rule file governs only its namespace; see git secure policy list --staged --file %s)",
			ErrRefused, f.Name, strings.Join(f.Outside, "; "), f.Name)
	}
	return nil
}
