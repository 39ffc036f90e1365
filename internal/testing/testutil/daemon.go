package testutil

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// StartGitDaemon serves root with "git daemon" on 127.0.0.1 only, pushes
// enabled, in its own process group stopped when the test ends, and
// returns its git:// base URL. Logs go to logDir. A port taken between
// FreePort and the start is retried.
func StartGitDaemon(t testing.TB, env []string, root, logDir string, extra ...string) string {
	t.Helper()
	var lastErr string
	for attempt := 0; attempt < 3; attempt++ {
		port := FreePort(t)
		args := append([]string{"daemon", "--reuseaddr", "--base-path=" + root, "--export-all",
			"--enable=receive-pack", "--informative-errors"}, extra...)
		args = append(args, "--listen=127.0.0.1", "--port="+strconv.Itoa(port), root)
		// git daemon runs git-daemon, which forks one more per connection:
		// start them in their own process group, and stop that group.
		cmd := exec.Command("git", args...)
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		logFile, err := os.Create(filepath.Join(logDir, fmt.Sprintf("daemon-%d-%d.log", port, attempt)))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = logFile, logFile
		if err := cmd.Start(); err != nil {
			logFile.Close()
			t.Fatalf("start git daemon: %v", err)
		}
		logFile.Close()
		pgid := cmd.Process.Pid
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		// SIGTERM to git, which passes it on to git-daemon and reaps it;
		// then SIGKILL to whatever of the group is left.
		stop := func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
			}
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		up := false
	wait:
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			select {
			case <-exited:
				break wait
			default:
			}
			if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
				c.Close()
				up = true
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if up {
			t.Cleanup(func() {
				stop()
				select {
				case <-exited:
				case <-time.After(10 * time.Second):
					t.Errorf("git daemon (pid %d) did not exit", pgid)
				}
			})
			return "git://" + addr
		}
		stop()
		<-exited
		b, _ := os.ReadFile(logFile.Name())
		lastErr = string(b)
	}
	t.Fatalf("git daemon did not start: %s", lastErr)
	return ""
}
