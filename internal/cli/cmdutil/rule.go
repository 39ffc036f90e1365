package cmdutil

import (
	"fmt"
	"strings"

	"github.com/git-secure/git-secure/internal/porcelain"
)

// RuleJSON is one rule in policy list --json; RuleSummary describes it
// for people (policy list, explain).
type RuleJSON struct {
	Name      string   `json:"name"`
	Refs      []string `json:"refs,omitempty"`
	Paths     []string `json:"paths,omitempty"`
	Allow     []string `json:"allow"`
	Threshold int      `json:"threshold"`
	Require   []string `json:"require,omitempty"`
	TestsBy   []string `json:"requireTestsBy,omitempty"`
	// TreeApprovals: approvals bound to the new tree count.
	TreeApprovals bool `json:"treeApprovals,omitempty"`
	// SignedPush: every entry needs a push certificate (git push --signed).
	SignedPush bool `json:"requireSignedPush,omitempty"`
	// EveryRef: a path rule without ref patterns signed before path rules
	// were scoped; it judges every ref.
	EveryRef bool `json:"everyRef,omitempty"`
}

// RuleSummary describes what a rule protects and what it needs, in one line.
func RuleSummary(r RuleJSON) string {
	var what []string
	for _, x := range r.Refs {
		what = append(what, "ref "+x)
	}
	for _, x := range r.Paths {
		what = append(what, "path "+x)
	}
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

// ExplainedRuleSummary is RuleSummary for a rule explain evaluated.
func ExplainedRuleSummary(r porcelain.ExplainedRule) string {
	return RuleSummary(RuleJSON{Refs: r.Refs, Paths: r.Paths, Allow: r.Allow, Threshold: r.Threshold, Require: r.Require, TestsBy: r.TestsBy,
		TreeApprovals: r.TreeApprovals, SignedPush: r.SignedPush, EveryRef: r.EveryRef})
}
