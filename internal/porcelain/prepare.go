package porcelain

import (
	"errors"
	"fmt"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

// RefChange is one ref about to move (New zero: deletion).
type RefChange struct {
	Ref string
	New gitrepo.Hash
}

// Prepared is a chain of signed entries written as objects on top of Base
// but not yet on any ref.
type Prepared struct {
	Base    gitrepo.Hash // log tip the entries build on
	Tip     gitrepo.Hash // last new entry (== Base when nothing was needed)
	Entries []*rsl.Entry
	Pending []string // approvals still needed
}

// ErrNotAllowed is wrapped when the signer may not make a change at all.
var ErrNotAllowed = errors.New("not allowed by the policy")

// Prepare writes, on top of log tip base under the policy pol, one signed
// entry for every change whose value differs from its latest recorded one.
// It refuses (ErrRefused wrapping ErrNotAllowed) when the signer may not
// make one of them. Nothing moves: the caller pushes or updates the log ref
// with compare-and-swap from base to Tip.
func (r *Repo) Prepare(base gitrepo.Hash, pol *policy.Policy, s sign.Signer, changes []RefChange) (*Prepared, error) {
	who, err := r.Ident()
	if err != nil {
		return nil, err
	}
	p := &Prepared{Base: base, Tip: base}
	if base.IsZero() {
		return nil, usage("no log to record in: run git secure init first")
	}
	tipCommit, err := r.Git.ReadCommit(base)
	if err != nil {
		return nil, err
	}
	tipEntry, err := rsl.FromCommit(tipCommit)
	if err != nil {
		return nil, err
	}
	number := tipEntry.Number
	fp := sign.Fingerprint(s.PublicKey())
	for _, c := range changes {
		if err := rsl.ValidateRecordedRef(c.Ref); err != nil || c.Ref == rsl.PolicyRef {
			continue
		}
		last, err := r.latestFor(base, c.Ref)
		if err != nil {
			return nil, err
		}
		r.Trace.Mark("record: previous entry")
		var old gitrepo.Hash
		if last != nil {
			old = last.Entry.New
		}
		if old == c.New {
			continue
		}
		if last == nil && unrecordedForgeRef(pol, c.Ref) {
			continue
		}
		pending, err := r.precheck(pol, base, c.Ref, old, c.New, fp)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotAllowed, err)
		}
		p.Pending = append(p.Pending, pending...)
		r.Trace.Mark("record: rules")
		number++
		e := &rsl.Entry{Number: number, Type: rsl.TypeRef, Ref: c.Ref, Old: old, New: c.New}
		if p.Tip, err = rsl.Write(r.Git, e, p.Tip, who, signEntry(s)); err != nil {
			return nil, err
		}
		r.Trace.Mark("record: sign and write")
		p.Entries = append(p.Entries, e)
	}
	return p, nil
}

// unrecordedForgeRef reports whether ref, which the log never recorded,
// lies in a forge's namespace (refs/pull/*, ...) that no rule names: as
// git secure init does, it is pushed without an entry. Verification never
// judges such a ref, and a GitHub mirror holds hundreds of them: signing
// an entry for each made the first push of a mirror many times slower
// than plain git's and every clone replay them.
func unrecordedForgeRef(pol *policy.Policy, ref string) bool {
	_, forge := policy.ForgePrefix(ref)
	return forge && !pol.Protected(ref)
}
