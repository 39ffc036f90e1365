package gitrepo

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// openPlain opens a sandbox repository as hooks and the helper do
// (OpenGitDir), with the test process's time zone so that the in-process
// writer may be used.
func openPlain(t *testing.T, s *testutil.Sandbox, dir string) *Repo {
	t.Helper()
	t.Setenv("TZ", "UTC") // the sandbox's git runs with TZ=UTC
	g, err := OpenGitDir(filepath.Join(dir, ".git"), dir, inProcessEnv(s))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// The in-process update leaves the ref and its reflog exactly as git
// update-ref does, and git reads them back.
func TestUpdateRefFileLikeGit(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 3)
	g := openPlain(t, s, dir)
	c1, c2, c3 := mustParse(t, s.Git(dir, "rev-parse", "HEAD~2")), mustParse(t, s.Git(dir, "rev-parse", "HEAD~1")), mustParse(t, s.Git(dir, "rev-parse", "HEAD"))
	for _, name := range []string{"refs/secure/by-git", "refs/secure/in-process"} {
		if err := g.UpdateRefs([]RefUpdate{{Name: name, New: c1}}, "create"); err != nil { // a creation: always git
			t.Fatal(err)
		}
	}
	s.Git(dir, "update-ref", "--create-reflog", "-m", "git-secure:   push\t", "refs/secure/by-git", c2.String(), c1.String())
	if err := g.updateRefFile(RefUpdate{Name: "refs/secure/in-process", Old: c1, New: c2}, "git-secure:   push\t"); err != nil {
		t.Fatalf("in-process update: %v", err)
	}
	if got := s.Git(dir, "rev-parse", "refs/secure/in-process"); got != c2.String() {
		t.Fatalf("git reads %s, want %s", got, c2)
	}
	gitFile := readFile(t, filepath.Join(dir, ".git", "refs", "secure", "by-git"))
	ourFile := readFile(t, filepath.Join(dir, ".git", "refs", "secure", "in-process"))
	if gitFile != ourFile {
		t.Fatalf("ref file %q, git writes %q", ourFile, gitFile)
	}
	stamp := regexp.MustCompile(` \d+ [+-]\d{4}\t`)
	gitLog := stamp.ReplaceAllString(readFile(t, filepath.Join(dir, ".git", "logs", "refs", "secure", "by-git")), " T\t")
	ourLog := stamp.ReplaceAllString(readFile(t, filepath.Join(dir, ".git", "logs", "refs", "secure", "in-process")), " T\t")
	if gitLog != ourLog {
		t.Fatalf("reflog\n%q\ngit writes\n%q", ourLog, gitLog)
	}
	if out := s.Git(dir, "reflog", "show", "--format=%gs", "refs/secure/in-process"); out != "git-secure: push\ncreate" {
		t.Fatalf("git reflog show: %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "secure", "in-process.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock left behind: %v", err)
	}

	// A ref only in packed-refs is read there and overridden by the loose
	// file, as git does.
	s.Git(dir, "pack-refs", "--all")
	if err := g.updateRefFile(RefUpdate{Name: "refs/secure/in-process", Old: c2, New: c3}, "again"); err != nil {
		t.Fatalf("update of a packed ref: %v", err)
	}
	if got := s.Git(dir, "rev-parse", "refs/secure/in-process"); got != c3.String() {
		t.Fatalf("after packing: git reads %s, want %s", got, c3)
	}
	s.Git(dir, "fsck", "--no-progress")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every case the in-process writer is not sure about goes to git, which
// then does what it always did: refuses a stale old value, names a held
// lock, runs the reference-transaction hook.
func TestUpdateRefFileFallsBack(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 3)
	g := openPlain(t, s, dir)
	gitDir := filepath.Join(dir, ".git")
	c1, c2 := mustParse(t, s.Git(dir, "rev-parse", "HEAD~1")), mustParse(t, s.Git(dir, "rev-parse", "HEAD"))
	ref := "refs/secure/rsl"
	set := func(h Hash) { s.Git(dir, "update-ref", ref, h.String()) }
	set(c1)

	fallback := func(step string, u RefUpdate) {
		t.Helper()
		if err := g.updateRefFile(u, "m"); !errors.Is(err, errWriteFallback) {
			t.Fatalf("%s: updateRefFile = %v, want the fallback to git", step, err)
		}
		if _, err := os.Stat(filepath.Join(gitDir, filepath.FromSlash(u.Name)+".lock")); step != "lock held" && !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: lock left behind", step)
		}
	}
	fallback("stale old value", RefUpdate{Name: ref, Old: c2, New: c1})
	if err := g.UpdateRefs([]RefUpdate{{Name: ref, Old: c2, New: c1}}, "m"); !errors.Is(err, ErrRefChanged) {
		t.Fatalf("stale old value through UpdateRefs: %v, want ErrRefChanged", err)
	}
	fallback("creation", RefUpdate{Name: "refs/secure/new", New: c1})
	fallback("deletion", RefUpdate{Name: ref, Old: c1})
	fallback("outside refs/", RefUpdate{Name: "HEAD", Old: c1, New: c2})

	s.Git(dir, "symbolic-ref", "refs/secure/sym", ref)
	fallback("symbolic ref", RefUpdate{Name: "refs/secure/sym", Old: c1, New: c2})

	lock := filepath.Join(gitDir, "refs", "secure", "rsl.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fallback("lock held", RefUpdate{Name: ref, Old: c1, New: c2})
	if err := g.UpdateRefs([]RefUpdate{{Name: ref, Old: c1, New: c2}}, "m"); !errors.Is(err, ErrLocked) {
		t.Fatalf("held lock through UpdateRefs: %v, want ErrLocked", err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("someone else's lock was removed: %v", err)
	}
	os.Remove(lock)

	// A reference-transaction hook must run: git does the update.
	hook := filepath.Join(gitDir, "hooks", "reference-transaction")
	seen := filepath.Join(s.Home, "seen")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ncat >> '"+seen+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	g.dropConfig()
	fallback("reference-transaction hook", RefUpdate{Name: ref, Old: c1, New: c2})
	if err := g.UpdateRefs([]RefUpdate{{Name: ref, Old: c1, New: c2}}, "m"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readFile(t, seen), c2.String()+" "+ref) {
		t.Fatal("the reference-transaction hook did not see the update")
	}
	os.Remove(hook)

	// Identities git would rewrite or has to work out itself.
	for _, env := range [][]string{
		{"GIT_COMMITTER_NAME=.dotted"},
		{"GIT_COMMITTER_EMAIL="},
		{"GIT_COMMITTER_DATE=1700000000 +0000"},
		{"TZ=Europe/Paris"},
	} {
		saved := g.env
		g.env = append(append([]string(nil), saved...), env...)
		fallback(env[0], RefUpdate{Name: ref, Old: c2, New: c1})
		g.env = saved
	}
	s.Git(dir, "config", "core.sharedRepository", "group")
	g.dropConfig()
	fallback("shared repository", RefUpdate{Name: ref, Old: c2, New: c1})
}

// Racing updates from one old value: exactly one wins, every other one is
// told the ref changed or is locked; the ref ends at the winner's value.
func TestUpdateRefFileRace(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 8)
	g := openPlain(t, s, dir)
	var commits []Hash
	for i := 0; i < 8; i++ {
		commits = append(commits, mustParse(t, s.Git(dir, "rev-parse", "HEAD~"+string(rune('0'+i)))))
	}
	ref := "refs/secure/rsl"
	s.Git(dir, "update-ref", ref, commits[7].String())
	for round := 0; round < 20; round++ {
		s.Git(dir, "update-ref", ref, commits[7].String())
		var wg sync.WaitGroup
		errs := make([]error, 7)
		for i := 0; i < 7; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				errs[i] = g.UpdateRefs([]RefUpdate{{Name: ref, Old: commits[7], New: commits[i]}}, "race")
			}(i)
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: two winners (%d and %d)", round, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, ErrRefChanged) && !errors.Is(err, ErrLocked):
				t.Fatalf("round %d: loser %d: %v", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no winner: %v", round, errs)
		}
		if got := s.Git(dir, "rev-parse", ref); got != commits[winner].String() {
			t.Fatalf("round %d: ref at %s, winner wrote %s", round, got, commits[winner])
		}
	}
}

