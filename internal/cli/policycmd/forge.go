package policycmd

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/policy"
)

// forgeAccountFlags extend policy add-person with the person's forge
// accounts, whose reviews a trusted forge app records for them.
var forgeAccountFlags = []cli.Flag{
	&cli.StringFlag{Name: "github", Usage: "the person's GitHub `LOGIN`: their approving reviews count, when a forge app records them"},
	&cli.StringFlag{Name: "gitlab", Usage: "the person's GitLab `USERNAME`"},
}

// setForgeAccounts stages the forge accounts of person (forge name to
// login; empty logins are skipped) after add-person staged the person.
func setForgeAccounts(f *factory.Factory, person string, accounts [][2]string) error {
	for _, a := range accounts {
		forge, login := a[0], a[1]
		if login == "" {
			continue
		}
		if err := cmdutil.Stage(f, fmt.Sprintf("%s account of %s: %s", forge, person, login), func(p, base *policy.Policy, now time.Time) error {
			return p.SetForgeAccount(base, person, forge, login, now)
		}); err != nil {
			return err
		}
	}
	return nil
}

// printForgePolicy lists the forge apps the root trusts and the persons'
// forge accounts (policy list).
func printForgePolicy(f *factory.Factory, p *policy.Policy) {
	if apps := p.ForgeApps(); len(apps) > 0 {
		f.Out("\nforge apps (record forge reviews as approvals):\n")
		for _, app := range apps {
			f.Out("  %-16s %s\n", app.Name, app.Fingerprint)
		}
	}
	header := false
	for _, person := range p.Persons() {
		for _, forge := range []string{"github", "gitlab"} {
			if login := p.ForgeAccount(person.Name, forge); login != "" {
				if !header {
					f.Out("\nforge accounts:\n")
					header = true
				}
				f.Out("  %-16s %s %s\n", person.Name, forge, login)
			}
		}
	}
}
