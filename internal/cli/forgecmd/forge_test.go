package forgecmd

import (
	"context"
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
	} {
		opts := tc.opts
		opts.F = r.F()
		err := runRecordApprovals(ctx, &opts)
		if e, ok := report.As(err); !ok || e.Code != report.ExitUsage || e.Msg != tc.want {
			t.Errorf("%s: %v, want exit 2 %q", tc.name, err, tc.want)
		}
	}
}
