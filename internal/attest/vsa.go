package attest

import (
	"errors"
	"fmt"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// PredicateVSA is SLSA's verification summary attestation, which
// "git secure verify --attest" writes for downstream consumers.
const PredicateVSA = "https://slsa.dev/verification_summary/v1"

// VerifierID identifies git-secure as the verifier in a summary.
const VerifierID = "https://git-secure.dev/verifier"

// Summary is a source verification summary: after a successful
// verification, Ref of Repository was at Commit, recorded by RSL entry
// Entry, under the policy at PolicyCommit.
type Summary struct {
	Repository   string // URI of the repository (e.g. git+https://host/repo.git)
	Ref          string
	Commit       gitrepo.Hash // the ref's verified value
	Entry        uint64       // RSL entry that records it
	EntryID      gitrepo.Hash
	RSLTip       gitrepo.Hash
	PolicyCommit gitrepo.Hash
	RootVersion  int64
	RulesVersion int64
	Verified     time.Time
	Version      string // git-secure's version
}

// Statement returns the in-toto Statement v1 (SLSA VSA v1 predicate) of s.
func (s Summary) Statement() ([]byte, error) {
	if err := ValidRef(s.Ref); err != nil {
		return nil, err
	}
	if s.Commit.IsZero() || s.EntryID.IsZero() || s.PolicyCommit.IsZero() || s.Repository == "" {
		return nil, errors.New("attest: summary is incomplete")
	}
	resource := s.Repository + "@" + s.Ref
	pred := map[string]any{
		"formatVersion":      FormatVersion,
		"verifier":           map[string]any{"id": VerifierID, "version": map[string]any{"git-secure": s.Version}},
		"timeVerified":       s.Verified.UTC().Format(time.RFC3339),
		"resourceUri":        resource,
		"policy":             map[string]any{"uri": s.Repository + "@refs/secure/policy", "digest": map[string]any{"gitCommit": s.PolicyCommit.String()}},
		"verificationResult": "PASSED",
		"verifiedLevels":     []any{},
		"gitSecure": map[string]any{
			"ref": s.Ref, "commit": s.Commit.String(),
			"rslEntry": fmt.Sprint(s.Entry), "rslEntryId": s.EntryID.String(), "rslTip": s.RSLTip.String(),
			"rootVersion": fmt.Sprint(s.RootVersion), "rulesVersion": fmt.Sprint(s.RulesVersion),
		},
	}
	return encodeStatement(resource, "gitCommit", s.Commit.String(), PredicateVSA, pred)
}

func isSummary(statement []byte) bool {
	_, _, _, err := parseStatement(statement, PredicateVSA, "gitCommit")
	return err == nil
}
