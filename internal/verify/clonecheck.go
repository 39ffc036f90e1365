package verify

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
)

// LocalRef is a clone's own ref that differs from the log: reported as
// local state, never a failure.
type LocalRef struct {
	Ref    string       `json:"ref"`
	Target gitrepo.Hash `json:"target"`
	// State is "ahead", "behind", "diverged" or "new" (the log has no
	// current value for it), or "stale" for a remote-tracking ref that no
	// fetch refspec maps any more.
	State string `json:"state"`
	// Entry and Recorded are the log's latest entry for the ref and the
	// value it records (absent when the log never recorded the ref; zero
	// when it records a deletion).
	Entry    uint64        `json:"entry,omitempty"`
	Recorded *gitrepo.Hash `json:"recorded,omitempty"`
}

// checkClone judges a working clone (see CloneState): the remote's refs
// strictly, local tags the log records strictly at their local value
// (fetched tags land there), and reports every other local ref that
// differs from the log.
func (v *verifier) checkClone() error {
	cs := v.opts.Clone
	tracked := map[string][]TrackedRef{}
	names := map[string]bool{}
	for _, t := range cs.Tracked {
		if t.Ref != rsl.PolicyRef && rsl.ValidateRecordedRef(t.Ref) != nil {
			continue // a mapped copy of git-secure's own refs: read locally
		}
		tracked[t.Ref] = append(tracked[t.Ref], t)
		names[t.Ref] = true
	}
	for ref, obs := range tracked {
		tracked[ref] = sameValueOnce(obs, cs.Fetch)
	}
	v.forgeNamespacesLeftOut()
	local := map[string]gitrepo.Hash{}
	for ref, h := range cs.Local {
		local[ref] = h
	}
	// The policy is the metadata verified: its local ref is judged.
	if h, ok, err := v.repo.ResolveRef(rsl.PolicyRef); err != nil {
		return err
	} else if ok {
		local[rsl.PolicyRef] = h
	}
	judgedLocal := map[string]bool{} // local refs judged, not reported
	for ref := range local {
		if v.judgedLocally(ref) {
			judgedLocal[ref] = true
			names[ref] = true
		}
	}
	// Every value judge may ask mismatch about, for one walk of the log.
	pairs := map[refValue]bool{}
	for ref, obs := range tracked {
		for _, t := range obs {
			v.addMismatch(pairs, ref, t.Hash)
		}
	}
	for ref := range judgedLocal {
		v.addMismatch(pairs, ref, local[ref])
	}
	v.values = v.findRecorded(pairs)
	for _, ref := range v.sortedNames(names) {
		if ref == rsl.PolicyRef {
			v.judgePolicy(local)
			continue
		}
		obs := tracked[ref]
		have, isLocal := local[ref]
		isLocal = isLocal && judgedLocal[ref]
		for _, t := range obs {
			v.judgeTracked(ref, t)
		}
		if isLocal {
			v.judge(ref, have, localTag(ref))
		}
		if len(obs) == 0 && !isLocal {
			v.judgeAbsent(ref, v.absentFromRemote(ref))
		}
	}
	v.reportLocal(local, judgedLocal)
	v.sayMergedReviews(tracked)
	return nil
}

// sameValueOnce returns obs with each value of the remote's ref judged
// once: two refspecs that store the ref (the CI script's
// +refs/heads/*:refs/remotes/origin/* and +refs/*:refs/remote-refs/origin/*)
// hold the same value twice after one fetch. The kept observation is the
// one git's own mapping names (the first refspec that maps the ref), else
// the first; different values are each judged (one may be stale).
func sameValueOnce(obs []TrackedRef, fetch gitrepo.Refspecs) []TrackedRef {
	if len(obs) < 2 {
		return obs
	}
	primary, _, _ := fetch.Map(obs[0].Ref)
	out := make([]TrackedRef, 0, len(obs))
	at := map[gitrepo.Hash]int{}
	for _, t := range obs {
		i, seen := at[t.Hash]
		switch {
		case !seen:
			at[t.Hash] = len(out)
			out = append(out, t)
		case t.Tracking == primary:
			out[i] = t
		}
	}
	return out
}

