package verifycmd

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/testing/clitest"
	"github.com/git-secure/git-secure/internal/verify"
)

// TestRunVerify: a repository as init left it verifies; --at answers for
// a recorded commit and not for another; a log checked under a pin of
// another key fails with the problem, not with a printed message.
func TestRunVerify(t *testing.T) {
	r := clitest.New(t)
	r.Init()
	ctx := context.Background()
	if err := runVerify(ctx, &Options{F: r.F()}); err != nil {
		t.Fatalf("verify after init: %v\n%s", err, r.Stderr)
	}
	clitest.Contains(t, "verify output", r.Stdout.String(), "verified 2 entries", "judged: local refs (no remote)", "refs/heads/main", "entry #2", "(* protected by a rule)")

	head := r.Git("rev-parse", "main")
	if err := runVerify(ctx, &Options{F: r.F(), Refs: []string{"main"}, At: head}); err != nil {
		t.Fatalf("verify --at %s: %v", head, err)
	}
	clitest.Contains(t, "verify --at", r.Stdout.String(), head+" was a verified state of refs/heads/main: entry #2")
	first := r.Git("rev-list", "--max-parents=0", "main")
	err := runVerify(ctx, &Options{F: r.F(), Refs: []string{"main"}, At: first})
	if e, ok := report.As(err); !ok || e.Code != report.ExitFailed {
		t.Errorf("verify --at an unrecorded commit: %v, want exit 1", err)
	}
	clitest.Contains(t, "verify --at stderr", r.Stderr.String(), first+" was never a verified state of refs/heads/main")
	if err := runVerify(ctx, &Options{F: r.F(), At: head}); err == nil || err.Error() != "--at and --attest need exactly one REF" {
		t.Errorf("verify --at without a REF: %v", err)
	}

	// A log anchored at alice's key, checked under a pin of bob's.
	err = runVerify(ctx, &Options{F: r.F(), Full: true, Pin: cmdutil.Pin{Keys: []string{r.FP("bob")}, KeysSet: true}})
	var failed *verify.Failed
	if !errors.As(err, &failed) || len(failed.Problems) == 0 || !strings.Contains(err.Error(), r.FP("bob")) {
		t.Fatalf("verify under a pin of another key: %v, want a *verify.Failed naming the pinned key", err)
	}
	if r.Stdout.Len() != 0 {
		t.Errorf("a failed verify printed a result:\n%s", r.Stdout)
	}
}

// TestRunVerifyListsATagOnce: in a clone that fetches tags into
// refs/remote-tags/origin/* as well (README, "Verify in CI"), a tag is
// judged as refs/tags/X and as origin's: the text lists it once (a CI log
// listed every tag twice), --json keeps both.
func TestRunVerifyListsATagOnce(t *testing.T) {
	r := clitest.New(t)
	r.Git("tag", "v1")
	r.Init()
	r.Git("remote", "add", "origin", r.Dir)
	r.Git("config", "--add", "remote.origin.fetch", "+refs/tags/*:refs/remote-tags/origin/*")
	r.Git("fetch", "-q", "origin")
	ctx := context.Background()
	if err := runVerify(ctx, &Options{F: r.F(), Verbose: true}); err != nil {
		t.Fatalf("verify: %v\n%s", err, r.Stderr)
	}
	out := r.Stdout.String()
	clitest.Contains(t, "verify output", out, "judged: ", "refs/tags/v1")
	if n := strings.Count(out, "refs/tags/v1 "); n != 1 {
		t.Errorf("refs/tags/v1 listed %d times, want once:\n%s", n, out)
	}
	r.Stdout.Reset()
	if err := runVerify(ctx, &Options{F: r.F(), JSON: true}); err != nil {
		t.Fatalf("verify --json: %v", err)
	}
	if n := strings.Count(r.Stdout.String(), `"ref": "refs/tags/v1"`); n != 2 {
		t.Errorf("--json lists refs/tags/v1 %d times, want 2 (the tag and origin's):\n%s", n, r.Stdout)
	}
}
