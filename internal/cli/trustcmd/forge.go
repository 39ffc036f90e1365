package trustcmd

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/sign"
)

// AddForgeAppOptions are the argument and flag of trust add-forge-app, a
// root change that trusts a forge bridge (a key held by CI).
type AddForgeAppOptions struct {
	F    *factory.Factory
	Args []string // NAME
	Key  string   // the bridge's public key file
	// Forge and Repository are the one repository the app records the
	// reviews of.
	Forge, Repository string
}

// forgeAppBindingFlags name the repository a forge app is bound to.
var forgeAppBindingFlags = []cli.Flag{
	&cli.StringFlag{Name: "forge", Value: "github", Usage: "`FORGE` of the repository: github or gitlab"},
	&cli.StringFlag{Name: "repository", Required: true, Usage: "the one `REPOSITORY` whose reviews the app records: GitHub OWNER/NAME ($GITHUB_REPOSITORY), GitLab the project's numeric id ($CI_PROJECT_ID, kept across renames and transfers) or its path"},
}

func newCmdAddForgeApp(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "add-forge-app",
		Usage:     "trust a forge bridge (a key held by CI) to record one repository's forge reviews as approvals of the persons the policy maps their accounts to",
		ArgsUsage: "NAME",
		Description: `A root change. The bridge is bound to one repository (--repository, on --forge):
its records of any other repository never count. Its records count only for
persons whose forge account the policy names (policy add-person --github LOGIN
--github-id ID; with the id, a login that changed hands never counts), never
twice for one person, and explain and verify --mergeable say which approvals
came through the forge. The key must be of its own (no root, rules, freshness
or person key). Rebind it with trust bind-forge-app, remove it with trust
remove-forge-app; revoke it with trust revoke-key.`,
		Flags: append([]cli.Flag{&cli.StringFlag{Name: "key", Usage: "the bridge's public key `FILE`", Required: true}}, forgeAppBindingFlags...),
		Action: func(c *cli.Context) error {
			return runAddForgeApp(c.Context, &AddForgeAppOptions{F: f, Args: c.Args().Slice(), Key: c.String("key"), Forge: c.String("forge"), Repository: c.String("repository")})
		},
	}
}

func runAddForgeApp(_ context.Context, opts *AddForgeAppOptions) error {
	if len(opts.Args) != 1 {
		return report.Usagef("add-forge-app takes exactly one NAME")
	}
	pub, err := cmdutil.ReadPublicKey(opts.Key)
	if err != nil {
		return err
	}
	name := opts.Args[0]
	return cmdutil.Stage(opts.F, fmt.Sprintf("add forge app %s %s bound to %s %s", name, sign.Fingerprint(pub), opts.Forge, opts.Repository), func(p, base *policy.Policy, now time.Time) error {
		return p.AddForgeApp(base, name, pub, opts.Forge, opts.Repository, now)
	})
}

// BindForgeAppOptions are the argument and flags of trust bind-forge-app.
type BindForgeAppOptions struct {
	F                 *factory.Factory
	Args              []string // NAME
	Forge, Repository string
}

func newCmdBindForgeApp(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "bind-forge-app",
		Usage:     "bind a forge bridge, keeping its key, to the one repository whose reviews it records (a root change)",
		ArgsUsage: "NAME",
		Description: `For an app added before forge apps were bound to a repository, or a repository
that moved. From the entry that applies the change on, only the app's records
naming this repository count: record the open pull requests' reviews again
(git secure forge record-approvals).`,
		Flags: forgeAppBindingFlags,
		Action: func(c *cli.Context) error {
			return runBindForgeApp(c.Context, &BindForgeAppOptions{F: f, Args: c.Args().Slice(), Forge: c.String("forge"), Repository: c.String("repository")})
		},
	}
}

func runBindForgeApp(_ context.Context, opts *BindForgeAppOptions) error {
	if len(opts.Args) != 1 {
		return report.Usagef("bind-forge-app takes exactly one NAME")
	}
	name := opts.Args[0]
	return cmdutil.Stage(opts.F, fmt.Sprintf("bind forge app %s to %s %s", name, opts.Forge, opts.Repository), func(p, base *policy.Policy, now time.Time) error {
		return p.BindForgeApp(base, name, opts.Forge, opts.Repository, now)
	})
}
