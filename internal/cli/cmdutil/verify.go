package cmdutil

import (
	"errors"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/verify"
)

// ProblemJSON is one problem in the verify --json document.
type ProblemJSON struct {
	Entry   uint64 `json:"entry,omitempty"`
	EntryID string `json:"entryId,omitempty"`
	Ref     string `json:"ref,omitempty"`
	Rule    string `json:"rule,omitempty"`
	Kind    string `json:"kind"`
	Detail  string `json:"detail"`
	Hint    string `json:"hint,omitempty"`
}

// VerifyJSON is the --json document of a verification (verify, policy
// check).
type VerifyJSON struct {
	OK bool `json:"ok"`
	// Judged says which refs were compared with the log (verify.Result.Judged).
	Judged   string         `json:"judged,omitempty"`
	Result   *verify.Result `json:"result,omitempty"`
	Problems []ProblemJSON  `json:"problems,omitempty"`
	Seconds  float64        `json:"seconds"`
}

// NewVerifyJSON is the --json document of a verification.
func NewVerifyJSON(res *verify.Result, failed *verify.Failed) VerifyJSON {
	out := VerifyJSON{OK: failed == nil, Result: res}
	if res != nil {
		out.Judged = res.Judged
	}
	if failed != nil {
		for _, p := range failed.Problems {
			out.Problems = append(out.Problems, ProblemJSON{Entry: p.Entry, EntryID: HashOrEmpty(p.EntryID), Ref: p.Ref, Rule: p.Rule, Kind: p.Kind.Error(), Detail: p.Detail, Hint: p.Hint})
		}
	}
	return out
}

// JudgedOptions are the options of a verification of this repository's
// state: nil Clone (its own refs, strictly) for a bare repository or a
// clone without remotes, else the state of the remote named, or of the
// default remote (verify.ChooseRemote). Without a remote a working
// repository's refs are the only state there is: judged, but a branch
// ahead of its entry is work nothing has served yet.
func JudgedOptions(g *gitrepo.Repo, remote string) (verify.Options, error) {
	clone, err := judgedClone(g, remote)
	if err != nil {
		return verify.Options{}, err
	}
	noRemote := clone == nil && g.WorkTree() != ""
	return verify.Options{Clone: clone, LocalAhead: noRemote, IgnoreMissingRefs: noRemote}, nil
}

func judgedClone(g *gitrepo.Repo, named string) (*verify.CloneState, error) {
	if g.WorkTree() == "" {
		if named != "" {
			return nil, report.Usagef("--remote: a bare repository is judged by its own refs, which are what it serves")
		}
		return nil, nil
	}
	remote, err := verify.ChooseRemote(g, named)
	if errors.Is(err, verify.ErrNoRemote) {
		return nil, nil
	}
	if err != nil {
		return nil, report.Usagef("%v", err)
	}
	st, err := verify.LoadCloneState(g, remote)
	if err != nil {
		return nil, report.Usagef("%v", err)
	}
	return st, nil
}

// Failed is the *verify.Failed err is or wraps; ok is false for any other
// non-nil error, which the caller returns as it is.
func Failed(err error) (failed *verify.Failed, ok bool) {
	if err == nil {
		return nil, true
	}
	if errors.As(err, &failed) {
		return failed, true
	}
	return nil, false
}

// PrintVerifyJSON writes out on stdout; the error sets exit 1 when out
// records a failed verification.
func PrintVerifyJSON(f *factory.Factory, out VerifyJSON) error {
	if err := f.PrintJSON(out); err != nil {
		return err
	}
	if !out.OK {
		return report.Exit(report.ExitFailed)
	}
	return nil
}
