// Package testutil builds real git repositories, SSH keys and ssh-agents in
// temporary directories for tests. It runs the real git and ssh-keygen
// binaries with an isolated environment (no user or system config, fixed
// identity) so tests are hermetic and repeatable.
package testutil

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Env returns the environment used for every git and ssh process a test
// starts: HOME points into dir, system and global config are ignored, and
// author and committer are fixed.
func Env(home string) []string {
	env := []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME=Test Author",
		"GIT_AUTHOR_EMAIL=author@example.com",
		"GIT_COMMITTER_NAME=Test Committer",
		"GIT_COMMITTER_EMAIL=committer@example.com",
		"GIT_TERMINAL_PROMPT=0",
		"LANG=C",
		"TZ=UTC",
	}
	// TMPDIR, and the switch that sends every repository access through
	// git (CI runs the suite both ways; see internal/gitrepo/doc.go).
	for _, k := range []string{"TMPDIR", "GIT_SECURE_NO_FASTPATH", "GIT_SECURE_NO_INPROCESS"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Sandbox is an isolated HOME with helpers to run git and make keys.
type Sandbox struct {
	T    testing.TB
	Home string
	// Extra environment added to every command (for example SSH_AUTH_SOCK).
	Extra []string
}

// NewSandbox makes a fresh HOME in a temporary directory.
func NewSandbox(t testing.TB) *Sandbox {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return &Sandbox{T: t, Home: home}
}

// Environ is the full environment for a command in this sandbox.
func (s *Sandbox) Environ() []string { return append(Env(s.Home), s.Extra...) }

// Run runs name with args in dir and fails the test on error. It returns
// trimmed stdout.
func (s *Sandbox) Run(dir, name string, args ...string) string {
	s.T.Helper()
	out, err := s.RunErr(dir, nil, name, args...)
	if err != nil {
		s.T.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return out
}

// RunErr runs name with args in dir with optional stdin and returns trimmed
// stdout, or an error that includes stderr.
func (s *Sandbox) RunErr(dir string, stdin []byte, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = s.Environ()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return strings.TrimSpace(stdout.String()), fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// Git runs git in dir and fails the test on error.
func (s *Sandbox) Git(dir string, args ...string) string {
	s.T.Helper()
	return s.Run(dir, "git", args...)
}

// InitRepo creates a non-bare repository named name with n commits on main
// (each adding or changing a file) and returns its path.
func (s *Sandbox) InitRepo(name string, n int) string {
	s.T.Helper()
	dir := filepath.Join(s.Home, name)
	s.Git(s.Home, "init", "-q", "-b", "main", dir)
	for i := 0; i < n; i++ {
		s.Commit(dir, fmt.Sprintf("file%d.txt", i%7), fmt.Sprintf("content %d\n", i), fmt.Sprintf("commit %d", i))
	}
	return dir
}

// Commit writes path (relative to dir) with content, stages and commits it,
// and returns the new commit hash.
func (s *Sandbox) Commit(dir, path, content, msg string) string {
	s.T.Helper()
	full := filepath.Join(dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		s.T.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		s.T.Fatal(err)
	}
	s.Git(dir, "add", "--", path)
	s.Git(dir, "commit", "-q", "-m", msg)
	return s.Git(dir, "rev-parse", "HEAD")
}

// Key is an SSH key pair on disk made by ssh-keygen.
type Key struct {
	Private string // path of the private key file
	Public  string // path of the .pub file
}

// PublicLine is the authorized_keys line of the key.
func (k Key) PublicLine(t testing.TB) string {
	b, err := os.ReadFile(k.Public)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// NewKey makes a key of the given type ("ed25519", "ecdsa", "rsa") named
// name, without a passphrase.
func (s *Sandbox) NewKey(name, typ string) Key {
	s.T.Helper()
	dir := filepath.Join(s.Home, ".keys")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.T.Fatal(err)
	}
	p := filepath.Join(dir, name)
	args := []string{"-q", "-t", typ, "-N", "", "-C", name + "@example.com", "-f", p}
	if typ == "rsa" {
		args = append(args, "-b", "3072")
	}
	s.Run(dir, "ssh-keygen", args...)
	return Key{Private: p, Public: p + ".pub"}
}

// StartAgent starts an ssh-agent for this sandbox, adds SSH_AUTH_SOCK to
// Extra, and stops the agent when the test ends. It returns the socket path.
func (s *Sandbox) StartAgent() string {
	s.T.Helper()
	sock := filepath.Join(s.Home, fmt.Sprintf("agent-%d.sock", time.Now().UnixNano()))
	cmd := exec.Command("ssh-agent", "-D", "-a", sock)
	cmd.Env = Env(s.Home)
	if err := cmd.Start(); err != nil {
		s.T.Fatal(err)
	}
	s.T.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// The socket file appears at bind(), before the agent listens: a
	// client connecting in between is refused (ssh-add "Connection
	// refused" under load). Ready means a connection is accepted.
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			s.T.Fatalf("ssh-agent on %s not accepting connections after 30 s: %v", sock, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Extra = append(s.Extra, "SSH_AUTH_SOCK="+sock)
	return sock
}

// AddToAgent loads the private key into the sandbox's agent.
func (s *Sandbox) AddToAgent(k Key) {
	s.T.Helper()
	s.Run(s.Home, "ssh-add", "-q", k.Private)
}

// BuildTags are the build tags of the git-secure binary, as the Makefile
// sets them: urfave_cli_no_docs leaves out urfave/cli's man page and
// markdown generators (unused), whose markdown parser's initialisation every
// start of the binary (every hook) would otherwise pay.
const BuildTags = "urfave_cli_no_docs"

// BuildBinary builds ./cmd/git-secure of this module into dir, with the
// git-remote-secure symlink beside it, for tests that run the real binary.
// Under -race the binary is built with the race detector (see race.go).
func BuildBinary(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out, err := exec.Command(goBin, "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return fmt.Errorf("not inside the module (GOMOD=%q)", gomod)
	}
	args := []string{"build", "-tags", BuildTags, "-o", filepath.Join(dir, "git-secure")}
	cgo := "CGO_ENABLED=0" // static, as the Makefile builds it
	if raceBuild {
		args = append(args, "-race") // needs cgo
		cgo = "CGO_ENABLED=1"
	}
	cmd := exec.Command(goBin, append(args, "./cmd/git-secure")...)
	cmd.Dir = filepath.Dir(gomod)
	cmd.Env = append(os.Environ(), cgo)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, b)
	}
	return os.Symlink("git-secure", filepath.Join(dir, "git-remote-secure"))
}
