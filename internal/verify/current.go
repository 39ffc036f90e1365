package verify

import (
	"fmt"
	"sort"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
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

// judgedName reports whether a ref present in the judged state is checked
// even when the log never recorded it: branches, tags, the policy, and
// every ref a rule protects.
func (v *verifier) judgedName(ref string) bool {
	if strings.HasPrefix(ref, "refs/heads/") || strings.HasPrefix(ref, "refs/tags/") || ref == rsl.PolicyRef || v.finalPolicy.Protected(ref) {
		return true
	}
	_, variant := v.finalPolicy.CaseVariantOf(ref)
	_, reserved := policy.ReservedVariant(ref)
	return variant || reserved
}

// caseVariant fails a present ref that a ref pattern of the policy in
// force matches only as a case-insensitive file system spells it
// (policy.CaseVariantOf: refs/heads/Main for refs/heads/main), and
// reports whether it did. The files ref backend of a macOS or Windows
// server or clone stores both names in one file: a push of the variant,
// judged under other rules or none, would move the covered ref with no
// check of its own, and a fetch of both leaves one value for two refs.
// No honest workflow needs such a name, so it is refused whatever the
// log says of it.
func (v *verifier) caseVariant(ref string, have gitrepo.Hash, o observer) bool {
	if ref == rsl.PolicyRef {
		return false
	}
	cv, ok := v.finalPolicy.CaseVariantOf(ref)
	ns, reserved := policy.ReservedVariant(ref)
	if !ok && !reserved {
		return false
	}
	hint := fmt.Sprintf("delete it (git push REMOTE :%s), or push its commits under a name that differs from what %s covers by more than case", ref, cv.Owner)
	problem := fmt.Sprintf("differs only in case (or in a spelling case-insensitive file systems store as the same name) from the refs %s covers (%s): a macOS or Windows server or clone keeps both in one file, so moving it would move them unjudged", cv.Owner, cv.Pattern)
	if reserved {
		what := map[string]string{"refs/secure/": "git-secure's log and policy", "refs/replace/": "git's replace refs, which change what every ref reads as"}[ns]
		hint = fmt.Sprintf("delete it (git push REMOTE :%s)", ref)
		problem = fmt.Sprintf("is a spelling of the namespace %s (%s) that a case-insensitive file system stores as that namespace: on a macOS or Windows server or clone it would replace what the namespace holds, unjudged", ns, what)
	}
	if o.where != "" {
		hint = fmt.Sprintf("ask the remote's maintainers to delete %s; it cannot be fetched safely onto a case-insensitive file system", ref)
	}
	if o.where != "" {
		problem = o.where + ": " + problem
	}
	v.fail(nil, ref, "", ErrPolicyRule, hint, "%s", problem)
	v.res.Refs = append(v.res.Refs, RefStatus{Ref: ref, Target: have, Protected: true, Tracking: o.tracking, Note: "case variant of a covered name"})
	return true
}

// sortedNames returns the refs the log records plus those of extra that
// judgedName accepts, sorted and filtered by the REF arguments.
func (v *verifier) sortedNames(extra ...map[string]bool) []string {
	names := map[string]bool{}
	for ref := range v.state {
		names[ref] = true
	}
	for _, m := range extra {
		for ref := range m {
			if v.judgedName(ref) {
				names[ref] = true
			}
		}
	}
	sorted := make([]string, 0, len(names))
	for ref := range names {
		if v.wanted(ref) {
			sorted = append(sorted, ref)
		}
	}
	sort.Strings(sorted)
	return sorted
}

// checkCurrent compares the judged refs with the log's final state: an
// unrecorded move, a rollback, a deleted ref or a ref moved to another
// entry's commit fails for protected refs and warns for others. Without
// Options.Clone the judged refs are the repository's own (or RefValues):
// a server's state, judged strictly. With it, see checkClone.
func (v *verifier) checkCurrent() error {
	if v.opts.Clone != nil {
		v.res.Judged = "remote " + v.opts.Clone.Remote
		return v.checkClone()
	}
	switch {
	case v.opts.RefValues != nil:
		v.res.Judged = "given refs"
	case v.repo.WorkTree() == "":
		v.res.Judged = "bare repository refs"
	default:
		v.res.Judged = "local refs (no remote)"
	}
	cur, err := v.currentRefs()
	if err != nil {
		return err
	}
	present := make(map[string]bool, len(cur))
	pairs := map[refValue]bool{}
	for ref, have := range cur {
		present[ref] = true
		v.addMismatch(pairs, ref, have)
	}
	v.values = v.findRecorded(pairs)
	for _, ref := range v.sortedNames(present) {
		have, exists := cur[ref]
		if !exists {
			v.judgeAbsent(ref, func(last recorded) (string, string, string) {
				if v.opts.IgnoreMissingRefs && ref != rsl.PolicyRef {
					return "not present locally", "", ""
				}
				return "", fmt.Sprintf("the log records %s (entry #%d) but the ref is missing (deleted without an entry)", short(last.target), last.number),
					fmt.Sprintf("restore %s to %s, or record its deletion with: git secure rsl record %s", ref, short(last.target), ref)
			})
			continue
		}
		if v.opts.RefValues == nil && v.repo.WorkTree() == "" {
			v.judge(ref, have, servedRef)
		} else {
			v.judge(ref, have, ownRef)
		}
	}
	return nil
}

// observer says where a judged value was seen; it words the problem and
// the hint for that place.
type observer struct {
	// where prefixes the problem ("on origin (refs/remotes/origin/x)"),
	// "" for the ref's own value.
	where string
	// tracking is the remote-tracking ref the value was read from, if any.
	tracking string
	// hint returns what to do about a mismatch of class c.
	hint func(ref string, c mismatchClass, last recorded) string
	// nameRules: a protected ref's problem names the rules that protect
	// it (a remote's ref in any namespace: say why it was judged).
	nameRules bool
}

// ownRef judges a repository's own ref: a server's, or a clone's policy
// ref.
var ownRef = observer{hint: func(ref string, c mismatchClass, last recorded) string {
	switch c {
	case classUnrecorded:
		// No rule covered the ref when it was pushed, so anyone could
		// have: recording it signs its content as the recorder's own
		// (attack run, session 14: the hint used to invite just that).
		return fmt.Sprintf("no entry ever recorded %s, so whoever could push when no rule covered it may have written it: review it first (git log %s); if you wrote or reviewed all of it, record it with: git secure rsl record %s; otherwise delete it (in a push: git push REMOTE :%s)", ref, ref, ref, ref)
	case classAhead:
		return fmt.Sprintf("record an intended change with: git secure rsl record %s; otherwise restore the ref to %s", ref, short(last.target))
	}
	// Recording a rollback, a teleport or a rewrite would put it in
	// the log as if it were intended: never suggest it.
	return fmt.Sprintf("restore %s to %s, the state the log records (entry #%d)", ref, short(last.target), last.number)
}}

// servedRef judges a bare repository's ref: a server's, which people
// repair from their clones (a crash between moving a branch and moving the
// log leaves it ahead of its entry).
var servedRef = observer{hint: func(ref string, c mismatchClass, last recorded) string {
	if c == classUnrecorded || c == classAhead || c == classDiverged {
		return RepairHint("REMOTE", ref, last.target)
	}
	return ownRef.hint(ref, c, last)
}}

// RepairHint says how anyone allowed to can repair ref, which remote
// serves at a value its log (recording target) does not record.
func RepairHint(remote, ref string, target gitrepo.Hash) string {
	back := "delete it"
	if !target.IsZero() {
		back = "put it back to " + short(target)
	}
	return fmt.Sprintf("from a clone, anyone allowed to move %s repairs it: git secure rsl repair %s %s (then --record to sign the server's value once you reviewed it, or --restore to %s)", ref, remote, ref, back)
}

// unguardedSince reports whether some policy in force at or after ref's
// latest entry (number n) left ref unprotected: a move made then needed
// no entry (review finding F5: an entry for a branch no rule covers, the
// branch moved on without one, a rule added later). Entries verified
// before the checkpoint are judged by the policy in force there.
func (v *verifier) unguardedSince(ref string, n uint64) bool {
	if n == 0 {
		return false
	}
	if n <= v.base && v.startPolicy != nil && !v.startPolicy.Protected(ref) {
		return true
	}
	for k, sp := range v.spans {
		end := v.lastNum // the span runs to the next one's start, or the tip
		if k+1 < len(v.spans) {
			end = v.spans[k+1].from - 1
		}
		if v.count > 0 && end >= n && end >= sp.from && sp.pol != nil && !sp.pol.Protected(ref) {
			return true
		}
	}
	return false
}

// unreviewedHint is the hint for a protected ref whose current value was
// reached while no rule covered it: whoever moved it needed nobody's
// permission, so recording that value blindly would sign their commit.
func unreviewedHint(ref string, have gitrepo.Hash, last recorded) string {
	name := strings.TrimPrefix(ref, "refs/heads/")
	from := "the log's " + short(last.target)
	if last.target.IsZero() {
		from = "its deletion"
	}
	return fmt.Sprintf("no rule covered %s at some point since entry #%d, so it may have moved then without needing an entry, and nobody the rules name vouches for %s: do not record it unreviewed; review what changed since %s, then record it (git secure rsl record %s, a signature that you reviewed it) or point %s at a commit you reviewed and record that; to protect a ref with a new rule, record the ref at a reviewed commit first", ref, last.number, short(have), from, name, name)
}

// mismatchClass sorts a value that differs from the log.
type mismatchClass int

const (
	classUnrecorded mismatchClass = iota // the log has no current value
	classAhead                           // descends from the recorded value
	classRollback                        // an older recorded state, or an ancestor of the recorded one
	classTeleport                        // a value recorded for another ref
	classDiverged                        // anything else
)

// judge compares one observed value of ref with the log's latest entry and
// records the ref's status, failing (protected) or warning (not
// protected) on any difference.
func (v *verifier) judge(ref string, have gitrepo.Hash, o observer) {
	if v.caseVariant(ref, have, o) {
		return
	}
	protected := ref == rsl.PolicyRef || v.finalPolicy.Protected(ref)
	last, recordedOK := v.latest(ref)
	st := RefStatus{Ref: ref, Target: last.target, Entry: last.number, EntryID: last.id, Protected: protected, Tracking: o.tracking}
	var problem string
	var class mismatchClass
	switch {
	case !recordedOK || last.target.IsZero():
		st.Target = have
		class = classUnrecorded
		problem = fmt.Sprintf("points at %s but the log has no entry for it", short(have))
		if recordedOK {
			problem = fmt.Sprintf("points at %s but the log records it deleted (entry #%d)", short(have), last.number)
		}
	case have != last.target:
		problem, class = v.mismatch(ref, have, last, protected)
		if class == classAhead && o.where == "" && v.opts.LocalAhead && strings.HasPrefix(ref, "refs/heads/") {
			problem = ""
			st.Note = fmt.Sprintf("local branch is ahead of the recorded %s: unpushed work", short(last.target))
		}
	}
	if problem != "" {
		if o.where != "" {
			problem = o.where + ": " + problem
		}
		if o.nameRules && protected && ref != rsl.PolicyRef {
			problem += " (protected by " + v.protectingRules(ref) + ")"
		}
		hint := o.hint(ref, class, last)
		if ref == rsl.PolicyRef && o.where == "" {
			hint = "if a git secure policy apply was interrupted, any git secure policy command completes it (git secure policy list); otherwise the policy ref was moved by hand: restore it to " + shortOrNone(last.target)
		}
		// A ref's own value (a server's, a push's, a local one) whose
		// hint would say "record it": not if the ref may have moved while
		// no rule covered it. A remote's value is never to be recorded
		// from here anyway (remoteHint).
		if protected && o.where == "" && ref != rsl.PolicyRef && class != classRollback && class != classTeleport && recordedOK && v.unguardedSince(ref, last.number) {
			hint = unreviewedHint(ref, have, last)
			if v.opts.RefValues == nil && v.repo.WorkTree() == "" {
				hint += "; " + RepairHint("REMOTE", ref, last.target)
			}
		}
		defer v.noteRecorded(len(v.problems), last.target)
		if g := v.forcePushed(ref, protected, recordedOK, last, class); g != nil {
			v.fail(nil, ref, g.Name, ErrPolicyRule, fmt.Sprintf("restore %s to %s, the state the log records (entry #%d), or a commit that contains it", ref, short(last.target), last.number),
				"%s: global rule %s lets %s only fast-forward", problem, g.Name, ref)
		} else {
			v.report(ref, protected, hint, problem)
		}
	}
	v.res.Refs = append(v.res.Refs, st)
}

// protectingRules names the rules of the policy in force that protect
// ref: "rule a" or "rules a, b".
func (v *verifier) protectingRules(ref string) string {
	var names []string
	for _, r := range v.finalPolicy.RulesFor(ref) {
		names = append(names, r.Name)
	}
	if len(names) == 1 {
		return "rule " + names[0]
	}
	return "rules " + strings.Join(names, ", ")
}

// forcePushed returns the no-force-push global rule that an unrecorded
// move of ref breaks, if any. A ref that no rule protects may move without
// an entry (a warning), but a global rule that says it only fast-forwards
// holds all the same: without this, anyone with push access force-pushed
// or deleted such a ref past the server (it only warned), and every clone
// verified the result. Creating it, or moving it ahead of its recorded
// value, breaks nothing. Protected refs fail on the move itself.
func (v *verifier) forcePushed(ref string, protected, recordedOK bool, last recorded, class mismatchClass) *policy.GlobalRule {
	if protected || !recordedOK || last.target.IsZero() || class == classAhead {
		return nil
	}
	return v.noForcePush(ref)
}

// noForcePush returns the first no-force-push global rule of the policy
// in force that covers ref, nil when none does.
func (v *verifier) noForcePush(ref string) *policy.GlobalRule {
	if v.finalPolicy == nil {
		return nil
	}
	for _, g := range v.finalPolicy.GlobalRules() {
		if g.Type == policy.GlobalNoForcePush && g.CoversRef(ref) {
			return g
		}
	}
	return nil
}

// judgeAbsent handles a ref the log records that the judged state lacks:
// absent returns a note (not judged), or a problem and its hint.
func (v *verifier) judgeAbsent(ref string, absent func(last recorded) (note, problem, hint string)) {
	last, recordedOK := v.latest(ref)
	if !recordedOK || last.target.IsZero() {
		return // deleted and recorded as deleted
	}
	protected := ref == rsl.PolicyRef || v.finalPolicy.Protected(ref)
	st := RefStatus{Ref: ref, Target: last.target, Entry: last.number, EntryID: last.id, Protected: protected}
	note, problem, hint := absent(last)
	st.Note = note
	if problem != "" {
		defer v.noteRecorded(len(v.problems), last.target)
		if g := v.noForcePush(ref); g != nil && !protected {
			v.fail(nil, ref, g.Name, ErrPolicyRule, hint, "%s: global rule %s lets %s only fast-forward, never be deleted", problem, g.Name, ref)
		} else {
			v.report(ref, protected, hint, problem)
		}
	}
	v.res.Refs = append(v.res.Refs, st)
}

// noteRecorded sets Recorded (target) on the problems found since the
// first n.
func (v *verifier) noteRecorded(n int, target gitrepo.Hash) {
	for _, p := range v.problems[n:] {
		p.Recorded = target
	}
}

// report fails a protected ref and warns about another.
func (v *verifier) report(ref string, protected bool, hint, problem string) {
	if protected {
		v.fail(nil, ref, "", ErrUnrecorded, hint, "%s", problem)
		return
	}
	v.res.Warnings = append(v.res.Warnings, ref+": "+problem+" (not protected by any rule)")
}

// maxClassified bounds the protected refs whose mismatch is classified
// by ancestry (ahead, behind): each asks the commit graph, and a remote
// (or a pusher) chooses how many such refs it serves. The refs past it
// still fail, named a rollback or teleport when the log records their
// value, else "changed without an entry".
const maxClassified = 100

// refValue is a ref observed at a value that differs from its latest entry.
type refValue struct {
	ref  string
	have gitrepo.Hash
}

// entryRef is an entry's number and the ref it records.
type entryRef struct {
	ref    string
	number uint64
}

// recordedValues is what one walk of the log found about the values refs
// were observed at instead of their latest entry (mismatch).
type recordedValues struct {
	asked map[refValue]bool
	// same: the newest entry that recorded the value for the same ref.
	same map[refValue]entryRef
	// others: the newest two entries that recorded the value, for two
	// different refs: the first names another ref than any one ref, or
	// the second does.
	others map[gitrepo.Hash][2]entryRef
}

// addMismatch adds ref's value have to pairs when it differs from the
// value ref's latest entry records (what judge then asks mismatch about).
func (v *verifier) addMismatch(pairs map[refValue]bool, ref string, have gitrepo.Hash) {
	if last, ok := v.latest(ref); ok && !last.target.IsZero() && have != last.target && v.wanted(ref) {
		pairs[refValue{ref, have}] = true
	}
}

// findRecorded walks the log once, newest first back to v.base, for
// every value of pairs: which entries recorded it, for the same ref or
// another. Walking once per mismatching ref cost (refs x log) reads: a
// server serving 800 protected tags moved past a log of 800 entries kept
// a fresh clone busy for 80 s before it refused (attack session 15, 04).
func (v *verifier) findRecorded(pairs map[refValue]bool) *recordedValues {
	found := &recordedValues{asked: pairs, same: map[refValue]entryRef{}, others: map[gitrepo.Hash][2]entryRef{}}
	if len(pairs) == 0 {
		return found
	}
	values := make(map[gitrepo.Hash]bool, len(pairs))
	for p := range pairs {
		values[p.have] = true
	}
	// The entries are no longer held: read them again (a failing
	// verification only). A read error leaves what was found so far.
	_ = rsl.WalkBack(v.repo, v.res.Tip, func(rec *rsl.Record) (bool, error) {
		e := rec.Entry
		if e.Number <= v.base {
			return false, nil
		}
		if e.Type != rsl.TypeRef || !values[e.New] || v.skipped[e.Number] {
			return true, nil
		}
		at := entryRef{ref: e.Ref, number: e.Number}
		if k := (refValue{e.Ref, e.New}); pairs[k] {
			if _, seen := found.same[k]; !seen {
				found.same[k] = at
			}
		}
		o := found.others[e.New]
		switch {
		case o[0].number == 0:
			o[0] = at
		case o[1].number == 0 && o[0].ref != e.Ref:
			o[1] = at
		}
		found.others[e.New] = o
		return true, nil
	})
	return found
}

// recordedAs returns the newest entry that recorded have for ref itself
// and the newest that recorded it for another ref (number 0: none).
func (v *verifier) recordedAs(ref string, have gitrepo.Hash) (same, other entryRef) {
	k := refValue{ref, have}
	found := v.values
	if found == nil || !found.asked[k] {
		found = v.findRecorded(map[refValue]bool{k: true})
	}
	o := found.others[have]
	other = o[0]
	if other.ref == ref {
		other = o[1]
	}
	return found.same[k], other
}

// mismatch explains a ref whose value differs from its latest entry.
func (v *verifier) mismatch(ref string, have gitrepo.Hash, last recorded, protected bool) (string, mismatchClass) {
	// Was the current value recorded earlier (rollback) or for another ref
	// (teleport)? Prefer the same ref: a value it held before is a
	// rollback even when another ref also held it.
	same, other := v.recordedAs(ref, have)
	if same.number != 0 {
		return fmt.Sprintf("points at %s, an older state (entry #%d), instead of the recorded %s (entry #%d): rollback", short(have), same.number, short(last.target), last.number), classRollback
	}
	if other.number != 0 {
		return fmt.Sprintf("points at %s, which the log records for %s (entry #%d), instead of the recorded %s (entry #%d): teleport", short(have), other.ref, other.number, short(last.target), last.number), classTeleport
	}
	class := classDiverged
	// A protected ref fails whatever its ancestry; past maxClassified the
	// commit graph is not asked why (a local branch ahead is unpushed
	// work, not a failure: always asked).
	if protected && !(v.opts.LocalAhead && strings.HasPrefix(ref, "refs/heads/")) {
		if v.classified >= maxClassified {
			return fmt.Sprintf("points at %s, but the log records %s (entry #%d): changed without an entry", short(have), short(last.target), last.number), class
		}
		v.classified++
	}
	if ok, err := v.repo.IsAncestor(last.target, have); err == nil && ok {
		class = classAhead
	} else if ok, err := v.repo.IsAncestor(have, last.target); err == nil && ok {
		class = classRollback
		return fmt.Sprintf("points at %s, behind the recorded %s (entry #%d): changed without an entry, back to an older commit", short(have), short(last.target), last.number), class
	}
	return fmt.Sprintf("points at %s, but the log records %s (entry #%d): changed without an entry", short(have), short(last.target), last.number), class
}
