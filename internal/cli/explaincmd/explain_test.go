package explaincmd

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/clitest"
	"golang.org/x/crypto/ssh"
)

// TestRunExplain: explain of a ref nothing protects is satisfied (exit 0)
// in text and JSON; before init it says the one "not set up".
func TestRunExplain(t *testing.T) {
	r := clitest.New(t)
	ctx := context.Background()
	if e, ok := report.As(runExplain(ctx, &Options{F: r.F(), Ref: "main"})); !ok || e.Msg != factory.NotSetUp {
		t.Errorf("explain before init: %v, want %q", e, factory.NotSetUp)
	}
	r.Init()
	if err := runExplain(ctx, &Options{F: r.F(), Ref: "main", Key: r.Priv("alice")}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "explain", r.Stdout.String(), "refs/heads/main: recorded at", "(entry #2)",
		"no rule protects refs/heads/main", "result: satisfied")
	if err := runExplain(ctx, &Options{F: r.F(), Ref: "main", JSON: true}); err != nil {
		t.Fatal(err)
	}
	var x struct {
		Ref       string `json:"ref"`
		Satisfied bool   `json:"satisfied"`
	}
	if err := json.Unmarshal(r.Stdout.Bytes(), &x); err != nil || x.Ref != "refs/heads/main" || !x.Satisfied {
		t.Errorf("explain --json: %+v, %v\n%s", x, err, r.Stdout)
	}
}

// TestExplainNamesSignedPushAndTreeApprovals: a rule that needs a signed
// push or lets tree-bound approvals count says so in explain's text and
// JSON, and a pending update under it notes that the push must be signed.
func TestExplainNamesSignedPushAndTreeApprovals(t *testing.T) {
	r := clitest.New(t)
	ctx := context.Background()
	r.Init()
	p, err := r.F().Repo()
	if err != nil {
		t.Fatal(err)
	}
	rule := policy.Rule{Name: "protect-main", Refs: []string{"refs/heads/main"}, Allow: []string{"alice"}, Threshold: 1, TreeApprovals: true, SignedPush: true}
	data, err := os.ReadFile(r.Pub("alice"))
	if err != nil {
		t.Fatal(err)
	}
	pub, _, err := sign.ParsePublicKey(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stage("test", func(staged, base *policy.Policy, now time.Time) error {
		if err := staged.AddPerson(base, "alice", []ssh.PublicKey{pub}, now); err != nil {
			return err
		}
		return staged.AddRule(base, rule, now)
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Apply(r.Priv("alice")); err != nil {
		t.Fatal(err)
	}
	r.Git("commit", "--allow-empty", "-q", "-m", "pending")
	if err := runExplain(ctx, &Options{F: r.F(), Ref: "main", Key: r.Priv("alice")}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "explain", r.Stdout.String(), "tree-bound approvals count", "pushed with git push --signed",
		"rule protect-main also needs the update pushed with a push certificate")
	if err := runExplain(ctx, &Options{F: r.F(), Ref: "main", Key: r.Priv("alice"), JSON: true}); err != nil {
		t.Fatal(err)
	}
	var x struct {
		Rules []struct {
			Name          string `json:"name"`
			TreeApprovals bool   `json:"treeApprovals"`
			SignedPush    bool   `json:"requireSignedPush"`
		} `json:"rules"`
	}
	if err := json.Unmarshal(r.Stdout.Bytes(), &x); err != nil || len(x.Rules) != 1 || !x.Rules[0].TreeApprovals || !x.Rules[0].SignedPush {
		t.Errorf("explain --json: %+v, %v\n%s", x, err, r.Stdout)
	}
}
