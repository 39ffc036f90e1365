package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/display"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/hooks"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/remote"
)

// runRemoteHelper serves git-remote-secure <remote> <url>.
func (a *app) runRemoteHelper(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(a.env.Stderr, "git-remote-secure: usage: git-remote-secure <remote> [<url>]; set remote.<name>.vcs = secure instead of running it")
		return ExitUsage
	}
	name, url := args[1], args[1]
	if len(args) >= 3 {
		url = args[2]
	}
	tr := a.tracer("helper")
	r, err := a.openFromGit()
	if err != nil {
		return a.exit(err)
	}
	mode, _, _ := r.ConfigValue("secure.verifyOnFetch")
	r.Trace = tr
	h := &remote.Helper{Repo: r, Remote: name, URL: url, In: a.env.Stdin, Out: a.env.Stdout, Err: a.env.Stderr, Mode: mode, Trace: tr, Wrap: a.stderrTerminal()}
	tr.Mark("open")
	if err := h.Run(); err != nil {
		if !errors.Is(err, remote.ErrVerifyFailed) {
			display.Fprintf(a.env.Stderr, "git-secure: error: %v\n", err)
		}
		return ExitFailed
	}
	return ExitOK
}

func (a *app) hookCommand() *cli.Command {
	return &cli.Command{
		Name:            "hook",
		Usage:           "run one of git-secure's git hooks (git calls this; you do not)",
		ArgsUsage:       "NAME [ARGS...]",
		Hidden:          true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 {
				return usageErr("hook takes the hook NAME")
			}
			tr := a.tracer(c.Args().First())
			r, err := a.openFromGit()
			if err != nil {
				return err
			}
			tr.Mark("open")
			hc := &hooks.Context{Repo: r, Name: c.Args().First(), Args: c.Args().Tail(), Stdin: a.env.Stdin, Stderr: a.env.Stderr, Getenv: a.env.Getenv, Trace: tr}
			if err := hooks.Run(hc); err != nil {
				if errors.Is(err, hooks.ErrRejected) {
					return cli.Exit("", ExitFailed)
				}
				return err
			}
			return nil
		},
	}
}

func (a *app) installer(global bool) (*hooks.Installer, error) {
	in := &hooks.Installer{Binary: hooks.Binary(), Global: global}
	if global {
		home := a.env.Getenv("HOME")
		if home == "" {
			return nil, usageErr("HOME is not set")
		}
		cfg := a.env.Getenv("XDG_CONFIG_HOME")
		if cfg == "" {
			cfg = filepath.Join(home, ".config")
		}
		in.HooksDir = filepath.Join(cfg, "git-secure", "hooks")
		in.ConfigGet = func(k string) (string, bool, error) { return globalConfig(a, "--get", k) }
		in.ConfigSet = func(k, v string) error { _, _, err := globalConfig(a, k, v); return err }
		in.ConfigUnset = func(k string) error {
			_, _, err := globalConfig(a, "--unset", k)
			return err
		}
		in.Remotes = []string{"origin"}
		return in, nil
	}
	r, err := a.open()
	if err != nil {
		return nil, err
	}
	return a.repoInstaller(r.Git)
}

// repoInstaller configures the hooks of repository g and its remotes.
func (a *app) repoInstaller(g *gitrepo.Repo) (*hooks.Installer, error) {
	in := &hooks.Installer{Binary: hooks.Binary(), Git: g}
	in.HooksDir = filepath.Join(g.GitDir(), "secure", "hooks")
	in.ConfigGet = g.Config
	in.ConfigSet = g.SetConfig
	in.ConfigUnset = g.UnsetConfig
	out, err := g.Run(context.Background(), nil, "remote")
	if err != nil {
		return nil, err
	}
	in.Remotes = strings.Fields(string(out))
	return in, nil
}

// globalConfig runs git config --global; exit 1 (unset key) and 5 (unset
// of a missing key) are not errors.
func globalConfig(a *app, args ...string) (string, bool, error) {
	out, err := gitrepo.RunGlobal(context.Background(), os.Environ(), append([]string{"config", "--global"}, args...)...)
	if err != nil {
		var ge *gitrepo.GitError
		if errors.As(err, &ge) && (ge.ExitCode == 1 || ge.ExitCode == 5) {
			return "", false, nil
		}
		return "", false, err
	}
	return strings.TrimSpace(string(out)), true, nil
}

func (a *app) hooksCommand() *cli.Command {
	global := &cli.BoolFlag{Name: "global", Usage: "for every repository of this user (only repositories with a git-secure policy are affected)"}
	return &cli.Command{
		Name:  "hooks",
		Usage: "install or remove git-secure's hooks and remote helper, so plain git push/fetch do the work",
		Description: `install points core.hooksPath at git-secure's hook directory (your existing hooks,
in .git/hooks or a previous core.hooksPath such as husky's, keep running after
git-secure's) and sets remote.<name>.vcs = secure for each remote, so that git
push records and sends log entries and git fetch verifies what arrives. In a
repository it also sets url.secure::.pushInsteadOf to "" (an empty prefix
matches every URL), so that a remote added later (git remote add origin URL;
git push -u origin main) goes through git-remote-secure from its first push,
with no second command; that push also sets remote.<name>.vcs = secure, so
that its fetches are verified from then on. Fetching a remote you never push
to (an upstream mirror) stays plain git. Running install again refreshes the
scripts and routes the remotes added since; it prints what it changed.
uninstall restores exactly the previous configuration.

With --guard-refs, a reference-transaction hook also refuses any change to
refs/secure/* that git-secure did not make (a stray git update-ref, a fetch
refspec copying a remote's metadata unverified). It is off by default because
git runs it twice for every ref update, commits included (about two shell
starts each).`,
		Subcommands: []*cli.Command{
			{
				Name:  "install",
				Usage: "install in this repository (or --global)",
				Flags: []cli.Flag{global, &cli.BoolFlag{Name: "guard-refs", Usage: "also refuse changes to refs/secure/* not made by git-secure (costs a little on every commit)"}},
				Action: func(c *cli.Context) error {
					in, err := a.installer(c.Bool("global"))
					if err != nil {
						return err
					}
					in.Guard = c.Bool("guard-refs")
					if err := in.Install(); err != nil {
						return err
					}
					a.reportInstall(in)
					if hooks.Binary() == "" || !onPath("git-remote-secure") {
						a.info("git-secure: warning: git-remote-secure is not on PATH; run make install (it installs both)\n")
					}
					return nil
				},
			},
			{
				Name:  "uninstall",
				Usage: "remove from this repository (or --global), restoring what was there",
				Flags: []cli.Flag{global},
				Action: func(c *cli.Context) error {
					in, err := a.installer(c.Bool("global"))
					if err != nil {
						return err
					}
					if err := in.Uninstall(); err != nil {
						return err
					}
					a.out("git-secure hooks removed\n")
					return nil
				},
			},
		},
	}
}

