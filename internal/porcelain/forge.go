package porcelain

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

// ForgePullRequest is what a forge said about a pull request, as the
// bridge command read it (internal/forge/github); nothing in it is trusted
// beyond "the forge said so", which is what a forge app's record attests.
type ForgePullRequest struct {
	Forge string // "github" or "gitlab"
	// Repository is the repository the bridge read it from (GitHub
	// OWNER/NAME, GitLab the project's id or path): the records name it,
	// and it must be the one the forge app is bound to.
	Repository string
	// RepositoryID is the numeric id the forge answered for it (GitLab's
	// project id; "" or "0" when none): recorded instead of Repository
	// for an app bound to a numeric id.
	RepositoryID string
	Number       string // decimal
	BaseRef      string // the name of the branch it merges into ("main")
	HeadSHA      string
	MergeSHA     string // the forge's test merge commit, or once merged the commit the merge made; "" when none
	// Merged says the forge merged it (as MergeSHA).
	Merged  bool
	Reviews []ForgeReviewEvent
}

// forgeRef is the ref where the forge keeps pr's head ("head") or its
// test merge ("merge").
func (pr ForgePullRequest) forgeRef(kind string) string {
	if pr.Forge == "gitlab" {
		return "refs/merge-requests/" + pr.Number + "/" + kind
	}
	return "refs/pull/" + pr.Number + "/" + kind
}

// ForgeReviewEvent is one review in submission order.
type ForgeReviewEvent struct {
	ID        string // decimal
	Account   string
	AccountID string // the account's numeric id on the forge, decimal
	State     string // APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING (GitLab: APPROVED only; an unapproval is a review no longer listed)
	CommitID  string
}

// ForgeRecorded is what RecordForgeReviews wrote.
type ForgeRecorded struct {
	Forge       string            `json:"forge"`
	PullRequest string            `json:"pullRequest"`
	Ref         string            `json:"ref"`
	From        gitrepo.Hash      `json:"from"`
	To          gitrepo.Hash      `json:"to"`
	Tree        gitrepo.Hash      `json:"tree"` // the reviewed result's tree (zero: not here)
	App         string            `json:"app"`
	Records     []ForgeRecordLine `json:"records"`
	Skipped     []string          `json:"skipped,omitempty"`
	Store       gitrepo.Hash      `json:"store"`
	// Landed is the log entry that already recorded the pull request's
	// update (0: not landed): its reviews are recorded for that update.
	Landed uint64 `json:"landedEntry,omitempty"`
}

// ForgeRecordLine is one record written (or already in the store).
type ForgeRecordLine struct {
	Person    string `json:"person"`
	Account   string `json:"account"`
	AccountID string `json:"accountId"`
	Review    string `json:"review"`
	State     string `json:"state"`
}

// RecordForgeReviews records, signed with the forge app key keyFile, each
// review of pr as an approval of exactly the update merging it makes:
// BaseRef from the value the log records to the commit the merge made
// when pr is merged and that commit merges the reviewed head into it,
// else to the head when the head contains it (a fast-forward), else to
// the forge's merge commit (forgeTarget). The
// latest approving review of an account made on the current head is
// recorded as approved; every other approving or dismissed review (made
// stale by a push, dismissed, or followed by a request for changes) as
// withdrawn. Reviews by accounts the policy maps to no person
// are recorded too (they never count). The key must be a forge app of the policy in
// force.
func (r *Repo) RecordForgeReviews(pr ForgePullRequest, keyFile string) (*ForgeRecorded, error) {
	pol, _, err := r.CurrentPolicy()
	if err != nil {
		return nil, err
	}
	s, app, err := r.forgeAppSigner(pol, keyFile)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	u, err := r.forgeUpdate(pr)
	if err != nil {
		return nil, err
	}
	out, err := r.recordReviews(pol, s, app, pr, u.ref, u.from, u.to)
	if err != nil {
		return nil, err
	}
	out.Landed = u.landed
	return out, nil
}

