package verify

import (
	"fmt"
	"sort"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
)

// currentRefs returns the repository's refs that the log may record: the
// policy ref and every ref rsl.ValidateRecordedRef accepts (branches, tags,
// notes, ...; not git-secure's own refs nor remote-tracking refs).
func (v *verifier) currentRefs() (map[string]gitrepo.Hash, error) {
	all := v.opts.RefValues
	if all == nil {
		refs, err := v.repo.ListRefs("refs/")
		if err != nil {
			return nil, err
		}
		all = make(map[string]gitrepo.Hash, len(refs))
		for _, r := range refs {
			all[r.Name] = r.Hash
		}
	}
	out := make(map[string]gitrepo.Hash, len(all))
	for name, h := range all {
		if !h.IsZero() && rsl.ValidateRecordedRef(name) == nil {
			out[name] = h
		}
	}
	return out, nil
}

// checkCurrent compares the repository's refs with the log's final state:
// an unrecorded move, a rollback, a deleted ref or a ref moved to another
// entry's commit fails for protected refs and warns for others.
func (v *verifier) checkCurrent() error {
	cur, err := v.currentRefs()
	if err != nil {
		return err
	}
	final := v.finalPolicy
	names := map[string]bool{}
	for ref := range v.state {
		names[ref] = true
	}
	for ref := range cur {
		if strings.HasPrefix(ref, "refs/heads/") || strings.HasPrefix(ref, "refs/tags/") || ref == rsl.PolicyRef || final.Protected(ref) {
			names[ref] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for ref := range names {
		sorted = append(sorted, ref)
	}
	sort.Strings(sorted)
	for _, ref := range sorted {
		if !v.wanted(ref) {
			continue
		}
		protected := ref == rsl.PolicyRef || final.Protected(ref)
		last, recordedOK := v.latest(ref)
		have, exists := cur[ref]
		st := RefStatus{Ref: ref, Target: last.target, Entry: last.number, EntryID: last.id, Protected: protected}
		var problem string
		switch {
		case !recordedOK || last.target.IsZero():
			if exists {
				problem = fmt.Sprintf("points at %s but the log has no entry for it", short(have))
				st.Target = have
			} else {
				continue // deleted and recorded as deleted
			}
		case !exists:
			if v.opts.IgnoreMissingRefs && ref != rsl.PolicyRef {
				st.Note = "not present locally"
			} else {
				problem = fmt.Sprintf("the log records %s (entry #%d) but the ref is missing (deleted without an entry)", short(last.target), last.number)
			}
		case have != last.target:
			problem = v.mismatch(ref, have, last)
			if problem == "" {
				st.Note = fmt.Sprintf("local branch is ahead of the recorded %s: unpushed work", short(last.target))
			}
		}
		if problem != "" {
			hint := fmt.Sprintf("record an intended change with: git secure rsl record %s; otherwise restore the ref to %s", ref, shortOrNone(last.target))
			if ref == rsl.PolicyRef {
				hint = "if a git secure policy apply was interrupted, any git secure policy command completes it (git secure policy list); otherwise the policy ref was moved by hand: restore it to " + shortOrNone(last.target)
			}
			if protected {
				v.fail(nil, ref, "", ErrUnrecorded, hint, "%s", problem)
			} else {
				v.res.Warnings = append(v.res.Warnings, ref+": "+problem+" (not protected by any rule)")
			}
		}
		v.res.Refs = append(v.res.Refs, st)
	}
	return nil
}

// mismatch explains a ref whose value differs from its latest entry, or
// returns "" when it is local work ahead of the log and that is allowed.
func (v *verifier) mismatch(ref string, have gitrepo.Hash, last recorded) string {
	// Was the current value recorded earlier (rollback) or for another ref
	// (teleport)?
	// Prefer the same ref: a value it held before is a rollback even when
	// another ref also held it.
	var other *rsl.Entry
	for i := len(v.records) - 1; i >= 0; i-- {
		e := v.records[i].Entry
		if e.Type != rsl.TypeRef || e.New != have || v.skipped[e.Number] {
			continue
		}
		if e.Ref == ref {
			return fmt.Sprintf("points at %s, an older state (entry #%d), instead of the recorded %s (entry #%d): rollback", short(have), e.Number, short(last.target), last.number)
		}
		if other == nil {
			other = e
		}
	}
	if other != nil {
		return fmt.Sprintf("points at %s, which the log records for %s (entry #%d), instead of the recorded %s (entry #%d): teleport", short(have), other.Ref, other.Number, short(last.target), last.number)
	}
	if v.opts.LocalAhead && strings.HasPrefix(ref, "refs/heads/") {
		if ok, err := v.repo.IsAncestor(last.target, have); err == nil && ok {
			return ""
		}
	}
	return fmt.Sprintf("points at %s, but the log records %s (entry #%d): changed without an entry", short(have), short(last.target), last.number)
}
