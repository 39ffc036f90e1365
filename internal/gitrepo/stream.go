package gitrepo

import (
	"context"
	"io"
)

// RunTee runs git like Run, and also copies its stderr to tee as it comes
// (for porcelain commands whose messages, such as a server's rejection, the
// user must see).
func (r *Repo) RunTee(ctx context.Context, tee io.Writer, args ...string) ([]byte, error) {
	if r.isClosed() {
		return nil, errClosed
	}
	return runGitTee(ctx, r.env, r.dir, nil, tee, args...)
}

// RunStdinTee is RunTee with stdin given to git.
func (r *Repo) RunStdinTee(ctx context.Context, stdin []byte, tee io.Writer, args ...string) ([]byte, error) {
	if r.isClosed() {
		return nil, errClosed
	}
	if stdin == nil {
		stdin = []byte{}
	}
	return runGitTee(ctx, r.env, r.dir, stdin, tee, args...)
}

// RunGlobal runs git outside any repository (for "git config --global"),
// with env as its environment.
func RunGlobal(ctx context.Context, env []string, args ...string) ([]byte, error) {
	return runGit(ctx, filterEnv(env), "", nil, args...)
}

// RunGlobalTee runs git in dir outside any opened repository (git clone),
// with env as its environment, and copies its stderr to tee as it comes so
// that the user sees git's and the remote helper's messages.
func RunGlobalTee(ctx context.Context, env []string, dir string, tee io.Writer, args ...string) error {
	_, err := runGitTee(ctx, filterEnv(env), dir, nil, tee, args...)
	return err
}
