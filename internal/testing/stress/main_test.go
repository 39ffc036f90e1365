package stress

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/testing/testutil"

	// Not used in-process: the tests run the binary TestMain builds. The
	// import makes this test binary depend on every package the binary is
	// built from, so that go test's cache never reports a result for code
	// that has changed since.
	_ "github.com/git-secure/git-secure/internal/cli"
)

// binDir holds the git-secure binary built by TestMain and its
// git-remote-secure symlink; it is first on PATH for every process.
var binDir string

// cmdTimeout bounds every command a test runs.
const cmdTimeout = 180 * time.Second

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "git-secure-stress-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "stress:", err)
		return 2
	}
	defer os.RemoveAll(tmp)
	binDir = filepath.Join(tmp, "bin")
	if err := testutil.BuildBinary(binDir); err != nil {
		fmt.Fprintln(os.Stderr, "stress: build git-secure:", err)
		return 2
	}
	os.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	td := filepath.Join(tmp, "tmp")
	if err := os.MkdirAll(td, 0o700); err == nil {
		os.Setenv("TMPDIR", td)
	}
	return m.Run()
}

// envInt reads a positive integer from the environment.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// full reports whether the full-size runs were asked for (scripts/stress.sh).
func full() bool { return os.Getenv("GIT_SECURE_STRESS") == "full" }

// result is the outcome of one command.
type result struct {
	cmd            string
	stdout, stderr string
	code           int
	killed         bool
	dur            time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("$ %s\n[exit %d, %v]\n--- stdout:\n%s\n--- stderr:\n%s", r.cmd, r.code, r.dur.Round(time.Millisecond), clip(r.stdout, 4000), clip(r.stderr, 4000))
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// oneLine squeezes s onto one line of at most 300 bytes.
func oneLine(s string) string {
	return clip(strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " | ")), " "), 300)
}

// user is one person: their own HOME (sandbox), SSH key and identity.
type user struct {
	t    testing.TB
	name string
	sb   *testutil.Sandbox
	key  testutil.Key
}

func newUser(t testing.TB, name string) *user {
	t.Helper()
	sb := testutil.NewSandbox(t)
	email := name + "@example.com"
	sb.Extra = append(sb.Extra,
		"GIT_AUTHOR_NAME="+name, "GIT_AUTHOR_EMAIL="+email,
		"GIT_COMMITTER_NAME="+name, "GIT_COMMITTER_EMAIL="+email)
	return &user{t: t, name: name, sb: sb, key: sb.NewKey(name, "ed25519")}
}

func (u *user) path(name string) string { return filepath.Join(u.sb.Home, name) }

// command prepares a command in its own process group.
func (u *user) command(ctx context.Context, dir string, stdin []byte, name string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = u.sb.Environ()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Its own process group, so a timeout (or a test's kill) ends git's
	// children too: remote helpers, receive-pack, hooks.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	return cmd, &stdout, &stderr
}

func finish(cmd *exec.Cmd, err error, stdout, stderr *bytes.Buffer, start time.Time, ctxErr error) result {
	r := result{cmd: strings.Join(cmd.Args, " ") + " (in " + cmd.Dir + ")", stdout: strings.TrimSpace(stdout.String()), stderr: strings.TrimSpace(stderr.String()), dur: time.Since(start)}
	if err != nil {
		r.code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				r.killed = true
			}
		} else {
			r.stderr += "\n" + err.Error()
		}
		if ctxErr != nil {
			r.stderr += "\n(timed out)"
		}
	}
	return r
}

// run runs a command in dir and returns what happened; it never fails the
// test by itself.
func (u *user) run(dir string, name string, args ...string) result {
	return u.runStdin(dir, nil, name, args...)
}

func (u *user) runStdin(dir string, stdin []byte, name string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd, stdout, stderr := u.command(ctx, dir, stdin, name, args...)
	start := time.Now()
	err := cmd.Run()
	return finish(cmd, err, stdout, stderr, start, ctx.Err())
}

// runKill starts a command in its own process group and SIGKILLs the whole
// group after delay (if it is still running).
func (u *user) runKill(dir string, delay time.Duration, name string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd, stdout, stderr := u.command(ctx, dir, nil, name, args...)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return result{cmd: name, code: -1, stderr: err.Error()}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(delay):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
	}
	return finish(cmd, err, stdout, stderr, start, ctx.Err())
}

func (u *user) must(dir string, name string, args ...string) string {
	u.t.Helper()
	r := u.run(dir, name, args...)
	if r.code != 0 {
		u.t.Fatalf("command failed:\n%s", r)
	}
	return r.stdout
}

func (u *user) git(dir string, args ...string) string {
	u.t.Helper()
	return u.must(dir, "git", args...)
}

func (u *user) secure(dir string, args ...string) string {
	u.t.Helper()
	return u.must(dir, "git", append([]string{"secure"}, args...)...)
}

// configure gives a clone the person's identity and SSH signing key.
func (u *user) configure(dir string) {
	u.t.Helper()
	u.git(dir, "config", "user.name", u.name)
	u.git(dir, "config", "user.email", u.name+"@example.com")
	u.git(dir, "config", "gpg.format", "ssh")
	u.git(dir, "config", "user.signingkey", u.key.Private)
}

// writeCommit writes file in dir and commits it (no test failure on
// error: pushers run in goroutines).
func (u *user) writeCommit(dir, file, content, msg string) error {
	p := filepath.Join(dir, file)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		return err
	}
	if r := u.run(dir, "git", "add", "--", file); r.code != 0 {
		return fmt.Errorf("%s", r)
	}
	if r := u.run(dir, "git", "commit", "-q", "-m", msg); r.code != 0 {
		return fmt.Errorf("%s", r)
	}
	return nil
}

