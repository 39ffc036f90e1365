package verify

import (
	"errors"
	"fmt"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/sign"
)

// ForgeApproval is one approval that came through a forge: a review
// recorded by a bridge the policy trusts, counted for the person the
// policy maps the reviewer's account to.
type ForgeApproval struct {
	Person      string `json:"person"`
	Forge       string `json:"forge"`
	Account     string `json:"account"`
	Review      string `json:"review"`
	PullRequest string `json:"pullRequest"`
	App         string `json:"app"`
	// Repository and AccountID are the record's (omitted when it names
	// none: an app bound to no repository, a person mapped with no id).
	Repository string `json:"repository,omitempty"`
	AccountID  string `json:"accountId,omitempty"`
}

// String says where the approval came from, for messages.
func (f ForgeApproval) String() string {
	return fmt.Sprintf("%s via %s review %s by %s on pull request %s (recorded by forge app %s)", f.Person, f.Forge, f.Review, f.Account, f.PullRequest, f.App)
}

// ForgeApprovers returns the persons whose forge reviews approve exactly
// ref moving from old to new under pol, how each came, and notes about
// records that did not count. A record counts only when it is signed by a
// forge app pol trusts (a root decision) with a key not revoked, names an
// account pol maps to a person (a rules decision: the bridge reports the
// account, never chooses the person) with the account id pol gives it, if
// any, is of the repository the app is bound to, if any (forgePerson), and
// its review was not withdrawn by a record of the same bridge. Each person counts once, here and together
// with their own approvals (Decide counts distinct persons).
func ForgeApprovers(store *attest.Store, pol *policy.Policy, ref string, old, new gitrepo.Hash, revoked func(fp string) bool) ([]string, []ForgeApproval, []string, error) {
	if store == nil || len(pol.ForgeApps()) == 0 {
		return nil, nil, nil, nil
	}
	dir := attest.ForgeReviewDir(ref, old, new)
	files, err := store.Envelopes(dir)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("verify: read forge reviews of %s %s..%s: %w", ref, short(old), short(new), err)
	}
	return forgeApprovers(pol, dir, files, revoked)
}

// ForgeTreeApprovers is ForgeApprovers for tree-bound forge reviews: those
// of ref moving from old to any commit whose tree is tree (the commit a
// merge button, a squash or a rebase merge makes). Callers count them
// only for rules that accept tree-bound approvals.
func ForgeTreeApprovers(store *attest.Store, pol *policy.Policy, ref string, old, tree gitrepo.Hash, revoked func(fp string) bool) ([]string, []ForgeApproval, []string, error) {
	if store == nil || len(pol.ForgeApps()) == 0 {
		return nil, nil, nil, nil
	}
	dir := attest.ForgeReviewTreeDir(ref, old, tree)
	files, err := store.Envelopes(dir)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("verify: read tree-bound forge reviews of %s from %s: %w", ref, short(old), err)
	}
	return forgeApprovers(pol, dir, files, revoked)
}