// ErrNotFetched: a namespace that a rule protects is left out of the
// remote's fetch refspecs, so what the remote serves there is not judged.
var ErrNotFetched = errors.New("protected namespace not fetched")

// forgeNamespacesLeftOut fails closed on a forge's namespace (refs/pull/,
// ...) that a rule of the policy in force names while the remote's fetch
// refspecs leave it out (^refs/pull/*, as the CI script does when it sees
// no rule naming it): its refs would pass unjudged.
func (v *verifier) forgeNamespacesLeftOut() {
	if v.finalPolicy == nil {
		return
	}
	cs := v.opts.Clone
	excluded := policy.ForgeExcludes(v.finalPolicy)
	for _, prefix := range policy.ForgeRefPrefixes {
		if slices.Contains(excluded, "^"+prefix+"*") || !cs.Fetch.Excluded(prefix+"x") {
			continue
		}
		v.fail(nil, prefix+"*", "", ErrNotFetched,
			fmt.Sprintf("fetch the namespace too: git config --unset-all remote.%s.fetch '\\^%s\\*' && git fetch %s", cs.Remote, prefix, cs.Remote),
			"a rule of the policy names %s, but remote.%s.fetch leaves it out (^%s*): what %s serves there is not judged", prefix, cs.Remote, prefix, cs.Remote)
	}
}

// reviewBranch reports whether ref is where the review hand-off publishes
// a refused update for approval, refs/heads/review/NAME-HASH with HASH the
// first 12 hex digits of the value it holds.
func reviewBranch(ref string, have gitrepo.Hash) bool {
	name, ok := strings.CutPrefix(ref, "refs/heads/review/")
	suffix := "-" + have.String()[:12]
	return ok && len(name) > len(suffix) && strings.HasSuffix(name, suffix)
}

// maxNamedReviews bounds the review branches one summary names.
const maxNamedReviews = 10

// sayMergedReviews warns once about the remote's review branches whose
// commit a protected branch the log records already contains: the review
// is over, and every verify and push listed each of them until someone
// deleted it. The warning says how to delete them.
func (v *verifier) sayMergedReviews(tracked map[string][]TrackedRef) {
	if len(v.reviews) == 0 {
		return
	}
	var tips []gitrepo.Hash
	for ref := range tracked {
		if last, ok := v.latest(ref); ok && !last.target.IsZero() && strings.HasPrefix(ref, "refs/heads/") && v.finalPolicy.Protected(ref) {
			tips = append(tips, last.target)
		}
	}
	var merged []string
	for _, r := range v.reviews {
		for _, tip := range tips {
			if in, err := v.repo.IsAncestor(r.Hash, tip); err == nil && in {
				merged = append(merged, strings.TrimPrefix(r.Ref, "refs/heads/"))
				break
			}
		}
	}
	if len(merged) == 0 {
		return
	}
	sort.Strings(merged)
	named := merged
	if len(named) > maxNamedReviews {
		named = named[:maxNamedReviews]
	}
	more := ""
	if len(merged) > len(named) {
		more = fmt.Sprintf(" (and %d more: git branch -r --list '%s/review/*')", len(merged)-len(named), v.opts.Clone.Remote)
	}
	v.res.Warnings = append(v.res.Warnings, fmt.Sprintf("%d review branch(es) on %s are merged into a protected branch; delete them with: git push %s --delete %s%s",
		len(merged), v.opts.Clone.Remote, v.opts.Clone.Remote, strings.Join(named, " "), more))
}

