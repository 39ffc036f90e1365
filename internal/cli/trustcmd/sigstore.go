package trustcmd

import (
	"context"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/report"
)

// SetSigstoreOptions are the flags of trust set-sigstore and
// remove-sigstore.
type SetSigstoreOptions struct {
	F        *factory.Factory
	Args     []string
	Fulcio   string // PEM file: Fulcio root (and intermediate) certificates
	Rekor    string // PEM file: Rekor public key
	Removing bool
}

func newCmdSetSigstore(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:  "set-sigstore",
		Usage: "pin the Sigstore instance (Fulcio root, Rekor key) that keyless identities (gitsign) verify against",
		Description: `A root change. Persons whose key is a keyless identity (policy add-person NAME
--key "sigstore-oidc ISSUER SUBJECT") sign with gitsign in offline Rekor mode; their
signatures verify offline against these: the Fulcio certificate must chain to a pinned
root at the time the pinned Rekor log integrated the signature (signed entry timestamp
and inclusion proof, both embedded by gitsign). For the public Sigstore, the files are
Sigstore's fulcio_v1.crt.pem plus fulcio_intermediate_v1.crt.pem, and rekor.pub.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "fulcio-root", Usage: "PEM `FILE` of the Fulcio root certificate(s), and intermediates", Required: true},
			&cli.StringFlag{Name: "rekor-key", Usage: "PEM `FILE` of the Rekor log's public key", Required: true},
		},
		Action: func(c *cli.Context) error {
			return runSetSigstore(c.Context, &SetSigstoreOptions{F: f, Args: c.Args().Slice(), Fulcio: c.String("fulcio-root"), Rekor: c.String("rekor-key")})
		},
	}
}

func newCmdRemoveSigstore(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:  "remove-sigstore",
		Usage: "unpin the Sigstore instance: keyless identities then verify nothing (a root change)",
		Action: func(c *cli.Context) error {
			return runSetSigstore(c.Context, &SetSigstoreOptions{F: f, Args: c.Args().Slice(), Removing: true})
		},
	}
}

func runSetSigstore(_ context.Context, opts *SetSigstoreOptions) error {
	if len(opts.Args) != 0 {
		return report.Usagef("set-sigstore and remove-sigstore take no arguments")
	}
	if opts.Removing {
		return cmdutil.Stage(opts.F, "remove sigstore", func(p, base *policy.Policy, now time.Time) error {
			return p.RemoveSigstore(base, now)
		})
	}
	fulcio, err := readPEM(opts.Fulcio)
	if err != nil {
		return err
	}
	rekor, err := readPEM(opts.Rekor)
	if err != nil {
		return err
	}
	return cmdutil.Stage(opts.F, "set sigstore", func(p, base *policy.Policy, now time.Time) error {
		return p.SetSigstore(base, fulcio, rekor, now)
	})
}

func readPEM(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, report.Usagef("read %s: %v", path, err)
	}
	if st.Size() > 64<<10 {
		return nil, report.Usagef("%s is too large for a PEM file of certificates or a key", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, report.Usagef("read %s: %v", path, err)
	}
	return b, nil
}
