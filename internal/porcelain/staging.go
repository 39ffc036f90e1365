package porcelain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/verify"
)

// Staged is a proposed policy change and the policy it would replace.
type Staged struct {
	Policy     *policy.Policy
	Commit     gitrepo.Hash // zero when nothing is staged yet
	Base       *policy.Policy
	BaseCommit gitrepo.Hash
}

// LoadStaged returns the staged change, or a copy of the policy in force
// when nothing is staged. A staged change made on top of an older policy is
// refused: it would silently undo what was applied since.
func (r *Repo) LoadStaged() (*Staged, error) {
	base, baseCommit, err := r.CurrentPolicy()
	if err != nil {
		return nil, err
	}
	st := &Staged{Base: base, BaseCommit: baseCommit}
	h, ok, err := r.Git.ResolveRef(policy.StagingRef)
	if err != nil {
		return nil, err
	}
	if !ok {
		if st.Policy, err = base.Clone(); err != nil {
			return nil, err
		}
		return st, nil
	}
	c, err := r.Git.ReadCommit(h)
	if err != nil {
		return nil, err
	}
	if len(c.Parents) != 1 || c.Parents[0] != baseCommit {
		if r.stagedWasApplied(c, base) {
			// An apply was interrupted after the policy moved: the staged
			// change is in force, so nothing is staged any more.
			if err := r.Git.UpdateRefs([]gitrepo.RefUpdate{{Name: policy.StagingRef, Old: h}}, "git-secure: staged policy was applied"); err != nil {
				return nil, fmt.Errorf("the staged policy change was applied by an interrupted git secure policy apply, but clearing it failed: %w", err)
			}
			st.Policy, err = base.Clone()
			return st, err
		}
		return nil, usage("the staged policy change (%s) was made on top of an older policy; discard it with git secure policy discard and make it again", h.String()[:12])
	}
	if st.Policy, err = policy.Load(r.Git, h); err != nil {
		return nil, err
	}
	st.Commit = h
	return st, nil
}

// saveStaged writes st.Policy as the staged change (compare-and-swap on the
// staging ref).
func (r *Repo) saveStaged(st *Staged, message string) (gitrepo.Hash, error) {
	who, err := r.Ident()
	if err != nil {
		return gitrepo.ZeroHash, err
	}
	h, err := policy.Save(r.Git, st.Policy, st.BaseCommit, who, message)
	if err != nil {
		return gitrepo.ZeroHash, err
	}
	if err := r.Git.UpdateRefs([]gitrepo.RefUpdate{{Name: policy.StagingRef, Old: st.Commit, New: h}}, "git-secure: "+message); err != nil {
		if isRefChanged(err) {
			return gitrepo.ZeroHash, fmt.Errorf("%w: someone changed the staged policy at the same time; run the command again", ErrRefused)
		}
		return gitrepo.ZeroHash, err
	}
	st.Commit = h
	if err := r.noteOwnStaged(h); err != nil {
		return gitrepo.ZeroHash, err
	}
	return h, nil
}

// Edit is one change to a staged policy.
type Edit func(staged, base *policy.Policy, now time.Time) error

// Stage applies edit to the staged change (starting one from the policy in
// force when there is none) and saves it, unsigned.
func (r *Repo) Stage(description string, edit Edit) (*Staged, error) {
	st, err := r.LoadStaged()
	if err != nil {
		return nil, err
	}
	if err := r.refuseForeignEdit(st); err != nil {
		return nil, err
	}
	if err := edit(st.Policy, st.Base, r.Now()); err != nil {
		if errors.Is(err, policy.ErrInvalidChange) {
			return nil, fmt.Errorf("%w: %v", ErrUsage, strings.TrimPrefix(err.Error(), policy.ErrInvalidChange.Error()+": "))
		}
		return nil, err
	}
	if _, err := r.saveStaged(st, "git-secure policy (staged): "+description); err != nil {
		return nil, err
	}
	return st, nil
}

// Discard drops the staged change.
func (r *Repo) Discard() error {
	h, ok, err := r.Git.ResolveRef(policy.StagingRef)
	if err != nil || !ok {
		return err
	}
	if err := r.Git.UpdateRefs([]gitrepo.RefUpdate{{Name: policy.StagingRef, Old: h}}, "git-secure: discard staged policy"); err != nil {
		return err
	}
	// A fetch does not bring a discarded change back (see adopt in
	// internal/remote): the server keeps a staged change forever.
	return StagedState{Discarded: h}.save(r.Git.GitDir())
}

// Status returns the signature status of the staged change.
func (st *Staged) Status() ([]verify.RoleStatus, error) {
	return verify.PolicyStatus(st.Base, st.Policy)
}