// judgePolicy judges the clone's policy ref, the metadata verified, as
// strictly as a server's.
func (v *verifier) judgePolicy(local map[string]gitrepo.Hash) {
	if have, ok := local[rsl.PolicyRef]; ok {
		v.judge(rsl.PolicyRef, have, ownRef)
		return
	}
	v.judgeAbsent(rsl.PolicyRef, func(last recorded) (string, string, string) {
		return "", fmt.Sprintf("the log records %s (entry #%d) but the ref is missing", short(last.target), last.number),
			fmt.Sprintf("fetch git-secure's metadata: git fetch %s 'refs/secure/*:refs/secure/*'", v.opts.Clone.Remote)
	})
}

// judgedLocally reports whether a clone's own ref is judged: the policy
// ref, a tag the log records (a fetched tag cannot be told from one made
// by hand, so a recorded tag fails closed), and a tag named as a REF
// argument (the caller asked about exactly that tag, say before building
// it).
func (v *verifier) judgedLocally(ref string) bool {
	if ref == rsl.PolicyRef {
		return true
	}
	if !strings.HasPrefix(ref, "refs/tags/") {
		return false // a branch's shared state is the remote's
	}
	_, recorded := v.latest(ref)
	return recorded || v.only[ref]
}

// judgeTracked judges one remote-tracking value of ref. A value that the
// remote's own log (PushedTip) records while later, unpushed local
// entries moved the ref on is the remote's consistent state: a note.
func (v *verifier) judgeTracked(ref string, t TrackedRef) {
	cs := v.opts.Clone
	last, ok := v.latest(ref)
	if ok && t.Hash != last.target && v.pushed != nil {
		if p, had := v.pushed[ref]; had && p.target == t.Hash {
			v.res.Refs = append(v.res.Refs, RefStatus{Ref: ref, Target: last.target, Entry: last.number, EntryID: last.id,
				Protected: v.finalPolicy.Protected(ref), Tracking: t.Tracking,
				Note: fmt.Sprintf("%s is at entry #%d; entry #%d is not pushed yet", cs.Remote, p.number, last.number)})
			return
		}
	}
	if !ok && reviewBranch(ref, t.Hash) && !v.finalPolicy.Protected(ref) {
		// A review branch (the hand-off's refs/heads/review/NAME-HASH):
		// pushed without an entry by design, nothing to warn about.
		// Merged ones are summarised once, with how to delete them
		// (sayMergedReviews).
		v.res.Refs = append(v.res.Refs, RefStatus{Ref: ref, Target: t.Hash, Tracking: t.Tracking,
			Note: "review branch: a proposal, pushed without an entry"})
		v.reviews = append(v.reviews, TrackedRef{Ref: ref, Hash: t.Hash, Tracking: t.Tracking})
		return
	}
	v.judge(ref, t.Hash, observer{where: fmt.Sprintf("on %s (%s)", cs.Remote, t.Tracking), tracking: t.Tracking, nameRules: true,
		hint: func(ref string, c mismatchClass, last recorded) string { return remoteHint(cs.Remote, ref, c, last) }})
}

// remoteHint says what to do when the remote's state differs from the
// log: nothing local can fix it, and recording it is never the answer.
func remoteHint(remote, ref string, c mismatchClass, last recorded) string {
	fetchBoth := fmt.Sprintf("git fetch %s 'refs/secure/*:refs/secure/*' && git fetch %s", remote, remote)
	switch {
	case c == classUnrecorded && last.number > 0 && last.target.IsZero():
		return fmt.Sprintf("the log records %s deleted (entry #%d): a remote-tracking ref left from before the deletion stays until pruned (git fetch --prune %s); if it is still there after that, %s serves a deleted ref again: do not use it", ref, last.number, remote, remote)
	case c == classUnrecorded:
		return fmt.Sprintf("%s serves %s without a log entry: it was pushed past git-secure (is the server's hook installed? git secure server install); do not use it until an authorized person records it (git secure rsl repair %s %s)", remote, ref, remote, ref)
	case c == classAhead:
		return fmt.Sprintf("%s moved %s without a log entry: it was pushed past git-secure, or the log was fetched before the branch (fetch both again: %s); do not build from it until the move is recorded (git secure rsl repair %s %s)", remote, ref, fetchBoth, remote, ref)
	case c == classRollback:
		return fmt.Sprintf("%s serves an older state of %s than its log records (entry #%d): if the remote-tracking ref is only stale, fetch again (%s); if it stays, the remote rolled %s back: do not use it", remote, ref, last.number, fetchBoth, ref)
	}
	return fmt.Sprintf("%s serves %s at a commit the log does not record for it: do not use it; tell the maintainers of %s", remote, ref, remote)
}