// refs lists every ref of a repository as name -> value.
func (u *user) refs(gitDir string) map[string]string {
	u.t.Helper()
	out := u.git(u.sb.Home, "--git-dir="+gitDir, "for-each-ref", "--format=%(refname) %(objectname)")
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if name, val, ok := strings.Cut(line, " "); ok {
			m[name] = val
		}
	}
	return m
}

// rslEntry is one entry of git secure rsl log --json.
type rslEntry struct {
	Number uint64 `json:"number"`
	ID     string `json:"id"`
	Type   string `json:"type"`
	Ref    string `json:"ref"`
	Old    string `json:"old"`
	New    string `json:"new"`
}

// rslLog reads a repository's log, oldest first.
func (u *user) rslLog(dir string) ([]rslEntry, error) {
	r := u.run(dir, "git", "secure", "rsl", "log", "--json")
	if r.code != 0 {
		return nil, fmt.Errorf("rsl log: %s", r)
	}
	var entries []rslEntry
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil {
		return nil, fmt.Errorf("rsl log --json: %v", err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Number < entries[j].Number })
	return entries, nil
}

const zeroHash = "0000000000000000000000000000000000000000"

// ---- servers ----

type transport string

const (
	trFile   transport = "file"
	trDaemon transport = "daemon"
)

// server is a directory of bare repositories reachable over one transport.
type server struct {
	t     testing.TB
	tr    transport
	admin *user
	root  string
	base  string
}

func startServer(t testing.TB, tr transport) *server {
	t.Helper()
	admin := newUser(t, "admin")
	s := &server{t: t, tr: tr, admin: admin, root: admin.path("srv")}
	if err := os.MkdirAll(s.root, 0o755); err != nil {
		t.Fatal(err)
	}
	switch tr {
	case trFile:
		s.base = "file://" + s.root
	case trDaemon:
		s.startDaemon()
	default:
		t.Fatalf("unknown transport %q", tr)
	}
	return s
}

// startDaemon runs git daemon on 127.0.0.1 (only) in its own process group,
// stopped when the test ends.
func (s *server) startDaemon() {
	s.t.Helper()
	s.base = testutil.StartGitDaemon(s.t, s.admin.sb.Environ(), s.root, s.admin.sb.Home, "--max-connections=64")
}

// newRepo creates a bare repository with git-secure's enforcing hook and
// returns its path on the server and its URL.
func (s *server) newRepo(name string) (path, url string) {
	s.t.Helper()
	path = filepath.Join(s.root, name)
	s.admin.git(s.root, "init", "-q", "--bare", "-b", "main", path)
	s.admin.secure(s.root, "server", "install", path)
	return path, s.base + "/" + name
}

// verifyMirror makes a fresh mirror clone of url and runs git secure verify
// in it. It returns the mirror's path and the verify result.
func verifyMirror(u *user, url, dir string) (result, error) {
	_ = os.RemoveAll(dir)
	if r := u.run(u.sb.Home, "git", "clone", "-q", "--mirror", url, dir); r.code != 0 {
		return r, fmt.Errorf("mirror clone failed:\n%s", r)
	}
	return u.run(dir, "git", "secure", "verify"), nil
}

// project is a protected repository on a server and the persons using it.
type project struct {
	srv     *server
	repo    string // path of the bare repository
	url     string
	persons []*user
	dirs    []string // each person's clone
}

// newProject sets up an enforcing server repository whose policy protects
// refs/heads/main (threshold 1) with n new persons; person 0 initialises
// it, the others clone it, install the hooks and fetch.
func newProject(t testing.TB, tr transport, n int) *project {
	t.Helper()
	var persons []*user
	for i := 0; i < n; i++ {
		persons = append(persons, newUser(t, fmt.Sprintf("p%d", i)))
	}
	return newProjectOn(t, startServer(t, tr), "project", persons)
}

// newProjectOn sets up the repository NAME.git on srv for persons (each
// gets the clone ~/NAME).
func newProjectOn(t testing.TB, srv *server, name string, persons []*user) *project {
	t.Helper()
	p := &project{srv: srv, persons: persons}
	p.repo, p.url = srv.newRepo(name + ".git")
	owner := p.persons[0]
	dir := owner.sb.InitRepo(name, 1)
	owner.configure(dir)
	owner.git(dir, "remote", "add", "origin", p.url)
	owner.secure(dir, "init")
	var allow []string
	for _, u := range p.persons {
		owner.secure(dir, "policy", "add-person", u.name, "--key", u.key.Public)
		allow = append(allow, "--allow", u.name)
	}
	owner.secure(dir, append([]string{"policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--threshold", "1"}, allow...)...)
	owner.secure(dir, "policy", "apply")
	owner.git(dir, "push", "-q", "-u", "origin", "main")
	p.dirs = append(p.dirs, dir)
	for _, u := range p.persons[1:] {
		d := u.path(name)
		u.git(u.sb.Home, "clone", "-q", p.url, d)
		u.configure(d)
		u.secure(d, "hooks", "install")
		u.git(d, "fetch", "-q")
		p.dirs = append(p.dirs, d)
	}
	return p
}

// localRepo makes a repository without remote in which u is the only
// person, allowed to move the protected main.
func localRepo(u *user, name string) string {
	u.t.Helper()
	dir := u.sb.InitRepo(name, 1)
	u.configure(dir)
	u.secure(dir, "init")
	u.secure(dir, "policy", "add-person", u.name, "--key", u.key.Public)
	u.secure(dir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", u.name)
	u.secure(dir, "policy", "apply")
	return dir
}

// locks lists the *.lock files under dir (relative paths).
func locks(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}
