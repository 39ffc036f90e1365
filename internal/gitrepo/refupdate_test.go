package gitrepo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// refUpdateRepo is a repository with the in-process readers on, its
// commits c[0] (HEAD), c[1], c[2], and refs/secure/rsl and
// refs/secure/twin loose at c[2] (set by git).
func refUpdateRepo(t *testing.T, extraEnv ...string) (s *testutil.Sandbox, dir string, r *Repo, c []Hash) {
	t.Helper()
	sb, dir, _ := newInProcessRepo(t, 3)
	r, err := OpenWithEnv(dir, append(inProcessEnv(sb), extraEnv...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	c = make([]Hash, 3)
	for i := range c {
		c[i] = mustParse(t, sb.Git(dir, "rev-parse", fmt.Sprintf("HEAD~%d", i)))
	}
	sb.Git(dir, "update-ref", "refs/secure/rsl", c[2].String())
	sb.Git(dir, "update-ref", "refs/secure/twin", c[2].String())
	return sb, dir, r, c
}

// The in-process update (no process) leaves what git update-ref leaves
// for the same transaction: the ref file's bytes and the reflog line
// (but its time), git reads the ref and its reflog back, no lock is left.
func TestUpdateRefInProcessLikeGit(t *testing.T) {
	s, dir, r, c := refUpdateRepo(t)
	msg := "git-secure: record  refs/heads/main\n\tagain "
	tx, err := r.StartUpdateRefs(msg)
	if err != nil {
		t.Fatal(err)
	}
	if tx.cmd != nil {
		t.Fatal("git update-ref started for a transaction that can be done in-process")
	}
	if err := tx.Apply([]RefUpdate{{Name: "refs/secure/rsl", Old: c[2], New: c[1]}}); err != nil {
		t.Fatal(err)
	}
	if tx.cmd != nil {
		t.Fatal("git update-ref started: the update was not done in-process")
	}
	// The twin through git (the switch off).
	slow, err := OpenWithEnv(dir, append(inProcessEnv(s), EnvNoFastPath+"=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if err := slow.UpdateRefs([]RefUpdate{{Name: "refs/secure/twin", Old: c[2], New: c[1]}}, msg); err != nil {
		t.Fatal(err)
	}
	git := filepath.Join(dir, ".git")
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(git, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got, want := read("refs/secure/rsl"), read("refs/secure/twin"); got != want || got != c[1].String()+"\n" {
		t.Fatalf("ref file %q, git writes %q", got, want)
	}
	// "OLD NEW NAME <EMAIL> SECONDS ZONE\tMSG": all but the seconds equal.
	fields := func(line string) (string, int64) {
		head, msg, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		f := strings.Fields(head)
		if !ok || len(f) < 5 || strings.Count(line, "\n") != 1 {
			t.Fatalf("reflog line %q", line)
		}
		secs, err := strconv.ParseInt(f[len(f)-2], 10, 64)
		if err != nil {
			t.Fatalf("reflog line %q: %v", line, err)
		}
		f[len(f)-2] = "SECONDS"
		return strings.Join(f, " ") + "\t" + msg, secs
	}
	got, gotT := fields(read("logs/refs/secure/rsl"))
	want, wantT := fields(read("logs/refs/secure/twin"))
	if got != want {
		t.Fatalf("reflog line\n%q\ngit writes\n%q", got, want)
	}
	if d := wantT - gotT; d < 0 || d > 60 {
		t.Fatalf("reflog time %d, git's %d", gotT, wantT)
	}
	if h := strings.TrimSpace(s.Git(dir, "rev-parse", "refs/secure/rsl")); h != c[1].String() {
		t.Fatalf("git reads %s, want %s", h, c[1])
	}
	if gs := s.Git(dir, "reflog", "show", "--format=%H %gs", "refs/secure/rsl"); gs != c[1].String()+" git-secure: record refs/heads/main again" {
		t.Fatalf("git reflog: %q", gs)
	}
	if _, err := os.Stat(filepath.Join(git, "refs", "secure", "rsl.lock")); !os.IsNotExist(err) {
		t.Fatalf("lock left: %v", err)
	}
}

// In-process, the compare-and-swap holds as git's: a ref moved after the
// start fails the update (ErrRefChanged naming the ref, nothing changed,
// no reflog line); a lock held by another process is waited for, then
// reported (ErrLocked naming the lock) and left alone.
func TestUpdateRefInProcessCompareAndSwap(t *testing.T) {
	s, dir, r, c := refUpdateRepo(t)
	git := filepath.Join(dir, ".git")
	tx, err := r.StartUpdateRefs("stale")
	if err != nil {
		t.Fatal(err)
	}
	s.Git(dir, "update-ref", "refs/secure/rsl", c[0].String(), c[2].String())
	err = tx.Apply([]RefUpdate{{Name: "refs/secure/rsl", Old: c[2], New: c[1]}})
	if !errors.Is(err, ErrRefChanged) || !strings.Contains(err.Error(), "refs/secure/rsl is at "+c[0].String()) {
		t.Fatalf("stale transaction: %v", err)
	}
	if tx.cmd != nil {
		t.Fatal("git update-ref started")
	}
	if h := strings.TrimSpace(s.Git(dir, "rev-parse", "refs/secure/rsl")); h != c[0].String() {
		t.Fatalf("changed by a stale transaction: %s", h)
	}
	if log, err := os.ReadFile(filepath.Join(git, "logs", "refs", "secure", "rsl")); err == nil && strings.Contains(string(log), c[1].String()) {
		t.Fatalf("reflog of a failed update: %q", log)
	}
	lock := filepath.Join(git, "refs", "secure", "rsl.lock")
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatalf("lock left: %v", err)
	}
	// A lock someone else holds.
	if err := os.WriteFile(lock, []byte("held\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tx, err = r.StartUpdateRefs("locked")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = tx.Apply([]RefUpdate{{Name: "refs/secure/rsl", Old: c[0], New: c[1]}})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), lock) {
		t.Fatalf("held lock: %v", err)
	}
	if waited := time.Since(start); waited < refLockTimeout/2 {
		t.Errorf("gave up on the lock after %v, git waits %v", waited, refLockTimeout)
	}
	if b, err := os.ReadFile(lock); err != nil || string(b) != "held\n" {
		t.Fatalf("the other process's lock was touched: %q, %v", b, err)
	}
	if h := strings.TrimSpace(s.Git(dir, "rev-parse", "refs/secure/rsl")); h != c[0].String() {
		t.Fatalf("changed under another process's lock: %s", h)
	}
}

// Whatever git would do beyond moving a loose ref is left to git: a
// reference-transaction hook (which must run: a guard), hooks elsewhere,
// fsync or shared-repository settings, a date from the environment, the
// ref HEAD names (git logs HEAD too), a ref that is only packed. The transaction still succeeds, through git.
func TestUpdateRefInProcessFallsBackToGit(t *testing.T) {
	hook := func(dir, at string) string {
		log := filepath.Join(dir, "hook.log")
		if err := os.MkdirAll(at, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(at, "reference-transaction"), []byte("#!/bin/sh\necho \"$1\" >>'"+log+"'\ncat >/dev/null\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return log
	}
	tests := []struct {
		name      string
		env       []string
		setup     func(t *testing.T, s *testutil.Sandbox, dir string) (hookLog string)
		startsGit bool // at StartUpdateRefs already
	}{
		{"hook in hooks", nil, func(t *testing.T, _ *testutil.Sandbox, dir string) string {
			return hook(dir, filepath.Join(dir, ".git", "hooks"))
		}, true},
		{"hook in core.hooksPath", nil, func(t *testing.T, s *testutil.Sandbox, dir string) string {
			s.Git(dir, "config", "core.hooksPath", "my-hooks")
			return hook(dir, filepath.Join(dir, "my-hooks"))
		}, true},
		{"core.fsync", nil, func(t *testing.T, s *testutil.Sandbox, dir string) string {
			s.Git(dir, "config", "core.fsync", "reference")
			return ""
		}, true},
		{"core.sharedRepository", nil, func(t *testing.T, s *testutil.Sandbox, dir string) string {
			s.Git(dir, "config", "core.sharedRepository", "group")
			return ""
		}, true},
		{"GIT_COMMITTER_DATE", []string{"GIT_COMMITTER_DATE=@1700000000 +0000"}, func(*testing.T, *testutil.Sandbox, string) string {
			return ""
		}, true},
		{"HEAD names the ref", nil, func(t *testing.T, s *testutil.Sandbox, dir string) string {
			s.Git(dir, "symbolic-ref", "HEAD", "refs/secure/rsl")
			return ""
		}, false},
		{"packed only", nil, func(t *testing.T, s *testutil.Sandbox, dir string) string {
			s.Git(dir, "pack-refs", "--all")
			return ""
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, dir, r, c := refUpdateRepo(t, tt.env...)
			hookLog := tt.setup(t, s, dir)
			r.cfgMu.Lock()
			r.cfgRead = false // read the configuration the setup changed
			r.cfgMu.Unlock()
			tx, err := r.StartUpdateRefs("through git")
			if err != nil {
				t.Fatal(err)
			}
			if (tx.cmd != nil) != tt.startsGit {
				t.Fatalf("git started at once: %v, want %v", tx.cmd != nil, tt.startsGit)
			}
			if err := tx.Apply([]RefUpdate{{Name: "refs/secure/rsl", Old: c[2], New: c[1]}}); err != nil {
				t.Fatal(err)
			}
			if tx.cmd == nil {
				t.Fatal("done in-process")
			}
			if h := strings.TrimSpace(s.Git(dir, "rev-parse", "refs/secure/rsl")); h != c[1].String() {
				t.Fatalf("ref at %s, want %s", h, c[1])
			}
			if hookLog != "" {
				if b, _ := os.ReadFile(hookLog); string(b) != "prepared\ncommitted\n" {
					t.Fatalf("reference-transaction hook ran for %q", b)
				}
			}
		})
	}
}
