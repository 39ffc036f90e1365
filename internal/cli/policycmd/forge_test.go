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