// localTag judges a tag the log records at its local value.
func localTag(ref string) observer {
	return observer{where: "local " + ref, hint: func(ref string, c mismatchClass, last recorded) string {
		name := strings.TrimPrefix(ref, "refs/tags/")
		if c == classUnrecorded {
			return fmt.Sprintf("the log records no value for this tag: it is not a verified release; if you made it yourself, delete it (git tag -d %s); otherwise a remote serves it without an entry", name)
		}
		return fmt.Sprintf("a tag the log records is judged at its local value, where fetched tags land: if you moved it yourself, put it back (git tag -f %s %s); otherwise a remote moved it without an entry: do not use it", name, short(last.target))
	}}
}

// absentFromRemote decides about a recorded ref the remote-tracking refs
// do not hold.
func (v *verifier) absentFromRemote(ref string) func(last recorded) (string, string, string) {
	cs := v.opts.Clone
	return func(last recorded) (string, string, string) {
		if v.pushed != nil {
			if p, had := v.pushed[ref]; !had || p.target.IsZero() {
				return fmt.Sprintf("recorded in entry #%d, not pushed to %s yet", last.number, cs.Remote), "", ""
			}
		}
		switch {
		case strings.HasPrefix(ref, "refs/tags/"):
			return "not present locally (git fetch --tags brings it)", "", ""
		case !cs.Covers(ref):
			return fmt.Sprintf("not fetched from %s (no remote.%s.fetch refspec covers it): not judged", cs.Remote, cs.Remote), "", ""
		}
		problem := fmt.Sprintf("the log records %s (entry #%d) but %s does not serve it (no remote-tracking ref): deleted without an entry, or not fetched yet", short(last.target), last.number, cs.Remote)
		if v.finalPolicy.Protected(ref) {
			problem += " (protected by " + v.protectingRules(ref) + ")"
		}
		return "", problem,
			fmt.Sprintf("fetch again (git fetch %s); if it stays missing, %s deleted %s without an entry", cs.Remote, cs.Remote, ref)
	}
}

// reportLocal lists the clone's own refs that differ from the log.
func (v *verifier) reportLocal(local map[string]gitrepo.Hash, judged map[string]bool) {
	for ref, h := range local {
		if judged[ref] || (v.only != nil && !v.only[ref]) {
			continue
		}
		lr := LocalRef{Ref: ref, Target: h}
		last, ok := v.latest(ref)
		switch {
		case !ok || last.target.IsZero():
			if !v.judgedName(ref) && !ok {
				continue // never recorded and nothing would judge it
			}
			lr.State = "new"
		case last.target == h:
			continue
		default:
			lr.State = "diverged"
			if a, err := v.repo.IsAncestor(last.target, h); err == nil && a {
				lr.State = "ahead"
			} else if b, err := v.repo.IsAncestor(h, last.target); err == nil && b {
				lr.State = "behind"
			}
		}
		if ok {
			target := last.target
			lr.Entry, lr.Recorded = last.number, &target
		}
		v.res.Local = append(v.res.Local, lr)
	}
	for _, r := range v.opts.Clone.Unmapped {
		if v.only == nil {
			v.res.Local = append(v.res.Local, LocalRef{Ref: r.Name, Target: r.Hash, State: "stale"})
		}
	}
	sort.Slice(v.res.Local, func(i, j int) bool { return v.res.Local[i].Ref < v.res.Local[j].Ref })
}
