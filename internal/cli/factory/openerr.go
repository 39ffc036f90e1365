package cli

import (
	"errors"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/git-secure/git-secure/internal/display"
	"github.com/git-secure/git-secure/internal/gitrepo"
)

// openErr says in one sentence why the repository in dir cannot be
// opened, without the git command lines behind it: not a repository, a
// SHA-256 repository, or git's own message.
func openErr(dir string, err error) error {
	var ge *gitrepo.GitError
	switch {
	case errors.Is(err, gitrepo.ErrNotRepository):
		return usageErr("not in a git repository: %s is not inside one (cd into a clone, or git init first)", dir)
	case errors.Is(err, gitrepo.ErrObjectFormat):
		return usageErr("this repository uses SHA-256 object names: SHA-256 repositories are not supported yet (git-secure works with SHA-1 repositories)")
	case errors.As(err, &ge):
		return usageErr("cannot open the git repository in %s: %s", dir, gitMessage(ge.Stderr))
	}
	return usageErr("cannot open the git repository in %s: %v", dir, err)
}

// gitMessage is the last line of git's stderr (its "fatal:" line) without
// the "fatal: " in front.
func gitMessage(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	msg := strings.TrimSpace(lines[len(lines)-1])
	if msg == "" {
		return "git failed"
	}
	return strings.TrimPrefix(strings.TrimPrefix(msg, "fatal: "), "error: ")
}

// stderrTerminal tells whether stderr is a terminal: messages are then
// wrapped to display.Width columns (logs and scripts keep one line per
// message).
func (a *app) stderrTerminal() bool {
	f, ok := a.env.Stderr.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// say prints one message with prefix (wrapped on a terminal).
func (a *app) say(prefix, msg string) {
	if a.stderrTerminal() {
		display.Fprintw(a.env.Stderr, 0, prefix, "%s", msg)
		return
	}
	display.Fprintf(a.env.Stderr, prefix+"%s\n", msg)
}
