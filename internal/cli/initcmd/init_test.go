package initcmd

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/clitest"
)

// TestRunInit: init records the policy and every branch and tag, says
// what to do next, and refuses a second time.
func TestRunInit(t *testing.T) {
	r := clitest.New(t)
	r.Git("tag", "v1")
	if err := runInit(context.Background(), &Options{F: r.F(), Key: r.Priv("alice"), NoHooks: true}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "init output", r.Stdout.String(),
		"Initialized git-secure with root and rules key "+r.FP("alice")+".",
		"Recorded 3 entries: the policy and 2 refs.", "git secure policy add-person NAME")
	if strings.Contains(r.Stdout.String(), "hooks installed") {
		t.Errorf("init --no-hooks installed hooks:\n%s", r.Stdout)
	}
	if got := r.Git("for-each-ref", "--format=%(refname)", "refs/secure/"); got != "refs/secure/policy\nrefs/secure/rsl" {
		t.Errorf("refs after init: %q", got)
	}
	err := runInit(context.Background(), &Options{F: r.F(), Key: r.Priv("alice"), NoHooks: true})
	if err == nil || !strings.Contains(err.Error(), "already set up for git-secure") {
		t.Errorf("second init: %v", err)
	}
}

// TestRunInitRecordsRemoteOnlyBranches: in a clone, the upstream remote's
// branches that have no local branch are recorded too (a rule added for
// them later must find an entry to judge), under refs/heads/ names, and
// only those of the current branch's remote.
func TestRunInitRecordsRemoteOnlyBranches(t *testing.T) {
	tests := []struct {
		name, upstream string
		want, absent   []string
		say            string
	}{
		{"origin by default", "", []string{"refs/heads/dev", "refs/heads/release/1"}, []string{"refs/heads/HEAD", "refs/heads/other"},
			"2 of them are branches of origin with no local branch (a fresh clone has one), recorded at origin's tips: dev release/1."},
		{"the current branch's remote", "upstream", []string{"refs/heads/other"}, []string{"refs/heads/dev", "refs/heads/release/1"},
			"1 of them are branches of upstream with no local branch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := clitest.New(t)
			head := r.Git("rev-parse", "HEAD")
			cur := r.Git("symbolic-ref", "--short", "HEAD")
			for _, ref := range []string{"refs/remotes/origin/dev", "refs/remotes/origin/release/1", "refs/remotes/origin/" + cur, "refs/remotes/upstream/other"} {
				r.Git("update-ref", ref, head+"~1")
			}
			r.Git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/"+cur)
			r.Git("remote", "add", "origin", "https://example.invalid/origin.git")
			r.Git("remote", "add", "upstream", "https://example.invalid/upstream.git")
			if tt.upstream != "" {
				r.Git("config", "branch."+cur+".remote", tt.upstream)
			}
			if err := runInit(context.Background(), &Options{F: r.F(), Key: r.Priv("alice"), NoHooks: true}); err != nil {
				t.Fatal(err)
			}
			clitest.Contains(t, "init output", r.Stdout.String(), tt.say)
			log := r.Git("log", "--format=%B", "refs/secure/rsl")
			for _, ref := range tt.want {
				if !strings.Contains(log, "ref: "+ref+"\n") {
					t.Errorf("%s not recorded; log:\n%s", ref, log)
				}
			}
			for _, ref := range append(tt.absent, "refs/remotes/") {
				if strings.Contains(log, "ref: "+ref) {
					t.Errorf("%s recorded; log:\n%s", ref, log)
				}
			}
			// The local branch keeps its own tip, not the remote's older one.
			if !strings.Contains(log, "ref: refs/heads/"+cur+"\n") || strings.Count(log, "ref: refs/heads/"+cur+"\n") != 1 {
				t.Errorf("refs/heads/%s recorded other than once:\n%s", cur, log)
			}
		})
	}
}

// TestRunInitSkipsPullRequestTracking: with GitHub's common pull request
// refspec (+refs/pull/*/head:refs/remotes/origin/pr/*) next to the default
// one, origin/pr/N is the remote's refs/pull/N/head, not a branch pr/N:
// init records the real branches and no refs/heads/pr/N (it recorded
// them, and the first push then created those branches on the server).
func TestRunInitSkipsPullRequestTracking(t *testing.T) {
	r := clitest.New(t)
	head := r.Git("rev-parse", "HEAD")
	r.Git("remote", "add", "origin", "https://example.invalid/origin.git")
	r.Git("config", "--add", "remote.origin.fetch", "+refs/pull/*/head:refs/remotes/origin/pr/*")
	for _, ref := range []string{"refs/remotes/origin/dev", "refs/remotes/origin/pr/1", "refs/remotes/origin/pr/2"} {
		r.Git("update-ref", ref, head)
	}
	if err := runInit(context.Background(), &Options{F: r.F(), Key: r.Priv("alice"), NoHooks: true}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "init output", r.Stdout.String(), "1 of them are branches of origin with no local branch (a fresh clone has one), recorded at origin's tips: dev.")
	log := r.Git("log", "--format=%B", "refs/secure/rsl")
	if !strings.Contains(log, "ref: refs/heads/dev\n") {
		t.Errorf("refs/heads/dev not recorded; log:\n%s", log)
	}
	if strings.Contains(log, "pr/") || strings.Contains(log, "refs/pull/") {
		t.Errorf("a pull request's tracking ref recorded; log:\n%s", log)
	}
}

// TestRunInitSaysWhatItRecords: init of a repository with a thousand
// tags (one signed entry each) says on stderr what it is doing instead of
// staying silent (3 037 refs: 13 s without a word); a small one says
// nothing there.
func TestRunInitSaysWhatItRecords(t *testing.T) {
	r := clitest.New(t)
	head := r.Git("rev-parse", "HEAD")
	var b strings.Builder
	for i := 0; i < 999; i++ {
		fmt.Fprintf(&b, "create refs/tags/v0.%d %s\n", i, head)
	}
	if out, err := r.S.RunErr(r.Dir, []byte(b.String()), "git", "update-ref", "--stdin"); err != nil {
		t.Fatalf("update-ref: %v\n%s", err, out)
	}
	if err := runInit(context.Background(), &Options{F: r.F(), Key: r.Priv("alice"), NoHooks: true}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "init stderr", r.Stderr.String(), "git-secure: recording 1001 entries (the policy and every branch and tag, one signed entry each)...")
	clitest.Contains(t, "init output", r.Stdout.String(), "Recorded 1001 entries: the policy and 1000 refs.")

	small := clitest.New(t)
	if err := runInit(context.Background(), &Options{F: small.F(), Key: small.Priv("alice"), NoHooks: true}); err != nil {
		t.Fatal(err)
	}
	if small.Stderr.Len() != 0 {
		t.Errorf("init of one branch wrote to stderr: %q", small.Stderr)
	}
}
