package hookscmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/hooks"
	"github.com/git-secure/git-secure/internal/report"
)

// InstallOptions are the flags of hooks install and hooks uninstall.
type InstallOptions struct {
	F      *factory.Factory
	Global bool
	Guard  bool // install only
}

// NewCmdHooks is "git secure hooks install|uninstall".
func NewCmdHooks(f *factory.Factory) *cli.Command {
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
					return runInstall(c.Context, &InstallOptions{F: f, Global: c.Bool("global"), Guard: c.Bool("guard-refs")})
				},
			},
			{
				Name:  "uninstall",
				Usage: "remove from this repository (or --global), restoring what was there",
				Flags: []cli.Flag{global},
				Action: func(c *cli.Context) error {
					return runUninstall(c.Context, &InstallOptions{F: f, Global: c.Bool("global")})
				},
			},
		},
	}
}

func runInstall(_ context.Context, opts *InstallOptions) error {
	f := opts.F
	in, err := Installer(f, opts.Global)
	if err != nil {
		return err
	}
	in.Guard = opts.Guard
	if err := in.Install(); err != nil {
		return err
	}
	ReportInstall(f, in)
	if hooks.Binary() == "" || !onPath("git-remote-secure") {
		f.Info("git-secure: warning: git-remote-secure is not on PATH; run make install (it installs both)\n")
	}
	return nil
}

func runUninstall(_ context.Context, opts *InstallOptions) error {
	in, err := Installer(opts.F, opts.Global)
	if err != nil {
		return err
	}
	if err := in.Uninstall(); err != nil {
		return err
	}
	opts.F.Out("git-secure hooks removed\n")
	return nil
}

// Installer is the hooks installer of the repository in the working
// directory, or with global of the user's git configuration.
func Installer(f *factory.Factory, global bool) (*hooks.Installer, error) {
	in := &hooks.Installer{Binary: hooks.Binary(), Global: global}
	if global {
		home := f.Getenv("HOME")
		if home == "" {
			return nil, report.Usagef("HOME is not set")
		}
		cfg := f.Getenv("XDG_CONFIG_HOME")
		if cfg == "" {
			cfg = filepath.Join(home, ".config")
		}
		in.HooksDir = filepath.Join(cfg, "git-secure", "hooks")
		in.ConfigGet = func(k string) (string, bool, error) { return globalConfig("--get", k) }
		in.ConfigSet = func(k, v string) error { _, _, err := globalConfig(k, v); return err }
		in.ConfigUnset = func(k string) error {
			_, _, err := globalConfig("--unset", k)
			return err
		}
		in.Remotes = []string{"origin"}
		return in, nil
	}
	r, err := f.Repo()
	if err != nil {
		return nil, err
	}
	return RepoInstaller(r.Git)
}

// RepoInstaller configures the hooks of repository g and its remotes.
func RepoInstaller(g *gitrepo.Repo) (*hooks.Installer, error) {
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

// InstallAfterInit installs the hooks after git secure init; it returns
// the installer that ran, nil when it failed (the warning is printed).
func InstallAfterInit(f *factory.Factory) *hooks.Installer {
	in, err := Installer(f, false)
	if err == nil {
		in.PushFirst = true
		err = in.Install()
	}
	if err != nil {
		f.Info("git-secure: warning: could not install hooks: %v (run git secure hooks install)\n", err)
		return nil
	}
	return in
}

// globalConfig runs git config --global; exit 1 (unset key) and 5 (unset
// of a missing key) are not errors.
func globalConfig(args ...string) (string, bool, error) {
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

// ReportInstall prints what in.Install did, and only that.
func ReportInstall(f *factory.Factory, in *hooks.Installer) {
	out := f.Out
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
	if len(rep.PushFirst) > 0 {
		out("fetches from %s stay plain git: no remote has this new log yet; your first git push to one sends it and routes its fetches through git-remote-secure too (an upstream you only fetch from stays plain git)\n", strings.Join(rep.PushFirst, ", "))
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
