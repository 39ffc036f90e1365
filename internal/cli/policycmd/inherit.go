package policycmd

import (
	"context"
	"errors"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/report"
)

// InheritOptions are the arguments of policy inherit.
type InheritOptions struct {
	F             *factory.Factory
	Args          []string // URL
	RootKeys      []string // SHA256 fingerprints
	RootThreshold int
}

func newCmdInherit(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "inherit",
		Usage:     "inherit the organisation policy kept in the repository at URL (a root change)",
		ArgsUsage: "URL",
		Description: `The organisation's persons, teams, global rules and rules then bind this
repository too, above its own rules; every entry records the organisation
policy version it was made under, and verification (git secure verify, every
fetch through git-remote-secure, the server's hook) fetches the organisation
policy repository, verifies it from the pinned --root-key fingerprints and
judges each entry by that version. A person the organisation removes loses
access to every repository that inherits it after their next fetch.
The organisation's rule files (delegations) bind as the organisation judged
them: this repository cannot sign or widen them, a rule file or rule of
this repository may not take one's name, and a file that still names a
person the organisation removed counts for nothing: every update of its
namespace fails until its signers sign it without them. The
organisation policy is fetched and verified now, so a wrong URL or key fails
here. A root change: the root keys' threshold signs it (git secure policy sign,
then apply).`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "root-key", Usage: "`SHA256:...` fingerprint of an organisation root key (repeatable; ssh-keygen -lf KEY.pub prints it)", Required: true},
			&cli.IntFlag{Name: "root-threshold", Usage: "how many (`N`) of the pinned organisation root keys must have signed its root (default: all)"},
		},
		Action: func(c *cli.Context) error {
			return runInherit(c.Context, &InheritOptions{F: f, Args: c.Args().Slice(), RootKeys: cmdutil.PinFlags(c.StringSlice("root-key")), RootThreshold: c.Int("root-threshold")})
		},
	}
}

func runInherit(_ context.Context, opts *InheritOptions) error {
	if len(opts.Args) != 1 {
		return report.Usagef("inherit takes exactly one URL: the organisation policy repository")
	}
	o := policy.Org{URL: opts.Args[0], RootKeys: opts.RootKeys, RootThreshold: opts.RootThreshold}
	r, err := opts.F.Repo()
	if err != nil {
		return err
	}
	staged := func(p, base *policy.Policy, now time.Time) error {
		if err := p.SetOrg(base, o, now); err != nil {
			return err
		}
		c := r.OrgCache()
		spec := p.Org()
		v, err := c.Latest(spec)
		if err != nil {
			return &report.Error{Code: report.ExitFailed, Msg: err.Error()}
		}
		orgPol, err := c.PolicyAt(spec, v)
		if err != nil {
			return &report.Error{Code: report.ExitFailed, Msg: err.Error()}
		}
		if _, err := policy.Inherit(orgPol, p); err != nil {
			if errors.Is(err, policy.ErrInheritConflict) {
				return report.Usagef("%v", err)
			}
			return err
		}
		opts.F.Info("git-secure: the organisation policy at %s verifies from the pinned keys; its latest version is entry #%d\n", spec.URL, v.Number)
		return nil
	}
	return cmdutil.Stage(opts.F, "inherit the organisation policy at "+o.URL, staged)
}
