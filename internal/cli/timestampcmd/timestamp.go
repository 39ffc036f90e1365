// Package timestampcmd is "git secure timestamp": sign freshness
// statements of the log tip (TUF's timestamp role; see docs/format.md,
// section Freshness). internal/porcelain signs.
package timestampcmd

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/freshness"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
)

// NewCmdTimestamp is "git secure timestamp sign".
func NewCmdTimestamp(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:  "timestamp",
		Usage: "sign or show the freshness statement of the log tip (when the policy sets freshness)",
		Description: `When the policy sets freshness (git secure policy set-freshness), clients refuse
a state whose newest statement in refs/secure/timestamp is older than the policy's
max age: a frozen server, or one restored from an old snapshot, is noticed within
that time. The server signs a statement after each push that moves the log (git
config secure.timestampKey FILE in the bare repository) and from cron, which
keeps it fresh when nobody pushes:

  */30 * * * *  cd /srv/git/project.git && git secure timestamp sign --key /etc/git-secure/timestamp_ed25519`,
		Subcommands: []*cli.Command{
			{
				Name:  "sign",
				Usage: "sign a statement that the log tip is what this repository holds now, and store it in refs/secure/timestamp",
				Flags: []cli.Flag{&cli.StringFlag{Name: "key", Usage: "freshness key `FILE`: a private key, or a public key whose private half is in ssh-agent (default: git config secure.timestampKey, else user.signingkey when gpg.format=ssh)"},
					&cli.StringFlag{Name: "time", Usage: "date the statement `TIME` (RFC 3339) instead of now, at most 5 minutes ahead: for tests and backfills; the key's holder vouches for it"},
					&cli.BoolFlag{Name: "allow-restored", Usage: "sign although the log does not contain the tip this signer last vouched for (its state file, beside the key or at git config secure.timestampState): the repository was restored from a backup on purpose"}},
				Action: func(c *cli.Context) error {
					if c.NArg() != 0 {
						return report.Usagef("timestamp sign takes no arguments")
					}
					return runSign(c.Context, &SignOptions{F: f, Key: c.String("key"), Time: c.String("time"), AllowRestored: c.Bool("allow-restored")})
				},
			},
		},
	}
}

// SignOptions are the flags of timestamp sign.
type SignOptions struct {
	F    *factory.Factory
	Key  string // default: git config secure.timestampKey
	Time string // RFC 3339; default now
	// AllowRestored signs although the log lost the tip this signer last
	// vouched for.
	AllowRestored bool
}

func runSign(_ context.Context, opts *SignOptions) error {
	f := opts.F
	r, err := f.Repo()
	if err != nil {
		return err
	}
	at := f.Now()
	if opts.Time != "" {
		if at, err = cmdutil.ParseTimeFlag("time", opts.Time); err != nil {
			return err
		}
	}
	key := opts.Key
	if key == "" {
		if v, ok, err := r.ConfigValue(porcelain.TimestampKeyConfig); err == nil && ok {
			key = v
		}
	}
	res, err := r.SignTimestamp(porcelain.TimestampOptions{KeyFile: key, At: at, AllowRestored: opts.AllowRestored})
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		f.Printer().Say("warning", "%s", w)
	}
	sd := res.Signed
	f.Out("signed %s: log tip %s at %s, expires %s\n", freshness.Ref, sd.Tip, sd.Time.Format(time.RFC3339), sd.Expires.Format(time.RFC3339))
	return nil
}
