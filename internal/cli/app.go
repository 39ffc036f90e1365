// Package cli is git-secure's command line: the command tree, flags that
// may follow arguments, and the one place errors become exit codes (Main).
// Each command lives in its own package under internal/cli (verifycmd,
// policycmd, rslcmd, ...) with an Options struct, a NewCmd constructor and
// a run function; factory hands them the process's streams and the
// repository, cmdutil holds what several share, and internal/report prints
// errors and verification problems as the server hook and the remote
// helper do. All work is done by internal/porcelain and internal/verify.
// The Options/NewCmd/run shape repeats in every command package on
// purpose: each command reads and tests alone, and what their run
// functions share is a call into cmdutil or factory, not a copy.
package cli

import (
	"errors"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/attestcmd"
	"github.com/git-secure/git-secure/internal/cli/clonecmd"
	"github.com/git-secure/git-secure/internal/cli/explaincmd"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/cli/forgecmd"
	"github.com/git-secure/git-secure/internal/cli/helpcmd"
	"github.com/git-secure/git-secure/internal/cli/hookscmd"
	"github.com/git-secure/git-secure/internal/cli/initcmd"
	"github.com/git-secure/git-secure/internal/cli/policycmd"
	"github.com/git-secure/git-secure/internal/cli/rslcmd"
	"github.com/git-secure/git-secure/internal/cli/timestampcmd"
	"github.com/git-secure/git-secure/internal/cli/trustcmd"
	"github.com/git-secure/git-secure/internal/cli/verifycmd"
	"github.com/git-secure/git-secure/internal/display"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/verify"
)

// Exit codes, fixed: other tools rely on them (see internal/report).
const (
	ExitOK          = report.ExitOK
	ExitFailed      = report.ExitFailed
	ExitUsage       = report.ExitUsage
	ExitInterrupted = report.ExitInterrupted
)

// Env is everything the command line takes from its process.
type Env = factory.Env

// app builds the command tree of one run: every command gets the run's
// Factory.
type app struct {
	f *factory.Factory
}

func newApp(f *factory.Factory) *app { return &app{f: f} }

