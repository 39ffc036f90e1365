package explaincmd

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/testing/clitest"
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
