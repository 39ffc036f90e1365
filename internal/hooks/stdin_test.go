package hooks

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// setUpRepo is a client repository with git-secure set up (log and
// policy) by alice.
func setUpRepo(t *testing.T) (*testutil.Sandbox, string, *porcelain.Repo) {
	t.Helper()
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 2)
	key := s.NewKey("alice", "ed25519")
	g, err := gitrepo.OpenWithEnv(dir, s.Environ())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	r := &porcelain.Repo{Git: g, Now: time.Now, Home: s.Home}
	if _, err := r.Init(key.Private); err != nil {
		t.Fatal(err)
	}
	return s, dir, r
}

// runHook runs hook name with args and input, and returns its error and
// what it said.
func runHook(r *porcelain.Repo, name, input string, args ...string) (error, string) {
	var stderr bytes.Buffer
	err := Run(&Context{Repo: r, Name: name, Args: args, Stdin: strings.NewReader(input), Stderr: &stderr, Getenv: func(string) string { return "" }})
	return err, stderr.String()
}

// The pre-push hook reads its input strictly: a line it cannot read
// refuses the push (it used to be skipped, and its ref went unchecked);
// a readable one of a branch no rule protects passes.
func TestPrePushInput(t *testing.T) {
	_, _, r := setUpRepo(t)
	main, _, _ := r.Git.ResolveRef("refs/heads/main")
	z := gitrepo.ZeroHash.String()
	for _, tc := range []struct{ name, input, want string }{
		{"unreadable line", "refs/heads/main " + main.String() + " refs/heads/main\n", "cannot read what git says it pushes"},
		{"carriage return", "refs/heads/main " + main.String() + " refs/heads/main " + z + "\r\n", "cannot read what git says it pushes"},
		{"unprotected branch", "refs/heads/main " + main.String() + " refs/heads/main " + z + "\n", ""},
	} {
		err, said := runHook(r, "pre-push", tc.input, "plain", "/srv/plain.git")
		checkRefusal(t, tc.name, err, said, tc.want)
	}
}

// The client's reference-transaction guard reads every line strictly,
// lets symbolic values of other refs through (git 2.46 reports HEAD's),
// and refuses a symbolic ref that names git-secure's refs.
func TestClientTransactionInput(t *testing.T) {
	_, _, r := setUpRepo(t)
	z := gitrepo.ZeroHash.String()
	for _, tc := range []struct{ name, input, want string }{
		{"checkout", "ref:refs/heads/main ref:refs/heads/topic HEAD\n", ""},
		{"symbolic ref to the log", z + " ref:refs/secure/rsl refs/heads/x\n", "refusing to make refs/heads/x a symbolic ref outside git-secure"},
		{"the log made symbolic", "ref:refs/heads/a ref:refs/heads/b refs/secure/rsl\n", "refusing to make refs/secure/rsl a symbolic ref"},
		{"unreadable line", z + " nothash refs/heads/x\n", "cannot read the ref updates"},
		{"the log moved", z + " " + strings.Repeat("a", 40) + " refs/secure/rsl\n", "refusing to change refs/secure/rsl outside git-secure"},
	} {
		err, said := runHook(r, "reference-transaction", tc.input, "prepared")
		checkRefusal(t, tc.name, err, said, tc.want)
	}
}

// checkRefusal checks a hook's answer: a refusal saying want, or (want
// "") none.
func checkRefusal(t *testing.T, name string, err error, said, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Errorf("%s: err = %v, said %q; want it let through", name, err, said)
		}
		return
	}
	if !errors.Is(err, ErrRejected) || !strings.Contains(said, want) {
		t.Errorf("%s: err = %v, said %q; want a refusal saying %q", name, err, said, want)
	}
}
