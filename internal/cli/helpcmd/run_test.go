package helpcmd

import (
	"context"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/testing/clitest"
)

// TestRunHelpAndCompletion: help of an unknown command suggests the
// closest one (exit 2); completion names its shells.
func TestRunHelpAndCompletion(t *testing.T) {
	r := clitest.New(t)
	app := &cli.App{Commands: []*cli.Command{{Name: "verify", Usage: "check"}, {Name: "policy", Subcommands: []*cli.Command{{Name: "add-rule"}}}}}
	ctx := context.Background()
	err := runHelp(ctx, &HelpOptions{F: r.F(), App: app, NewApp: func() *cli.App { return app }, Args: []string{"policy", "add-rul"}})
	if e, ok := report.As(err); !ok || e.Code != report.ExitUsage {
		t.Errorf("help policy add-rul: %v, want exit 2", err)
	}
	clitest.Contains(t, "help of a typo", r.Stderr.String(), "git-secure: error: git secure policy: 'add-rul' is not a command",
		"git-secure: hint: did you mean 'git secure policy add-rule'?")

	if err := runCompletion(ctx, &CompletionOptions{F: r.F(), App: app, Args: []string{"fish"}}); err == nil || err.Error() != `completion: unknown shell "fish": use bash or zsh` {
		t.Errorf("completion fish: %v", err)
	}
	if err := runCompletion(ctx, &CompletionOptions{F: r.F(), App: app, Args: []string{"bash"}}); err != nil {
		t.Fatal(err)
	}
	if out := r.Stdout.String(); !strings.Contains(out, `"/policy") cmds="add-rule"`) {
		t.Errorf("bash completion lacks policy's subcommands:\n%s", out)
	}
}
