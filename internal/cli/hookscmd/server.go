package hookscmd

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/hooks"
	"github.com/git-secure/git-secure/internal/report"
)

// ServerOptions name the bare repository of server install and uninstall.
type ServerOptions struct {
	F    *factory.Factory
	Args []string // PATH
}

// NewCmdServer is "git secure server install|uninstall PATH".
func NewCmdServer(f *factory.Factory) *cli.Command {
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
					return runServerInstall(c.Context, &ServerOptions{F: f, Args: c.Args().Slice()})
				},
			},
			{
				Name: "uninstall", Usage: "remove the enforcing hook from PATH", ArgsUsage: "PATH",
				Action: func(c *cli.Context) error {
					return runServerUninstall(c.Context, &ServerOptions{F: f, Args: c.Args().Slice()})
				},
			},
		},
	}
}

func runServerInstall(_ context.Context, opts *ServerOptions) error {
	dir, err := bareDir(opts)
	if err != nil {
		return err
	}
	if err := hooks.InstallServer(dir, hooks.Binary()); err != nil {
		return err
	}
	opts.F.Out("%s now verifies every push with git-secure (hooks: pre-receive, reference-transaction, post-receive)\n", dir)
	return nil
}

func runServerUninstall(_ context.Context, opts *ServerOptions) error {
	dir, err := bareDir(opts)
	if err != nil {
		return err
	}
	return hooks.UninstallServer(dir)
}

// bareDir is the git directory of the bare repository opts name.
func bareDir(opts *ServerOptions) (string, error) {
	if len(opts.Args) != 1 {
		return "", report.Usagef("give the PATH of a bare repository")
	}
	p := opts.Args[0]
	if !filepath.IsAbs(p) {
		p = filepath.Join(opts.F.Dir, p)
	}
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return "", report.Usagef("%s does not exist: create the server's repository first (git init --bare %s), then run this again", p, p)
	}
	g, err := gitrepo.OpenWithEnv(p, os.Environ())
	if errors.Is(err, gitrepo.ErrNotRepository) {
		return "", report.Usagef("%s is not a git repository: create the server's repository there first (git init --bare %s), then run this again", p, p)
	}
	if err != nil {
		return "", factory.OpenErr(p, err)
	}
	defer g.Close()
	if g.WorkTree() != "" {
		return "", report.Usagef("%s has a work tree; a server repository must be bare (git init --bare)", p)
	}
	return g.GitDir(), nil
}
