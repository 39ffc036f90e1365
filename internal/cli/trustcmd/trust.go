// Package trustcmd is "git secure trust": the root of trust (root keys,
// rules keys and their thresholds), the forge apps it trusts to record
// forge reviews, and key revocation, each a staged policy change signed
// and applied like the others (git secure policy sign, apply).
package trustcmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"
	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/sign"
)

// NewCmdTrust is "git secure trust ...".
func NewCmdTrust(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:  "trust",
		Usage: "root of trust: root keys, rules keys and their thresholds (staged like policy changes)",
		Description: `A root change needs the signatures of the old root keys' threshold and of the
new root keys' threshold (git secure policy sign / apply).`,
		Subcommands: []*cli.Command{
			newCmdRoleKey(f, "add-root-key", "add a root key", metadata.ROOT, true),
			newCmdRoleKey(f, "remove-root-key", "remove a root key", metadata.ROOT, false),
			newCmdThreshold(f, "set-threshold", "set how many root keys must sign a root change", metadata.ROOT),
			newCmdRoleKey(f, "add-rules-key", "add a key trusted to sign rules changes", metadata.TARGETS, true),
			newCmdRoleKey(f, "remove-rules-key", "remove a rules key", metadata.TARGETS, false),
			newCmdThreshold(f, "set-rules-threshold", "set how many rules keys must sign a rules change", metadata.TARGETS),
			newCmdAddForgeApp(f),
			newCmdBindForgeApp(f),
			cmdutil.NewCmdRemove(f, "remove-forge-app", "stop trusting a forge bridge (a root change)", "remove forge app ", (*policy.Policy).RemoveForgeApp),
			newCmdSetSigstore(f),
			newCmdRemoveSigstore(f),
			newCmdRevokeKey(f),
		},
	}
}

// RoleKeyOptions are the arguments of the commands that add a key to a
// role or remove one.
type RoleKeyOptions struct {
	F       *factory.Factory
	Command string   // the command's name: the change's description
	Args    []string // FILE
	Role    string   // metadata.ROOT or metadata.TARGETS
	Add     bool
}

func newCmdRoleKey(f *factory.Factory, name, usage, role string, add bool) *cli.Command {
	return &cli.Command{
		Name: name, Usage: usage, ArgsUsage: "FILE",
		Action: func(c *cli.Context) error {
			return runRoleKey(c.Context, &RoleKeyOptions{F: f, Command: name, Args: c.Args().Slice(), Role: role, Add: add})
		},
	}
}

func runRoleKey(_ context.Context, opts *RoleKeyOptions) error {
	if len(opts.Args) != 1 {
		return report.Usagef("%s takes exactly one public key FILE", opts.Command)
	}
	pub, err := cmdutil.ReadPublicKey(opts.Args[0])
	if err != nil {
		return err
	}
	fp := sign.Fingerprint(pub)
	return cmdutil.Stage(opts.F, fmt.Sprintf("%s %s", opts.Command, fp), func(p, base *policy.Policy, now time.Time) error {
		if opts.Add {
			return p.AddRoleKey(base, opts.Role, pub, now)
		}
		return p.RemoveRoleKey(base, opts.Role, fp, now)
	})
}

// ThresholdOptions are the arguments of set-threshold and
// set-rules-threshold.
type ThresholdOptions struct {
	F       *factory.Factory
	Command string   // the command's name: the change's description
	Args    []string // N
	Role    string
}

func newCmdThreshold(f *factory.Factory, name, usage, role string) *cli.Command {
	return &cli.Command{
		Name: name, Usage: usage, ArgsUsage: "N",
		Action: func(c *cli.Context) error {
			return runThreshold(c.Context, &ThresholdOptions{F: f, Command: name, Args: c.Args().Slice(), Role: role})
		},
	}
}

func runThreshold(_ context.Context, opts *ThresholdOptions) error {
	var n int
	if len(opts.Args) != 1 {
		return report.Usagef("%s takes exactly one number N", opts.Command)
	}
	if _, err := fmt.Sscanf(opts.Args[0], "%d", &n); err != nil || fmt.Sprint(n) != opts.Args[0] {
		return report.Usagef("%s: %q is not a number", opts.Command, opts.Args[0])
	}
	return cmdutil.Stage(opts.F, fmt.Sprintf("%s %d", opts.Command, n), func(p, base *policy.Policy, now time.Time) error {
		return p.SetRoleThreshold(base, opts.Role, n, now)
	})
}

// RevokeKeyOptions are the arguments and flags of revoke-key.
type RevokeKeyOptions struct {
	F         *factory.Factory
	Args      []string // FILE or SHA256: fingerprint
	FromEntry uint64
}

func newCmdRevokeKey(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "revoke-key",
		Usage:     "declare a key compromised from RSL entry N on: what it signed from there fails verification",
		ArgsUsage: "FILE|FINGERPRINT",
		Description: `Entries and approvals the key made before entry N still verify; those from N on
do not, even where the policy of their time allowed the key. Also remove the key
from its person or role (remove-person, remove-root-key) so it signs nothing new.`,
		Flags: []cli.Flag{&cli.Uint64Flag{Name: "from-entry", Usage: "first RSL entry `N` the key may no longer sign", Required: true}},
		Action: func(c *cli.Context) error {
			return runRevokeKey(c.Context, &RevokeKeyOptions{F: f, Args: c.Args().Slice(), FromEntry: c.Uint64("from-entry")})
		},
	}
}

func runRevokeKey(_ context.Context, opts *RevokeKeyOptions) error {
	if len(opts.Args) != 1 {
		return report.Usagef("revoke-key takes one public key FILE or SHA256: fingerprint")
	}
	fp := opts.Args[0]
	if !strings.HasPrefix(fp, "SHA256:") {
		pub, err := cmdutil.ReadPublicKey(fp)
		if err != nil {
			return err
		}
		fp = sign.Fingerprint(pub)
	}
	from := opts.FromEntry
	return cmdutil.Stage(opts.F, fmt.Sprintf("revoke key %s from entry #%d", fp, from), func(p, base *policy.Policy, now time.Time) error {
		return p.RevokeKey(base, fp, from, now)
	})
}
