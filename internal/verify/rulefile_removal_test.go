package verify

import (
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
)

// TestRemovePersonNamedByRuleFile: the rules keys remove erin, the only
// signer of the crypto maintainers' rule file and named by its rule aes,
// without erin or the security team (sam). The change is accepted with
// the rules keys' signature alone; the crypto file counts for nothing and
// src/crypto fails closed (an update there is refused naming the file and
// erin), while sam's own rule file, the rules keys' later changes and
// updates elsewhere go on. sam mends it by delegating crypto anew; a
// change that writes the crypto file itself is refused unless it counts.
func TestRemovePersonNamedByRuleFile(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	rootPub, rootSig := ruleFileKey(t, "root")
	samPub, samSig := ruleFileKey(t, "sam")
	erinPub, erinSig := ruleFileKey(t, "erin")
	frankPub, frankSig := ruleFileKey(t, "frank")
	base, err := policy.New(rootPub, now)
	mustOK(t, err)
	for name, pub := range map[string]ssh.PublicKey{"sam": samPub, "erin": erinPub, "frank": frankPub} {
		mustOK(t, base.AddPerson(nil, name, []ssh.PublicKey{pub}, now))
	}
	mustOK(t, base.Delegate(nil, "", policy.Delegation{Name: "security", Paths: []string{"src/**"}, Signers: []string{"sam"}, Threshold: 1}, now))
	mustOK(t, base.Delegate(nil, "security", policy.Delegation{Name: "crypto", Paths: []string{"src/crypto/**"}, Signers: []string{"erin"}, Threshold: 1}, now))
	mustOK(t, base.AddRuleIn(nil, "security", policy.Rule{Name: "net", Refs: []string{"refs/heads/main"}, Paths: []string{"src/net/**"}, Allow: []string{"sam"}, Threshold: 1}, now))
	mustOK(t, base.AddRuleIn(nil, "crypto", policy.Rule{Name: "aes", Refs: []string{"refs/heads/main"}, Paths: []string{"src/crypto/**"}, Allow: []string{"erin"}, Threshold: 1}, now))
	mustOK(t, base.SignRoot(rootSig))
	mustOK(t, base.SignTargets(rootSig))
	mustOK(t, base.SignRuleFile("security", samSig))
	mustOK(t, base.SignRuleFile("crypto", erinSig))
	mustOK(t, CheckPolicy(nil, base, now))

	// The rules keys remove erin alone.
	removed, err := base.Clone()
	mustOK(t, err)
	mustOK(t, removed.RemovePerson(base, "erin", now))
	mustOK(t, removed.SignTargets(rootSig))
	mustOK(t, CheckPolicy(base, removed, now))
	effects := strings.Join(removed.RemovalEffects(base), "\n")
	for _, want := range []string{
		"rule file security (delegated: rules keys -> security) names erin, removed: it counts for nothing from this change on, and every update in its namespace (file:src/**) fails until it is mended: its signers (sam) change what names them (git secure policy remove-rule or remove-delegation, --file security) and sign it",
		"rule file crypto (delegated: rules keys -> security -> crypto) names erin, removed",
		"the signers of rule file security must delegate it anew (git secure policy remove-delegation crypto, then delegate crypto --file security with other signers)",
	} {
		if !strings.Contains(effects, want) {
			t.Errorf("RemovalEffects lacks %q:\n%s", want, effects)
		}
	}
	// Fail closed: erin's old rule no longer lets anyone in; sam's
	// namespace waits for him too, as its file names erin.
	one := gitrepo.Hash{1}
	d, err := Decide(nil, removed, Transition{Ref: "refs/heads/main", New: one, Signer: "sam", CheckPaths: true, AllPaths: true}, Inputs{})
	mustOK(t, err)
	if fs := d.Failures(); d.Satisfied() || len(fs) == 0 || !strings.Contains(fs[0].Detail, `unknown or repeated signer "erin"`) {
		t.Fatalf("an update of src/crypto after erin's removal: satisfied %v, failures %+v", d.Satisfied(), fs)
	}
	// A later change of the rules keys alone is accepted too.
	later, err := removed.Clone()
	mustOK(t, err)
	mustOK(t, later.AddRule(removed, policy.Rule{Name: "main", Refs: []string{"refs/heads/main"}, Allow: []string{"sam", "frank"}, Threshold: 1}, now))
	mustOK(t, later.SignTargets(rootSig))
	mustOK(t, CheckPolicy(removed, later, now))
	if len(later.RemovalEffects(removed)) != 0 {
		t.Fatalf("a later change repeats the removal's effects: %v", later.RemovalEffects(removed))
	}

	// Writing the closed crypto file is a change of it: it must count.
	written, err := later.Clone()
	mustOK(t, err)
	f, _ := written.RuleFile("crypto")
	f.Meta.Signed.Version++
	mustOK(t, written.SignRuleFile("crypto", rootSig))
	if err := CheckPolicy(later, written, now); !errors.Is(err, ErrThreshold) || !strings.Contains(err.Error(), "rule file crypto") {
		t.Fatalf("a change writing the closed crypto file: %v", err)
	}

	// sam mends it: crypto delegated anew to frank, who signs the new file.
	mended, err := later.Clone()
	mustOK(t, err)
	mustOK(t, mended.RemoveDelegation(later, "crypto", now))
	mustOK(t, mended.Delegate(later, "security", policy.Delegation{Name: "crypto", Paths: []string{"src/crypto/**"}, Signers: []string{"frank"}, Threshold: 1}, now))
	mustOK(t, mended.SignRuleFile("security", samSig))
	mustOK(t, mended.SignRuleFile("crypto", frankSig))
	mustOK(t, CheckPolicy(later, mended, now))
	for _, f := range mended.RuleFiles() {
		if f.Untrusted != "" {
			t.Fatalf("rule file %s after mending: %s", f.Name, f.Untrusted)
		}
	}
	d, err = Decide(nil, mended, Transition{Ref: "refs/heads/main", New: one, Signer: "sam", CheckPaths: true, AllPaths: true}, Inputs{})
	mustOK(t, err)
	if !d.Satisfied() {
		t.Fatalf("sam's src/net update after mending: %+v", d.Failures())
	}
	// Without sam's signature the mending is refused.
	unsigned, err := later.Clone()
	mustOK(t, err)
	mustOK(t, unsigned.RemoveDelegation(later, "crypto", now))
	if err := CheckPolicy(later, unsigned, now); !errors.Is(err, ErrThreshold) || !strings.Contains(err.Error(), "rule file security") {
		t.Fatalf("security changed without sam: %v", err)
	}
	// A top-level delegation naming the person is the rules keys' to
	// change first.
	q, err := base.Clone()
	mustOK(t, err)
	if err := q.RemovePerson(base, "sam", now); !errors.Is(err, policy.ErrInvalidChange) || !strings.Contains(err.Error(), "delegation security (of the top-level rules) names sam") {
		t.Fatalf("remove sam, a signer of a top-level delegation: %v", err)
	}
}