// Changed reports whether anything is staged.
func (st *Staged) Changed() bool {
	a, b, _ := st.Policy.Encode()
	c, d, _ := st.Base.Encode()
	return st.Commit != (gitrepo.Hash{}) && (string(a) != string(c) || string(b) != string(d) || !sameRuleFiles(st.Policy, st.Base, false))
}

// signStaged adds s's signatures to every metadata file of the change that
// its key may sign (only to rule file `only` when it is set). It reports
// whether it signed anything.
func signStaged(st *Staged, s sign.Signer, only string) (bool, error) {
	if only != "" {
		return signRuleFiles(st, s, only)
	}
	fp := sign.Fingerprint(s.PublicKey())
	inRole := func(p *policy.Policy, role string) bool {
		keys, _ := p.RoleKeys(role)
		return slices.ContainsFunc(keys, func(k *policy.Key) bool { return k.Fingerprint == fp })
	}
	signed := false
	needsRoot := false
	statuses, err := st.Status()
	if err != nil {
		return false, err
	}
	for _, x := range statuses {
		if strings.HasPrefix(x.Role, metadata.ROOT) {
			needsRoot = true
		}
	}
	if needsRoot && (inRole(st.Policy, metadata.ROOT) || inRole(st.Base, metadata.ROOT)) {
		tufSigner, err := sign.TUFSigner(s)
		if err != nil {
			return false, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		if err := st.Policy.SignRoot(tufSigner); err != nil {
			return false, err
		}
		signed = true
	}
	if inRole(st.Policy, metadata.TARGETS) {
		tufSigner, err := sign.TUFSigner(s)
		if err != nil {
			return false, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		if err := st.Policy.SignTargets(tufSigner); err != nil {
			return false, err
		}
		signed = true
	}
	files, err := signRuleFiles(st, s, "")
	return signed || files, err
}

// SignStaged signs the staged change with the user's key: one made in
// this clone (see SignReviewed).
func (r *Repo) SignStaged(keyFile string) (*Staged, error) { return r.SignReviewed(keyFile, "", "") }

// SignStagedFile signs only the named rule file of a staged change made in
// this clone.
func (r *Repo) SignStagedFile(keyFile, file string) (*Staged, error) {
	return r.SignReviewed(keyFile, "", file)
}

// SignReviewed signs the staged change with the user's key: only the named
// rule file when file is set. A change that was not made in this clone is
// signed only when reviewed names its commit (7 or more hex digits);
// otherwise it is refused with what it changes.
func (r *Repo) SignReviewed(keyFile, reviewed, file string) (*Staged, error) {
	st, err := r.LoadStaged()
	if err != nil {
		return nil, err
	}
	if st.Commit.IsZero() {
		return nil, usage("nothing is staged: change the policy first (git secure policy add-person, add-rule, trust add-root-key, ...)")
	}
	if err := r.reviewedStaged(st, reviewed, "sign"); err != nil {
		return nil, err
	}
	s, err := r.LoadSigner(keyFile)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	ok, err := signStaged(st, s, file)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: your key %s is neither a root key nor a rules key of this policy, nor the key of a signer of a changed rule file, so its signature would not count", ErrRefused, sign.Fingerprint(s.PublicKey()))
	}
	if _, err := r.saveStaged(st, "git-secure policy (staged): signed by "+sign.Fingerprint(s.PublicKey())); err != nil {
		return nil, err
	}
	return st, nil
}

// ApplyResult says what Apply did.
type ApplyResult struct {
	Entry        uint64       `json:"entry"`
	PolicyCommit gitrepo.Hash `json:"policyCommit"`
	RootVersion  int64        `json:"rootVersion"`
	RulesVersion int64        `json:"rulesVersion"`
}

// ErrThresholdPending is wrapped when a staged change still lacks
// signatures; the Staged status says whose.
var ErrThresholdPending = errors.New("the staged policy change does not have enough signatures yet")

// Apply signs the staged change with the user's key where it may, and when
// every threshold is met makes it the policy in force: the policy ref, its
// RSL entry and the removal of the staging ref move in one transaction.
func (r *Repo) Apply(keyFile string) (*ApplyResult, *Staged, error) {
	return r.ApplyReviewed(keyFile, "", "")
}

// ApplyFile is Apply signing only the named rule file when file is set.
func (r *Repo) ApplyFile(keyFile, file string) (*ApplyResult, *Staged, error) {
	return r.ApplyReviewed(keyFile, "", file)
}

// ApplyReviewed is Apply (signing only the named rule file when file is
// set); a staged change that was not made in this clone is signed and
// applied only when reviewed names its commit.
func (r *Repo) ApplyReviewed(keyFile, reviewed, file string) (*ApplyResult, *Staged, error) {
	st, err := r.LoadStaged()
	if err != nil {
		return nil, nil, err
	}
	if st.Commit.IsZero() {
		return nil, nil, usage("nothing is staged: change the policy first (git secure policy add-person, add-rule, trust add-root-key, ...)")
	}
	if err := r.reviewedStaged(st, reviewed, "apply"); err != nil {
		return nil, nil, err
	}
	s, err := r.LoadSigner(keyFile)
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	if _, err := signStaged(st, s, file); err != nil {
		return nil, nil, err
	}
	if err := checkInsideNamespaces(st); err != nil {
		return nil, st, err
	}
	now := r.Now()
	if err := verify.CheckPolicy(st.Base, st.Policy, now); err != nil {
		// Keep the signature just added so the next signer builds on it.
		if _, serr := r.saveStaged(st, "git-secure policy (staged): signed by "+sign.Fingerprint(s.PublicKey())); serr != nil {
			return nil, st, serr
		}
		if errors.Is(err, verify.ErrThreshold) {
			return nil, st, fmt.Errorf("%w: %w", ErrRefused, ErrThresholdPending)
		}
		return nil, st, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	if err := r.checkOrgRevoked(st, now); err != nil {
		return nil, st, err
	}
	who, err := r.Ident()
	if err != nil {
		return nil, nil, err
	}
	pc, err := policy.Save(r.Git, st.Policy, st.BaseCommit, who, fmt.Sprintf("git-secure policy: root v%d, rules v%d", st.Policy.Root.Signed.Version, st.Policy.Targets.Signed.Version))
	if err != nil {
		return nil, nil, err
	}
	rslTip, _, err := r.tips()
	if err != nil {
		return nil, nil, err
	}
	number, err := r.nextNumber(rslTip)
	if err != nil {
		return nil, nil, err
	}
	e := &rsl.Entry{Number: number, Type: rsl.TypeRef, Ref: rsl.PolicyRef, Old: st.BaseCommit, New: pc}
	id, err := rsl.Write(r.Git, e, rslTip, who, signEntry(s))
	if err != nil {
		return nil, nil, err
	}
	if err := r.commitPolicy(st, rslTip, id, pc); err != nil {
		return nil, nil, err
	}
	return &ApplyResult{Entry: e.Number, PolicyCommit: pc, RootVersion: st.Policy.Root.Signed.Version, RulesVersion: st.Policy.Targets.Signed.Version}, st, nil
}

// commitPolicy moves the log from rslTip to id (the entry of the policy
// commit pc) and then the policy ref to pc, removing the staged change st.
func (r *Repo) commitPolicy(st *Staged, rslTip, id, pc gitrepo.Hash) error {
	// Two transactions, the log first. git commits a transaction's refs one
	// by one, so a kill could leave a policy ref moved without its entry;
	// in this order the worst case is an entry whose policy ref lags
	// behind, which CurrentPolicy repairs from the log.
	updates := []gitrepo.RefUpdate{
		{Name: rsl.Ref, Old: rslTip, New: id},
		{Name: policy.Ref, Old: st.BaseCommit, New: st.BaseCommit},
		{Name: policy.StagingRef, Old: st.Commit, New: st.Commit},
	}
	err := r.Git.UpdateRefs(updates, "git-secure: apply policy (log)")
	if err == nil {
		err = r.Git.UpdateRefs([]gitrepo.RefUpdate{
			{Name: policy.Ref, Old: st.BaseCommit, New: pc},
			{Name: policy.StagingRef, Old: st.Commit},
		}, "git-secure: apply policy")
		if err != nil {
			err = fmt.Errorf("%w (the change is recorded in the log; the next git secure command completes it)", err)
		}
	}
	switch {
	case err != nil && errors.Is(err, gitrepo.ErrLocked):
		return fmt.Errorf("%w: %v", ErrRefused, err)
	case isRefChanged(err):
		return fmt.Errorf("%w: the policy or the log changed while applying; run git secure policy apply again", ErrRefused)
	}
	return err
}

// stagedWasApplied reports whether the staged commit c holds exactly the
// signed content of the policy in force.
func (r *Repo) stagedWasApplied(c *gitrepo.Commit, current *policy.Policy) bool {
	staged, err := policy.Load(r.Git, c.Hash)
	if err != nil {
		return false
	}
	// Signatures may differ (the apply may have added one); the signed
	// content must not.
	a1, err1 := json.Marshal(staged.Root.Signed)
	a2, err2 := json.Marshal(staged.Targets.Signed)
	b1, err3 := json.Marshal(current.Root.Signed)
	b2, err4 := json.Marshal(current.Targets.Signed)
	return errors.Join(err1, err2, err3, err4) == nil && bytes.Equal(a1, b1) && bytes.Equal(a2, b2) && sameRuleFiles(staged, current, true)
}
