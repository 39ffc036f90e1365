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
}

func newCmdAddForgeApp(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "add-forge-app",
		Usage:     "trust a forge bridge (a key held by CI) to record forge reviews as approvals of the persons the policy maps their accounts to",
		ArgsUsage: "NAME",
		Description: `A root change. The bridge's records count only for persons whose forge account the
policy names (policy add-person --github LOGIN), never twice for one person, and
explain and verify --mergeable say which approvals came through the forge. The
key must be of its own (no root, rules, freshness or person key). Remove it with
trust remove-forge-app; revoke it with trust revoke-key.`,
		Flags: []cli.Flag{&cli.StringFlag{Name: "key", Usage: "the bridge's public key `FILE`", Required: true}},
		Action: func(c *cli.Context) error {
			return runAddForgeApp(c.Context, &AddForgeAppOptions{F: f, Args: c.Args().Slice(), Key: c.String("key")})
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
	return cmdutil.Stage(opts.F, fmt.Sprintf("add forge app %s %s", name, sign.Fingerprint(pub)), func(p, base *policy.Policy, now time.Time) error {
		return p.AddForgeApp(base, name, pub, now)
	})
}
