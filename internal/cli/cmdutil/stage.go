package cmdutil

import (
	"fmt"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/verify"
)

// Stage stages a policy change described by desc (policy, trust and
// freshness changes) and, for the first edit of a staged change, prints
// the signatures it needs.
func Stage(f *factory.Factory, desc string, edit porcelain.Edit) error {
	r, err := f.Repo()
	if err != nil {
		return err
	}
	_, before, err := r.Git.ResolveRef(policy.StagingRef)
	if err != nil {
		return err
	}
	var prev []verify.RoleStatus
	if before {
		if old, err := r.LoadStaged(); err == nil {
			prev, _ = old.Status()
		}
	}
	st, err := r.Stage(desc, edit)
	if err != nil {
		return err
	}
	f.Out("staged: %s\n", desc)
	// A removal the rule files feel: said at once, not found later as a
	// refused push.
	for _, e := range st.Policy.RemovalEffects(st.Base) {
		f.Out("warning: %s\n", e)
	}
	if cur, err := st.Status(); err == nil && before && fmt.Sprint(cur) == fmt.Sprint(prev) {
		// Listed with an earlier edit of the staged change, unchanged
		// since: once is enough (policy list --staged shows them).
		return nil
	}
	if err := PrintStatus(f, st); err != nil {
		return err
	}
	f.Out("git secure policy apply adds your signature where your key is one of these, and puts the change in force once the thresholds are met\n")
	return nil
}

// PrintStatus prints the signatures the staged change st still needs.
func PrintStatus(f *factory.Factory, st *porcelain.Staged) error {
	statuses, err := st.Status()
	if err != nil {
		return err
	}
	f.Out("signatures needed before git secure policy apply can put it in force:\n")
	for _, s := range statuses {
		f.Out("  %s\n", s.String())
	}
	return nil
}
