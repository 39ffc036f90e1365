package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
)

// RunTee runs git like Run, and also copies its stderr to tee as it comes
// (for porcelain commands whose messages, such as a server's rejection, the
// user must see).
func (r *Repo) RunTee(ctx context.Context, tee io.Writer, args ...string) ([]byte, error) {
	if r.isClosed() {
		return nil, errClosed
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = r.dir
	cmd.Env = r.env
	var stdout bytes.Buffer
	stderr := &limitedBuffer{max: maxStderr}
	cmd.Stdout = &stdout
	cmd.Stderr = io.MultiWriter(stderr, tee)
	if err := cmd.Run(); err != nil {
		ge := &GitError{Args: append([]string(nil), args...), ExitCode: -1, Stderr: stderr.String()}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ge.ExitCode = ee.ExitCode()
		}
		return stdout.Bytes(), ge
	}
	return stdout.Bytes(), nil
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
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = filterEnv(env)
	stderr := &limitedBuffer{max: maxStderr}
	cmd.Stderr = io.MultiWriter(stderr, tee)
	if err := cmd.Run(); err != nil {
		ge := &GitError{Args: append([]string(nil), args...), ExitCode: -1, Stderr: stderr.String()}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ge.ExitCode = ee.ExitCode()
		} else {
			ge.Stderr = err.Error()
		}
		return ge
	}
	return nil
}
