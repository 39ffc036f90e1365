package hookscmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/hooks"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
)

// ServerOptions name the bare repository of server install and uninstall.
type ServerOptions struct {
	F    *factory.Factory
	Args []string // PATH
	// Head is install's --head: the branch HEAD is to name ("" leaves
	// HEAD as it is).
	Head string
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
git daemon, git http-backend, Gitea/GitLab server hooks.

HEAD chooses the branch every plain clone checks out. git init --bare without
-b leaves it on master: if the project pushes main, HEAD names a branch the
server does not have, and whoever first pushes master (no rule need cover it)
chooses what clones check out. install --head BRANCH points HEAD at BRANCH
(main or refs/heads/main; nothing outside refs/heads/), changing it only from
the value install read, so a HEAD set meanwhile is never overwritten. Without
--head, install says when HEAD names a branch the server does not have, and,
when the policy protects exactly one branch, the command that points HEAD at it.`,
		Subcommands: []*cli.Command{
			{
				Name: "install", Usage: "install the enforcing hook in bare repository PATH", ArgsUsage: "[--head BRANCH] PATH",
				Flags: []cli.Flag{&cli.StringFlag{Name: "head", Usage: "also point HEAD, the branch clones check out, at `BRANCH` (a branch name or refs/heads/NAME)"}},
				Action: func(c *cli.Context) error {
					return runServerInstall(c.Context, &ServerOptions{F: f, Args: c.Args().Slice(), Head: c.String("head")})
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
	head := ""
	if opts.Head != "" {
		if head, err = headBranch(opts.Head); err != nil {
			return err
		}
	}
	if err := hooks.InstallServer(dir, hooks.Binary()); err != nil {
		return err
	}
	opts.F.Out("%s now verifies every push with git-secure (hooks: pre-receive, reference-transaction, post-receive)\n", dir)
	if head != "" {
		return setHead(opts.F, dir, head)
	}
	noteUnbornHead(opts.F, dir)
	return nil
}

// headBranch is the full branch name --head names: NAME or
// refs/heads/NAME, a valid ref name; any other ref (a tag, refs/secure/*,
// HEAD itself) is refused, since git clones check out only branches.
func headBranch(arg string) (string, error) {
	ref := arg
	if !strings.HasPrefix(ref, "refs/") {
		ref = "refs/heads/" + ref
	}
	if !strings.HasPrefix(ref, "refs/heads/") || arg == "HEAD" || strings.HasPrefix(arg, "heads/") {
		return "", report.Usagef("--head %s: HEAD must name a branch (NAME or refs/heads/NAME), the ref a clone checks out", arg)
	}
	if err := gitrepo.ValidRefName(ref); err != nil {
		return "", report.Usagef("--head %s: %s is not a valid branch name: %v", arg, ref, err)
	}
	if strings.HasPrefix(strings.TrimPrefix(ref, "refs/heads/"), "-") {
		return "", report.Usagef("--head %s: a branch name must not start with '-' (git branch refuses it)", arg)
	}
	return ref, nil
}

// setHead points HEAD of the bare repository dir at branch, from the
// symbolic ref it read (compare-and-swap: gitrepo.SetHead), and warns when
// the policy the server holds protects no such branch: clones would
// check out a branch anyone who can push may have written.
func setHead(f *factory.Factory, dir, branch string) error {
	g, err := gitrepo.OpenWithEnv(dir, os.Environ())
	if err != nil {
		return factory.OpenErr(dir, err)
	}
	defer g.Close()
	cur, err := g.SymbolicRef("HEAD")
	if err != nil {
		return &report.Error{Code: report.ExitFailed, Err: err,
			Msg:  fmt.Sprintf("HEAD of %s is not a symbolic ref (%v)", dir, err),
			Hint: fmt.Sprintf("point it at %s with: git -C %s symbolic-ref HEAD %s", branch, dir, branch)}
	}
	if cur != branch {
		if err := g.SetHead(branch, cur); err != nil {
			return &report.Error{Code: report.ExitFailed, Err: err,
				Msg:  fmt.Sprintf("could not point HEAD of %s at %s (it named %s): %v", dir, branch, cur, err),
				Hint: "run git secure server install --head again once no other process changes HEAD; the hooks are installed"}
		}
		f.Out("HEAD of %s now names %s (it named %s): clones check out %s\n", dir, branch, cur, strings.TrimPrefix(branch, "refs/heads/"))
	} else {
		f.Out("HEAD of %s already names %s\n", dir, branch)
	}
	if pol := serverPolicy(f, g); pol != nil && !pol.Protected(branch) {
		f.Info("git-secure: warning: no rule of the policy protects %s: every clone now checks out a branch anyone who can push may have written; protect it (git secure policy add-rule NAME --ref %s ...) or choose a protected branch with --head\n", branch, branch)
	}
	return nil
}

// serverPolicy is the policy the server holds, nil when it has none or it
// does not load (the notes that use it are advice; the hooks judge).
func serverPolicy(f *factory.Factory, g *gitrepo.Repo) *policy.Policy {
	tip, ok, err := g.ResolveRef(policy.Ref)
	if err != nil || !ok {
		return nil
	}
	r := &porcelain.Repo{Git: g, Now: f.Now, Home: f.Getenv("HOME")}
	pol, err := r.PolicyAt(tip)
	if err != nil {
		return nil
	}
	return pol
}

// protectedBranches are the branches pol protects that the server has or
// that a rule names literally (refs/heads/main: the branch the project
// will push), sorted.
func protectedBranches(g *gitrepo.Repo, pol *policy.Policy) []string {
	set := map[string]bool{}
	if refs, err := g.ListRefs("refs/heads/"); err == nil {
		for _, ref := range refs {
			if pol.Protected(ref.Name) {
				set[ref.Name] = true
			}
		}
	}
	for _, rule := range pol.Rules() {
		for _, p := range rule.Refs {
			if strings.HasPrefix(p, "refs/heads/") && !strings.ContainsAny(p, "*?") && pol.Protected(p) {
				set[p] = true
			}
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// noteUnbornHead says, when the server's HEAD names a branch it does not
// have (git init --bare without -b keeps HEAD on master), that whoever
// pushes that branch first, with no rule covering it, chooses what clones
// check out, and the command that points HEAD at the project's protected
// branch: exact when the policy the server holds protects exactly one.
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
	f.Info("git-secure: note: HEAD names %s, which this repository does not have yet: plain git clones check out the branch HEAD names, and whoever first pushes %s, with no rule covering it, chooses what they check out\n", head, strings.TrimPrefix(head, "refs/heads/"))
	var names []string
	if pol := serverPolicy(f, g); pol != nil {
		names = protectedBranches(g, pol)
	}
	switch {
	case len(names) == 1 && names[0] == head:
		f.Info("git-secure: hint: the policy protects %s: HEAD is right once the project pushes it\n", head)
	case len(names) == 1:
		f.Info("git-secure: hint: the policy protects one branch, %s; point HEAD at it: git secure server install --head %s %s\n", names[0], strings.TrimPrefix(names[0], "refs/heads/"), dir)
	case len(names) > 1:
		f.Info("git-secure: hint: the policy protects %s; point HEAD at the one clones should check out: git secure server install --head BRANCH %s\n", strings.Join(names, ", "), dir)
	default:
		f.Info("git-secure: hint: point HEAD at the project's protected branch (for example main): git secure server install --head main %s\n", dir)
	}
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
