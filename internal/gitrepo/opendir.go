package gitrepo

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/git-secure/git-secure/internal/gitrepo/fastpath"
)

// ErrNeedProbe is returned by OpenGitDir when the layout needs git to
// interpret it (a linked work tree, an object format or work tree set in
// the configuration); callers then use Open.
var ErrNeedProbe = errors.New("gitrepo: repository layout needs git rev-parse")

// OpenGitDir opens the git directory gitDir without starting git. It is
// for processes git itself started with GIT_DIR set (hooks, remote
// helpers), where git has already found the repository, and saves the
// rev-parse that Open needs (a few milliseconds on every push). workTree
// is the work tree or "" (bare repositories, and callers that need none).
//
// It only handles the plain layout (fastpath.PlainLayout): a git directory
// with its own objects, SHA-1 objects and no core.worktree. Anything else,
// and every repository when EnvNoFastPath is set, returns ErrNeedProbe.
func OpenGitDir(gitDir, workTree string, env []string) (*Repo, error) {
	if !filepath.IsAbs(gitDir) || (workTree != "" && !filepath.IsAbs(workTree)) {
		return nil, fmt.Errorf("gitrepo: open %s: path is not absolute", gitDir)
	}
	gitDir = filepath.Clean(gitDir)
	plain, err := fastpath.PlainLayout(gitDir, workTree != "", env)
	if err != nil {
		return nil, wrapf(err, "open %s", gitDir)
	}
	if !plain {
		return nil, ErrNeedProbe
	}
	return assemble(gitDir, workTree, gitDir, filterEnv(env), true), nil
}

// maxAncestorWalk bounds the in-process ancestry walk of IsAncestor before
// it asks git, which is faster over long distances.
const maxAncestorWalk = 64

// IsAncestor reports whether commit a is an ancestor of (or equal to)
// commit b. Metadata refs grow by a few commits per push, so it first
// walks back from b through the long-lived cat-file process (no new
// process) and asks git merge-base only when that walk is inconclusive.
func (r *Repo) IsAncestor(a, b Hash) (bool, error) {
	if a == b {
		return true, nil
	}
	if r.fast == nil {
		return r.isAncestorGit(a, b)
	}
	seen := map[Hash]bool{b: true}
	queue := []Hash{b}
	for steps := 0; len(queue) > 0 && steps < maxAncestorWalk; steps++ {
		c, err := r.ReadCommit(queue[0])
		if err != nil {
			return r.isAncestorGit(a, b) // let git decide, and say what is wrong
		}
		queue = queue[1:]
		for _, p := range c.Parents {
			if p == a {
				return true, nil
			}
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	if len(queue) == 0 {
		// All of b's history was walked without meeting a.
		if ok, err := r.HasObject(a); err == nil && ok {
			return false, nil
		}
	}
	return r.isAncestorGit(a, b)
}

func (r *Repo) isAncestorGit(a, b Hash) (bool, error) {
	_, err := r.run(nil, "merge-base", "--is-ancestor", "--end-of-options", a.String(), b.String())
	if err != nil {
		if exitCode(err) == 1 {
			return false, nil
		}
		return false, wrapf(err, "is-ancestor %s %s", a, b)
	}
	return true, nil
}
