package verify_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/verify"
)

// Attack: dave keeps the rules of src/crypto/** (rule file crypto, his
// signature alone). His key dave1 is stolen and revoked (trust
// revoke-key --from-entry N), as a compromised key is; the thief then
// signs a new version of the crypto file with it that drops the file's
// rule, and any person (bob) records the policy change. Before the fix
// the stolen key's signature still counted for the file: apply went
// through and the log verified, so bob changed src/crypto on main alone.
// Now a new or changed rule file needs the threshold of signatures by
// keys not revoked at the change's entry: apply is refused, and a log
// carrying the change fails verification, naming the file and the key.
func TestRevokedKeyCannotSignRuleFile(t *testing.T) {
	tmpl := NewScenarioTemplate(t)
	f := tmpl.Clone(t)
	f.DelegateCrypto(policy.Rule{Name: "crypto-main", Refs: []string{"refs/heads/main"}, Paths: []string{"src/crypto/**"}, Allow: []string{"dave"}, Threshold: 1})
	_, last := f.Tip()
	from := last.Number + 1
	f.Stage("revoke dave1", func(p, base *policy.Policy, now time.Time) error { return p.RevokeKey(base, f.FP("dave1"), from, now) })
	f.Apply("alice")
	f.MustVerify(verify.Options{})

	// The thief's change: the crypto file without its rule, signed with
	// the revoked key.
	f.Stage("drop crypto-main", func(p, base *policy.Policy, now time.Time) error {
		return p.RemoveRuleIn(base, "crypto", "crypto-main", now)
	})
	if _, err := f.R.SignStagedFile(f.Key("dave1"), "crypto"); err != nil {
		t.Fatal(err)
	}
	_, staged, err := f.R.Apply(f.Key("bob"))
	if !errors.Is(err, porcelain.ErrThresholdPending) {
		t.Fatalf("apply of a rule file signed only by a revoked key: %v, want the threshold pending", err)
	}
	// What policy apply and policy status print.
	sts, err := staged.Status()
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, st := range sts {
		all = append(all, st.String())
	}
	if got := strings.Join(all, "\n"); !strings.Contains(got, "rule file crypto: 0 of 1 signatures (threshold 1); not yet signed by: dave (key "+f.FP("dave1")+" revoked)") {
		t.Errorf("status of the change signed with the revoked key:\n%s", got)
	}

	// Recorded by hand all the same (bob signs the entry): verification
	// refuses the policy change.
	st, err := f.R.LoadStaged()
	if err != nil {
		t.Fatal(err)
	}
	f.ForcePolicy("bob", st.Policy, "git-secure policy: crypto without its rule")
	f.MustFail(verify.Options{}, verify.ErrThreshold, "rule file crypto: 0 of 1 signatures", "dave (key "+f.FP("dave1")+" revoked)")
}
