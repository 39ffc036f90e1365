package cmdutil

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/report"
)

// RemoveOptions are the arguments of a remove-* command of policy and
// trust: it stages the removal of one NAME (a person, team, rule file,
// forge app) or, when Named is false, of a whole setting (freshness).
type RemoveOptions struct {
	F *factory.Factory
	// Command is the command's name, for its usage error.
	Command string
	Args    []string // NAME, or none
	// Named says the command takes exactly one NAME.
	Named bool
	// What describes the change, followed by the name ("remove rule ").
	What   string
	Remove func(p, base *policy.Policy, name string, now time.Time) error
}

// NewCmdRemove is a command that removes one NAME from the policy.
func NewCmdRemove(f *factory.Factory, name, usage, what string, remove func(p, base *policy.Policy, name string, now time.Time) error) *cli.Command {
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "NAME",
		Action: func(c *cli.Context) error {
			return RunRemove(c.Context, &RemoveOptions{F: f, Command: name, Args: c.Args().Slice(), Named: true, What: what, Remove: remove})
		},
	}
}

// NewCmdRemoveSetting is a command, without arguments, that removes a
// setting of the policy (what describes the change in full).
func NewCmdRemoveSetting(f *factory.Factory, name, usage, what string, remove func(p, base *policy.Policy, now time.Time) error) *cli.Command {
	return &cli.Command{
		Name:  name,
		Usage: usage,
		Action: func(c *cli.Context) error {
			return RunRemove(c.Context, &RemoveOptions{F: f, Command: name, Args: c.Args().Slice(), What: what,
				Remove: func(p, base *policy.Policy, _ string, now time.Time) error { return remove(p, base, now) }})
		},
	}
}

// RunRemove stages the removal opts describe.
func RunRemove(_ context.Context, opts *RemoveOptions) error {
	name := ""
	switch {
	case opts.Named && len(opts.Args) != 1:
		return report.Usagef("%s takes exactly one NAME", opts.Command)
	case opts.Named:
		name = opts.Args[0]
	case len(opts.Args) != 0:
		return report.Usagef("%s takes no arguments", opts.Command)
	}
	return Stage(opts.F, opts.What+name, func(p, base *policy.Policy, now time.Time) error {
		return opts.Remove(p, base, name, now)
	})
}
