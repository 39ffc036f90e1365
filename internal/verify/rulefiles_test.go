package verify

import (
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/sign"
)

func ruleFileKey(t *testing.T, name string) (ssh.PublicKey, signature.Signer) {
	t.Helper()
	seed := sha256.Sum256([]byte("rule file test key " + name))
	s, err := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(seed[:]))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := sign.TUFSigner(s)
	if err != nil {
		t.Fatal(err)
	}
	return s.PublicKey(), ts
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCheckPolicyRuleFiles: a change of a rule file alone needs its
// delegation's signers and nobody else; signed by others it is refused,
// as is a rule file whose version goes back and a new delegation whose
// file its signers have not signed.
func TestCheckPolicyRuleFiles(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	rootPub, rootSig := ruleFileKey(t, "root")
	samPub, samSig := ruleFileKey(t, "sam")
	erinPub, erinSig := ruleFileKey(t, "erin")
	base, err := policy.New(rootPub, now)
	mustOK(t, err)
	mustOK(t, base.AddPerson(nil, "sam", []ssh.PublicKey{samPub}, now))
	mustOK(t, base.AddPerson(nil, "erin", []ssh.PublicKey{erinPub}, now))
	mustOK(t, base.Delegate(nil, "", policy.Delegation{Name: "crypto", Paths: []string{"src/crypto/**"}, Signers: []string{"erin"}}, now))
	mustOK(t, base.SignRoot(rootSig))
	mustOK(t, base.SignTargets(rootSig))
	if err := CheckPolicy(nil, base, now); !errors.Is(err, ErrThreshold) || !strings.Contains(err.Error(), "rule file crypto: 0 of 1 signatures (threshold 1); not yet signed by: erin") {
		t.Fatalf("unsigned new rule file: %v", err)
	}
	mustOK(t, base.SignRuleFile("crypto", erinSig))
	mustOK(t, CheckPolicy(nil, base, now))

	edit := func(signer signature.Signer) *policy.Policy {
		p, err := base.Clone()
		mustOK(t, err)
		mustOK(t, p.AddRuleIn(base, "crypto", policy.Rule{Name: "aes", Refs: []string{"refs/heads/main"}, Paths: []string{"src/crypto/aes/**"}, Allow: []string{"erin"}}, now))
		mustOK(t, p.SignRuleFile("crypto", signer))
		return p
	}
	byErin := edit(erinSig)
	mustOK(t, CheckPolicy(base, byErin, now))
	statuses, err := PolicyStatus(base, byErin)
	mustOK(t, err)
	if len(statuses) != 2 || statuses[1].Role != "rule file crypto" || !statuses[1].Met() {
		t.Fatalf("statuses %v", statuses)
	}
	if err := CheckPolicy(base, edit(samSig), now); !errors.Is(err, ErrThreshold) || !strings.Contains(err.Error(), "rule file crypto") || !strings.Contains(err.Error(), "not yet signed by: erin") {
		t.Fatalf("crypto changed and signed by sam: %v", err)
	}
	// The rules keys cannot write the crypto file either.
	if err := CheckPolicy(base, edit(rootSig), now); !errors.Is(err, ErrThreshold) || !strings.Contains(err.Error(), "rule file crypto") {
		t.Fatalf("crypto changed and signed by the rules key: %v", err)
	}
	// Going back to the older file (version 1 after 2) is a rollback.
	if err := CheckPolicy(byErin, base, now); !errors.Is(err, ErrRollback) || !strings.Contains(err.Error(), "rule file crypto version 1 replaces newer version 2") {
		t.Fatalf("rule file rollback: %v", err)
	}
	// An expired rule file expires the policy.
	if err := CheckExpiry(byErin, now.Add(2*policy.DefaultLifetime)); !errors.Is(err, ErrExpired) {
		t.Fatalf("expired: %v", err)
	}
}

