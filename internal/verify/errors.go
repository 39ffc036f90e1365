package verify

import (
	"errors"
	"fmt"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// Kinds of verification failure. Every Problem wraps exactly one of them, so
// callers can test with errors.Is.
var (
	// ErrMalformed: the log or a metadata file does not parse.
	ErrMalformed = errors.New("malformed metadata")
	// ErrSignature: a signature is missing, does not verify, or was made by a
	// key the policy in force does not know.
	ErrSignature = errors.New("bad signature")
	// ErrUnauthorized: a signer is known but no rule lets them make this change.
	ErrUnauthorized = errors.New("not authorized")
	// ErrThreshold: too few distinct persons signed or approved.
	ErrThreshold = errors.New("threshold not met")
	// ErrRollback: metadata went back to an older version.
	ErrRollback = errors.New("rollback")
	// ErrExpired: the policy in force has expired.
	ErrExpired = errors.New("expired metadata")
	// ErrChain: an entry does not follow from the state before it (wrong old
	// value, bad annotation).
	ErrChain = errors.New("broken chain")
	// ErrUnrecorded: a ref's current value is not what the log records.
	ErrUnrecorded = errors.New("ref does not match the log")
	// ErrMissingObject: a commit that verification needs is not in the
	// repository at all (history rewritten away, a shallow clone). Only
	// this kind may be forgiven, for an entry a later entry of the same
	// ref superseded.
	ErrMissingObject = errors.New("missing object")
	// ErrBadObject: an object verification needs is in the repository but
	// cannot be read or parsed, or something it names is missing (a
	// damaged repository, or an object crafted to be misread). The entry
	// fails, always.
	ErrBadObject = errors.New("unreadable object")
	// ErrStale: the policy requires a fresh statement of the log tip
	// (refs/secure/timestamp) and the newest one is missing, too old,
	// badly signed or vouches for a log this one does not extend.
	ErrStale = errors.New("stale state")
	// ErrOrgPolicy: an entry of a repository that inherits an
	// organisation policy does not name a version of it that exists and
	// is not older than the last one the log named (internal/org).
	ErrOrgPolicy = errors.New("organisation policy")
)

// Problem is one verification failure: what (entry, ref), why (rule, kind,
// detail) and what to do next (hint).
type Problem struct {
	Entry   uint64       // RSL entry number, 0 when about the current state
	EntryID gitrepo.Hash // RSL entry commit
	Ref     string
	Rule    string
	Kind    error
	Detail  string
	Hint    string
	// Recorded is, for a problem about a ref's current state (Entry 0),
	// the value the log's latest entry for Ref records: zero when the log
	// has none or records a deletion. Callers word their hints with it
	// instead of reading the log again per problem.
	Recorded gitrepo.Hash

	// unseen: a path rule failed only because the states its diff needed
	// are missing (Failure.Unseen); in a shallow clone that is a check
	// the clone could not make (shallowUnseen).
	unseen bool
}

func (p *Problem) Error() string {
	var b strings.Builder
	if p.Entry != 0 {
		fmt.Fprintf(&b, "entry #%d (%s)", p.Entry, short(p.EntryID))
	}
	if p.Ref != "" {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		b.WriteString(p.Ref)
	}
	if p.Rule != "" {
		fmt.Fprintf(&b, ", rule %s", p.Rule)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	// A problem of the whole clone (a shallow file, a replace ref) names
	// no entry and no ref: it starts with its kind.
	fmt.Fprintf(&b, "%v: %s", p.Kind, p.Detail)
	return b.String()
}

// Unwrap lets errors.Is match the Problem's kind.
func (p *Problem) Unwrap() error { return p.Kind }

func short(h gitrepo.Hash) string { return h.String()[:12] }

// Failed is returned by Verify when at least one check failed. It lists
// every Problem found, in log order.
type Failed struct{ Problems []*Problem }

func (f *Failed) Error() string {
	if len(f.Problems) == 1 {
		return "verification failed: " + f.Problems[0].Error()
	}
	return fmt.Sprintf("verification failed with %d problems; first: %v", len(f.Problems), f.Problems[0])
}

// Unwrap returns the problems so errors.Is sees every kind.
func (f *Failed) Unwrap() []error {
	out := make([]error, len(f.Problems))
	for i, p := range f.Problems {
		out[i] = p
	}
	return out
}
