package policycmd

import (
	"context"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/clitest"
)

// TestRunAddPersonForgeAccounts: add-person --github stages the account
// after the person, and policy list --staged shows it (no line for the
// forge not given).
func TestRunAddPersonForgeAccounts(t *testing.T) {
	r := clitest.New(t)
	r.Init()
	ctx := context.Background()
	if err := runAddPerson(ctx, &AddPersonOptions{F: r.F(), Args: []string{"bob"}, Keys: []string{r.Pub("bob")}, GitHub: "bob-gh"}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "add-person --github", r.Stdout.String(), "staged: add person bob", "staged: github account of bob: bob-gh")
	if err := runList(ctx, &ListOptions{F: r.F(), Staged: true}); err != nil {
		t.Fatal(err)
	}
	out := r.Stdout.String()
	clitest.Contains(t, "policy list --staged", out, "\nforge accounts:\n  bob              github bob-gh\n")
	if want := "gitlab"; strings.Contains(out, want) {
		t.Errorf("policy list --staged shows %q:\n%s", want, out)
	}
}

// TestRunSetForgeAccount: add-person without an id notes what that leaves
// open; set-forge-account gives the id (policy list shows it), --github ""
// removes the account, and an id without its login is a usage error.
func TestRunSetForgeAccount(t *testing.T) {
	r := clitest.New(t)
	r.Init()
	ctx := context.Background()
	if err := runAddPerson(ctx, &AddPersonOptions{F: r.F(), Args: []string{"bob"}, Keys: []string{r.Pub("bob")}, GitHub: "bob-gh"}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "add-person without --github-id", r.Stdout.String(), "note: without --github-id, the github login bob-gh counts as bob whoever holds it", "git secure policy set-forge-account bob --github bob-gh --github-id ID")
	set := func(given bool, login, id string) error {
		return runSetForgeAccount(ctx, &SetForgeAccountOptions{F: r.F(), Args: []string{"bob"}, Accounts: []forgeAccount{{"github", login, id}, {"gitlab", "", ""}}, Given: map[string]bool{"github": given}})
	}
	if err := set(true, "bob-gh", "583231"); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "set-forge-account", r.Stdout.String(), "staged: github account of bob: bob-gh (id 583231)")
	if err := runList(ctx, &ListOptions{F: r.F(), Staged: true}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "policy list --staged", r.Stdout.String(), "  bob              github bob-gh (id 583231)\n")
	if err := set(false, "", "583231"); err == nil || !strings.Contains(err.Error(), "--github-id goes with --github LOGIN") {
		t.Errorf("an id without a login: %v", err)
	}
	if err := set(false, "", ""); err == nil || !strings.Contains(err.Error(), "set-forge-account needs --github LOGIN or --gitlab USERNAME") {
		t.Errorf("no account: %v", err)
	}
	if err := set(true, "", ""); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "set-forge-account --github ''", r.Stdout.String(), "staged: remove the github account of bob")
}
