// Package clonecmd is "git secure clone": git clone through
// git-remote-secure with the root of trust pinned before the first fetch,
// so that nothing unverified is ever checked out.
package clonecmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/cli/hookscmd"
	"github.com/git-secure/git-secure/internal/freshness"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// NewCmdClone is "git secure clone URL [DIR]".
func NewCmdClone(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "clone",
		Usage:     "clone a repository with its root of trust pinned before the first fetch, verified before anything is checked out",
		ArgsUsage: "URL [DIR]",
		Description: `Runs git clone of URL into DIR (default: the name git would choose) through
git-remote-secure, with the root key pin written to the new clone's
configuration (secure.rootKeys, secure.rootThreshold) before anything is
fetched. The helper fetches into a private namespace and verifies the log,
the policy and every branch and tag before git sees a single ref, so a wrong
log is never accepted, not even once: git clone then fails and removes DIR,
and nothing unverified is left checked out. The new clone gets git-secure's
hooks, so plain git fetch, pull and push go on verifying and recording.

What the pin accepts: a log in which some root version is signed by the
pinned keys themselves (valid signatures by --root-threshold of them, default
all, and never fewer than that root's own threshold), and every later root
version signed as TUF requires (by the keys of the root before it and by its
own keys, each to their threshold). So pinning the project's current root
keys accepts its genuine log, rotations included, and refuses a log built
with other keys, or with an old key alone, or whose root lists a pinned key
that never signed it.

Pin the keys the project publishes (its README, website, release
announcement), never keys read from the log you are checking: a substituted
log lists its own. (A project finds its current root keys on the root line
of git secure policy list.) A pin of keys the project has since rotated away from
still verifies (the rotation was signed by them) but is reported as stale,
with the command that pins the current keys.

Without --root-key the first policy is trusted on first use, and the fetch
says so in one line, with the command that pins what it trusted. A remote
that serves no git-secure log is refused (nothing was verified), and what
the clone made is removed as git removes a failed clone: DIR, or what an
empty DIR that was there before holds.

Without --branch the remote's HEAD is checked out, a branch whoever runs the
server chooses. When no rule protects it (verification accepts it at any
value: anyone who can push may have written it), or the remote does not have
it (a server made with git init --bare without -b keeps HEAD on master), a
branch the policy protects is checked out instead (main, else master, else
the first), and the clone says so, naming the protected branches, how to get
the other one, and the git symbolic-ref the server runs to fix it. When the
remote has no protected branch, the remote's HEAD stays checked out (with a
warning), or nothing is when it does not have it.

Examples:
  git secure clone https://example.org/project.git --root-key SHA256:4Rk...
  git secure clone ssh://server/srv/git/p.git p --root-key SHA256:a... --root-key SHA256:b... --root-threshold 2

Exit 0 cloned and verified, 1 refused (nothing left checked out), 2 usage or
environment error (bad URL, no network, git-remote-secure not on PATH).`,
		Flags: []cli.Flag{cmdutil.RootKeyFlag("none: the first policy is trusted on first use"), cmdutil.RootThresholdFlag("all of them"),
			&cli.BoolFlag{Name: "require-freshness", Usage: "refuse, now and in every later fetch and verify, a state whose policy sets no freshness (git config secure.requireFreshness): for a project known to set it, so that a snapshot from before it did is not taken for the current state"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "as git clone -q: no progress, and no line saying what was cloned"},
			&cli.StringFlag{Name: "branch", Aliases: []string{"b"}, Usage: "as git clone -b: check out `BRANCH` instead of the remote's HEAD"}},
		Action: func(c *cli.Context) error {
			return runClone(c.Context, &Options{F: f, Args: c.Args().Slice(), Pin: cmdutil.PinOf(c), RequireFreshness: c.Bool("require-freshness"),
				Quiet: c.Bool("quiet"), Branch: c.String("branch")})
		},
	}
}

// Options are the arguments and flags of clone.
type Options struct {
	F                *factory.Factory
	Args             []string // URL [DIR]
	Pin              cmdutil.Pin
	RequireFreshness bool
	Quiet            bool   // git clone -q
	Branch           string // git clone -b
}

func runClone(_ context.Context, opts *Options) error {
	if len(opts.Args) < 1 || len(opts.Args) > 2 {
		return report.Usagef("clone takes URL and an optional DIR")
	}
	url, dir := opts.Args[0], ""
	if len(opts.Args) == 2 {
		dir = opts.Args[1]
	}
	if dir == "" {
		if dir = cloneDir(url); dir == "" {
			return report.Usagef("cannot tell a directory name from %q: give DIR", url)
		}
	}
	keys, threshold := opts.Pin.Keys, opts.Pin.Threshold
	if err := verify.CheckPin(keys, threshold); err != nil {
		return report.Usagef("%v", err)
	}
	if strings.HasPrefix(opts.Branch, "-") {
		return report.Usagef("bad --branch %q", opts.Branch)
	}
	return clone(opts, url, dir, keys, threshold)
}