// recordReviews records pr's reviews as approvals (or withdrawals) of
// moving ref from from to to, signed by forge app app's key s.
func (r *Repo) recordReviews(pol *policy.Policy, s sign.Signer, app *policy.ForgeApp, pr ForgePullRequest, ref string, from, to gitrepo.Hash) (*ForgeRecorded, error) {
	out := &ForgeRecorded{Forge: pr.Forge, PullRequest: pr.Number, Ref: ref, From: from, To: to, App: app.Name, Records: []ForgeRecordLine{}}
	var err error
	if pr.Repository, err = recordedRepository(app, pr); err != nil {
		return nil, err
	}
	effective := effectiveReviews(pr)
	who, err := r.Ident()
	if err != nil {
		return nil, err
	}
	store, err := attest.OpenStore(r.Git)
	if err != nil {
		return nil, err
	}
	signerFile := attest.SignerFile(s.PublicKey())
	dir := attest.ForgeReviewDir(ref, from, to)
	// An approval this bridge recorded for the update that the forge no
	// longer lists (a GitLab unapproval removes it) is withdrawn.
	gone, err := r.unlistedApprovals(store, dir, signerFile, pr)
	if err != nil {
		return nil, err
	}
	pr.Reviews = append(pr.Reviews, gone...)
	// Each review is also recorded bound to the tree of the reviewed
	// result: the commit a merge button, a squash or a rebase merge makes
	// is not the one reviewed, but has its tree (RecordForgeMerge).
	tree, err := r.treeOf(to)
	if out.Tree = tree; err != nil {
		tree, out.Tree = gitrepo.ZeroHash, gitrepo.ZeroHash
		out.Skipped = append(out.Skipped, fmt.Sprintf("the reviewed result %s is not here, so the reviews are not recorded for the commit a merge button makes (fetch it: git fetch origin %s)", to, pr.forgeRef("merge")))
	}
	done := map[string]bool{}
	for _, rv := range pr.Reviews {
		if rv.State != "APPROVED" && rv.State != "DISMISSED" || done[rv.ID] {
			continue
		}
		done[rv.ID] = true
		// A review by an account the policy maps to no person is recorded
		// all the same (it says what the forge said); verification never
		// counts it.
		personName := "(no person)"
		if person, err := pol.ForgePerson(pr.Forge, rv.Account, rv.AccountID); err == nil {
			personName = person.Name
		} else {
			out.Skipped = append(out.Skipped, fmt.Sprintf("review %s by %s will not count: %v", rv.ID, rv.Account, err))
		}
		state := attest.ReviewWithdrawn
		if effective[strings.ToLower(rv.Account)] == rv.ID {
			state = attest.ReviewApproved
		}
		f := attest.ForgeReview{Ref: ref, From: from, To: to, Forge: pr.Forge, Repository: pr.Repository, Account: rv.Account, AccountID: rv.AccountID, Review: rv.ID, PullRequest: pr.Number, State: state}
		msg := fmt.Sprintf("git-secure: forge app %s records %s review %s by %s (%s) as %s: %s %s..%s", app.Name, pr.Forge, rv.ID, rv.Account, personName, state, ref, shortOrNone(from), shortOrNone(to))
		file := attest.ForgeReviewFile(signerFile, pr.Forge, pr.Repository, rv.ID, state)
		if out.Store, err = addForgeRecord(store, s, f, dir+"/"+file, who, msg); err != nil {
			return nil, err
		}
		if !tree.IsZero() {
			f.ToTree = tree
			path := attest.ForgeReviewTreeDir(ref, from, tree) + "/" + file
			if out.Store, err = addForgeRecord(store, s, f, path, who, msg+" (tree "+tree.String()[:12]+")"); err != nil {
				return nil, err
			}
		}
		out.Records = append(out.Records, ForgeRecordLine{Person: personName, Account: rv.Account, AccountID: rv.AccountID, Review: rv.ID, State: state})
	}
	if out.Store.IsZero() {
		out.Store = store.Tip()
	}
	return out, nil
}

// forgeRange is the update a pull request's reviews approve.
type forgeRange struct {
	ref      string
	from, to gitrepo.Hash
	landed   uint64 // the entry that recorded it, when it has landed
}

