package policycmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/testing/clitest"
)

// TestRunPolicyEdits: stage persons and a rule through the run functions,
// list the staged change as JSON, apply it, and check the history
// against it (exit 1: it would have refused init's entries).
func TestRunPolicyEdits(t *testing.T) {
	r := clitest.New(t)
	r.Init()
	ctx := context.Background()
	var said string
	for _, name := range []string{"alice", "bob"} {
		if err := runAddPerson(ctx, &AddPersonOptions{F: r.F(), Args: []string{name}, Keys: []string{r.Pub(name)}}); err != nil {
			t.Fatal(err)
		}
		clitest.Contains(t, "add-person", r.Stdout.String(), "staged: add person "+name)
		said += r.Stdout.String()
	}
	// Said once for a staged change, not after every edit of it.
	clitest.Contains(t, "add-person", said, "signatures needed before git secure policy apply", "git secure policy apply adds your signature")
	if n := strings.Count(said, "signatures needed"); n != 1 {
		t.Errorf("two edits of one staged change listed the signatures needed %d times:\n%s", n, said)
	}
	if err := runAddRule(ctx, &AddRuleOptions{F: r.F(), Args: []string{"main"}, Refs: []string{"refs/heads/main"}, Allow: []string{"alice", "bob"}, Threshold: 0, ThresholdSet: true}); err == nil || err.Error() != "--threshold must be at least 1" {
		t.Errorf("add-rule --threshold 0: %v", err)
	}
	if err := runAddRule(ctx, &AddRuleOptions{F: r.F(), Args: []string{"main"}, Refs: []string{"**"}, Allow: []string{"alice", "bob"}, Threshold: 2, ThresholdSet: true}); err != nil {
		t.Fatal(err)
	}
	if err := cmdutil.RunRemove(ctx, &cmdutil.RemoveOptions{F: r.F(), Command: "remove-rule", Named: true, What: "remove rule ", Remove: (*policy.Policy).RemoveRule}); err == nil || err.Error() != "remove-rule takes exactly one NAME" {
		t.Errorf("remove-rule without NAME: %v", err)
	}

	if err := runList(ctx, &ListOptions{F: r.F(), JSON: true, Staged: true}); err != nil {
		t.Fatal(err)
	}
	var j PolicyJSON
	if err := json.Unmarshal(r.Stdout.Bytes(), &j); err != nil {
		t.Fatalf("policy list --json: %v\n%s", err, r.Stdout)
	}
	if !j.Staged || len(j.Persons) != 2 || len(j.Rules) != 1 || strings.Join(j.Rules[0].Refs, ",") != "refs/**" || j.Rules[0].Threshold != 2 {
		t.Errorf("staged policy: %+v", j)
	}
	if got := strings.Join(j.StagedChanges, "; "); !strings.Contains(got, "adds person alice") || !strings.Contains(got, "adds rule main") {
		t.Errorf("policy list --json --staged: stagedChanges = %q, want what the change adds", got)
	}
	// The human list says what the staged change does against the
	// policy in force, and --staged does not tell you to run itself.
	r.Stdout.Reset()
	if err := runList(ctx, &ListOptions{F: r.F()}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "policy list with a staged change", r.Stdout.String(), "a change is staged, not in force yet:\n  adds person alice", "adds rule main",
		"git secure policy list --staged shows the whole staged policy; git secure policy apply puts it in force")
	r.Stdout.Reset()
	if err := runList(ctx, &ListOptions{F: r.F(), Staged: true}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "policy list --staged", r.Stdout.String(), "adds rule main", "this is the staged policy, not in force yet: git secure policy apply puts it in force")
	if strings.Contains(r.Stdout.String(), "see git secure policy list --staged") || strings.Contains(r.Stdout.String(), "list --staged shows") {
		t.Errorf("policy list --staged tells you to run itself:\n%s", r.Stdout)
	}

	if err := runApply(ctx, &StagedOptions{F: r.F(), Key: r.Priv("alice")}); err != nil {
		t.Fatalf("apply: %#v\n%s%s", err, r.Stdout, r.Stderr)
	}
	clitest.Contains(t, "apply", r.Stdout.String(), "policy applied: root v1, rules v2, recorded as entry #3")
	// Under a rule for every ref signed by two, init's own entries
	// (alice's alone) would have been refused.
	err := runCheck(ctx, &StagedOptions{F: r.F()})
	if e, ok := report.As(err); !ok || e.Code != report.ExitFailed {
		t.Fatalf("policy check: %v, want exit 1", err)
	}
	clitest.Contains(t, "check", r.Stdout.String(), "the policy in force (nothing is staged) would have refused", "refs/heads/main")
}
