package attestcmd

import (
	"context"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/testing/clitest"
)

// TestRunApprove: approve checks the set-up in the one wording, and an
// approval by a key that belongs to no person is refused, naming it.
func TestRunApprove(t *testing.T) {
	r := clitest.New(t)
	ctx := context.Background()
	head := r.Git("rev-parse", "main")
	err := runApprove(ctx, &ApproveOptions{F: r.F(), Ref: "main", To: head, NoFetch: true, Key: r.Priv("bob")})
	if e, ok := report.As(err); !ok || e.Msg != factory.NotSetUp {
		t.Errorf("approve before init: %v, want %q", err, factory.NotSetUp)
	}
	r.Init()
	err = runApprove(ctx, &ApproveOptions{F: r.F(), Ref: "main", To: head, NoFetch: true, Key: r.Priv("bob")})
	if err == nil || !strings.Contains(err.Error(), "your key "+r.FP("bob")+" belongs to no person in the policy") {
		t.Errorf("approve by a key of no person: %v", err)
	}
}

// TestRunAttestRun: a test command that fails attests nothing.
func TestRunAttestRun(t *testing.T) {
	r := clitest.New(t)
	r.Init()
	err := runRun(context.Background(), &RunOptions{F: r.F(), Argv: []string{"--", "false"}, Key: r.Priv("alice")})
	if err == nil {
		t.Fatalf("attest run -- false succeeded:\n%s", r.Stdout)
	}
	if got := r.Git("for-each-ref", "refs/secure/attestations"); got != "" {
		t.Errorf("a failed test run left attestations: %s", got)
	}
}