// forgeUpdate is the update merging pr makes: its base ref from the value
// the log records to the head when the head contains it (a fast-forward),
// else to the forge's merge commit. When the log already records that
// merge (the pull request landed, and the recorded value is its result),
// it is the update of the entry that recorded it: reviews recorded late
// bind what landed, not an update from the result to itself.
func (r *Repo) forgeUpdate(pr ForgePullRequest) (forgeRange, error) {
	// A pull request merges into a branch, and the forge names it by its
	// name: a branch named refs/tags/v2.0 is refs/heads/refs/tags/v2.0,
	// never the tag (reviews of it must not approve creating the tag).
	u := forgeRange{ref: "refs/heads/" + pr.BaseRef}
	if err := attest.ValidRef(u.ref); err != nil {
		return u, usage("base %q: %v", pr.BaseRef, err)
	}
	rslTip, _, err := r.tips()
	if err != nil {
		return u, err
	}
	if _, u.from, err = r.recordedFor(rslTip, u.ref); err != nil {
		return u, err
	}
	u.to, err = r.forgeTarget(pr, u.ref, u.from)
	if err == nil && u.to != u.from {
		return u, nil
	}
	landed, lerr := r.landedEntry(rslTip, u.ref, pr)
	if lerr != nil {
		return u, lerr
	}
	if landed != nil {
		to, terr := r.forgeTarget(pr, u.ref, landed.Entry.Old)
		if terr == nil && to == landed.Entry.New {
			return forgeRange{ref: u.ref, from: landed.Entry.Old, to: to, landed: landed.Entry.Number}, nil
		}
	}
	if err != nil {
		return u, err
	}
	return u, fmt.Errorf("%w: %s is already at %s, the pull request's result, and no entry of the log moved it there from another value: there is no update to approve", ErrRefused, u.ref, u.to.String()[:12])
}

// landedEntry returns the latest entry of the log at tip that moved ref
// to pr's head or to its merge commit (nil if none): where it landed.
func (r *Repo) landedEntry(tip gitrepo.Hash, ref string, pr ForgePullRequest) (*rsl.Record, error) {
	var results []gitrepo.Hash
	for _, x := range []string{pr.HeadSHA, pr.MergeSHA} {
		if h, err := gitrepo.ParseHash(x); err == nil && !h.IsZero() {
			results = append(results, h)
		}
	}
	var found *rsl.Record
	err := rsl.WalkBack(r.Git, tip, func(rec *rsl.Record) (bool, error) {
		e := rec.Entry
		if e.Type == rsl.TypeRef && e.Ref == ref && slices.Contains(results, e.New) && e.Old != e.New {
			found = rec
			return false, nil
		}
		return true, nil
	})
	return found, err
}

// forgeTarget is the commit merging pr moves ref to from from: the merge
// commit the forge made once merged, when it merges exactly the reviewed
// head into from; else the head when it contains from (a fast-forward);
// else the forge's merge commit, which must merge the head into from.
func (r *Repo) forgeTarget(pr ForgePullRequest, ref string, from gitrepo.Hash) (gitrepo.Hash, error) {
	head, err := gitrepo.ParseHash(pr.HeadSHA)
	if err != nil {
		return head, fmt.Errorf("forge: head %q: %v", pr.HeadSHA, err)
	}
	var merge gitrepo.Hash
	if pr.MergeSHA != "" {
		if merge, err = gitrepo.ParseHash(pr.MergeSHA); err != nil {
			return head, fmt.Errorf("forge: merge commit %q: %v", pr.MergeSHA, err)
		}
		// A merge button's commit binds the reviews to the very commit
		// the branch moved to: the rule then needs no tree-bound approvals.
		if pr.Merged && !from.IsZero() && r.checkForgeMerge(pr, ref, from, head, merge) == nil {
			return merge, nil
		}
	}
	ff := from.IsZero()
	if !ff {
		if ff, err = r.Git.IsAncestor(from, head); err != nil {
			return head, usage("the pull request's head %s is not here: fetch it first (git fetch origin %s)", head.String()[:12], head)
		}
	}
	if ff {
		return head, nil
	}
	if merge.IsZero() {
		return head, fmt.Errorf("%w: the head %s does not contain %s's recorded tip %s and the forge made no merge commit: update the pull request", ErrRefused, head.String()[:12], ref, from.String()[:12])
	}
	if err := r.checkForgeMerge(pr, ref, from, head, merge); err != nil {
		return head, err
	}
	return merge, nil
}

