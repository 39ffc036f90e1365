package factory

import (
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

// NotSetUp is what every command that needs git-secure's log and policy
// says when the repository has neither (or only one of them).
const NotSetUp = "this repository is not set up for git-secure: run git secure init, or fetch refs/secure/* from the remote"

// SetUp opens the repository and checks that it is set up for git-secure:
// it has a log (refs/secure/rsl) and a policy (refs/secure/policy). The
// error is a usage error in the one wording NotSetUp.
func (f *Factory) SetUp() (*porcelain.Repo, error) {
	r, err := f.Repo()
	if err != nil {
		return nil, err
	}
	refs, err := r.Git.ListRefs(rsl.Ref, policy.Ref) // one process for both
	if err != nil {
		return nil, err
	}
	found := 0
	for _, ref := range refs {
		if (ref.Name == rsl.Ref || ref.Name == policy.Ref) && !ref.Hash.IsZero() {
			found++
		}
	}
	if found < 2 {
		return nil, report.Usagef("%s", NotSetUp)
	}
	return r, nil
}

// SetUpRef is SetUp, then name resolved to the ref the log records (main
// is refs/heads/main, or refs/tags/main when only that exists).
func (f *Factory) SetUpRef(name string) (*porcelain.Repo, string, error) {
	return f.openRef(f.SetUp, name)
}

// RepoRef is Repo, then name resolved as SetUpRef does, for a command
// that may itself bring the log (approve fetches first).
func (f *Factory) RepoRef(name string) (*porcelain.Repo, string, error) {
	return f.openRef(f.Repo, name)
}

func (f *Factory) openRef(open func() (*porcelain.Repo, error), name string) (*porcelain.Repo, string, error) {
	r, err := open()
	if err != nil {
		return nil, "", err
	}
	ref, err := r.FullRefName(name)
	if err != nil {
		return nil, "", err
	}
	return r, ref, nil
}

// Signer loads the signing key: keyFile (--key) if given, else git's
// user.signingkey when gpg.format is ssh. The caller closes it.
func (f *Factory) Signer(keyFile string) (sign.Signer, error) {
	r, err := f.Repo()
	if err != nil {
		return nil, err
	}
	return r.LoadSigner(keyFile)
}
