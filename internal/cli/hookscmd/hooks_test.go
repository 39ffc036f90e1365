package hookscmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/clitest"
)

// TestRunServerInstall: server install puts the hooks in a bare
// repository and refuses one with a work tree; uninstall removes them.
func TestRunServerInstall(t *testing.T) {
	r := clitest.New(t)
	ctx := context.Background()
	bare := filepath.Join(r.S.Home, "server.git")
	r.S.Git(r.S.Home, "init", "-q", "--bare", bare)
	if err := runServerInstall(ctx, &ServerOptions{F: r.F(), Args: []string{bare}}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "server install", r.Stdout.String(), "now verifies every push with git-secure")
	if _, err := os.Stat(filepath.Join(bare, "hooks", "pre-receive")); err != nil {
		t.Errorf("no pre-receive hook: %v", err)
	}
	err := runServerInstall(ctx, &ServerOptions{F: r.F(), Args: []string{r.Dir}})
	if err == nil || !strings.HasSuffix(err.Error(), "has a work tree; a server repository must be bare (git init --bare)") {
		t.Errorf("server install in a work tree: %v", err)
	}
	if err := runServerUninstall(ctx, &ServerOptions{F: r.F(), Args: []string{bare}}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(bare, "hooks", "pre-receive")); err == nil && strings.Contains(string(data), "git-secure") {
		t.Errorf("uninstall left git-secure's pre-receive:\n%s", data)
	}
}

// TestRunHookRejects: the pre-receive hook refuses a push of a branch the
// log does not record, exit 1, with the rejection on stderr.
func TestRunHookRejects(t *testing.T) {
	r := clitest.New(t)
	r.Init()
	r.S.Commit(r.Dir, "b.txt", "b", "unrecorded")
	old := r.Git("rev-parse", "main~1")
	head := r.Git("rev-parse", "main")
	r.Vars["GIT_DIR"] = ".git"
	f := r.F()
	f.Stdin = strings.NewReader(old + " " + head + " refs/heads/main\n")
	err := runHook(context.Background(), &HookOptions{F: f, Name: "pre-receive"})
	if err == nil {
		t.Fatalf("pre-receive accepted an unrecorded move:\n%s", r.Stderr)
	}
	clitest.Contains(t, "pre-receive", r.Stderr.String(), "git-secure: rejected: ", "refs/heads/main")
}
