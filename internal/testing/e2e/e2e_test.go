package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
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
const cmdTimeout = 90 * time.Second

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "git-secure-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 2
	}
	defer os.RemoveAll(tmp)
	binDir = filepath.Join(tmp, "bin")
	if err := testutil.BuildBinary(binDir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build git-secure:", err)
		return 2
	}
	os.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	// A private TMPDIR, so that nothing a test leaves behind (ssh-agent
	// sockets, git's temporary files) lands in the shared /tmp.
	td := filepath.Join(tmp, "tmp")
	if err := os.MkdirAll(td, 0o700); err == nil {
		os.Setenv("TMPDIR", td)
	}
	return m.Run()
}

// result is the outcome of one command.
type result struct {
	cmd            string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("$ %s\n[exit %d]\n--- stdout:\n%s\n--- stderr:\n%s", r.cmd, r.code, r.stdout, r.stderr)
}

// user is one person: their own HOME (sandbox), SSH key and identity.
type user struct {
	t    testing.TB
	name string
	sb   *testutil.Sandbox
	key  testutil.Key
}

// newUser makes a person with an ed25519 key. The sandbox's fixed
// GIT_AUTHOR_*/GIT_COMMITTER_* are overridden with the person's identity so
// commits and log entries say who made them.
func newUser(t testing.TB, name string) *user {
	t.Helper()
	sb := testutil.NewSandbox(t)
	email := name + "@example.com"
	sb.Extra = append(sb.Extra,
		"GIT_AUTHOR_NAME="+name, "GIT_AUTHOR_EMAIL="+email,
		"GIT_COMMITTER_NAME="+name, "GIT_COMMITTER_EMAIL="+email)
	return &user{t: t, name: name, sb: sb, key: sb.NewKey(name, "ed25519")}
}

// path is a path inside the user's HOME.
func (u *user) path(name string) string { return filepath.Join(u.sb.Home, name) }

// run runs a command in dir and returns what happened; it never fails the
// test by itself.
func (u *user) run(dir string, name string, args ...string) result {
	return u.runStdin(dir, nil, name, args...)
}

func (u *user) runStdin(dir string, stdin []byte, name string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = u.sb.Environ()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{cmd: "(" + u.name + " in " + dir + ") " + name + " " + strings.Join(args, " "), stdout: strings.TrimSpace(stdout.String()), stderr: strings.TrimSpace(stderr.String())}
	if err != nil {
		r.code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
		} else {
			r.stderr += "\n" + err.Error()
		}
		if ctx.Err() != nil {
			r.stderr += "\n(timed out)"
		}
	}
	// Under go test -race the binary is race-built (testutil.BuildBinary):
	// a race in it fails the test that ran it, by name, whatever the
	// test asserts about the command.
	if strings.Contains(r.stderr, "WARNING: DATA RACE") {
		u.t.Errorf("the race detector found a data race in git-secure:\n%s", r)
	}
	return r
}

// must runs a command that has to succeed and returns its stdout.
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

// secure runs "git secure ARGS" (through git, as a person would) and
// requires success.
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

// commit writes a file in dir, commits it and returns the commit.
func (u *user) commit(dir, file, content string) string {
	u.t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
		u.t.Fatal(err)
	}
	u.git(dir, "add", "--", file)
	u.git(dir, "commit", "-q", "-m", u.name+": "+file)
	return u.git(dir, "rev-parse", "HEAD")
}

func (u *user) rev(dir, rev string) string {
	u.t.Helper()
	return u.git(dir, "rev-parse", "--verify", "-q", rev)
}

// refValue returns a ref's value, "" when it does not exist.
func (u *user) refValue(dir, ref string) string {
	r := u.run(dir, "git", "rev-parse", "--verify", "-q", ref)
	if r.code != 0 {
		return ""
	}
	return r.stdout
}

// refs lists every ref of a repository (bare or not) as name -> value.
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
func (u *user) rslLog(dir string) []rslEntry {
	u.t.Helper()
	out := u.secure(dir, "rsl", "log", "--json")
	var entries []rslEntry
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		u.t.Fatalf("rsl log --json: %v\n%s", err, out)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Number < entries[j].Number })
	return entries
}