// effectiveReviews maps each account (lower case) to its effective
// approval: its latest review that is not a comment, if that is an
// approval of the current head.
func effectiveReviews(pr ForgePullRequest) map[string]string {
	effective := map[string]string{}
	for _, rv := range pr.Reviews {
		key := strings.ToLower(rv.Account)
		switch rv.State {
		case "APPROVED":
			if strings.EqualFold(rv.CommitID, pr.HeadSHA) {
				effective[key] = rv.ID
			} else {
				delete(effective, key)
			}
		case "CHANGES_REQUESTED", "DISMISSED":
			delete(effective, key)
		}
	}
	return effective
}

// checkForgeMerge checks that the forge's merge commit merges exactly the
// reviewed head into the base's recorded tip: parents from and head, in
// that order, as the forge's test merge makes them, or, for a pull
// request the forge merged by squashing (or rebasing: its last commit),
// one parent from; either way with the tree git merge-tree computes for
// from and head (a squash commit does not even show what it merged).
// The reviews were made on the head; signed
// for any other commit (a merge computed before the last push, one the
// forge lists by mistake, an evil merge pushed as the pull request's
// merge) they would approve content nobody reviewed.
func (r *Repo) checkForgeMerge(pr ForgePullRequest, ref string, from, head, merge gitrepo.Hash) error {
	c, err := r.Git.ReadCommit(merge)
	if err != nil {
		return usage("the forge's merge commit %s of pull request %s is not here: fetch it first (git fetch origin %s)", merge.String()[:12], pr.Number, pr.forgeRef("merge"))
	}
	merged := len(c.Parents) == 2 && c.Parents[0] == from && c.Parents[1] == head
	squashed := pr.Merged && len(c.Parents) == 1 && c.Parents[0] == from
	if !merged && !squashed {
		parents := make([]string, len(c.Parents))
		for i, p := range c.Parents {
			parents[i] = p.String()[:12]
		}
		return fmt.Errorf("%w: the forge's merge commit %s of pull request %s has parents [%s], not %s's recorded tip %s and the reviewed head %s: its reviews would approve content nobody reviewed; nothing recorded (wait until the forge has updated its merge commit, or update the pull request, and run again)",
			ErrRefused, merge.String()[:12], pr.Number, strings.Join(parents, " "), ref, from.String()[:12], head.String()[:12])
	}
	// The parents say what was merged, not what the commit holds: an evil
	// merge (its author's own changes in the merge) has the same parents.
	want, clean, err := r.Git.MergeTree(from, head)
	if err != nil {
		return fmt.Errorf("forge: merge the reviewed head %s into %s's recorded tip %s: %w", head.String()[:12], ref, from.String()[:12], err)
	}
	if !clean || c.Tree != want {
		what := "merging them conflicts"
		if clean {
			what = "that merge gives the tree " + want.String()[:12]
		}
		return fmt.Errorf("%w: the forge's merge commit %s of pull request %s has the tree %s, not the tree of merging the reviewed head %s into %s's recorded tip %s (git merge-tree: %s): it holds changes nobody reviewed; nothing recorded (revert it, or the persons the rule names approve that commit with their own keys: git secure attest approve %s --to %s)",
			ErrRefused, merge.String()[:12], pr.Number, c.Tree.String()[:12], head.String()[:12], ref, from.String()[:12], what, ref, merge)
	}
	return nil
}

// FetchForgeHead fetches the head of pull request pr from remote when it
// is not here (a merged pull request's branch is often deleted; the forge
// keeps refs/pull/N/head, refs/merge-requests/N/head), so that its squash
// or rebase merge can be checked against it. A failure is not an error:
// the step is then judged without the pull request's reviews, and says
// why.
func (r *Repo) FetchForgeHead(remote string, pr ForgePullRequest) {
	head, err := gitrepo.ParseHash(pr.HeadSHA)
	if err != nil {
		return
	}
	// The number goes into a refspec: canonical decimal only.
	if n, err := strconv.ParseUint(pr.Number, 10, 63); err != nil || strconv.FormatUint(n, 10) != pr.Number {
		return
	}
	if ok, err := r.Git.HasObject(head); err == nil && ok {
		return
	}
	_, _ = r.Git.Run(context.Background(), nil, "fetch", "--no-tags", "--no-write-fetch-head", "--quiet", "--no-recurse-submodules", "--", remote, pr.forgeRef("head"))
}

