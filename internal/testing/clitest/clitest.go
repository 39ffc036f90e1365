// Package clitest runs the command line's run functions without the
// binary: a sandboxed repository (real git, real ssh keys), and a
// factory.Factory per run with buffers for stdout and stderr, a fixed
// clock and the sandbox's HOME. Test-only.
//
// The repository is opened with gitrepo, whose git child processes
// inherit the process environment, so New points that environment at the
// sandbox (t.Setenv): tests that use it cannot run in parallel.
package clitest

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// Now is the fixed clock of every run.
var Now = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// Repo is one sandboxed repository and the output of the last run.
type Repo struct {
	T    *testing.T
	S    *testutil.Sandbox
	Dir  string
	Keys map[string]testutil.Key
	Vars map[string]string // what the Factory's Getenv returns

	Stdout, Stderr *bytes.Buffer
}

// New makes a repository with three commits on main and keys alice, bob
// and carol.
func New(t *testing.T) *Repo {
	t.Helper()
	s := testutil.NewSandbox(t)
	for _, kv := range s.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	// Nothing from the developer's shell may reach the test's git.
	for _, k := range []string{"SSH_AUTH_SOCK", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	r := &Repo{T: t, S: s, Keys: map[string]testutil.Key{}, Vars: map[string]string{"HOME": s.Home}}
	r.Dir = s.InitRepo("repo", 3)
	for _, name := range []string{"alice", "bob", "carol"} {
		r.Keys[name] = s.NewKey(name, "ed25519")
	}
	return r
}

// F is a new Factory for one run in the repository (Dir may be changed
// between runs); Stdout and Stderr start empty. The Factory is closed when
// the test ends.
func (r *Repo) F() *factory.Factory {
	r.Stdout, r.Stderr = &bytes.Buffer{}, &bytes.Buffer{}
	f := factory.New(factory.Env{
		Stdin:  strings.NewReader(""),
		Stdout: r.Stdout,
		Stderr: r.Stderr,
		Getenv: func(k string) string { return r.Vars[k] },
		Now:    func() time.Time { return Now },
		Dir:    r.Dir,
	}, "test")
	r.T.Cleanup(f.Close)
	return f
}

// Priv and Pub are the key files of a named key.
func (r *Repo) Priv(name string) string { return r.Keys[name].Private }

// Pub: see Priv.
func (r *Repo) Pub(name string) string { return r.Keys[name].Public }

// FP is the SSH fingerprint of a named key.
func (r *Repo) FP(name string) string {
	r.T.Helper()
	data, err := os.ReadFile(r.Pub(name))
	if err != nil {
		r.T.Fatal(err)
	}
	pub, _, err := sign.ParsePublicKey(data)
	if err != nil {
		r.T.Fatal(err)
	}
	return sign.Fingerprint(pub)
}

// Git runs git in the repository and returns its trimmed output.
func (r *Repo) Git(args ...string) string {
	r.T.Helper()
	return r.S.Git(r.Dir, args...)
}

// Init sets the repository up with alice's key as root and rules key,
// without hooks, through porcelain (not through the command under test).
func (r *Repo) Init() {
	r.T.Helper()
	p, err := r.F().Repo()
	if err != nil {
		r.T.Fatal(err)
	}
	if _, err := p.Init(r.Priv("alice")); err != nil {
		r.T.Fatal(err)
	}
}

// Contains fails the test unless s contains every want.
func Contains(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}
