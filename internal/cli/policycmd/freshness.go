package policycmd

import (
	"context"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/report"
)

// SetFreshnessOptions are the flags of policy set-freshness.
type SetFreshnessOptions struct {
	F         *factory.Factory
	Args      []string // none
	Keys      []string // public key files
	Threshold int
	MaxAge    time.Duration
}

// newCmdSetFreshness sets freshness (policy remove-freshness removes it):
// a root change, signed like any other.
func newCmdSetFreshness(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:  "set-freshness",
		Usage: "require a statement of the log tip no older than --max-age, signed by --key (an online key: the server's or a bot's)",
		Description: `A root change (the root keys' threshold signs it). The freshness keys can only
vouch for "the log tip was X at time T": they sign no entry, rule or root. See
git secure timestamp.`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "key", Usage: "public key `FILE` of a freshness signer (repeatable)", Required: true},
			&cli.IntFlag{Name: "threshold", Value: 1, Usage: "how many of the keys must sign a statement"},
			&cli.DurationFlag{Name: "max-age", Usage: "the oldest a statement may be (e.g. 24h); whole seconds, 1m to 8784h", Required: true},
		},
		Action: func(c *cli.Context) error {
			return runSetFreshness(c.Context, &SetFreshnessOptions{F: f, Args: c.Args().Slice(), Keys: c.StringSlice("key"),
				Threshold: c.Int("threshold"), MaxAge: c.Duration("max-age")})
		},
	}
}

func runSetFreshness(_ context.Context, opts *SetFreshnessOptions) error {
	if len(opts.Args) != 0 {
		return report.Usagef("set-freshness takes no arguments")
	}
	keys, err := cmdutil.ReadPublicKeys(opts.Keys)
	if err != nil {
		return err
	}
	n, age := opts.Threshold, opts.MaxAge
	return cmdutil.Stage(opts.F, "set freshness (max age "+age.String()+")", func(p, base *policy.Policy, now time.Time) error {
		return p.SetFreshness(base, keys, n, age, now)
	})
}

// freshJSON is the freshness setting in policy list --json.
type freshJSON struct {
	Keys      []string `json:"keys"`
	Threshold int      `json:"threshold"`
	MaxAge    string   `json:"maxAge"`
}

func newFreshJSON(p *policy.Policy) *freshJSON {
	f := p.Freshness()
	if f == nil {
		return nil
	}
	j := &freshJSON{Threshold: f.Threshold, MaxAge: f.MaxAge.String()}
	for _, k := range f.Keys {
		j.Keys = append(j.Keys, k.Fingerprint)
	}
	return j
}

func printFreshness(f *factory.Factory, j *freshJSON) {
	if j == nil {
		return
	}
	f.Out("freshness: statements of the log tip at most %s old, signed by %d of %s\n", j.MaxAge, j.Threshold, strings.Join(j.Keys, ", "))
}