// reportInstall prints what in.Install did, and only that.
func (a *app) reportInstall(in *hooks.Installer) { reportInstall(a.out, in) }

func reportInstall(out func(string, ...any), in *hooks.Installer) {
	rep := in.Report
	if rep.HooksPathSet {
		out("git-secure hooks installed in %s (core.hooksPath)\n", in.HooksDir)
	} else {
		out("git-secure hooks in %s refreshed (core.hooksPath already pointed there)\n", in.HooksDir)
	}
	if len(rep.Routed) > 0 {
		out("remotes now routed through git-remote-secure (remote.<name>.vcs = secure): %s\n", strings.Join(rep.Routed, ", "))
	}
	if len(rep.AlreadyRouted) > 0 {
		out("remotes already routed through git-remote-secure: %s\n", strings.Join(rep.AlreadyRouted, ", "))
	}
	if len(rep.OtherHelper) > 0 {
		out("remotes left to their own remote helper: %s\n", strings.Join(rep.OtherHelper, ", "))
	}
	switch rep.NewRemotes {
	case "set":
		out("pushes to remotes added later are routed too (git config %s \"\")\n", hooks.RouteAllKey)
	case "kept":
		out("pushes to remotes added later are routed too (git config %s \"\" was already set)\n", hooks.RouteAllKey)
	default:
		if !in.Global {
			out("pushes to remotes added later are NOT routed: git config %s has a value of yours; run git secure hooks install after adding one\n", hooks.RouteAllKey)
		}
	}
}

func onPath(name string) bool {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && !st.IsDir() {
			return true
		}
	}
	return false
}

func (a *app) serverCommand() *cli.Command {
	return &cli.Command{
		Name:  "server",
		Usage: "make a bare repository an enforcing server (pre-receive and reference-transaction hooks)",
		Description: `install adds a pre-receive hook that verifies every push against the policy and
the log, and refuses (with a message the pusher sees) any update of a protected
ref without a valid entry or its threshold; and a reference-transaction hook
that makes each push land whole: a push without --atomic, which git applies one
ref at a time, can never leave a protected branch without its entry or the log
ahead of its branch. Existing hooks keep running after git-secure's. Run install
again after upgrading git-secure: it replaces its own hooks. Works with any server that runs git's hooks: git over ssh,
git daemon, git http-backend, Gitea/GitLab server hooks.`,
		Subcommands: []*cli.Command{
			{
				Name: "install", Usage: "install the enforcing hook in bare repository PATH", ArgsUsage: "PATH",
				Action: func(c *cli.Context) error {
					dir, err := a.bareDir(c)
					if err != nil {
						return err
					}
					if err := hooks.InstallServer(dir, hooks.Binary()); err != nil {
						return err
					}
					a.out("%s now verifies every push with git-secure (hooks: pre-receive, reference-transaction, post-receive)\n", dir)
					return nil
				},
			},
			{
				Name: "uninstall", Usage: "remove the enforcing hook from PATH", ArgsUsage: "PATH",
				Action: func(c *cli.Context) error {
					dir, err := a.bareDir(c)
					if err != nil {
						return err
					}
					return hooks.UninstallServer(dir)
				},
			},
		},
	}
}

func (a *app) bareDir(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return "", usageErr("give the PATH of a bare repository")
	}
	p := c.Args().First()
	if !filepath.IsAbs(p) {
		p = filepath.Join(a.env.Dir, p)
	}
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return "", usageErr("%s does not exist: create the server's repository first (git init --bare %s), then run this again", p, p)
	}
	g, err := gitrepo.OpenWithEnv(p, os.Environ())
	if errors.Is(err, gitrepo.ErrNotRepository) {
		return "", usageErr("%s is not a git repository: create the server's repository there first (git init --bare %s), then run this again", p, p)
	}
	if err != nil {
		return "", openErr(p, err)
	}
	defer g.Close()
	if g.WorkTree() != "" {
		return "", usageErr("%s has a work tree; a server repository must be bare (git init --bare)", p)
	}
	return g.GitDir(), nil
}

// installHooksAfterInit is called by init unless --no-hooks; it returns
// the installer that ran, nil when it failed (the warning is printed).
func (a *app) installHooksAfterInit(r *porcelain.Repo) *hooks.Installer {
	in, err := a.installer(false)
	if err == nil {
		err = in.Install()
	}
	if err != nil {
		a.info("git-secure: warning: could not install hooks: %v (run git secure hooks install)\n", err)
		return nil
	}
	return in
}
