package gitrepo

import (
	"context"
	"fmt"
	"path/filepath"
)

// InitBare creates an empty bare repository at dir (an absolute path) and
// opens it; an existing repository there is opened as it is. env is the
// environment for git, without the variables that would point git at
// another repository (GIT_DIR, ...).
func InitBare(dir string, env []string) (*Repo, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("gitrepo: init %s: not an absolute path", dir)
	}
	base := filterEnv(env)
	if _, err := runGit(context.Background(), base, filepath.Dir(dir), nil, "init", "--bare", "--quiet", "--", dir); err != nil {
		return nil, wrapf(err, "init %s", dir)
	}
	return OpenWithEnv(dir, base)
}
