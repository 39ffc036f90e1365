package policycmd

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/sign"
)

// KeyOptions are the arguments and flags of policy add-key and remove-key.
type KeyOptions struct {
	F    *factory.Factory
	Args []string // PERSON, and for remove-key KEY
	Key  string   // add-key's public key file
}

const keyRotation = `To rotate a person's key: add the new one, apply, then remove the old one and
apply (each a policy change, signed like any other). The person keeps their
rules and teams throughout. Entries and approvals the old key signed before
its removal still verify under the policy of their time; from the removal on,
its signatures count for nobody (to disown what a stolen key signed before,
revoke it instead: git secure trust revoke-key).
   git secure policy add-key alice --key ~/.ssh/id_ed25519_new.pub
   git secure policy apply
   git secure policy remove-key alice ~/.ssh/id_ed25519_old.pub   # or its SHA256:... fingerprint
   git secure policy apply`

func newCmdAddKey(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:        "add-key",
		Usage:       "give a person one more key (a new machine, a key rotation), keeping their rules and teams",
		ArgsUsage:   "PERSON",
		Description: keyRotation,
		Flags:       []cli.Flag{&cli.StringFlag{Name: "key", Usage: "public key `FILE`", Required: true}},
		Action: func(c *cli.Context) error {
			return runAddKey(c.Context, &KeyOptions{F: f, Args: c.Args().Slice(), Key: c.String("key")})
		},
	}
}

func runAddKey(_ context.Context, opts *KeyOptions) error {
	if len(opts.Args) != 1 {
		return report.Usagef("add-key takes exactly one PERSON (and --key FILE)")
	}
	pub, err := cmdutil.ReadPublicKey(opts.Key)
	if err != nil {
		return err
	}
	name := opts.Args[0]
	return cmdutil.Stage(opts.F, "add key "+sign.Fingerprint(pub)+" to "+name, func(p, base *policy.Policy, now time.Time) error {
		return p.AddKey(base, name, pub, now)
	})
}

func newCmdRemoveKey(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:        "remove-key",
		Usage:       "take a key from a person (refused for their last key)",
		ArgsUsage:   "PERSON KEY",
		Description: "KEY is the key's SHA256:... fingerprint (git secure policy list shows it), its key ID, or its public key FILE.\n\n" + keyRotation,
		Action: func(c *cli.Context) error {
			return runRemoveKey(c.Context, &KeyOptions{F: f, Args: c.Args().Slice()})
		},
	}
}

func runRemoveKey(_ context.Context, opts *KeyOptions) error {
	if len(opts.Args) != 2 {
		return report.Usagef("remove-key takes a PERSON and a KEY (SHA256:... fingerprint, key ID or public key FILE)")
	}
	name, key := opts.Args[0], opts.Args[1]
	if !strings.HasPrefix(key, "SHA256:") {
		if _, err := os.Stat(key); err == nil {
			pub, err := cmdutil.ReadPublicKey(key)
			if err != nil {
				return err
			}
			key = sign.Fingerprint(pub)
		}
	}
	return cmdutil.Stage(opts.F, "remove key "+key+" from "+name, func(p, base *policy.Policy, now time.Time) error {
		return p.RemoveKey(base, name, key, now)
	})
}
