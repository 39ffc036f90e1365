package factory

import (
	"errors"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/report"
)

// OpenErr says in one sentence why the repository in dir cannot be
// opened, without the git command lines behind it: not a repository, a
// SHA-256 repository, or git's own message.
func OpenErr(dir string, err error) error {
	var ge *gitrepo.GitError
	switch {
	case errors.Is(err, gitrepo.ErrNotRepository):
		return report.Usagef("not in a git repository: %s is not inside one (cd into a clone, or git init first)", dir)
	case errors.Is(err, gitrepo.ErrObjectFormat):
		return report.Usagef("this repository uses SHA-256 object names: SHA-256 repositories are not supported yet (git-secure works with SHA-1 repositories)")
	case errors.As(err, &ge):
		return report.Usagef("cannot open the git repository in %s: %s", dir, gitMessage(ge.Stderr))
	}
	return report.Usagef("cannot open the git repository in %s: %v", dir, err)
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
