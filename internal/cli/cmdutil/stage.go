package cmdutil

import (
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/porcelain"
)

// Stage stages a policy change described by desc (policy, trust and
// freshness changes) and prints the signatures it still needs.
func Stage(f *factory.Factory, desc string, edit porcelain.Edit) error {
	r, err := f.Repo()
	if err != nil {
		return err
	}
	st, err := r.Stage(desc, edit)
	if err != nil {
		return err
	}
	f.Out("staged: %s\n", desc)
	return PrintStatus(f, st)
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
