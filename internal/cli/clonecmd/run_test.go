package clonecmd

import (
	"context"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/testing/clitest"
)

// TestRunCloneUsage: a pin that cannot be met, or a URL without a name,
// are usage errors before git runs.
func TestRunCloneUsage(t *testing.T) {
	r := clitest.New(t)
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"no URL", Options{}, "clone takes URL and an optional DIR"},
		{"threshold without keys", Options{Args: []string{r.Dir, "x"}, Pin: cmdutil.Pin{Threshold: 1, ThresholdSet: true}}, "without pinned root keys"},
		{"URL without a name", Options{Args: []string{"/"}}, `cannot tell a directory name from "/": give DIR`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.F = r.F()
			err := runClone(context.Background(), &opts)
			if e, ok := report.As(err); !ok || e.Code != report.ExitUsage || !strings.Contains(e.Msg, tc.want) {
				t.Errorf("clone: %v, want a usage error with %q", err, tc.want)
			}
		})
	}
}
