// Package hookscmd is "git secure hooks" (install or remove the client
// hooks and the remote helper), "git secure server" (the enforcing hooks
// of a bare repository), the hidden "git secure hook NAME" that git's hook
// scripts run, and the remote helper git-remote-secure. The work is done by
// internal/hooks and internal/remote.
package hookscmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/display"
	"github.com/git-secure/git-secure/internal/hooks"
	"github.com/git-secure/git-secure/internal/remote"
	"github.com/git-secure/git-secure/internal/report"
)

// HelperOptions are the arguments git runs git-remote-secure with.
type HelperOptions struct {
	F      *factory.Factory
	Remote string // the remote's name, or its URL when git has no name
	URL    string
}

// RunRemoteHelper serves git-remote-secure <remote> [<url>] (args[0] is
// the program name). Its errors are printed; the error returned carries
// the exit code.
func RunRemoteHelper(f *factory.Factory, args []string) error {
	if len(args) < 2 {
		fmt.Fprintln(f.Stderr, "git-remote-secure: usage: git-remote-secure <remote> [<url>]; set remote.<name>.vcs = secure instead of running it")
		return report.Exit(report.ExitUsage)
	}
	opts := &HelperOptions{F: f, Remote: args[1], URL: args[1]}
	if len(args) >= 3 {
		opts.URL = args[2]
	}
	return runRemoteHelper(context.Background(), opts)
}

func runRemoteHelper(_ context.Context, opts *HelperOptions) error {
	f := opts.F
	tr := f.Tracer("helper")
	r, err := f.RepoFromGit()
	if err != nil {
		return err
	}
	mode, _, _ := r.ConfigValue("secure.verifyOnFetch")
	r.Trace = tr
	h := &remote.Helper{Repo: r, Remote: opts.Remote, URL: opts.URL, In: f.Stdin, Out: f.Stdout, Err: f.Stderr, Mode: mode, Trace: tr, Wrap: f.StderrTerminal()}
	tr.Mark("open")
	if err := h.Run(); err != nil {
		if !errors.Is(err, remote.ErrVerifyFailed) {
			display.Fprintf(f.Stderr, "git-secure: error: %v\n", err)
		}
		return report.Exit(report.ExitFailed)
	}
	return nil
}

// HookOptions are the hook git runs and its arguments.
type HookOptions struct {
	F    *factory.Factory
	Name string
	Args []string
}

// NewCmdHook is the hidden "git secure hook NAME [ARGS...]".
func NewCmdHook(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:            "hook",
		Usage:           "run one of git-secure's git hooks (git calls this; you do not)",
		ArgsUsage:       "NAME [ARGS...]",
		Hidden:          true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 {
				return report.Usagef("hook takes the hook NAME")
			}
			return runHook(c.Context, &HookOptions{F: f, Name: c.Args().First(), Args: c.Args().Tail()})
		},
	}
}

func runHook(_ context.Context, opts *HookOptions) error {
	f := opts.F
	tr := f.Tracer(opts.Name)
	r, err := f.RepoFromGit()
	if err != nil {
		return err
	}
	tr.Mark("open")
	hc := &hooks.Context{Repo: r, Name: opts.Name, Args: opts.Args, Stdin: f.Stdin, Stderr: f.Stderr, Getenv: f.Getenv, Trace: tr}
	if err := hooks.Run(hc); err != nil {
		if errors.Is(err, hooks.ErrRejected) {
			return report.Exit(report.ExitFailed)
		}
		return err
	}
	return nil
}
