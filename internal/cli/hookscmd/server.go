package hookscmd

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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
	noteUnbornHead(opts.F, dir)
	return nil
}

// noteUnbornHead says, when the server's HEAD names a branch it does not
// have (git init --bare without -b keeps HEAD on master), that whoever
// pushes that branch first, with no rule covering it, chooses what clones
// check out, and how to point HEAD at the project's protected branch.
func noteUnbornHead(f *factory.Factory, dir string) {
	g, err := gitrepo.OpenWithEnv(dir, os.Environ())
	if err != nil {
		return
	}
	defer g.Close()
	head, err := g.SymbolicRef("HEAD")
	if err != nil || !strings.HasPrefix(head, "refs/heads/") {
		return
	}
	if _, ok, err := g.ResolveRef(head); err != nil || ok {
		return
	}
	f.Info("git-secure: note: HEAD names %s, which this repository does not have yet: plain git clones check out the branch HEAD names, so once the project's protected branch is pushed, point HEAD at it (unless it is %s): git -C %s symbolic-ref HEAD refs/heads/main\n", head, head, dir)
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
