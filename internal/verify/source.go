package verify

import (
	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/freshness"
	"github.com/git-secure/git-secure/internal/gitrepo"
)

// Repository is the source of objects and refs that verification reads:
// the log, the policy and approval commits, the trees that rules judge and
// the refs the log is checked against. *gitrepo.Repo satisfies it.
type Repository interface {
	Source
	attest.Repo
	freshness.Reader
	ListRefs(prefixes ...string) ([]gitrepo.Ref, error)
	// HistoryFiles lists the files that change what git reads as history
	// (grafts, a shallow file).
	HistoryFiles() ([]gitrepo.HistoryFile, error)
	// WorkTree is the working tree ("" in a bare repository).
	WorkTree() string
}

var _ Repository = (*gitrepo.Repo)(nil)
