package forgecmd

import (
	"context"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/testing/clitest"
)

// TestRunRecordApprovalsUsage: a missing pull request number or forge
// repository is a usage error (exit 2) that says what to pass, before any
// request is made.
func TestRunRecordApprovalsUsage(t *testing.T) {
	r := clitest.New(t)
	r.Init()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts RecordApprovalsOptions
		want string
	}{
		{"no pr", RecordApprovalsOptions{Repo: "o/n"}, "--pr must be a pull request number"},
		{"no repo", RecordApprovalsOptions{PR: 7}, `github: repository "" is not OWNER/NAME (pass --repo OWNER/NAME)`},
		{"bad repo", RecordApprovalsOptions{PR: 7, Repo: "o/n/x"}, `github: repository "o/n/x" is not OWNER/NAME (pass --repo OWNER/NAME)`},
		{"mr without --gitlab", RecordApprovalsOptions{MR: 7, Repo: "o/n"}, "--mr and --commit go with --gitlab, --pr without it (GitHub)"},
		{"--pr with --gitlab", RecordApprovalsOptions{GitLab: true, PR: 7, MR: 7, Repo: "o/n"}, "--mr and --commit go with --gitlab, --pr without it (GitHub)"},
		{"gitlab, no mr", RecordApprovalsOptions{GitLab: true, Repo: "o/n"}, "--gitlab takes --mr IID (a merge request, as in !7) or --commit SHA (the merge requests merged as it), one of them"},
		{"gitlab, mr and commit", RecordApprovalsOptions{GitLab: true, MR: 7, Commit: "HEAD", Repo: "o/n"}, "--gitlab takes --mr IID (a merge request, as in !7) or --commit SHA (the merge requests merged as it), one of them"},
		{"gitlab, no project", RecordApprovalsOptions{GitLab: true, MR: 7}, `gitlab: project "" is not GROUP/NAME or a project id (pass --repo GROUP/NAME)`},
	} {
		opts := tc.opts
		opts.F = r.F()
		err := runRecordApprovals(ctx, &opts)
		if e, ok := report.As(err); !ok || e.Code != report.ExitUsage || e.Msg != tc.want {
			t.Errorf("%s: %v, want exit 2 %q", tc.name, err, tc.want)
		}
	}
}

// TestRunRecordApprovalsFromCIEnvironment: with no --repo the forge
// repository comes from the CI job's variable, and --repo wins over it.
func TestRunRecordApprovalsFromCIEnvironment(t *testing.T) {
	r := clitest.New(t)
	r.Init()
	r.Vars["GITHUB_REPOSITORY"] = "env/gh/x"
	r.Vars["CI_PROJECT_PATH"] = "env lab"
	for _, tc := range []struct {
		name string
		opts RecordApprovalsOptions
		want string
	}{
		{"github from env", RecordApprovalsOptions{PR: 7}, `github: repository "env/gh/x" is not OWNER/NAME (pass --repo OWNER/NAME)`},
		{"github flag wins", RecordApprovalsOptions{PR: 7, Repo: "o/n/y"}, `github: repository "o/n/y" is not OWNER/NAME (pass --repo OWNER/NAME)`},
		{"gitlab from env", RecordApprovalsOptions{GitLab: true, MR: 7}, `gitlab: project "env lab" is not GROUP/NAME or a project id (pass --repo GROUP/NAME)`},
	} {
		opts := tc.opts
		opts.F = r.F()
		err := runRecordApprovals(context.Background(), &opts)
		if e, ok := report.As(err); !ok || e.Code != report.ExitUsage || e.Msg != tc.want {
			t.Errorf("%s: %v, want exit 2 %q", tc.name, err, tc.want)
		}
	}
}

// TestRunRecordMergeUsage: an unknown commit is a usage error naming it;
// a key that is no forge app of the policy is refused (exit 1) before
// anything is signed.
func TestRunRecordMergeUsage(t *testing.T) {
	r := clitest.New(t)
	r.Init()
	err := runRecordMerge(context.Background(), &RecordMergeOptions{F: r.F(), Ref: "main", To: "no-such-commit"})
	if e, ok := report.As(err); !ok || e.Code != report.ExitUsage || e.Msg != `unknown commit "no-such-commit": fetch it first (git fetch origin main)` {
		t.Errorf("unknown commit: %v", err)
	}
	for _, tc := range []struct {
		opts RecordMergeOptions
		want string
	}{
		{RecordMergeOptions{Forge: "svn"}, `--forge is github or gitlab, not "svn"`},
		{RecordMergeOptions{Repo: "o/n"}, "--repo and --api-url go with --forge github|gitlab"},
		{RecordMergeOptions{Forge: "github", Repo: "o"}, `github: repository "o" is not OWNER/NAME (pass --repo OWNER/NAME)`},
		{RecordMergeOptions{Forge: "gitlab", Repo: "o"}, `gitlab: project "o" is not GROUP/NAME or a project id (pass --repo GROUP/NAME)`},
	} {
		opts := tc.opts
		opts.F, opts.Ref = r.F(), "main"
		if e, ok := report.As(runRecordMerge(context.Background(), &opts)); !ok || e.Code != report.ExitUsage || e.Msg != tc.want {
			t.Errorf("%+v: %v, want exit 2 %q", tc.opts, e, tc.want)
		}
	}
	err = runRecordMerge(context.Background(), &RecordMergeOptions{F: r.F(), Ref: "main", Key: r.Priv("alice")})
	if err == nil || !strings.Contains(err.Error(), "is not a forge app of the policy in force, so its entries would not verify; a root key holder runs: git secure trust add-forge-app NAME --key BRIDGE.pub") {
		t.Errorf("a person's key as the bridge: %v", err)
	}
}
