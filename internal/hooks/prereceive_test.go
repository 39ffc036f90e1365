package hooks

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/testing/testutil"
	"github.com/git-secure/git-secure/internal/verify"
)

// initedRepo is a repository of two commits on main where alice ran
// git secure init: the log and the policy a server starts from (r.Git
// reads it).
func initedRepo(t *testing.T) (*testutil.Sandbox, string, *porcelain.Repo) {
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

// TestPreReceiveRefusesDeletingTheMetadata: one push that deletes the log
// and the policy together (and moves main) must not pass as a push to a
// repository that is not protected.
func TestPreReceiveRefusesDeletingTheMetadata(t *testing.T) {
	s, dir, r := initedRepo(t)
	g := r.Git
	rslTip, _, _ := g.ResolveRef("refs/secure/rsl")
	polTip, _, _ := g.ResolveRef("refs/secure/policy")
	main, _, _ := g.ResolveRef("refs/heads/main")
	other := s.Commit(dir, "x.txt", "x\n", "unrecorded") // moves main
	var in bytes.Buffer
	in.WriteString(rslTip.String() + " " + gitrepo.ZeroHash.String() + " refs/secure/rsl\n")
	in.WriteString(polTip.String() + " " + gitrepo.ZeroHash.String() + " refs/secure/policy\n")
	in.WriteString(main.String() + " " + other + " refs/heads/main\n")
	// The hook reads the refs as they are before the push: put main back.
	s.Git(dir, "update-ref", "refs/heads/main", main.String())
	var stderr bytes.Buffer
	err := Run(&Context{Repo: r, Name: "pre-receive", Stdin: &in, Stderr: &stderr, Getenv: func(string) string { return "" }})
	if !errors.Is(err, ErrRejected) || !strings.Contains(stderr.String(), "cannot be deleted") {
		t.Fatalf("deleting the log and the policy in one push: err=%v, stderr=%q; want a rejection saying they cannot be deleted", err, stderr.String())
	}
}

// TestUnprotectedOnly: the server's fast path (accept without replaying the
// log) is taken only when the push can change nothing the policy covers.
func TestUnprotectedOnly(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 2)
	key := s.NewKey("alice", "ed25519")
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(key.PublicLine(t)))
	if err != nil {
		t.Fatal(err)
	}
	g, err := gitrepo.OpenWithEnv(dir, s.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	r := &porcelain.Repo{Git: g, Now: time.Now, Home: s.Home}
	c := &Context{Repo: r, Name: "pre-receive", Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }}
	main, _, _ := g.ResolveRef("refs/heads/main")
	push := func(ref string, old gitrepo.Hash) []RefLine {
		return []RefLine{{Old: old, New: main, Ref: ref}}
	}
	check := func(step string, lines []RefLine, want bool) {
		t.Helper()
		judged, err := c.judgeUnprotected(lines)
		if got := judged != nil; err != nil || got != want {
			t.Errorf("%s: judgeUnprotected(%s) = %v, %v; want %v", step, lines[0].Ref, judged != nil, err, want)
		}
	}
	// The server verifies every state it accepts, which leaves the
	// checkpoint the fast path starts from.
	verified := func() {
		t.Helper()
		if _, err := verify.WithCheckpoint(g, verify.Options{Now: time.Now()}, false); err != nil {
			t.Fatal(err)
		}
	}
	apply := func(edit porcelain.Edit) {
		t.Helper()
		if _, err := r.Stage("test", edit); err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.Apply(key.Private); err != nil {
			t.Fatal(err)
		}
		verified()
	}
	zero := gitrepo.ZeroHash

	check("not a git-secure repository", push("refs/heads/feature", zero), false)
	if _, err := r.Init(key.Private); err != nil {
		t.Fatal(err)
	}
	rslTip, _, _ := g.ResolveRef("refs/secure/rsl")
	check("never verified here", push("refs/heads/feature", zero), false)
	verified()
	check("no rules", push("refs/heads/feature", zero), true)
	noRules, _, _ := g.ResolveRef("refs/secure/policy")
	check("the log itself", push("refs/secure/rsl", rslTip), false)
	check("stale old value", push("refs/heads/main", zero), false)

	apply(func(st, base *policy.Policy, now time.Time) error {
		if err := st.AddPerson(base, "alice", []ssh.PublicKey{pub}, now); err != nil {
			return err
		}
		return st.AddRule(base, policy.Rule{Name: "main", Refs: []string{"refs/heads/main"}, Allow: []string{"alice"}, Threshold: 1}, now)
	})
	check("ref rule, other branch", push("refs/heads/feature", zero), true)
	check("ref rule, its branch", push("refs/heads/main", main), false)
	// refs/heads/Main is main on a case-insensitive file system: the full
	// check refuses it, naming the rule (on such a server the files
	// backend would have moved main unjudged).
	check("ref rule, its branch in another case", push("refs/heads/Main", zero), false)
	var stderr bytes.Buffer
	in := strings.NewReader(zero.String() + " " + main.String() + " refs/heads/Main\n")
	err = Run(&Context{Repo: r, Name: "pre-receive", Stdin: in, Stderr: &stderr, Getenv: func(string) string { return "" }})
	if !errors.Is(err, ErrRejected) || !strings.Contains(stderr.String(), "refs/heads/Main: ") ||
		!strings.Contains(stderr.String(), "differs only in case (or in a spelling case-insensitive file systems store as the same name) from the refs rule main covers (refs/heads/main)") {
		t.Errorf("a push of refs/heads/Main: err=%v, stderr:\n%s\nwant a rejection naming rule main", err, stderr.String())
	}
	// refs/Secure/rsl is the log there: no pattern names it, yet it is
	// refused the same way (attack review, session 14: a keyless push
	// of it was accepted as an unprotected ref).
	for _, ref := range []string{"refs/Secure/rsl", "refs/SECURE/policy", "refs/Replace/" + main.String()} {
		check("case variant of "+ref, push(ref, zero), false)
		stderr.Reset()
		in := strings.NewReader(zero.String() + " " + main.String() + " " + ref + "\n")
		err = Run(&Context{Repo: r, Name: "pre-receive", Stdin: in, Stderr: &stderr, Getenv: func(string) string { return "" }})
		if !errors.Is(err, ErrRejected) || !strings.Contains(stderr.String(), ref+": ") || !strings.Contains(stderr.String(), "that a case-insensitive file system stores as that namespace") {
			t.Errorf("a push of %s: err=%v, stderr:\n%s\nwant a rejection", ref, err, stderr.String())
		}
	}
	// The policy ref put back to the version without the rule, without an
	// entry (a botched restore): not the verified state, so no fast path.
	ruled, _, _ := g.ResolveRef("refs/secure/policy")
	s.Git(dir, "update-ref", "refs/secure/policy", noRules.String())
	check("policy ref not the verified one", push("refs/heads/main", main), false)
	check("policy ref not the verified one, other branch", push("refs/heads/feature", zero), false)
	s.Git(dir, "update-ref", "refs/secure/policy", ruled.String())

	apply(func(st, base *policy.Policy, now time.Time) error {
		return st.AddGlobalRule(base, policy.GlobalRule{Name: "linear", Type: policy.GlobalNoForcePush, Refs: []string{"refs/heads/release/*"}}, now)
	})
	check("global rule covers the branch", push("refs/heads/release/1", zero), false)
	check("global rule elsewhere", push("refs/heads/feature", zero), true)

	apply(func(st, base *policy.Policy, now time.Time) error {
		return st.AddRule(base, policy.Rule{Name: "secret", Paths: []string{"secret/**"}, Allow: []string{"alice"}, Threshold: 1}, now)
	})
	// A path rule without ref patterns covers the refs the ref rules name
	// (main), not a review branch nor a forge's own refs.
	check("a path rule, a review branch", push("refs/heads/feature", zero), true)
	check("a path rule, a pull request", push("refs/pull/1/head", zero), true)
	check("a path rule, main", push("refs/heads/main", main), false)

	apply(func(st, base *policy.Policy, now time.Time) error {
		return st.AddRule(base, policy.Rule{Name: "everywhere", Refs: []string{"refs/**"}, Paths: []string{"keys/**"}, Allow: []string{"alice"}, Threshold: 1}, now)
	})
	check("a path rule for refs/**, a review branch", push("refs/heads/feature", zero), false)
	check("a path rule for refs/**, a pull request", push("refs/pull/1/head", zero), true)

	apply(func(st, base *policy.Policy, now time.Time) error {
		return st.AddRule(base, policy.Rule{Name: "prs", Refs: []string{"refs/pull/*/head"}, Allow: []string{"alice"}, Threshold: 1}, now)
	})
	check("a rule naming pull requests", push("refs/pull/1/head", zero), false)
}
