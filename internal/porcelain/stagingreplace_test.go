package porcelain

import (
	"crypto/ed25519"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/policy"
)

// TestSameContentRuleFiles: a fetched staged change is taken in place of
// the clone's own (as the same change with more signatures) only when its
// rule files are the same too; one that changes a team's rule file is
// another change, which needs review.
func TestSameContentRuleFiles(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pub := func() ssh.PublicKey {
		k, _, err := ed25519.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ssh.NewPublicKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	base, err := policy.New(pub(), now)
	must(err)
	must(base.AddPerson(nil, "bob", []ssh.PublicKey{pub()}, now))
	must(base.AddPerson(nil, "carol", []ssh.PublicKey{pub()}, now))
	own, err := base.Clone()
	must(err)
	must(own.Delegate(base, "", policy.Delegation{Name: "sec", Paths: []string{"src/crypto/**"}, Signers: []string{"bob"}, Threshold: 1}, now))
	same, err := own.Clone()
	must(err)
	widened, err := own.Clone()
	must(err)
	must(widened.AddRuleIn(own, "sec", policy.Rule{Name: "grab", Refs: []string{"refs/heads/main"}, Paths: []string{"src/crypto/**"}, Allow: []string{"carol"}}, now))
	for _, tc := range []struct {
		name string
		next *policy.Policy
		want bool
	}{
		{"the same change", same, true},
		{"a rule file changed", widened, false},
		{"no rule file", base, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sameContent(own, tc.next)
			if err != nil || got != tc.want {
				t.Errorf("sameContent = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