// checkLinearLog checks that the log of gitDir is one chain of commits
// numbered 1..N without merges, and returns it oldest first.
func (u *user) checkLinearLog(gitDir string) []rslEntry {
	u.t.Helper()
	if merges := u.git(u.sb.Home, "--git-dir="+gitDir, "rev-list", "--min-parents=2", "refs/secure/rsl"); merges != "" {
		u.t.Errorf("the log of %s has merge commits: %s", gitDir, merges)
	}
	if roots := strings.Fields(u.git(u.sb.Home, "--git-dir="+gitDir, "rev-list", "--max-parents=0", "refs/secure/rsl")); len(roots) != 1 {
		u.t.Errorf("the log of %s has %d roots, want 1", gitDir, len(roots))
	}
	entries := u.rslLog(gitDir)
	for i, e := range entries {
		if e.Number != uint64(i+1) {
			u.t.Errorf("the log of %s: entry %d has number %d", gitDir, i+1, e.Number)
		}
	}
	return entries
}

// entriesFor returns the values a ref was recorded at, in log order.
func entriesFor(entries []rslEntry, ref string) []rslEntry {
	var out []rslEntry
	for _, e := range entries {
		if e.Type == "ref" && e.Ref == ref {
			out = append(out, e)
		}
	}
	return out
}

// countNew counts entries of ref that record value.
func countNew(entries []rslEntry, ref, value string) int {
	n := 0
	for _, e := range entriesFor(entries, ref) {
		if e.New == value {
			n++
		}
	}
	return n
}

func writeScript(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// containsAll says whether s contains every one of subs. An assertion on
// a refusal wants this: the message must name the ref AND the rule AND what
// is missing, so that the test fails when the refusal happens for another
// reason.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// containsAny says whether s contains at least one of subs: for negative
// checks (none of these may appear) and for messages that may honestly
// come in more than one wording (say which at the call).
func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// ---- servers ----

// transport names a way to reach the server.
type transport string

const (
	trFile   transport = "file"
	trDaemon transport = "git-daemon"
	trHTTP   transport = "http-backend"
)

var transports = []transport{trFile, trDaemon, trHTTP}

// server is a directory of bare repositories reachable over one transport.
// Its administrator (admin) has shell access to the repositories.
type server struct {
	t     testing.TB
	tr    transport
	admin *user
	root  string
	base  string // URL prefix; a repository's URL is base + "/" + name
}

// startServer starts a server of the given transport; it stops when the
// test ends.
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
	case trHTTP:
		s.startHTTP()
	default:
		t.Fatalf("unknown transport %q", tr)
	}
	return s
}

func (s *server) startDaemon() {
	s.t.Helper()
	s.base = testutil.StartGitDaemon(s.t, s.admin.sb.Environ(), s.root, s.admin.sb.Home)
}

func (s *server) startHTTP() {
	t := s.t
	t.Helper()
	execPath := s.admin.git(s.admin.sb.Home, "--exec-path")
	backend := filepath.Join(execPath, "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Fatalf("git-http-backend: %v", err)
	}
	env := append(s.admin.sb.Environ(), "GIT_PROJECT_ROOT="+s.root, "GIT_HTTP_EXPORT_ALL=1")
	srv := httptest.NewServer(&cgi.Handler{Path: backend, Env: env})
	t.Cleanup(srv.Close)
	s.base = srv.URL
}

// newRepo creates a bare repository with git-secure's enforcing hook and
// returns its path on the server and its URL.
func (s *server) newRepo(name string, enforce bool) (path, url string) {
	s.t.Helper()
	path = filepath.Join(s.root, name)
	s.admin.git(s.root, "init", "-q", "--bare", "-b", "main", path)
	if s.tr == trHTTP {
		s.admin.git(path, "config", "http.receivepack", "true")
	}
	if enforce {
		s.admin.secure(s.root, "server", "install", path)
	}
	return path, s.base + "/" + name
}

// direct is the git options that make a push to url go straight to the
// server, past git-remote-secure, in a repository where git secure hooks
// install routes every push URL through it (url.secure::.pushInsteadOf):
// what someone bypassing git-secure on purpose types.
func direct(url string) []string {
	return []string{"-c", "url." + url + ".pushInsteadOf=" + url}
}

// pushDirect runs git push ARGS (which name url) past git-remote-secure.
func (u *user) pushDirect(dir, url string, args ...string) result {
	return u.run(dir, "git", append(append(direct(url), "push"), args...)...)
}
