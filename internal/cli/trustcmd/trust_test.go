package trustcmd

import (
	"context"
	"strings"
	"testing"

	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/testing/clitest"
)

// TestRunTrust: a rules key and a threshold staged through the run
// functions; a threshold that is not a number is a usage error.
func TestRunTrust(t *testing.T) {
	r := clitest.New(t)
	r.Init()
	ctx := context.Background()
	if err := runRoleKey(ctx, &RoleKeyOptions{F: r.F(), Command: "add-rules-key", Args: []string{r.Pub("bob")}, Role: metadata.TARGETS, Add: true}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "add-rules-key", r.Stdout.String(), "staged: add-rules-key "+r.FP("bob"))
	err := runThreshold(ctx, &ThresholdOptions{F: r.F(), Command: "set-rules-threshold", Args: []string{"two"}, Role: metadata.TARGETS})
	if e, ok := report.As(err); !ok || e.Code != report.ExitUsage || e.Msg != `set-rules-threshold: "two" is not a number` {
		t.Errorf("set-rules-threshold two: %v", err)
	}
	if err := runThreshold(ctx, &ThresholdOptions{F: r.F(), Command: "set-rules-threshold", Args: []string{"2"}, Role: metadata.TARGETS}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "set-rules-threshold", r.Stdout.String(), "staged: set-rules-threshold 2")
	if err := runRevokeKey(ctx, &RevokeKeyOptions{F: r.F(), Args: []string{r.FP("carol")}, FromEntry: 2}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "revoke-key", r.Stdout.String(), "staged: revoke key "+r.FP("carol")+" from entry #2")
}

// TestRunForgeApps: trusting a forge app and dropping it are staged root
// changes named by the app and its key; each takes exactly one NAME.
func TestRunForgeApps(t *testing.T) {
	r := clitest.New(t)
	r.Init()
	ctx := context.Background()
	if err := runAddForgeApp(ctx, &AddForgeAppOptions{F: r.F(), Key: r.Pub("carol")}); err == nil || err.Error() != "add-forge-app takes exactly one NAME" {
		t.Errorf("add-forge-app without NAME: %v", err)
	}
	if err := runAddForgeApp(ctx, &AddForgeAppOptions{F: r.F(), Args: []string{"ci"}, Key: r.Pub("carol"), Forge: "github", Repository: "acme/widget x"}); err == nil || !strings.Contains(err.Error(), `"acme/widget x" is not a GitHub repository OWNER/NAME`) {
		t.Errorf("add-forge-app with a bad repository: %v", err)
	}
	if err := runAddForgeApp(ctx, &AddForgeAppOptions{F: r.F(), Args: []string{"ci"}, Key: r.Pub("carol"), Forge: "github", Repository: "acme/widget"}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "add-forge-app", r.Stdout.String(), "staged: add forge app ci "+r.FP("carol")+" bound to github acme/widget")
	if err := runBindForgeApp(ctx, &BindForgeAppOptions{F: r.F(), Args: []string{"ci"}, Forge: "gitlab", Repository: "4242"}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "bind-forge-app", r.Stdout.String(), "staged: bind forge app ci to gitlab 4242")
	if err := runBindForgeApp(ctx, &BindForgeAppOptions{F: r.F(), Args: []string{"nope"}, Forge: "gitlab", Repository: "4242"}); err == nil || !strings.Contains(err.Error(), "no forge app named nope") {
		t.Errorf("bind-forge-app of an unknown app: %v", err)
	}
	if err := cmdutil.RunRemove(ctx, &cmdutil.RemoveOptions{F: r.F(), Command: "remove-forge-app", Args: []string{"ci", "x"}, Named: true, What: "remove forge app ", Remove: (*policy.Policy).RemoveForgeApp}); err == nil || err.Error() != "remove-forge-app takes exactly one NAME" {
		t.Errorf("remove-forge-app ci x: %v", err)
	}
	if err := cmdutil.RunRemove(ctx, &cmdutil.RemoveOptions{F: r.F(), Command: "remove-forge-app", Args: []string{"ci"}, Named: true, What: "remove forge app ", Remove: (*policy.Policy).RemoveForgeApp}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "remove-forge-app", r.Stdout.String(), "staged: remove forge app ci")
}
