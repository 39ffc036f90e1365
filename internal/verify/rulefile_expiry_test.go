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

// Attack (availability): dave keeps the rules of src/crypto/** alone. A
// rule file past its expiry makes the whole policy expired, so he signs a
// new version of his file that expires an hour later. Before the fix the
// change was applied and, an hour on, every update of every ref failed
// (main's unrelated changes by alice and bob included) until the rules
// keys removed his delegation: a team stopped the whole repository's work
// from its own namespace. Now a rule file that a change writes must not
// expire before the rules (targets.json) in force do; apply and
// verification refuse it, naming both dates.
func TestRuleFileCannotExpireBeforeTheRules(t *testing.T) {
	tmpl := NewScenarioTemplate(t)
	f := tmpl.Clone(t)
	f.DelegateCrypto()
	base, _, err := f.R.CurrentPolicy()
	if err != nil {
		t.Fatal(err)
	}
	rulesExpire := base.Targets.Signed.Expires

	soon := ScenarioNow.Add(time.Hour)
	f.Stage("crypto rule, expiring soon", func(p, base *policy.Policy, now time.Time) error {
		if err := p.AddRuleIn(base, "crypto", policy.Rule{Name: "aes", Refs: []string{"refs/heads/main"}, Paths: []string{"src/crypto/**"}, Allow: []string{"dave"}, Threshold: 1}, now); err != nil {
			return err
		}
		rf, _ := p.RuleFile("crypto")
		rf.Meta.Signed.Expires = soon
		return nil
	})
	if _, err := f.R.SignStagedFile(f.Key("dave1"), "crypto"); err != nil {
		t.Fatal(err)
	}
	want := "rule file crypto expires on " + soon.Format(time.RFC3339) + ", before the rules metadata in force (" + rulesExpire.Format(time.RFC3339) + ")"
	_, _, err = f.R.Apply(f.Key("bob"))
	if !errors.Is(err, porcelain.ErrRefused) || !strings.Contains(err.Error(), want) {
		t.Fatalf("apply of a rule file expiring before the rules: %v; want it refused with %q", err, want)
	}

	// Recorded by hand all the same: the policy change fails.
	st, err := f.R.LoadStaged()
	if err != nil {
		t.Fatal(err)
	}
	f.ForcePolicy("bob", st.Policy, "git-secure policy: crypto expiring soon")
	f.MustFail(verify.Options{}, verify.ErrMalformed, want)
}