// Main runs the command line with args (args[0] is the program name) and
// returns the exit code.
func Main(args []string, env Env) int {
	f := factory.New(env, Version)
	defer f.Close()
	a := newApp(f)
	if path := env.Getenv("GIT_SECURE_CPUPROFILE"); path != "" {
		// For performance reports: a CPU profile of this one command (the
		// remote helper's too).
		if prof, err := os.Create(path); err == nil {
			defer prof.Close()
			if pprof.StartCPUProfile(prof) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	if isRemoteHelperName(args[0]) {
		return exit(f, hookscmd.RunRemoteHelper(f, args))
	}
	ca := a.cliApp()
	err := ca.Run(reorderArgs(ca, args))
	return exit(f, err)
}

// exit prints err for the user and returns its exit code: the one place
// errors become exit codes.
func exit(f *factory.Factory, err error) int {
	if err == nil {
		return ExitOK
	}
	var failed *verify.Failed
	var exitErr cli.ExitCoder
	if e, ok := report.As(err); ok {
		if e.Msg != "" || e.Hint != "" {
			f.Printer().Error(&report.Error{Msg: err.Error(), Hint: e.Hint})
		}
		return e.Code
	}
	code := ExitUsage
	switch {
	case errors.As(err, &exitErr):
		if msg := err.Error(); msg != "" {
			display.Fprintf(f.Stderr, "git-secure: error: %s\n", msg)
		}
		switch c := exitErr.ExitCode(); c {
		case ExitOK, ExitFailed, ExitUsage, ExitInterrupted:
			return c
		}
		return ExitUsage // urfave/cli's own codes (unknown command: 3) are usage errors
	case errors.As(err, &failed):
		f.Printer().Failed(failed)
		return ExitFailed
	case errors.Is(err, porcelain.ErrRefused), errors.Is(err, verify.ErrThreshold):
		code = ExitFailed
	case errors.Is(err, porcelain.ErrUsage):
		code = ExitUsage
	}
	msg := err.Error()
	for _, prefix := range []string{porcelain.ErrUsage.Error() + ": ", porcelain.ErrRefused.Error() + ": "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	f.Printer().Say("error", "%s", msg)
	return code
}

func (a *app) cliApp() *cli.App {
	ca := &cli.App{
		Name:     "git-secure",
		HelpName: "git secure",
		Usage:    "who may move which branch, tag or folder, kept and verified inside the repository",
		Description: `git-secure keeps a signed Reference State Log (refs/secure/rsl) of every change
to your branches and tags, and a TUF policy (refs/secure/policy) that says who
may make which change. Anyone with a clone can verify the whole history.

Quick start, in an existing repository (your SSH key signs everything):
   git secure init --key ~/.ssh/id_ed25519
   git secure policy add-person alice --key alice.pub
   git secure policy add-person bob --key bob.pub
   git secure policy add-rule protect-main --ref refs/heads/main --allow alice --allow bob --threshold 2
   git secure policy apply
   git secure rsl record main          # after moving main
   git secure attest approve main --to <commit>   # a second person approves
   git secure verify

Exit codes: 0 verified/done, 1 a check failed or a change was refused,
2 usage or environment error.

Help: git secure help COMMAND (or git secure COMMAND -h) prints the help of
a command; git secure --help and git help secure open the manual page.`,
		Writer:          a.f.Stdout,
		ErrWriter:       a.f.Stderr,
		ExitErrHandler:  func(*cli.Context, error) {},
		HideHelpCommand: true,
		HideVersion:     true, // --version is ours: urfave/cli's would also take -v
		// The help command "help" would keep urfave/cli from adding -h/--help.
		Flags:                  []cli.Flag{&cli.BoolFlag{Name: "version", Usage: "print git-secure's version"}, cli.HelpFlag},
		Action:                 helpcmd.RootAction(a.f),
		Suggest:                true, // "Did you mean --json?" for a mistyped flag
		UseShortOptionHandling: true,
		// A repeatable flag takes each value whole: split at commas, a key
		// file under "keys, old" was unreadable and --path 'doc/a,b.txt'
		// became two patterns protecting other files.
		DisableSliceFlagSeparator: true,
		Commands: []*cli.Command{
			initcmd.NewCmdInit(a.f),
			clonecmd.NewCmdClone(a.f),
			verifycmd.NewCmdVerify(a.f),
			rslcmd.NewCmdRSL(a.f),
			policycmd.NewCmdPolicy(a.f),
			trustcmd.NewCmdTrust(a.f),
			timestampcmd.NewCmdTimestamp(a.f),
			attestcmd.NewCmdAttest(a.f),
			explaincmd.NewCmdExplain(a.f),
			forgecmd.NewCmdForge(a.f),
			hookscmd.NewCmdHooks(a.f),
			hookscmd.NewCmdServer(a.f),
			hookscmd.NewCmdHook(a.f),
			helpcmd.NewCmdVersion(a.f),
			helpcmd.NewCmdHelp(a.f, a.cliApp),
			helpcmd.NewCmdCompletion(a.f),
			helpcmd.NewCmdMan(a.f),
		},
	}
	helpcmd.SetGroupActions(a.f, "git secure", ca.Commands)
	return ca
}

// Version is set at build time with -ldflags "-X .../internal/cli.Version=...".
var Version = "dev"

// Run is the process entry point used by main.
func Run() int {
	dir, err := os.Getwd()
	if err != nil {
		display.Fprintf(os.Stderr, "git-secure: error: %v\n", err)
		return ExitUsage
	}
	return Main(os.Args, Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Now: time.Now, Dir: dir})
}

// reorderArgs lets flags follow positional arguments, as the documented
// syntax does ("policy add-person NAME --key FILE"): urfave/cli v2 stops
// parsing flags at the first positional argument. It finds the subcommand
// the arguments name, then moves that command's flags (with their values)
// before its positional arguments, which follow a "--" so that none of them
// is taken for a flag. Anything after a "--" the user wrote stays
// positional.
func reorderArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	cmds := app.Commands
	var leaf *cli.Command
	i := 1
	for ; i < len(args); i++ {
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(args[i]) {
				next = c
			}
		}
		if next == nil {
			break
		}
		out = append(out, args[i])
		leaf, cmds = next, next.Subcommands
	}
	if leaf == nil || len(leaf.Subcommands) > 0 || leaf.SkipFlagParsing {
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range leaf.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, positional []string
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && takesValue[name] && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		positional = append(positional, a)
	}
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}
