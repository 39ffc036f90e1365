package gitrepo

import (
	"os"
	"path/filepath"

	"github.com/git-secure/git-secure/internal/gitrepo/fastpath"
)

// discover finds, without starting git, the repository whose work tree
// contains dir, in the one layout where the answer is certain: walking up
// from dir (symbolic links resolved, as git's working directory is), the
// first directory holding a .git directory of the plain layout
// (fastpath.PlainLayout: its own objects, no core.worktree, not bare),
// both owned by this user, on dir's file system. git rev-parse would find
// the same repository there (it looks for .git before anything else).
// And dir itself, when it is a bare repository of the plain layout
// owned by this user (fastpath.BareLayout): git rev-parse takes it as the
// git directory, with no work tree. Anything else returns ok false and
// Open asks git: a .git file (linked work trees, submodules), any other
// directory that is itself a git directory (below a bare repository's
// top, the inside of .git, core.bare not true), another owner (git's
// safe.directory rules), safe.bareRepository set, a file system boundary,
// no repository at all (git's error), the fast path turned off. Every git-secure command
// opens its repository first: rev-parse was one process on each.
func discover(dir string, env []string) (gitDir, workTree string, ok bool) {
	if fastpath.Off(env) {
		return "", "", false
	}
	if _, set := fastpath.LookupEnv(env, "GIT_DISCOVERY_ACROSS_FILESYSTEM"); set {
		return "", "", false
	}
	d, err := filepath.EvalSymlinks(dir)
	if err != nil || !filepath.IsAbs(d) {
		return "", "", false
	}
	st, err := os.Stat(d)
	if err != nil || !st.IsDir() {
		return "", "", false
	}
	// A bare repository entered directly (the usual place to work in
	// one, and where servers run): git looks for d/.git first, then takes
	// d itself as the git directory.
	if fastpath.BareLayout(d, env) && ownedByMe(st) {
		return d, "", true
	}
	for {
		if fastpath.LooksLikeGitDir(d) {
			return "", "", false
		}
		gd := filepath.Join(d, ".git")
		if gst, err := os.Lstat(gd); err == nil {
			if !gst.IsDir() || !fastpath.LooksLikeGitDir(gd) || !ownedByMe(st) || !ownedByMe(gst) {
				return "", "", false
			}
			if plain, err := fastpath.PlainLayout(gd, true, env); err != nil || !plain {
				return "", "", false
			}
			return gd, d, true
		} else if !os.IsNotExist(err) {
			return "", "", false
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", false
		}
		pst, err := os.Stat(parent)
		if err != nil || !sameDevice(st, pst) {
			return "", "", false
		}
		d, st = parent, pst
	}
}