// unlistedApprovals returns, as dismissals, the approvals of pr that this
// bridge (signerFile) recorded in dir and that pr no longer lists as
// approving. A record is this bridge's when its file name, which binds
// the signer, says so; a forged one here would only add a withdrawal.
func (r *Repo) unlistedApprovals(store *attest.Store, dir, signerFile string, pr ForgePullRequest) ([]ForgeReviewEvent, error) {
	files, err := store.Envelopes(dir)
	if err != nil {
		return nil, fmt.Errorf("forge: read the recorded reviews: %w", err)
	}
	listed := map[string]bool{}
	for _, rv := range pr.Reviews {
		listed[rv.ID] = true
	}
	var out []ForgeReviewEvent
	for _, file := range files {
		env, err := attest.ParseEnvelope(file.Data)
		if err != nil {
			continue
		}
		f, err := attest.ParseForgeReview(env.Payload)
		if err != nil || f.State != attest.ReviewApproved || f.Forge != pr.Forge || f.PullRequest != pr.Number ||
			!attest.SameForgeRepository(f.Repository, pr.Repository) ||
			file.Name != attest.ForgeReviewFile(signerFile, f.Forge, f.Repository, f.Review, f.State) || listed[f.Review] {
			continue
		}
		listed[f.Review] = true
		out = append(out, ForgeReviewEvent{ID: f.Review, Account: f.Account, AccountID: f.AccountID, State: "DISMISSED"})
	}
	return out, nil
}

// recordedRepository is the repository the records of pr name: the one
// the bridge read, or for a forge app bound to a numeric project id
// (GitLab) the id the forge answered for it. It refuses to record reviews
// that would not count: of a repository other than the one app is bound
// to. An app bound to no repository (added before binding) records the
// repository all the same.
func recordedRepository(app *policy.ForgeApp, pr ForgePullRequest) (string, error) {
	if err := attest.ValidForgeRepository(pr.Forge, pr.Repository); err != nil {
		return "", usage("forge: pull request %s: %v", pr.Number, err)
	}
	if app.Repository == "" {
		return pr.Repository, nil
	}
	if app.Forge == pr.Forge && attest.SameForgeRepository(app.Repository, pr.Repository) {
		return pr.Repository, nil
	}
	if app.Forge == pr.Forge && pr.RepositoryID != "" && pr.RepositoryID == app.Repository {
		return pr.RepositoryID, nil
	}
	return "", fmt.Errorf("%w: forge app %s is bound to %s, not %s %s, so its records of %s would never count; nothing recorded: run it with --repo %s, or a root key holder binds it (git secure trust bind-forge-app %s --forge %s --repository %s)",
		ErrRefused, app.Name, app.Binding(), pr.Forge, pr.Repository, pr.Repository, app.Repository, app.Name, pr.Forge, pr.Repository)
}

// addForgeRecord signs f with the bridge's key and stores it at path.
func addForgeRecord(store *attest.Store, s sign.Signer, f attest.ForgeReview, path string, who gitrepo.Ident, msg string) (gitrepo.Hash, error) {
	stmt, err := f.Statement()
	if err != nil {
		return gitrepo.Hash{}, fmt.Errorf("forge: review %s by %s: %w", f.Review, f.Account, err)
	}
	env, err := attest.Sign(stmt, s)
	if err != nil {
		return gitrepo.Hash{}, err
	}
	tip, err := store.Add(path, env, who, msg)
	if err != nil {
		return gitrepo.Hash{}, fmt.Errorf("forge: store review %s by %s: %w", f.Review, f.Account, err)
	}
	return tip, nil
}

// forgeAppSigner loads the bridge's key and the forge app of pol it is; a
// key that is no forge app's, or is revoked, is refused (its records would
// not count: forgeAppOf).
func (r *Repo) forgeAppSigner(pol *policy.Policy, keyFile string) (sign.Signer, *policy.ForgeApp, error) {
	s, err := r.LoadSigner(keyFile)
	if err != nil {
		return nil, nil, err
	}
	app, err := forgeAppOf(pol, sign.Fingerprint(s.PublicKey()))
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	return s, app, nil
}
