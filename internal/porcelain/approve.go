package porcelain

import (
	"fmt"
	"strings"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

// ApproveResult says what Approve stored.
type ApproveResult struct {
	Ref    string       `json:"ref"`
	From   gitrepo.Hash `json:"from"`
	To     gitrepo.Hash `json:"to"`
	Person string       `json:"person"`
	Store  gitrepo.Hash `json:"attestations"`
	// Replaced says what junk in the store (attest.Store.Replaced) the
	// approval replaced, for a warning.
	Replaced []string `json:"replaced,omitempty"`
}

// resolveTarget turns NEW/OLD of attest approve of ref into an object
// name: a 40-hex name (zeros allowed for creation and deletion), a ref's
// raw value (so an annotated tag is approved as the tag object its ref
// holds), or a revision: a commit, but for a tag ref the object it names
// (the abbreviated hash of an annotated tag, as a refusal prints it, is the
// tag object the push records).
func (r *Repo) resolveTarget(ref, s string) (gitrepo.Hash, error) {
	if h, err := gitrepo.ParseHash(s); err == nil {
		return h, nil
	}
	if strings.HasPrefix(s, "-") || s == "" {
		return gitrepo.ZeroHash, usage("bad revision %q", s)
	}
	for _, prefix := range []string{"", "refs/heads/", "refs/tags/"} {
		name := prefix + s
		if !strings.HasPrefix(name, "refs/") || gitrepo.ValidRefName(name) != nil {
			continue
		}
		if h, ok, err := r.Git.ResolveRef(name); err != nil {
			return gitrepo.ZeroHash, err
		} else if ok {
			return h, nil
		}
	}
	resolve := r.Git.ResolveRevision
	if strings.HasPrefix(ref, "refs/tags/") {
		resolve = r.Git.ResolveObject
	}
	h, err := resolve(s)
	if err != nil {
		return gitrepo.ZeroHash, usage("unknown revision %q", s)
	}
	return h, nil
}

// Approve records the signer's approval of exactly one update of ref: from
// (default: its latest recorded target) to to. The update must be one that
// can still happen: from must be the latest recorded target.
func (r *Repo) Approve(name, to, from, keyFile string) (*ApproveResult, error) {
	return r.approve(name, to, from, keyFile, false)
}

// ApproveTree is Approve for an approval bound to the tree of to instead of
// the commit: it counts for any commit with that tree (a rebase or an
// amended message that keeps it) where the rule allows tree-bound
// approvals.
func (r *Repo) ApproveTree(name, to, from, keyFile string) (*ApproveResult, error) {
	return r.approve(name, to, from, keyFile, true)
}

func (r *Repo) approve(name, to, from, keyFile string, byTree bool) (*ApproveResult, error) {
	ref, err := r.FullRefName(name)
	if err != nil {
		return nil, err
	}
	fromH, toH, err := r.approvedUpdate(ref, to, from)
	if err != nil {
		return nil, err
	}
	if !toH.IsZero() {
		if ok, err := r.Git.HasObject(toH); err != nil {
			return nil, err
		} else if !ok {
			return nil, usage("object %s is not in this repository: fetch it first", toH)
		}
	}
	s, person, err := r.personSigner(keyFile, "your approval")
	if err != nil {
		return nil, err
	}
	defer s.Close()
	a := attest.Approval{Ref: ref, From: fromH, To: toH}
	dir := attest.ApprovalDir(ref, fromH, toH)
	if byTree {
		if toH.IsZero() {
			return nil, usage("a deletion has no tree to approve; approve it without --tree")
		}
		if a.ToTree, err = r.treeOf(toH); err != nil {
			return nil, usage("cannot read the tree of %s: %v", toH, err)
		}
		dir = attest.ApprovalTreeDir(ref, fromH, a.ToTree)
	}
	stmt, err := a.Statement()
	if err != nil {
		return nil, err
	}
	tip, replaced, err := r.storeAttestation(stmt, s, dir,
		fmt.Sprintf("git-secure: %s approves %s %s..%s", person.Name, ref, shortOrNone(fromH), shortOrNone(toH)))
	if err != nil {
		return nil, err
	}
	return &ApproveResult{Ref: ref, From: fromH, To: toH, Person: person.Name, Store: tip, Replaced: replaced}, nil
}

// approvedUpdate resolves the update of ref an approval is for: to, from
// from (empty: the value the log records, or the old value of the latest
// entry when to is what it records). It must be the next update, the
// latest recorded one, or a move back from a value the ref had.
func (r *Repo) approvedUpdate(ref, to, from string) (fromH, toH gitrepo.Hash, err error) {
	rslTip, _, err := r.tips()
	if err != nil {
		return fromH, toH, err
	}
	if rslTip.IsZero() {
		return fromH, toH, usage("this repository is not set up for git-secure: run git secure init, or fetch refs/secure/* from the remote")
	}
	last, recorded, err := r.recordedFor(rslTip, ref)
	if err != nil {
		return fromH, toH, err
	}
	if toH, err = r.resolveTarget(ref, to); err != nil {
		return fromH, toH, err
	}
	// Two updates can be approved: the next one (from the recorded value),
	// or the one the latest entry recorded (approving after the push).
	possible := recorded
	if last != nil && toH == recorded {
		possible = last.Entry.Old
	}
	fromH = possible
	if from != "" {
		if fromH, err = r.resolveTarget(ref, from); err != nil {
			return fromH, toH, err
		}
	}
	if fromH != possible && from != "" {
		// Moving back from a value the ref had (a skip annotation rewinding
		// a mistaken push) is an update too.
		seen := false
		err := rsl.WalkBack(r.Git, rslTip, func(rec *rsl.Record) (bool, error) {
			seen = rec.Entry.Ref == ref && rec.Entry.New == fromH
			return !seen, nil
		})
		if err != nil {
			return fromH, toH, err
		}
		if seen {
			possible = fromH
		}
	}
	if fromH != possible {
		return fromH, toH, usage("no update of %s from %s to %s is recorded or can be recorded next (%s is recorded at %s); leave --from out to approve the update from the recorded value", ref, shortOrNone(fromH), shortOrNone(toH), ref, shortOrNone(recorded))
	}
	if fromH == toH {
		return fromH, toH, usage("%s is already at %s: there is no update to approve", ref, shortOrNone(toH))
	}
	return fromH, toH, nil
}

func shortOrNone(h gitrepo.Hash) string {
	if h.IsZero() {
		return "nothing"
	}
	return h.String()[:12]
}

// storeAttestation signs statement with s and adds it to the attestation
// store under dir, in the signer's file; it returns the store's new tip
// and what junk it replaced there (attest.Store.Replaced).
func (r *Repo) storeAttestation(statement []byte, s sign.Signer, dir, message string) (gitrepo.Hash, []string, error) {
	env, err := attest.Sign(statement, s)
	if err != nil {
		return gitrepo.ZeroHash, nil, err
	}
	who, err := r.Ident()
	if err != nil {
		return gitrepo.ZeroHash, nil, err
	}
	store, err := attest.OpenStore(r.Git)
	if err != nil {
		return gitrepo.ZeroHash, nil, err
	}
	tip, err := store.Add(dir+"/"+attest.SignerFile(s.PublicKey()), env, who, message)
	if err != nil {
		return gitrepo.ZeroHash, nil, err
	}
	return tip, store.Replaced(), nil
}

// personSigner loads the user's key and the person of the policy in force
// (with the organisation's persons when it inherits them) it belongs to; what names the statement for the refusal.
func (r *Repo) personSigner(keyFile, what string) (sign.Signer, *policy.Person, error) {
	pol, _, err := r.CurrentPolicy()
	if err != nil {
		return nil, nil, err
	}
	// The organisation's persons approve in every repository that
	// inherits its policy.
	if pol, _, err = r.withOrg(pol); err != nil {
		return nil, nil, err
	}
	s, err := r.LoadSigner(keyFile)
	if err != nil {
		return nil, nil, err
	}
	fp := sign.Fingerprint(s.PublicKey())
	person, ok := pol.PersonByFingerprint(fp)
	if pol.RevokedByOrg(fp) {
		s.Close()
		return nil, nil, fmt.Errorf("%w: your key %s is revoked by the organisation policy, so %s would not count; use your new key", ErrRefused, fp, what)
	}
	if !ok {
		s.Close()
		return nil, nil, fmt.Errorf("%w: your key %s belongs to no person in the policy, so %s would not count; ask a rules key holder to run: git secure policy add-person NAME --key YOUR.pub", ErrRefused, fp, what)
	}
	return s, person, nil
}
