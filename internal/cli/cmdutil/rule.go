package cmdutil

import (
	"fmt"
	"strings"

	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
)

// RuleSummary describes what a rule protects and what it needs, in one
// line (policy list, explain, verify --mergeable).
func RuleSummary(r porcelain.RuleDoc) string {
	what := policy.Namespace(r.Refs, r.Paths)
	switch {
	case len(r.Refs) > 0 || len(r.Paths) == 0:
	case r.EveryRef:
		what = append(what, "on every ref (signed before path rules were scoped; re-add it to scope it)")
	default:
		what = append(what, "on the refs the ref rules name")
	}
	line := fmt.Sprintf("%s: %d of %s", strings.Join(what, ", "), r.Threshold, strings.Join(r.Allow, ", "))
	if len(r.Require) > 0 {
		line += "; and " + strings.Join(r.Require, " and ")
	}
	if len(r.TestsBy) > 0 {
		line += "; tests passed, attested by " + strings.Join(r.TestsBy, " or ")
	}
	if r.TreeApprovals {
		line += "; tree-bound approvals count"
	}
	if r.SignedPush {
		line += "; pushed with git push --signed"
	}
	return line
}
