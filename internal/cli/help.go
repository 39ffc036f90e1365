package cli

// Help as git users know it: "git secure help [COMMAND...]", "--version",
// a short usage and exit 2 when no command is given, and "did you mean"
// for a mistyped command. Man pages (man.go) and shell completion
// (completion.go) are generated from the same command definitions; none
// of this runs unless asked, so the start of every hook stays cheap.

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// rootAction runs when no command matched: --version, no command at all
// (usage, exit 2) or an unknown one (a suggestion, exit 2).
func (a *app) rootAction(c *cli.Context) error {
	if c.Bool("version") {
		a.out("git-secure version %s\n", Version)
		return nil
	}
	if !c.Args().Present() {
		a.shortUsage(a.env.Stderr, "git secure", c.App.Commands)
		return cli.Exit("", ExitUsage)
	}
	return a.unknownCommand("git secure", c.App.Commands, c.Args().First())
}

// groupAction runs for a command with subcommands (policy, rsl, ...) when
// none of them matched.
func (a *app) groupAction(prefix string) cli.ActionFunc {
	return func(c *cli.Context) error {
		if !c.Args().Present() {
			a.shortUsage(a.env.Stderr, prefix, c.Command.Subcommands)
			return cli.Exit("", ExitUsage)
		}
		return a.unknownCommand(prefix, c.Command.Subcommands, c.Args().First())
	}
}

// setGroupActions gives every command with subcommands, at any depth, the
// action groupAction: urfave/cli's default would print "No help topic"
// and exit 3. No command gets urfave/cli's own "help" subcommand: help is
// "git secure help policy sign" (or "policy sign -h").
func (a *app) setGroupActions(prefix string, cmds []*cli.Command) {
	for _, c := range cmds {
		c.HideHelpCommand = true
		if len(c.Subcommands) == 0 {
			continue
		}
		p := prefix + " " + c.Name
		if c.Action == nil {
			c.Action = a.groupAction(p)
		}
		a.setGroupActions(p, c.Subcommands)
	}
}

// shortUsage prints the visible commands under prefix, one line each, as
// git does when it is run without a command.
func (a *app) shortUsage(w io.Writer, prefix string, cmds []*cli.Command) {
	fmt.Fprintf(w, "usage: %s <command> [<args>]\n\n", prefix)
	width := 0
	for _, c := range visibleCommands(cmds) {
		width = max(width, len(c.Name))
	}
	for _, c := range visibleCommands(cmds) {
		fmt.Fprintf(w, "   %-*s  %s\n", width, c.Name, c.Usage)
	}
	fmt.Fprintf(w, "\nSee '%s <command> -h' or 'git secure help%s <command>' for the options of a command.\n",
		prefix, strings.TrimPrefix(prefix, "git secure"))
}

// unknownCommand reports a command name that is not one of cmds, with the
// closest names as git's own "did you mean" does, and exits 2.
func (a *app) unknownCommand(prefix string, cmds []*cli.Command, name string) error {
	a.info("git-secure: error: %s: '%s' is not a command; see '%s -h'\n", prefix, name, prefix)
	if s := suggest(name, cmds); len(s) > 0 {
		a.info("git-secure: hint: did you mean '%s %s'?\n", prefix, strings.Join(s, "' or '"+prefix+" "))
	}
	return cli.Exit("", ExitUsage)
}

// helpCommand is "git secure help [COMMAND...]": the built-in help of a
// command, the same text as "git secure COMMAND... -h".
func (a *app) helpCommand() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Usage:     "show the help of git-secure or of a command",
		ArgsUsage: "[COMMAND [SUBCOMMAND]]",
		Description: `Prints the same text as "git secure COMMAND -h". The manual pages
(git secure --help, git help secure, man git-secure-verify) say the same
at more length.`,
		Action: func(c *cli.Context) error {
			prefix, cmds := "git secure", c.App.Commands
			for _, name := range c.Args().Slice() {
				cmd := findCommand(cmds, name)
				if cmd == nil {
					return a.unknownCommand(prefix, cmds, name)
				}
				prefix, cmds = prefix+" "+cmd.Name, cmd.Subcommands
			}
			args := append([]string{"git-secure"}, c.Args().Slice()...)
			return a.cliApp().Run(append(args, "-h"))
		},
	}
}

// findCommand is the visible command of cmds named name (or an alias).
func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range visibleCommands(cmds) {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// visibleCommands leaves out hidden commands (hook, man).
func visibleCommands(cmds []*cli.Command) []*cli.Command {
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
	for _, c := range visibleCommands(cmds) {
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
