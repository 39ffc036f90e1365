package initcmd

import (
	"context"
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
