package remote

import (
	"errors"
	"fmt"
	"strings"

	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

// dryRunPolicy runs, for git push --dry-run, the policy check the real
// push and the server would make: the rules each update falls under, who
// may sign it, and whether the approvals at hand meet the thresholds. It
// returns, per destination, why the push would be refused. The remote's
// metadata is brought in first (verified, as any fetch does), so that its
// approvals count; no entry is kept and nothing is sent.
func (h *Helper) dryRunPolicy(specs []pushSpec) map[string]string {
	if len(specs) == 0 {
		return nil
	}
	if err := h.syncForPush(); err != nil {
		return failAll(specs, "git-secure: "+err.Error())
	}
	plan, err := h.planPush(specs)
	if err != nil {
		return failAll(specs, err.Error())
	}
	defer plan.close()
	if plan.plain() {
		return nil // not a git-secure repository: git's own answer
	}
	pol, changes := plan.pol, changesOf(specs)
	if plan.keyErr != nil {
		return protectedFail(pol, changes, func(ref string) string {
			return fmt.Sprintf("git-secure: would be refused: %s is protected and needs a signed log entry, but %s", ref, keyProblem(plan.keyErr))
		})
	}
	if fp := sign.Fingerprint(plan.signer.PublicKey()); !keyInPolicy(pol, fp) {
		return protectedFail(pol, changes, func(ref string) string {
			return fmt.Sprintf("git-secure: would be refused: %s is protected and %s", ref, h.keyNotInPolicy(pol, fp, plan.local[rsl.Ref]))
		})
	}
	prepared, err := h.Repo.Prepare(plan.local[rsl.Ref], pol, plan.signer, changes)
	if err != nil {
		if errors.Is(err, porcelain.ErrNotAllowed) {
			h.sayReviewRefused(changes, err.Error())
		}
		return failAll(specs, "git-secure: would be refused: "+strings.TrimPrefix(err.Error(), "refused: "))
	}
	if len(prepared.Pending) == 0 {
		return nil
	}
	failed := map[string]string{}
	for _, e := range prepared.Entries {
		if pendingFor(prepared.Pending, e.Ref) {
			failed[e.Ref] = "git-secure: would be refused: " + strings.Join(prepared.Pending, "; ")
		}
	}
	for _, p := range prepared.Pending {
		h.logf("dry run: the server would refuse this push: %s", p)
	}
	h.sayReview(prepared, failed)
	if len(failed) == 0 {
		return failAll(specs, "git-secure: would be refused: "+strings.Join(prepared.Pending, "; "))
	}
	// Atomic like the real push: one refused ref refuses them all.
	for _, s := range specs {
		if _, ok := failed[s.Ref]; !ok {
			failed[s.Ref] = "atomic push: another ref would be refused"
		}
	}
	return failed
}

// protectedFail fails the changes to protected refs with msg(ref), and
// the rest with them (the push is atomic); nil when none is protected.
func protectedFail(pol *policy.Policy, changes []porcelain.RefChange, msg func(string) string) map[string]string {
	failed := map[string]string{}
	for _, c := range changes {
		if pol.Protected(c.Ref) {
			failed[c.Ref] = msg(c.Ref)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	for _, c := range changes {
		if _, ok := failed[c.Ref]; !ok {
			failed[c.Ref] = "atomic push: another ref would be refused"
		}
	}
	return failed
}
