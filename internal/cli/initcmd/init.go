// Package initcmd is "git secure init": set a repository up with the
// user's key as its root and rules key, record every branch and tag, and
// install the hooks. internal/porcelain does the setting up.
package initcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/cli/hookscmd"
	"github.com/git-secure/git-secure/internal/hooks"
)

// Options are the flags of init.
type Options struct {
	F       *factory.Factory
	Key     string
	JSON    bool
	NoHooks bool
}

// NewCmdInit is "git secure init".
func NewCmdInit(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "set this repository up: your key becomes the root and rules key, every branch and tag is recorded",
		Description: `Writes the first policy (refs/secure/policy), with your key as the only root key
and rules key (threshold 1), and starts the log (refs/secure/rsl) with one entry
for the policy and one for every existing branch and tag. In a clone, the
branches of the remote verify judges (the current branch's, else origin, else the only one) that
have no local branch are recorded too, at the remote-tracking tips: run git fetch
first so that they are current. History before init is the accepted starting point. Nothing is protected until you add rules.`,
		Flags: []cli.Flag{cmdutil.KeyFlag, cmdutil.JSONFlag, &cli.BoolFlag{Name: "no-hooks", Usage: "do not install the hooks and remote helper (git secure hooks install)"}},
		Action: func(c *cli.Context) error {
			return runInit(c.Context, &Options{F: f, Key: c.String("key"), JSON: c.Bool("json"), NoHooks: c.Bool("no-hooks")})
		},
	}
}

// initProgressEntries is how many entries make init say what it is doing
// on stderr: one signed entry per ref, about a millisecond each (3 037
// refs: 2.4-2.7 s on a loaded 2-core machine), silent before.
const initProgressEntries = 1000

// initProgress says on stderr that init records many refs, and on a
// terminal counts them on one line.
func initProgress(f *factory.Factory) func(done, total int) {
	tty := f.StderrTerminal()
	return func(done, total int) {
		switch {
		case total < initProgressEntries:
		case done == 0:
			fmt.Fprintf(f.Stderr, "git-secure: recording %d entries (the policy and every branch and tag, one signed entry each)...\n", total)
		case tty && done < total:
			fmt.Fprintf(f.Stderr, "\rgit-secure: recorded %d/%d", done, total)
		case tty:
			fmt.Fprintf(f.Stderr, "\rgit-secure: recorded %d/%d\n", done, total)
		}
	}
}

func runInit(_ context.Context, opts *Options) error {
	f := opts.F
	r, err := f.Repo()
	if err != nil {
		return err
	}
	r.InitProgress = initProgress(f)
	res, err := r.Init(opts.Key)
	if err != nil {
		return err
	}
	var in *hooks.Installer
	if !opts.NoHooks {
		in = hookscmd.InstallAfterInit(f)
	}
	if opts.JSON {
		return f.PrintJSON(res)
	}
	f.Out("Initialized git-secure with root and rules key %s.\n", res.Fingerprint)
	f.Out("Recorded %d entries: the policy and %d refs.\n", res.Entries, res.Entries-1)
	if n := len(res.RemoteOnly); n > 0 {
		f.Out("%d of them are branches of %s with no local branch (a fresh clone has one), recorded at %s's tips:", n, res.Remote, res.Remote)
		for i, ref := range res.RemoteOnly {
			if i == 5 {
				f.Out(" and %d more", n-i)
				break
			}
			f.Out(" %s", strings.TrimPrefix(ref.Name, "refs/heads/"))
		}
		f.Out(".\n")
	}
	if in != nil {
		hookscmd.ReportInstall(f, in)
	}
	f.Out("\nNext:\n")
	f.Out("  git secure policy add-person NAME --key NAME.pub      # everyone who will sign\n")
	branch := "refs/heads/main"
	if t, err := r.Git.SymbolicRef("HEAD"); err == nil && strings.HasPrefix(t, "refs/heads/") {
		branch = t // the project's own branch: master, trunk, ...
	}
	rule := "protect-" + strings.ReplaceAll(strings.TrimPrefix(branch, "refs/heads/"), "/", "-")
	f.Out("  git secure policy add-rule %s --ref %s --allow NAME [--threshold N]\n", rule, branch)
	f.Out("  git secure policy apply                               # sign and put the rules in force\n")
	f.Out("  git secure verify                                     # anyone can check, from any clone\n")
	return nil
}
