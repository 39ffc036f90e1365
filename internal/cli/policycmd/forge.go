package policycmd

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/report"
)

// forgeAccountFlags extend policy add-person and set-forge-account with the
// person's forge accounts, whose reviews a trusted forge app records for
// them.
var forgeAccountFlags = []cli.Flag{
	&cli.StringFlag{Name: "github", Usage: "the person's GitHub `LOGIN`: their approving reviews count, when a forge app records them"},
	&cli.StringFlag{Name: "github-id", Usage: "the GitHub account's numeric `ID` (gh api users/LOGIN --jq .id): a login GitHub later gives another account never counts"},
	&cli.StringFlag{Name: "gitlab", Usage: "the person's GitLab `USERNAME`"},
	&cli.StringFlag{Name: "gitlab-id", Usage: "the GitLab account's numeric `ID` (GET /api/v4/users?username=USERNAME)"},
}

// forgeAccount is one forge account to stage: a login and its numeric id.
type forgeAccount struct {
	Forge, Login, ID string
}

// forgeAccountsOf reads the forge account flags of c.
func forgeAccountsOf(c *cli.Context) []forgeAccount {
	return []forgeAccount{{"github", c.String("github"), c.String("github-id")}, {"gitlab", c.String("gitlab"), c.String("gitlab-id")}}
}

// setForgeAccounts stages the forge accounts of person after add-person
// staged the person (accounts with no login are skipped); an account
// without its numeric id gets a note saying what that leaves open.
func setForgeAccounts(f *factory.Factory, person string, accounts []forgeAccount) error {
	_, err := stageForgeAccounts(f, person, accounts, func(a forgeAccount) bool { return a.Login != "" })
	return err
}

// stageForgeAccounts stages the accounts of person whose --FORGE flag was
// given (an empty login then removes the account) and says how many; an
// --FORGE-id without its --FORGE is refused.
func stageForgeAccounts(f *factory.Factory, person string, accounts []forgeAccount, given func(forgeAccount) bool) (int, error) {
	n := 0
	for _, a := range accounts {
		if !given(a) {
			if a.ID != "" {
				return n, report.Usagef("--%s-id goes with --%s LOGIN", a.Forge, a.Forge)
			}
			continue
		}
		n++
		if err := stageForgeAccount(f, person, a); err != nil {
			return n, err
		}
	}
	return n, nil
}

// stageForgeAccount stages one account of person (an empty login removes
// it), with a note when it has no numeric id.
func stageForgeAccount(f *factory.Factory, person string, a forgeAccount) error {
	what := fmt.Sprintf("%s account of %s: %s", a.Forge, person, a.Login)
	switch {
	case a.Login == "":
		what = fmt.Sprintf("remove the %s account of %s", a.Forge, person)
	case a.ID != "":
		what += " (id " + a.ID + ")"
	}
	if err := cmdutil.Stage(f, what, func(p, base *policy.Policy, now time.Time) error {
		return p.SetForgeAccount(base, person, a.Forge, a.Login, a.ID, now)
	}); err != nil {
		return err
	}
	if a.Login != "" && a.ID == "" {
		f.Out("note: without --%s-id, the %s login %s counts as %s whoever holds it: a login freed by a rename or a deletion can be taken by someone else; give the account's numeric id (git secure policy set-forge-account %s --%s %s --%s-id ID)\n",
			a.Forge, a.Forge, a.Login, person, person, a.Forge, a.Login, a.Forge)
	}
	return nil
}

// SetForgeAccountOptions are the argument and flags of policy
// set-forge-account.
type SetForgeAccountOptions struct {
	F        *factory.Factory
	Args     []string // PERSON
	Accounts []forgeAccount
	// Given says which forges' --FORGE flag was given (an empty login
	// then removes the account).
	Given map[string]bool
}

func newCmdSetForgeAccount(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "set-forge-account",
		Usage:     "set, change or remove a person's forge account (login and numeric account id): a rules change",
		ArgsUsage: "PERSON",
		Description: `Maps a person's GitHub or GitLab account, whose reviews a forge app records as
their approvals (trust add-forge-app). Give the account's numeric id with its
login: a login can change hands (a rename or a deleted account frees it), the
id never does, so a review by another account under the same login never
counts. --github "" (or --gitlab "") removes the account. Reviews recorded
before the id was set name no id and stop counting for the person: record them
again (git secure forge record-approvals).`,
		Flags: forgeAccountFlags,
		Action: func(c *cli.Context) error {
			return runSetForgeAccount(c.Context, &SetForgeAccountOptions{F: f, Args: c.Args().Slice(), Accounts: forgeAccountsOf(c),
				Given: map[string]bool{"github": c.IsSet("github"), "gitlab": c.IsSet("gitlab")}})
		},
	}
}

func runSetForgeAccount(_ context.Context, opts *SetForgeAccountOptions) error {
	if len(opts.Args) != 1 {
		return report.Usagef("set-forge-account takes exactly one PERSON")
	}
	n, err := stageForgeAccounts(opts.F, opts.Args[0], opts.Accounts, func(a forgeAccount) bool { return opts.Given[a.Forge] })
	if err != nil {
		return err
	}
	if n == 0 {
		return report.Usagef("set-forge-account needs --github LOGIN or --gitlab USERNAME (with --github-id / --gitlab-id)")
	}
	return nil
}

// printForgePolicy lists the forge apps the root trusts and the persons'
// forge accounts (policy list).
func printForgePolicy(f *factory.Factory, p *policy.Policy) {
	if apps := p.ForgeApps(); len(apps) > 0 {
		f.Out("\nforge apps (record forge reviews as approvals):\n")
		for _, app := range apps {
			f.Out("  %-16s %s  bound to %s\n", app.Name, app.Fingerprint, app.Binding())
		}
	}
	header := false
	for _, person := range p.Persons() {
		for _, forge := range []string{"github", "gitlab"} {
			if acct := p.ForgeAccount(person.Name, forge); acct.Login != "" {
				if !header {
					f.Out("\nforge accounts:\n")
					header = true
				}
				f.Out("  %-16s %s %s\n", person.Name, forge, acct)
			}
		}
	}
}