func forgeApprovers(pol *policy.Policy, dir string, files []attest.File, revoked func(fp string) bool) ([]string, []ForgeApproval, []string, error) {
	type recorded struct {
		f   attest.ForgeReview
		app *policy.ForgeApp
	}
	var approved []recorded
	withdrawn := map[string]bool{}
	var notes []string
	ignored := 0
	note := func(format string, args ...any) {
		if ignored++; ignored <= maxNotes {
			notes = append(notes, fmt.Sprintf(format, args...))
		}
	}
	for _, file := range files {
		if file.Junk != "" {
			note("%s", file.Junk) // not signed by anyone: counts for nothing
			continue
		}
		f, app, err := forgeRecord(pol, dir, file, revoked)
		if err != nil {
			note("forge review %s ignored: %v", file.Name, err)
			continue
		}
		if f.State == attest.ReviewWithdrawn {
			withdrawn[app.Fingerprint+"\x00"+f.Forge+"\x00"+f.Review] = true
			continue
		}
		approved = append(approved, recorded{f, app})
	}
	var persons []string
	var via []ForgeApproval
	seen := map[string]bool{}
	for _, r := range approved {
		if withdrawn[r.app.Fingerprint+"\x00"+r.f.Forge+"\x00"+r.f.Review] {
			note("%s review %s by %s was withdrawn (dismissed, stale or changes requested)", r.f.Forge, r.f.Review, r.f.Account)
			continue
		}
		p, err := forgePerson(pol, r.app, r.f)
		if err != nil {
			note("%s review %s by %s ignored: %v", r.f.Forge, r.f.Review, r.f.Account, err)
			continue
		}
		if seen[p.Name] {
			continue
		}
		seen[p.Name] = true
		persons = append(persons, p.Name)
		via = append(via, ForgeApproval{Person: p.Name, Forge: r.f.Forge, Account: r.f.Account, Review: r.f.Review, PullRequest: r.f.PullRequest, App: r.app.Name,
			Repository: r.f.Repository, AccountID: r.f.AccountID})
	}
	if ignored > maxNotes {
		notes = append(notes, fmt.Sprintf("and %d more forge reviews ignored", ignored-maxNotes))
	}
	return persons, via, notes, nil
}

// forgePerson returns the person an approving record of app counts for.
// An app bound to a repository counts only records of that repository: a
// record of another (the same key serving several repositories, or a
// record copied from a fork's store) and a record that names none (made
// before repository binding, which cannot show where the review was)
// never count. The account must be mapped, with its id when the policy
// gives one (policy.ForgePerson). A withdrawal needs none of this: it
// only ever stops a review counting.
func forgePerson(pol *policy.Policy, app *policy.ForgeApp, f attest.ForgeReview) (*policy.Person, error) {
	if app.Repository != "" {
		switch {
		case f.Repository == "":
			return nil, fmt.Errorf("the record names no repository (recorded by a git-secure before repository binding) and forge app %s is bound to %s: record the review again (git secure forge record-approvals)", app.Name, app.Binding())
		case f.Forge != app.Forge || !attest.SameForgeRepository(f.Repository, app.Repository):
			return nil, fmt.Errorf("it was recorded for %s %s, but forge app %s is bound to %s: a review of another repository never counts here", f.Forge, f.Repository, app.Name, app.Binding())
		}
	}
	return pol.ForgePerson(f.Forge, f.Account, f.AccountID)
}

// forgeRecord verifies one stored forge review record: strict decoding, a
// file named for its bridge, review and state, a signature by a trusted
// forge app's key that is not revoked.
func forgeRecord(pol *policy.Policy, dir string, file attest.File, revoked func(string) bool) (attest.ForgeReview, *policy.ForgeApp, error) {
	env, err := attest.ParseEnvelope(file.Data)
	if err != nil {
		return attest.ForgeReview{}, nil, err
	}
	f, err := attest.CheckForgeReviewFile(dir, file.Name, env)
	if err != nil {
		return f, nil, err
	}
	key, err := env.Verify(pol.LookupForgeAppKey)
	if err != nil {
		return f, nil, fmt.Errorf("not signed by a forge app the policy trusts (git secure trust add-forge-app): %w", err)
	}
	fp := sign.Fingerprint(key)
	if revoked != nil && revoked(fp) {
		return f, nil, fmt.Errorf("signed by %s, a revoked key", fp)
	}
	app, ok := pol.ForgeAppByFingerprint(fp)
	if !ok {
		return f, nil, errors.New("signer is not a forge app of the policy")
	}
	return f, app, nil
}

// withForge adds the forge approvers of an update (the answer of
// ForgeApprovers or ForgeTreeApprovers, err its error) to persons, each
// person once, and their notes to notes.
func withForge(persons, notes, forge, more []string, err error) ([]string, []string, error) {
	if err != nil {
		return nil, nil, err
	}
	for _, p := range forge {
		if !contains(persons, p) {
			persons = append(persons, p)
		}
	}
	return persons, append(notes, more...), nil
}
