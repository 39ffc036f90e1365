package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo/fastpath"
)

// InitBare creates an empty bare repository at dir (an absolute path) and
// opens it; an existing repository there is opened as it is. env is the
// environment for git, without the variables that would point git at
// another repository (GIT_DIR, ...).
//
// Processes that share such a repository (a push's remote helper and its
// pre-push hook both keep the organisation policy caches under
// .git/secure/org/) may open it at the same moment. An existing one is
// therefore opened without git init, which would rewrite its configuration
// under config.lock and fail the loser of the lock ("could not lock config
// file"); two processes creating it at once (git init failing with "File
// exists") try again, and open what the winner made.
func InitBare(dir string, env []string) (*Repo, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("gitrepo: init %s: not an absolute path", dir)
	}
	base := filterEnv(env)
	var err error
	for attempt := 1; ; attempt++ {
		if initialised(dir) {
			return OpenWithEnv(dir, base)
		}
		if _, err = runGit(context.Background(), base, filepath.Dir(dir), nil, "init", "--bare", "--quiet", "--", dir); err == nil {
			return OpenWithEnv(dir, base)
		}
		if attempt == 5 || !strings.Contains(err.Error(), "File exists") {
			return nil, wrapf(err, "init %s", dir)
		}
		time.Sleep(time.Duration(attempt) * 10 * time.Millisecond)
	}
}

// initialised reports whether git init has finished making dir a
// repository: its configuration (written last, by a rename) is there,
// with HEAD, objects and refs.
func initialised(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "config"))
	return err == nil && st.Mode().IsRegular() && fastpath.LooksLikeGitDir(dir)
}