// clone runs git clone through the helper with the pin in the new clone's
// configuration, then installs the hooks there.
func clone(opts *Options, url, dir string, keys []string, threshold int) error {
	f := opts.F
	dest := dir
	if !filepath.IsAbs(dest) {
		dest = filepath.Join(f.Dir, dest)
	}
	// "git -c" (not written to the clone) makes the helper refuse what does
	// not verify even if the user's configuration says verifyOnFetch=warn:
	// a clone that succeeds is a clone that verified.
	args := []string{"-c", "secure.verifyOnFetch=fail", "clone", "-c", "remote.origin.vcs=secure"}
	if len(keys) > 0 {
		args = append(args, "-c", "secure.rootKeys="+strings.Join(keys, " "))
	}
	if threshold != 0 {
		args = append(args, "-c", "secure.rootThreshold="+strconv.Itoa(threshold))
	}
	if opts.RequireFreshness {
		args = append(args, "-c", freshness.RequireConfig+"=true")
	}
	if opts.Quiet {
		args = append(args, "--quiet")
	}
	if opts.Branch != "" {
		args = append(args, "--branch", opts.Branch)
	}
	args = append(args, "--", url, dest)
	// What git clone makes of dest, removed as git's own failed clone
	// removes it when the clone holds no log: dest itself when it did not
	// exist, else (an empty directory, the only kind git clones into) its
	// contents only.
	_, statErr := os.Stat(dest)
	existed := statErr == nil
	if err := gitrepo.RunGlobalTee(context.Background(), os.Environ(), f.Dir, f.Stderr, args...); err != nil {
		var ge *gitrepo.GitError
		refused := errors.As(err, &ge) && strings.Contains(ge.Stderr, "git-secure: error:")
		left := "git removed " + dir + ": nothing unverified is checked out"
		if _, serr := os.Stat(filepath.Join(dest, ".git")); serr == nil {
			left = dir + " is left behind UNVERIFIED: delete it"
		}
		if refused {
			// The helper says why above: what the remote serves does not
			// verify, or it could not be fetched (a server that hung up).
			return &report.Error{Code: report.ExitFailed, Msg: fmt.Sprintf("clone of %s failed: git-secure's error above says why; %s", url, left), Err: err}
		}
		return fmt.Errorf("clone of %s failed (see git's message above; git-remote-secure must be on PATH: make install puts it there); %s", url, left)
	}
	g, err := gitrepo.Open(dest)
	if err != nil {
		return fmt.Errorf("open the new clone %s: %w", dir, err)
	}
	if err := requireLog(g, url, dir); err != nil {
		g.Close()
		return removeClone(err, dest, dir, existed)
	}
	defer g.Close()
	in, err := hookscmd.RepoInstaller(g)
	if err == nil {
		err = in.Install()
	}
	if err != nil {
		f.Info("git-secure: warning: could not install hooks in %s: %v (cd %s && git secure hooks install)\n", dir, err, dir)
	}
	if opts.Branch == "" {
		warnUnprotectedHead(f, g)
	}
	switch {
	case opts.Quiet:
	case len(keys) > 0:
		f.Out("cloned %s into %s, verified under the pinned root keys (%s) before checkout\n", url, dir, strings.Join(keys, " "))
	default:
		f.Out("cloned %s into %s, verified under its first policy, trusted on first use\n", url, dir)
	}
	return nil
}

// requireLog refuses a clone that holds no git-secure log: the helper
// passes through, unpinned, a remote that serves none (a repository not
// set up yet), so nothing was verified, whatever the remote's history
// was (a server stripped of refs/secure/* serves none either).
func requireLog(g *gitrepo.Repo, url, dir string) error {
	_, ok, err := g.ResolveRef(rsl.Ref)
	if err != nil {
		return fmt.Errorf("read %s in the new clone %s: %w", rsl.Ref, dir, err)
	}
	if ok {
		return nil
	}
	return &report.Error{Code: report.ExitFailed, Msg: fmt.Sprintf("clone of %s: the remote serves no git-secure log (%s): nothing was verified (a repository that does not use git-secure is cloned with git clone)", url, rsl.Ref)}
}

// removeClone removes what git clone made at dest (dir as the user gave
// it) for a clone refused after git finished (requireLog): dest itself
// when it did not exist before (existed false), else only what it holds
// now, as git removes a failed clone. err's message then ends saying what
// was removed, or what is left behind UNVERIFIED when that failed.
func removeClone(err error, dest, dir string, existed bool) error {
	var rerr error
	if existed {
		entries, lerr := os.ReadDir(dest)
		rerr = lerr
		for _, en := range entries {
			if err := os.RemoveAll(filepath.Join(dest, en.Name())); err != nil && rerr == nil {
				rerr = err
			}
		}
	} else {
		rerr = os.RemoveAll(dest)
	}
	what := "removed " + dir
	if existed {
		what = "emptied " + dir + " again"
	}
	tail := "; " + what + ": nothing unverified is left"
	if rerr != nil {
		tail = fmt.Sprintf("; %s is left behind UNVERIFIED (%v): delete it", dir, rerr)
	}
	if e, ok := report.As(err); ok {
		e.Msg += tail
		return e
	}
	return fmt.Errorf("%w%s", err, tail)
}

// cloneDir is the directory git clone would make for url: its last path
// component without a trailing "/", "/.git" or ".git".
func cloneDir(url string) string {
	s := strings.TrimRight(url, "/")
	s = strings.TrimSuffix(s, "/.git")
	s = strings.TrimRight(s, "/")
	if i := strings.LastIndexAny(s, "/:"); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimSuffix(s, ".git")
	if s == "" || s == "." || s == ".." {
		return ""
	}
	return s
}
