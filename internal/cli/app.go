// Package cli is git-secure's command line: flag parsing, output for people
// (stderr for diagnostics, stdout for results) and for machines (--json),
// and the mapping of errors to exit codes. All work is done by
// internal/porcelain and internal/verify.
package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/display"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/trace"
	"github.com/git-secure/git-secure/internal/verify"
)

// Exit codes, fixed: other tools rely on them.
const (
	ExitOK          = 0
	ExitFailed      = 1 // a check failed: verification, a refused update or policy change
	ExitUsage       = 2 // usage or environment error
	ExitInterrupted = 130
)

// Env is everything the command line takes from its process.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Now            func() time.Time
	Dir            string
}

type app struct {
	env   Env
	repo  *porcelain.Repo
	start time.Time
}

// Main runs the command line with args (args[0] is the program name) and
// returns the exit code.
func Main(args []string, env Env) int {
	a := &app{env: env, start: time.Now()}
	defer func() {
		if a.repo != nil {
			a.repo.Git.Close()
		}
	}()
	if isRemoteHelperName(args[0]) {
		return a.runRemoteHelper(args)
	}
	if path := env.Getenv("GIT_SECURE_CPUPROFILE"); path != "" {
		// For performance reports: a CPU profile of this one command.
		if f, err := os.Create(path); err == nil {
			defer f.Close()
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	ca := a.cliApp()
	err := ca.Run(reorderArgs(ca, args))
	return a.exit(err)
}

func (a *app) exit(err error) int {
	if err == nil {
		return ExitOK
	}
	var failed *verify.Failed
	var exitErr cli.ExitCoder
	code := ExitUsage
	switch {
	case errors.As(err, &exitErr):
		if msg := err.Error(); msg != "" {
			display.Fprintf(a.env.Stderr, "git-secure: error: %s\n", msg)
		}
		switch c := exitErr.ExitCode(); c {
		case ExitOK, ExitFailed, ExitUsage, ExitInterrupted:
			return c
		}
		return ExitUsage // urfave/cli's own codes (unknown command: 3) are usage errors
	case errors.As(err, &failed):
		a.printProblems(failed)
		return ExitFailed
	case errors.Is(err, porcelain.ErrRefused), errors.Is(err, verify.ErrThreshold):
		code = ExitFailed
	case errors.Is(err, porcelain.ErrUsage), errors.Is(err, errUsage):
		code = ExitUsage
	}
	msg := err.Error()
	for _, prefix := range []string{porcelain.ErrUsage.Error() + ": ", porcelain.ErrRefused.Error() + ": ", errUsage.Error() + ": "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	a.say("git-secure: error: ", msg)
	return code
}

var errUsage = errors.New("usage")

func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

func (a *app) printProblems(f *verify.Failed) {
	w := a.env.Stderr
	for _, p := range f.Problems {
		a.say("git-secure: error: ", p.Error())
		if p.Hint != "" {
			a.say("git-secure: hint: ", p.Hint)
		}
	}
	fmt.Fprintf(w, "git-secure: verification FAILED (%d problem(s))\n", len(f.Problems))
}

// open opens the repository in the working directory once.
func (a *app) open() (*porcelain.Repo, error) {
	if a.repo != nil {
		return a.repo, nil
	}
	dir := a.env.Dir
	if d := a.env.Getenv("GIT_DIR"); d != "" {
		if !filepath.IsAbs(d) {
			d = filepath.Join(a.env.Dir, d)
		}
		// GIT_DIR=.git from the work tree's top: open the work tree itself
		// (one process instead of several). Hooks and the remote helper
		// go through openFromGit, which needs none.
		if filepath.Clean(d) != filepath.Join(a.env.Dir, ".git") {
			dir = d
		}
	}
	g, err := gitrepo.Open(dir)
	if err != nil {
		return nil, openErr(dir, err)
	}
	a.repo = &porcelain.Repo{Git: g, Now: a.env.Now, AgentSocket: a.env.Getenv("SSH_AUTH_SOCK"), Home: a.env.Getenv("HOME")}
	// Nearly every command reads the configuration: read it alongside what
	// the command does first.
	a.repo.Preload()
	return a.repo, nil
}

// openFromGit opens the repository a hook or the remote helper runs in.
// git starts them with GIT_DIR set, in the work tree (GIT_DIR=.git) or in
// the git directory of a bare repository (GIT_DIR=.): then the repository
// is known without asking git. Any other layout goes through open.
func (a *app) openFromGit() (*porcelain.Repo, error) {
	d := a.env.Getenv("GIT_DIR")
	if a.repo != nil || d == "" || a.env.Getenv("GIT_WORK_TREE") != "" || a.env.Getenv("GIT_COMMON_DIR") != "" {
		return a.open()
	}
	if !filepath.IsAbs(d) {
		d = filepath.Join(a.env.Dir, d)
	}
	d = filepath.Clean(d)
	workTree := ""
	switch d {
	case filepath.Join(a.env.Dir, ".git"):
		workTree = filepath.Clean(a.env.Dir)
	case filepath.Clean(a.env.Dir):
	default:
		return a.open()
	}
	g, err := gitrepo.OpenGitDir(d, workTree, os.Environ())
	if err != nil {
		return a.open()
	}
	a.repo = &porcelain.Repo{Git: g, Now: a.env.Now, AgentSocket: a.env.Getenv("SSH_AUTH_SOCK"), Home: a.env.Getenv("HOME")}
	return a.repo, nil
}

// tracer returns a phase tracer on stderr when GIT_SECURE_TRACE is set.
func (a *app) tracer(name string) *trace.Tracer {
	if a.env.Getenv("GIT_SECURE_TRACE") == "" {
		return nil
	}
	return trace.New(a.env.Stderr, name, a.start)
}

func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.env.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// out and info print human output: every string and error argument (which
// may come from the repository) is escaped for the terminal.
func (a *app) out(format string, args ...any) { display.Fprintf(a.env.Stdout, format, args...) }
func (a *app) info(format string, args ...any) {
	display.Fprintf(a.env.Stderr, format, args...)
}

var keyFlag = &cli.StringFlag{
	Name:  "key",
	Usage: "signing key `FILE`: a private key, or a public key whose private half is in ssh-agent (default: git config user.signingkey when gpg.format=ssh)",
}

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "write one JSON document to stdout"}

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
		Writer:          a.env.Stdout,
		ErrWriter:       a.env.Stderr,
		ExitErrHandler:  func(*cli.Context, error) {},
		HideHelpCommand: true,
		HideVersion:     true, // --version is ours: urfave/cli's would also take -v
		// The help command "help" would keep urfave/cli from adding -h/--help.
		Flags:                  []cli.Flag{&cli.BoolFlag{Name: "version", Usage: "print git-secure's version"}, cli.HelpFlag},
		Action:                 a.rootAction,
		Suggest:                true, // "Did you mean --json?" for a mistyped flag
		UseShortOptionHandling: true,
		// A repeatable flag takes each value whole: split at commas, a key
		// file under "keys, old" was unreadable and --path 'doc/a,b.txt'
		// became two patterns protecting other files.
		DisableSliceFlagSeparator: true,
		Commands: []*cli.Command{
			a.initCommand(),
			a.cloneCommand(),
			a.verifyCommand(),
			a.rslCommand(),
			a.withFreshness(a.policyCommand()),
			a.trustCommand(),
			a.timestampCommand(),
			a.attestCommand(),
			a.explainCommand(),
			a.forgeCommand(),
			a.hooksCommand(),
			a.serverCommand(),
			a.hookCommand(),
			a.versionCommand(),
			a.helpCommand(),
			a.completionCommand(),
			a.manCommand(),
		},
	}
	a.setGroupActions("git secure", ca.Commands)
	return ca
}

// Version is set at build time with -ldflags "-X .../internal/cli.Version=...".
var Version = "dev"

func (a *app) versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print git-secure's version",
		Action: func(c *cli.Context) error {
			a.out("git-secure version %s\n", Version)
			return nil
		},
	}
}

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
