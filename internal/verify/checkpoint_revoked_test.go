package verify_test

import (
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/verify"
)

// Attack: a verifier applies the union of the revocations of every policy
// in the log, so a later policy that drops a revocation (targets.json
// re-signed without it) does not bring the compromised key back. An
// incremental verification started from a checkpoint made after that
// policy knew only the checkpoint policy's revocations: an entry signed
// with the revoked key dave1 after the checkpoint verified (as it did on
// a server whose pre-receive starts from its checkpoint), while verify
// --full refused it. Now the checkpoint keeps the revocations known at
// its entry and the incremental verification refuses the entry too; a
// checkpoint saved without them is not used.
func TestCheckpointKeepsRevocations(t *testing.T) {
	tmpl := NewScenarioTemplate(t)
	f := tmpl.Clone(t)
	f.AddPerson("dave", "dave1", "dave2")
	f.Apply("alice")
	f.SetRef("refs/heads/feature", f.Ref("refs/heads/main"))
	f.Record("dave1", "refs/heads/feature")
	_, last := f.Tip()
	from := last.Number + 1
	f.Stage("revoke dave1", func(p, base *policy.Policy, now time.Time) error { return p.RevokeKey(base, f.FP("dave1"), from, now) })
	f.Apply("alice")

	// The rules key re-signs targets.json without the revocation.
	st, err := f.R.LoadStaged()
	if err != nil {
		t.Fatal(err)
	}
	next := st.Policy
	delete(next.Targets.Signed.UnrecognizedFields, "x-git-secure-revoked")
	next.Targets.Signed.Version++
	next.Targets.Signatures = nil
	s, err := sign.LoadSigner(sign.KeySpec{File: f.Key("alice")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts, err := sign.TUFSigner(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := next.SignTargets(ts); err != nil {
		t.Fatal(err)
	}
	pc, _ := f.ForcePolicy("alice", next, "git-secure policy: revocation dropped")
	if p, err := policy.Load(f.G, pc); err != nil || p.RevokedFrom(f.FP("dave1")) != 0 {
		t.Fatalf("the new policy must still load and list no revocation: %v", err)
	}

	// A checkpoint after the policy that dropped the revocation.
	store := verify.Checkpoints(f.G.GitDir())
	if _, err := verify.WithStore(f.G, store, verify.Options{Now: ScenarioNow}, false); err != nil {
		t.Fatalf("verify before dave1 signs again: %v", err)
	}
	if cp, err := store.Load(); err != nil || cp == nil {
		t.Fatalf("no checkpoint saved: %v", err)
	}

	// dave1 signs again.
	f.SetRef("refs/heads/feature", f.NewCommit(f.Ref("refs/heads/feature"), "by the thief"))
	f.Record("dave1", "refs/heads/feature")
	want := []string{"refs/heads/feature", "signed by " + f.FP("dave1") + ", a key revoked from entry #" + scenarioItoa(from)}
	_, err = verify.Verify(f.G, verify.Options{Now: ScenarioNow})
	ScenarioWantProblem(t, err, verify.ErrSignature, want...)
	_, err = verify.WithStore(f.G, store, verify.Options{Now: ScenarioNow}, false)
	ScenarioWantProblem(t, err, verify.ErrSignature, want...)
}
