// Package helpcmd is help as git users know it: "git secure help
// [COMMAND...]", "--version" and "version", a short usage and exit 2 when
// no command is given, and "did you mean" for a mistyped command. Man
// pages (man.go) and shell completion (completion.go) are generated from
// the same command definitions; none of this runs unless asked, so the
// start of every hook stays cheap.
package helpcmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/report"
)

// RootAction is the action of the application, run when no command
// matched: --version, no command at all (usage, exit 2) or an unknown one
// (a suggestion, exit 2).
func RootAction(f *factory.Factory) cli.ActionFunc {
	return func(c *cli.Context) error { return rootAction(f, c) }
}

func rootAction(f *factory.Factory, c *cli.Context) error {
	if c.Bool("version") {
		f.Out("git-secure version %s\n", f.Version)
		return nil
	}
	if !c.Args().Present() {
		shortUsage(f, f.Stderr, "git secure", c.App.Commands)
		return report.Exit(report.ExitUsage)
	}
	return unknownCommand(f, "git secure", c.App.Commands, c.Args().First())
}

// groupAction runs for a command with subcommands (policy, rsl, ...) when
// none of them matched.
func groupAction(f *factory.Factory, prefix string) cli.ActionFunc {
	return func(c *cli.Context) error {
		if !c.Args().Present() {
			shortUsage(f, f.Stderr, prefix, c.Command.Subcommands)
			return report.Exit(report.ExitUsage)
		}
		return unknownCommand(f, prefix, c.Command.Subcommands, c.Args().First())
	}
}

// SetGroupActions gives every command with subcommands, at any depth, the
// action groupAction: urfave/cli's default would print "No help topic"
// and exit 3. No command gets urfave/cli's own "help" subcommand: help is
// "git secure help policy sign" (or "policy sign -h").
func SetGroupActions(f *factory.Factory, prefix string, cmds []*cli.Command) {
	for _, c := range cmds {
		c.HideHelpCommand = true
		if len(c.Subcommands) == 0 {
			continue
		}
		p := prefix + " " + c.Name
		if c.Action == nil {
			c.Action = groupAction(f, p)
		}
		SetGroupActions(f, p, c.Subcommands)
	}
}

// shortUsage prints the visible commands under prefix, one line each, as
// git does when it is run without a command.
func shortUsage(f *factory.Factory, w io.Writer, prefix string, cmds []*cli.Command) {
	fmt.Fprintf(w, "usage: %s <command> [<args>]\n\n", prefix)
	width := 0
	for _, c := range VisibleCommands(cmds) {
		width = max(width, len(c.Name))
	}
	for _, c := range VisibleCommands(cmds) {
		fmt.Fprintf(w, "   %-*s  %s\n", width, c.Name, c.Usage)
	}
	fmt.Fprintf(w, "\nSee '%s <command> -h' or 'git secure help%s <command>' for the options of a command.\n",
		prefix, strings.TrimPrefix(prefix, "git secure"))
}

// unknownCommand reports a command name that is not one of cmds, with the
// closest names as git's own "did you mean" does, and exits 2.
func unknownCommand(f *factory.Factory, prefix string, cmds []*cli.Command, name string) error {
	f.Info("git-secure: error: %s: '%s' is not a command; see '%s -h'\n", prefix, name, prefix)
	if s := suggest(name, cmds); len(s) > 0 {
		f.Info("git-secure: hint: did you mean '%s %s'?\n", prefix, strings.Join(s, "' or '"+prefix+" "))
	}
	return report.Exit(report.ExitUsage)
}

// NewCmdHelp is "git secure help [COMMAND...]": the built-in help of a
// command, the same text as "git secure COMMAND... -h", which it prints
// by running a new application from newApp.
func NewCmdHelp(f *factory.Factory, newApp func() *cli.App) *cli.Command {
	return &cli.Command{
		Name:      "help",
		Usage:     "show the help of git-secure or of a command",
		ArgsUsage: "[COMMAND [SUBCOMMAND]]",
		Description: `Prints the same text as "git secure COMMAND -h". The manual pages
(git secure --help, git help secure, man git-secure-verify) say the same
at more length.`,
		Action: func(c *cli.Context) error {
			return runHelp(c.Context, &HelpOptions{F: f, App: c.App, NewApp: newApp, Args: c.Args().Slice()})
		},
	}
}

// HelpOptions name the command whose help to print.
type HelpOptions struct {
	F      *factory.Factory
	App    *cli.App        // the commands the names are looked up in
	NewApp func() *cli.App // runs "COMMAND... -h"
	Args   []string        // COMMAND [SUBCOMMAND]
}

func runHelp(_ context.Context, opts *HelpOptions) error {
	prefix, cmds := "git secure", opts.App.Commands
	for _, name := range opts.Args {
		cmd := findCommand(cmds, name)
		if cmd == nil {
			return unknownCommand(opts.F, prefix, cmds, name)
		}
		prefix, cmds = prefix+" "+cmd.Name, cmd.Subcommands
	}
	args := append([]string{"git-secure"}, opts.Args...)
	return opts.NewApp().Run(append(args, "-h"))
}

// NewCmdVersion is "git secure version".
func NewCmdVersion(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print git-secure's version",
		Action: func(c *cli.Context) error {
			f.Out("git-secure version %s\n", f.Version)
			return nil
		},
	}
}

// findCommand is the visible command of cmds named name (or an alias).
func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range VisibleCommands(cmds) {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// VisibleCommands leaves out hidden commands (hook, man).
func VisibleCommands(cmds []*cli.Command) []*cli.Command {
	var out []*cli.Command
	for _, c := range cmds {
		if !c.Hidden {
			out = append(out, c)
		}
	}
	return out
}

// suggest returns the visible names in cmds closest to name: those at the
// smallest edit distance, if it is at most a third of the longer name (2
// for short names); a prefix of at least 3 characters counts as distance 1.
func suggest(name string, cmds []*cli.Command) []string {
	best, out := -1, []string(nil)
	for _, c := range VisibleCommands(cmds) {
		d := levenshtein(name, c.Name)
		if len(name) >= 3 && strings.HasPrefix(c.Name, name) {
			d = 1
		}
		if d > max(2, max(len(name), len(c.Name))/3) {
			continue
		}
		switch {
		case best < 0 || d < best:
			best, out = d, []string{c.Name}
		case d == best:
			out = append(out, c.Name)
		}
	}
	return out
}

// levenshtein is the edit distance between a and b: insertions, deletions,
// substitutions and swaps of two neighbours ("vreify") each count 1.
func levenshtein(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