// Committer takes the identity from git's sources in git's order, and
// leaves to git what git would work out or rewrite itself.
func TestCommitter(t *testing.T) {
	r := &Repo{}
	cfg := []ConfigEntry{{Key: "user.name", Value: "User"}, {Key: "user.email", Value: "user@example.com"}}
	cases := []struct {
		env         []string
		cfg         []ConfigEntry
		name, email string // "" for not ok
	}{
		{nil, cfg, "User", "user@example.com"},
		{nil, append(cfg, ConfigEntry{Key: "committer.name", Value: "Committer"}), "Committer", "user@example.com"},
		{[]string{"GIT_COMMITTER_NAME=Env", "GIT_COMMITTER_EMAIL=env@example.com"}, cfg, "Env", "env@example.com"},
		{[]string{"GIT_COMMITTER_NAME="}, cfg, "", ""},
		{[]string{"GIT_COMMITTER_DATE=1700000000 +0000"}, cfg, "", ""},
		{nil, []ConfigEntry{{Key: "user.name", Value: "Trailing."}, {Key: "user.email", Value: "u@example.com"}}, "", ""},
		{nil, []ConfigEntry{{Key: "user.name", Value: "No Email"}}, "", ""},
	}
	for i, c := range cases {
		r.env = c.env
		name, email, ok := r.committer(c.cfg)
		if ok != (c.name != "") || name != c.name || email != c.email {
			t.Errorf("case %d: committer() = %q, %q, %v; want %q, %q", i, name, email, ok, c.name, c.email)
		}
	}
}
