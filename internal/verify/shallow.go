package verify

import (
	"fmt"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// A shallow clone (git clone --depth, CI checkouts) holds the log and the
// policy whole (they are small, and a fetch of refs/secure/* brings them
// whole unless asked for a depth), but not the source history the log's
// older entries name: a ref move whose old commit lies beyond the shallow
// boundary cannot be checked for ancestry (no force push) nor for the
// files it changed (path rules). git reads a boundary commit as if it had
// no parents, so such a check can never succeed by accident: it fails
// with ErrMissingObject (the commit is absent) or as a force push.
//
// By default the shallow file itself fails verification, and every check
// that could not be made is listed with it. With Options.AllowShallow the
// shallow file is accepted and the checks that could not be made because
// an object is absent (ErrMissingObject) become warnings naming each
// entry and what was missing; every other problem still fails, and no
// checkpoint is saved, so that a later verification of a full clone
// checks those entries again.

// shallowClone handles the shallow file of a clone with a work tree
// (checkReadRewrites). It fails unless AllowShallow.
func (v *verifier) shallowClone(f gitrepo.HistoryFile) {
	v.shallowUnseen()
	if v.opts.AllowShallow {
		v.shallowAllowed = true
		return
	}
	v.fail(nil, "", "", ErrReadRewritten,
		"verification needs a full clone: git fetch --unshallow (in CI, a full-depth checkout, e.g. actions/checkout with fetch-depth: 0), then verify again; or accept that those checks are not made: git secure verify --allow-shallow (for fetches through git-secure: git config secure.allowShallow true)",
		"this clone is shallow (%s): checks that need history beyond its boundary (ancestry of a ref's old value, the files a change touched) cannot be made here: each one that the log needs fails on its own as a missing object (when none does, --allow-shallow verifies everything else)", f.Path)
}

// shallowUnseen turns the path-rule failures that came only from missing
// states (Problem.unseen: the rule applied to every path it protects
// because the diff had to skip them) into what they are in a shallow
// clone, checks it could not make (ErrMissingObject): the states lie
// beyond the shallow boundary. Verification still fails on them unless
// AllowShallow, which then lists each as not checked; a full clone judges
// them again, as rule failures where they are.
func (v *verifier) shallowUnseen() {
	for _, p := range v.problems {
		if p.unseen {
			p.Kind = ErrMissingObject
			p.Detail = "states beyond the shallow boundary are missing, so whether this entry changed the files the rule protects is unknown: " + p.Detail
			p.unseen = false
		}
	}
}

// forgiveShallow reports whether problem p is a check the shallow clone
// could not make and AllowShallow accepts; it records the warning.
func (v *verifier) forgiveShallow(p *Problem) bool {
	if !v.shallowAllowed || p.Kind != ErrMissingObject {
		return false
	}
	v.shallowSkipped++
	what := p.Ref
	if p.Entry != 0 {
		what = fmt.Sprintf("entry #%d (%s) %s", p.Entry, short(p.EntryID), p.Ref)
	}
	if p.Rule != "" {
		what += ", rule " + p.Rule
	}
	v.res.Warnings = append(v.res.Warnings, fmt.Sprintf("not checked (shallow clone, --allow-shallow): %s: %s", strings.TrimSpace(what), p.Detail))
	return true
}

// shallowSummary adds the closing warning of a verification that accepted
// a shallow clone.
func (v *verifier) shallowSummary() {
	if !v.shallowAllowed {
		return
	}
	if v.shallowSkipped == 0 {
		v.res.Warnings = append(v.res.Warnings, "this clone is shallow (--allow-shallow): every check could still be made")
		return
	}
	v.res.Warnings = append(v.res.Warnings, fmt.Sprintf("this clone is shallow (--allow-shallow): %d check(s) listed above were NOT made; verify a full clone (git fetch --unshallow) to make them", v.shallowSkipped))
}

// unreadableLog is the problem of a log that cannot be read. In a shallow
// repository the likely cause is a fetch with --depth, which cut the log
// short like any other history: say so, and how to fetch it whole. It is
// a failure either way.
func unreadableLog(repo Repository, err error) *Problem {
	p := &Problem{Kind: ErrMalformed, Detail: err.Error(),
		Hint: "the log was rewritten or damaged; compare refs/secure/rsl with another clone"}
	files, ferr := repo.HistoryFiles()
	if ferr != nil {
		return p
	}
	for _, f := range files {
		if f.Kind == "shallow" {
			p.Detail += fmt.Sprintf("; this repository is shallow (%s): the log was probably fetched with a depth (git fetch --depth, a shallow CI checkout), which cuts it short", f.Path)
			p.Hint = "the log and the policy must be fetched whole (they are small): git fetch --unshallow origin (in CI, a full-depth checkout), or clone through git-secure (git secure clone), which always fetches them whole; then verify again"
		}
	}
	return p
}