// TestDecideUntrustedRuleFile: an update in the namespace of a rule file
// that counts for nothing fails, naming the file and the missing signer.
func TestDecideUntrustedRuleFile(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	rootPub, rootSig := ruleFileKey(t, "root")
	relPub, _ := ruleFileKey(t, "rel")
	p, err := policy.New(rootPub, now)
	mustOK(t, err)
	mustOK(t, p.AddPerson(nil, "rel", []ssh.PublicKey{relPub}, now))
	mustOK(t, p.Delegate(nil, "", policy.Delegation{Name: "release", Refs: []string{"refs/heads/release/*"}, Signers: []string{"rel"}}, now))
	mustOK(t, p.SignTargets(rootSig))
	mustOK(t, p.SignRuleFile("release", rootSig)) // not a signer of the file
	if !p.Protected("refs/heads/release/1") || p.Protected("refs/heads/main") {
		t.Fatal("the namespace of a file that counts for nothing must be protected, and only it")
	}
	one := gitrepo.Hash{1}
	d, err := Decide(nil, p, Transition{Ref: "refs/heads/release/1", New: one, Signer: "rel"}, Inputs{})
	mustOK(t, err)
	fs := d.Failures()
	if d.Satisfied() || len(fs) != 1 || fs[0].Rule != "rules/release.json" ||
		!strings.Contains(fs[0].Detail, "rule file release counts for nothing: signed by 0 of the 1 persons its delegation release requires") ||
		!strings.Contains(fs[0].Detail, "not signed by rel") || !strings.Contains(fs[0].Hint, "git secure policy sign --file release") {
		t.Fatalf("failures %+v", fs)
	}
}

// TestDecideDelegationPrecedence: a terminating delegation listed first
// decides alone for the refs it matches; listed after a non-terminating
// one, both files' rules must be met; other refs are governed by the
// later delegation either way.
func TestDecideDelegationPrecedence(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	rootPub, rootSig := ruleFileKey(t, "root")
	bobPub, bobSig := ruleFileKey(t, "bob")
	carolPub, carolSig := ruleFileKey(t, "carol")
	build := func(releaseFirst bool) *policy.Policy {
		p, err := policy.New(rootPub, now)
		mustOK(t, err)
		mustOK(t, p.AddPerson(nil, "bob", []ssh.PublicKey{bobPub}, now))
		mustOK(t, p.AddPerson(nil, "carol", []ssh.PublicKey{carolPub}, now))
		release := policy.Delegation{Name: "release", Refs: []string{"refs/heads/release/*"}, Signers: []string{"bob"}, Terminating: true}
		heads := policy.Delegation{Name: "heads", Refs: []string{"refs/heads/**"}, Signers: []string{"carol"}}
		order := []policy.Delegation{heads, release}
		if releaseFirst {
			order = []policy.Delegation{release, heads}
		}
		for _, d := range order {
			mustOK(t, p.Delegate(nil, "", d, now))
		}
		mustOK(t, p.AddRuleIn(nil, "release", policy.Rule{Name: "r", Refs: []string{"refs/heads/release/*"}, Allow: []string{"bob"}}, now))
		mustOK(t, p.AddRuleIn(nil, "heads", policy.Rule{Name: "h", Refs: []string{"refs/heads/**"}, Allow: []string{"carol"}}, now))
		mustOK(t, p.SignTargets(rootSig))
		mustOK(t, p.SignRuleFile("release", bobSig))
		mustOK(t, p.SignRuleFile("heads", carolSig))
		return p
	}
	one := gitrepo.Hash{1}
	for _, tc := range []struct {
		name         string
		releaseFirst bool
		ref, signer  string
		approvers    []string
		ok           bool
		failing      string
	}{
		{"terminating first: bob alone", true, "refs/heads/release/1", "bob", nil, true, ""},
		{"terminating first: carol is not enough", true, "refs/heads/release/1", "carol", nil, false, "release:r"},
		{"terminating last: bob alone is not enough", false, "refs/heads/release/1", "bob", nil, false, "heads:h"},
		{"terminating last: bob and carol", false, "refs/heads/release/1", "bob", []string{"carol"}, true, ""},
		{"other refs: the later delegation governs", true, "refs/heads/main", "bob", nil, false, "heads:h"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decide(nil, build(tc.releaseFirst), Transition{Ref: tc.ref, New: one, Signer: tc.signer}, Inputs{Approvers: tc.approvers})
			mustOK(t, err)
			if d.Satisfied() != tc.ok {
				t.Fatalf("satisfied %v, want %v: %+v", d.Satisfied(), tc.ok, d.Failures())
			}
			if !tc.ok {
				if fs := d.Failures(); len(fs) != 1 || fs[0].Rule != tc.failing {
					t.Fatalf("failures %+v, want only %s", fs, tc.failing)
				}
			}
		})
	}
}
