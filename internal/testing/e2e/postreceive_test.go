package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/hooks"
)

// TestServerPostReceiveStartsOnlyWithKey: a push to an enforcing server
// starts git-secure's post-receive only when the server has a timestamp
// key (secure.timestampKey) to sign a freshness statement with: the real
// pre-receive tells the post-receive script of the same receive-pack
// that there is none. Without one the hook that was there before still
// runs, with the push's lines. Real pushes over file:// into a bare
// repository whose hooks start git-secure through a script that notes
// each start.
func TestServerPostReceiveStartsOnlyWithKey(t *testing.T) {
	tmp := t.TempDir()
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+tmp, "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@x")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	srv := filepath.Join(tmp, "srv.git")
	git(tmp, "init", "-q", "--bare", srv)
	calls, chainedIn := filepath.Join(tmp, "calls"), filepath.Join(tmp, "chained")
	write := func(path, body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The hook that was there before git-secure's: kept, chained.
	write(filepath.Join(srv, "hooks", "post-receive"), "cat >>'"+chainedIn+"'\n")
	counted := filepath.Join(tmp, "git-secure")
	write(counted, "echo \"$*\" >>'"+calls+"'\nexec '"+filepath.Join(binDir, "git-secure")+"' \"$@\"\n")
	if err := hooks.InstallServer(srv, counted); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(tmp, "work")
	git(tmp, "init", "-q", "-b", "main", work)
	push := func(branch string) (started, chained string) {
		t.Helper()
		os.Remove(calls)
		os.Remove(chainedIn)
		git(work, "commit", "-q", "--allow-empty", "-m", branch)
		git(work, "push", "-q", "file://"+srv, "HEAD:refs/heads/"+branch)
		a, _ := os.ReadFile(calls)
		b, _ := os.ReadFile(chainedIn)
		return string(a), string(b)
	}
	started, chained := push("one")
	if strings.Contains(started, "post-receive") || !strings.Contains(started, "hook pre-receive") {
		t.Errorf("without a timestamp key: git-secure started as %q; want pre-receive only, no post-receive", started)
	}
	if want := strings.Repeat("0", 40) + " " + git(work, "rev-parse", "HEAD") + " refs/heads/one\n"; chained != want {
		t.Errorf("without a timestamp key the earlier post-receive got %q, want %q", chained, want)
	}
	git(srv, "config", "secure.timestampKey", filepath.Join(tmp, "key"))
	started, chained = push("two")
	if !strings.Contains(started, "hook post-receive") {
		t.Errorf("with a timestamp key: git-secure started as %q; want post-receive too", started)
	}
	if want := strings.Repeat("0", 40) + " " + git(work, "rev-parse", "HEAD") + " refs/heads/two\n"; chained != want {
		t.Errorf("with a timestamp key the earlier post-receive got %q, want %q", chained, want)
	}
	git(srv, "config", "--unset", "secure.timestampKey")
	if started, _ := push("three"); strings.Contains(started, "post-receive") {
		t.Errorf("with the key removed again: git-secure started as %q; want pre-receive only", started)
	}
}
