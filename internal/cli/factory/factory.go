// Package factory hands every command of git-secure's command line what it
// takes from its process: the IO streams (stdout for results, stderr for
// diagnostics, whether stderr is a terminal and the width messages wrap
// to), the clock and the environment, and the repository, opened once per
// process and shared by everything the command does. The start-up every
// command that writes needs (the repository set up for git-secure, the
// signing key, who is acting) is here too, in one wording.
//
// A Factory serves one command run; it is not safe for concurrent use.
package factory

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/term"

	"github.com/git-secure/git-secure/internal/display"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/trace"
)

// Env is everything the command line takes from its process.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Now            func() time.Time
	Dir            string
}

// Factory is what a command is built with.
type Factory struct {
	Env
	// Version is git-secure's version (build-time).
	Version string
	// Start is when the process started, for traces.
	Start time.Time

	repo *porcelain.Repo
}

// New returns the factory of one command run.
func New(env Env, version string) *Factory {
	return &Factory{Env: env, Version: version, Start: time.Now()}
}

// Close releases the repository, if one was opened.
func (f *Factory) Close() {
	if f.repo != nil {
		f.repo.Git.Close()
	}
}

// StderrTerminal tells whether stderr is a terminal: messages are then
// wrapped to WrapWidth columns (logs and scripts keep one line per
// message) and a long verification shows its progress.
func (f *Factory) StderrTerminal() bool {
	fd, ok := f.Stderr.(*os.File)
	return ok && term.IsTerminal(int(fd.Fd()))
}

// WrapWidth is the column count messages on stderr wrap to; 0 when they
// do not wrap.
func (f *Factory) WrapWidth() int {
	if f.StderrTerminal() {
		return display.Width
	}
	return 0
}

// Printer prints messages and verification problems on stderr.
func (f *Factory) Printer() report.Printer {
	return report.Printer{W: f.Stderr, Wrap: f.StderrTerminal(), HangLabel: true}
}

// Out prints human output on stdout and Info diagnostics on stderr: every
// string and error argument (which may come from the repository) is
// escaped for the terminal.
func (f *Factory) Out(format string, args ...any) { display.Fprintf(f.Stdout, format, args...) }

// Info: see Out.
func (f *Factory) Info(format string, args ...any) { display.Fprintf(f.Stderr, format, args...) }

// PrintJSON writes v as one indented JSON document on stdout.
func (f *Factory) PrintJSON(v any) error {
	enc := json.NewEncoder(f.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Tracer returns a phase tracer on stderr when GIT_SECURE_TRACE is set.
func (f *Factory) Tracer(name string) *trace.Tracer {
	if f.Getenv("GIT_SECURE_TRACE") == "" {
		return nil
	}
	return trace.New(f.Stderr, name, f.Start)
}

// Repo opens the repository in the working directory, once.
func (f *Factory) Repo() (*porcelain.Repo, error) {
	if f.repo != nil {
		return f.repo, nil
	}
	dir := f.Dir
	if d := f.Getenv("GIT_DIR"); d != "" {
		if !filepath.IsAbs(d) {
			d = filepath.Join(f.Dir, d)
		}
		// GIT_DIR=.git from the work tree's top: open the work tree itself
		// (one process instead of several). Hooks and the remote helper
		// go through RepoFromGit, which needs none.
		if filepath.Clean(d) != filepath.Join(f.Dir, ".git") {
			dir = d
		}
	}
	g, err := gitrepo.Open(dir)
	if err != nil {
		return nil, OpenErr(dir, err)
	}
	f.repo = f.porcelain(g)
	// Nearly every command reads the configuration: read it alongside what
	// the command does first.
	f.repo.Preload()
	return f.repo, nil
}

// RepoFromGit opens the repository a hook or the remote helper runs in.
// git starts them with GIT_DIR set, in the work tree (GIT_DIR=.git) or in
// the git directory of a bare repository (GIT_DIR=.): then the repository
// is known without asking git. Any other layout goes through Repo.
func (f *Factory) RepoFromGit() (*porcelain.Repo, error) {
	d := f.Getenv("GIT_DIR")
	if f.repo != nil || d == "" || f.Getenv("GIT_WORK_TREE") != "" || f.Getenv("GIT_COMMON_DIR") != "" {
		return f.Repo()
	}
	if !filepath.IsAbs(d) {
		d = filepath.Join(f.Dir, d)
	}
	d = filepath.Clean(d)
	workTree := ""
	switch {
	case d == filepath.Join(f.Dir, ".git"):
		workTree = filepath.Clean(f.Dir)
	case d == filepath.Clean(f.Dir):
	case filepath.IsAbs(f.Getenv("GIT_DIR")) && filepath.Base(d) == ".git":
		// git clone runs the helper from where it was started, GIT_DIR
		// naming the new repository's .git: its work tree is the
		// directory holding it, as rev-parse finds it from inside (Open,
		// three processes); OpenGitDir refuses a bare or moved work tree.
		workTree = filepath.Dir(d)
	default:
		return f.Repo()
	}
	g, err := gitrepo.OpenGitDir(d, workTree, os.Environ())
	if err != nil {
		return f.Repo()
	}
	f.repo = f.porcelain(g)
	return f.repo, nil
}

func (f *Factory) porcelain(g *gitrepo.Repo) *porcelain.Repo {
	return &porcelain.Repo{Git: g, Now: f.Now, AgentSocket: f.Getenv("SSH_AUTH_SOCK"), Home: f.Getenv("HOME"), Prompt: f.Stderr}
}
