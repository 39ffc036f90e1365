package verify

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

// The judgement of a streamed log gives exactly what judging the whole log
// phase by phase (every policy change, then every signature, then replay)
// gives; it only overlaps the phases:
//   - a policy problem stops everything: only the policy problems are
//     reported, so once one is found the rest is only read (a read error
//     still wins, as it would have come first);
//   - signature problems are kept apart and reported before replay's;
//   - a replay that stops (the budget, an I/O error) lets the policy steps
//     (and for the budget the signatures) of later windows run, which the
//     phase-by-phase order would have run before it;
//   - signatures and approvals are judged against every revocation: one
//     that reaches back before its window (a key revoked from an earlier
//     entry) sets retro and the log is judged again, knowing it.

// mode is what is still judged of the windows that follow.
type mode int

const (
	modeFull       mode = iota // policies, signatures, replay
	modeSignatures             // replay stopped on the budget
	modePolicies               // replay stopped on an error
	modeDrain                  // a policy problem: read to the end, judge nothing
)

// errRetro stops a pass that must run again (verifier.retro).
var errRetro = errors.New("verify: a revocation reaches back to a judged entry")

type sigJob struct {
	w *window
	i int
}

// run judges every window of s in order. The error is one to return
// as is (errStale, an unreadable log); problems go to the verifier.
func (s *logStream) run(v *verifier) error {
	defer s.stop()
	jobs, stopWorkers := v.signatureWorkers()
	defer stopWorkers()

	v.beginPolicies()
	m := modeFull
	var prev *window // signatures under way, replay to come
	finish := func(w *window) {
		<-w.pending
		v.signatureProblems(w)
		if m == modeFull {
			if err := v.replayWindow(w); err != nil {
				v.replayErr = err
				m = modePolicies
				var over *budgetError
				if errors.As(err, &over) {
					m = modeSignatures
				}
			}
		}
		v.records, v.policies, v.signers = nil, nil, nil
		s.release(w)
	}
	warn0 := len(v.res.Warnings)
	for b := range s.windows {
		if m == modeDrain {
			continue
		}
		w := &window{recs: b.recs, chunks: b.chunks}
		switch err := v.policyWindow(w); {
		case errors.Is(err, errStale), errors.Is(err, errRetro):
			return err
		case err != nil:
			m = modeDrain
			continue
		}
		if m == modeFull || m == modeSignatures {
			v.startSignatures(w, jobs)
		}
		if prev != nil {
			finish(prev)
		}
		prev = nil
		if w.pending != nil {
			prev = w
		}
	}
	if prev != nil && m != modeDrain {
		finish(prev)
	}
	if err := <-s.err; err != nil {
		return &Failed{Problems: []*Problem{unreadableLog(v.repo, err)}}
	}
	return v.endRun(m, warn0)
}

// endRun closes a pass over the whole log in mode m; the warnings from
// warn0 on came from replay.
func (v *verifier) endRun(m mode, warn0 int) error {
	replayWarnings := append([]string(nil), v.res.Warnings[warn0:]...)
	v.res.Warnings = v.res.Warnings[:warn0]
	if m == modeDrain {
		return nil
	}
	if v.count == 0 && v.base == 0 {
		return errors.New("verify: the log is empty")
	}
	v.endPolicies()
	if len(v.policyProblems) == 0 {
		// The warnings of the policy timeline come first, as they would
		// from a pass over every policy before replay.
		v.res.Warnings = append(v.res.Warnings, replayWarnings...)
		if m == modeFull {
			if v.count > 0 {
				v.notePushed(v.prevRec)
			}
			if v.opts.Progress != nil {
				v.opts.Progress(v.res.Checked, v.res.Checked)
			}
		}
	}
	return nil
}

// signatureWorkers starts the goroutines that check entry signatures
// (one per core unless Options.Workers says otherwise); stop ends them.
func (v *verifier) signatureWorkers() (jobs chan sigJob, stop func()) {
	workers := v.opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	jobs = make(chan sigJob, 2*windowSize)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var payload []byte // reused: the checks only hash it
			for j := range jobs {
				j.w.signers[j.i], j.w.errs[j.i] = v.checkSignature(j.w, j.i, &payload)
				if atomic.AddInt32(&j.w.left, -1) == 0 {
					close(j.w.pending)
				}
			}
		}()
	}
	return jobs, func() {
		close(jobs)
		wg.Wait()
	}
}

// failPolicy records a problem of the policy timeline.
func (v *verifier) failPolicy(rec *rsl.Record, ref string, kind error, hint, format string, args ...any) {
	saved := v.problems
	v.problems = nil
	v.fail(rec, ref, "", kind, hint, format, args...)
	v.policyProblems = append(v.policyProblems, v.problems...)
	v.problems = saved
}

// beginPolicies starts the policy timeline at the checkpoint's policy
// (or before the first entry).
func (v *verifier) beginPolicies() {
	v.curPolicy, v.curPolicyCommit = v.startPolicy, v.startPolicyCommit
	v.revokedFrom = map[string]uint64{}
	for k, n := range v.seedRevoked {
		v.revokedFrom[k] = n
	}
	if v.curPolicy != nil {
		v.addRevocations(v.curPolicy)
		v.spans = append(v.spans, policySpan{from: v.base + 1, pol: v.curPolicy})
	}
	v.res.PolicyEntry = v.startPolicyEntry
	if o := v.opts.PolicyOverride; o != nil {
		v.addRevocations(o)
		v.spans = []policySpan{{from: v.base + 1, pol: o}}
	}
}

// policyWindow walks the window's policy entries in order and checks every
// change against the policy before it; it fills w.policies. A non-nil
// error stops the judgement: errStale, errRetro, or errPolicy when a
// problem was recorded (policyProblems).
func (v *verifier) policyWindow(w *window) error {
	w.policies = make([]*policy.Policy, len(w.recs))
	w.prev = map[uint64]*policy.Policy{}
	firstNum := w.recs[0].Entry.Number
	if v.base == 0 && v.count == 0 {
		if first := w.recs[0].Entry; !first.IsPolicy() {
			v.failPolicy(w.recs[0], first.Ref, ErrMalformed, "the log must start with the policy recorded by git secure init",
				"the first entry records %s, not the policy", describe(first))
			return errPolicy
		}
	}
	o := v.opts.PolicyOverride
	for i, rec := range w.recs {
		v.note(rec)
		e := rec.Entry
		if o != nil {
			w.policies[i] = o
			continue
		}
		if e.IsPolicy() {
			if err := v.stepPolicy(w, rec, firstNum); err != nil {
				return err
			}
		}
		pol, err := v.orgs.judging(v, rec)
		if err != nil {
			return err
		}
		w.policies[i] = pol
	}
	w.revoked = v.revokedFrom
	return nil
}

// stepPolicy checks the policy change rec against the policy in force and
// puts it in force. The error is errPolicy (a problem was recorded),
// errStale or errRetro.
func (v *verifier) stepPolicy(w *window, rec *rsl.Record, firstNum uint64) error {
	e := rec.Entry
	hint := "only a policy signed by the required thresholds can be applied: see git secure policy apply"
	if e.Old != v.curPolicyCommit {
		v.failPolicy(rec, e.Ref, ErrChain, hint, "policy change from %s, but the policy in force is %s", short(e.Old), shortOrNone(v.curPolicyCommit))
		return errPolicy
	}
	if e.New.IsZero() {
		v.failPolicy(rec, e.Ref, ErrChain, hint, "the policy cannot be deleted")
		return errPolicy
	}
	next, err := policy.LoadSigned(v.repo, e.New, v.curPolicy)
	if err != nil {
		kind, fix := ErrMalformed, "fetch refs/secure/policy from the remote"
		switch {
		case errors.Is(err, gitrepo.ErrNotFound):
			kind = ErrMissingObject
		case errors.Is(err, policy.ErrUnsigned):
			// Refused for its signatures before it was decoded.
			kind, fix = ErrThreshold, hint
		}
		v.failPolicy(rec, e.Ref, kind, fix, "%v", err)
		return errPolicy
	}
	// Keys revoked at this entry (by any policy so far, or by
	// this one, or by the organisation policy the repository
	// inherits) sign no rules or rule file it writes.
	n := e.Number
	ownRevoked := func(fp string) bool {
		if from, ok := v.revokedFrom[fp]; ok && from <= n {
			return true
		}
		from := next.RevokedFrom(fp)
		return from != 0 && from <= n
	}
	orgPol, orgVer, err := v.orgs.revokerFor(v, rec, next)
	if err != nil {
		return err
	}
	revoked := func(fp string) bool {
		return ownRevoked(fp) || (orgPol != nil && orgPol.RevokedFrom(fp) != 0)
	}
	if err := CheckPolicyRevoked(v.curPolicy, next, rec.Commit.Committer.When, revoked); err != nil {
		if orgPol != nil && CheckPolicyRevoked(v.curPolicy, next, rec.Commit.Committer.When, ownRevoked) == nil {
			var keys []string
			for _, r := range orgPol.Revocations() {
				if !ownRevoked(r.Fingerprint) && strings.Contains(err.Error(), r.Fingerprint) {
					keys = append(keys, r.Fingerprint)
				}
			}
			v.failPolicy(rec, e.Ref, kindOf(err), "a key the organisation revoked signs no policy change of a repository that inherits its policy: have the repository's other keys sign it (git secure policy sign), and take the revoked key out of the repository's policy (git secure trust remove-rules-key, policy remove-key)",
				"policy %s: %v; the organisation policy version %d revokes %s, which signed it", short(e.New), err, orgVer, strings.Join(keys, ", "))
			return errPolicy
		}
		v.failPolicy(rec, e.Ref, kindOf(err), hint, "policy %s: %v", short(e.New), err)
		return errPolicy
	}
	if v.pin != nil {
		if err := v.pin.observe(next, e.Number); err != nil {
			v.failPolicy(rec, e.Ref, ErrMalformed, hint, "policy %s: %v", short(e.New), err)
			return errPolicy
		}
	}
	w.prev[e.Number] = v.curPolicy
	v.curPolicy, v.curPolicyCommit = next, e.New
	for _, r := range next.Revocations() {
		if r.FromEntry <= v.base {
			return errStale // revokes entries verified before the checkpoint
		}
	}
	for _, r := range next.Revocations() {
		if from, ok := v.revokedFrom[r.Fingerprint]; r.FromEntry < firstNum && (!ok || r.FromEntry < from) {
			v.addRevocations(next)
			v.retro = true
			return errRetro
		}
	}
	v.addRevocations(next)
	v.res.PolicyEntry = e.Number
	v.spans = append(v.spans, policySpan{from: e.Number, pol: next})
	return nil
}

// errPolicy says the policy step recorded a problem.
var errPolicy = errors.New("verify: policy problem")

// note keeps what outlives the entry's window.
func (v *verifier) note(rec *rsl.Record) {
	e := rec.Entry
	inf := entryInfo{id: rec.ID, typ: infoRef}
	if e.Type == rsl.TypeAnnotation {
		inf.typ = infoAnnotation
	} else {
		k, ok := v.refIndex[e.Ref]
		if !ok {
			k = uint32(len(v.refNames))
			v.refNames = append(v.refNames, e.Ref)
			v.refIndex[e.Ref] = k
		}
		inf.ref = k
	}
	v.addInfo(inf)
	v.count++
	v.lastID, v.lastNum = rec.ID, e.Number
}

// endPolicies closes the policy timeline: the policy in force at the tip,
// the root key pin and expiry.
func (v *verifier) endPolicies() {
	if o := v.opts.PolicyOverride; o != nil {
		v.finalPolicy = o
		v.res.RootVersion, v.res.RulesVersion = o.Root.Signed.Version, o.Targets.Signed.Version
		return
	}
	cur := v.curPolicy
	if merged := v.orgs.final(v); merged != nil {
		cur = merged // the refs are judged with the organisation's rules too
	}
	v.finalPolicy, v.policyCommit = cur, v.curPolicyCommit
	// Rules of rule files beyond their namespace are ignored there: say so.
	for _, w := range cur.Warnings() {
		v.res.Warnings = append(v.res.Warnings, "policy: "+w)
	}
	saved := v.problems
	v.problems = nil
	defer func() {
		v.policyProblems = append(v.policyProblems, v.problems...)
		v.problems = saved
	}()
	if !v.checkPin() {
		return
	}
	v.res.RootVersion = cur.Root.Signed.Version
	v.res.RulesVersion = cur.Targets.Signed.Version
	v.res.PolicyExpires = cur.Root.Signed.Expires
	if cur.Targets.Signed.Expires.Before(v.res.PolicyExpires) {
		v.res.PolicyExpires = cur.Targets.Signed.Expires
	}
	v.res.ValidUntil, v.res.Freshness = cur.Expires(), cur.Freshness() != nil
	if v.curPolicy.Org() != nil {
		// cur's expiry is the repository's; the organisation policy's own
		// expiry and revocations are read at each verification only.
		v.res.ValidUntil = time.Time{}
	}
	if err := CheckExpiry(cur, v.opts.Now); err != nil {
		v.fail(nil, rsl.PolicyRef, "", ErrExpired,
			"the policy must be renewed by its signers: git secure policy renew, then git secure policy apply",
			"%v", err)
	}
}

// startSignatures queues the window's signature checks on the workers.
func (v *verifier) startSignatures(w *window, jobs chan<- sigJob) {
	w.signers = make([]string, len(w.recs))
	w.errs = make([]error, len(w.recs))
	w.pending = make(chan struct{})
	w.left = int32(len(w.recs))
	for i := range w.recs {
		jobs <- sigJob{w: w, i: i}
	}
}

// signatureProblems records the window's signature failures in order.
func (v *verifier) signatureProblems(w *window) {
	for i, err := range w.errs {
		if err != nil {
			rec := w.recs[i]
			saved := v.problems
			v.problems = nil
			hint := "an entry must be signed by a key the policy knows; an authorized person can skip a bad entry with git secure rsl skip"
			var revoked *revokedKeyError
			if errors.As(err, &revoked) {
				hint = revoked.hint()
			}
			v.fail(rec, rec.Entry.Ref, "", ErrSignature, hint, "%v", err)
			v.sigProblems = append(v.sigProblems, v.problems...)
			v.problems = saved
		}
	}
}

// checkSignature verifies entry i's SSH signature against the keys of the
// policy in force (for a policy change, the keys of the old or the new
// policy). It runs on a worker: it reads only the window and what the
// policy step published before the window was queued. payload is the
// worker's buffer for the signed bytes.
func (v *verifier) checkSignature(w *window, i int, payload *[]byte) (string, error) {
	rec := w.recs[i]
	pol := w.policies[i]
	if rec.Entry.Type == rsl.TypeRef && !v.judged(pol, rec.Entry.Ref) {
		return "", nil
	}
	lookup := pol.LookupKey
	if prev := w.prev[rec.Entry.Number]; prev != nil {
		lookup = func(fp string) (k ssh.PublicKey, ok bool) {
			if k, ok = prev.LookupKey(fp); ok {
				return k, ok
			}
			return pol.LookupKey(fp)
		}
	}
	// A forge app the root trusts may sign the entry of a ref update the
	// forge made (a merge button): it is no person, so the rules must be
	// met by approvals alone (authorize finds no signer to count). It
	// signs nothing else: no policy entry, no annotation.
	bridge := rec.Entry.Type == rsl.TypeRef && !rec.Entry.IsPolicy()
	// The fingerprint of the key found is kept: the trusted key is
	// byte for byte the signing key, so computing it again would only
	// allocate.
	var found string
	withApps := func(fp string) (k ssh.PublicKey, ok bool) {
		if k, ok = lookup(fp); !ok && bridge {
			k, ok = pol.LookupForgeAppKey(fp)
		}
		if ok {
			found = fp
		}
		return k, ok
	}
	*payload = rec.Commit.AppendSignedPayload((*payload)[:0])
	key, err := sign.VerifySSHSig(rec.Commit.Signature, *payload, sign.NamespaceGit, withApps)
	if err != nil {
		if errors.Is(err, sign.ErrUnknownKey) {
			fp, _ := sign.SignatureFingerprint(rec.Commit.Signature)
			if app, ok := pol.ForgeAppByFingerprint(fp); ok {
				return "", fmt.Errorf("signed by forge app %s (%s), which may sign only the entries of ref updates, never a policy entry or an annotation", app.Name, fp)
			}
		}
		if errors.Is(err, sign.ErrUnknownKey) {
			fp, _ := sign.SignatureFingerprint(rec.Commit.Signature)
			if r, ok := pol.OrgRevoked(fp); ok && rec.Entry.Org != nil {
				e := &revokedKeyError{fp: fp, person: r.Person, from: r.FromEntry, org: true, orgVersion: rec.Entry.Org.Number}
				if o := pol.Org(); o != nil {
					e.orgURL, e.orgRootKeys, e.orgThreshold = o.URL, o.RootKeys, o.RootThreshold
				}
				return "", e
			}
			return "", fmt.Errorf("signed by %s, a key the policy in force does not know", fp)
		}
		return "", err
	}
	fp := found
	if fp == "" {
		fp = sign.Fingerprint(key)
	}
	if from := w.revoked[fp]; from != 0 && from <= rec.Entry.Number {
		e := &revokedKeyError{fp: fp, from: from}
		if p, ok := pol.PersonByFingerprint(fp); ok {
			e.person = p.Name
		}
		return "", e
	}
	return fp, nil
}

// revokedKeyError is an entry signed by a revoked key: by the
// organisation policy the repository inherits (org), or by the
// repository's own (trust revoke-key). A revoked key is known, so the
// hint for an unknown one ("skip the bad entry") is wrong for it: the
// pusher's entry was never in the log, and what helps is a current key.
type revokedKeyError struct {
	fp     string
	person string // who held the key ("" if unknown)
	// from is the entry the revocation counts from: of the
	// organisation's log when org, else of this repository's.
	from       uint64
	org        bool
	orgVersion uint64 // the organisation policy version the entry names
	orgURL     string // where the organisation policy lives ("" if unknown)
	// orgRootKeys and orgThreshold are the root keys the repository pins
	// for the organisation: the clone of the hint verifies from them.
	orgRootKeys  []string
	orgThreshold int
}

func (e *revokedKeyError) Error() string {
	if !e.org {
		return fmt.Sprintf("signed by %s, a key revoked from entry #%d on", e.fp, e.from)
	}
	key := e.fp
	if e.person != "" {
		key = fmt.Sprintf("%s (%s's key)", e.fp, e.person)
	}
	return fmt.Sprintf("signed by %s, a key the organisation policy version %d revokes: the organisation revoked it from its entry #%d on, and nothing a key the organisation revoked signs counts in a repository that inherits its policy", key, e.orgVersion, e.from)
}

// hint says what to do next: the pusher signs with a key still trusted
// (the server refused the entry), an entry already in the log (verify)
// is skipped; and where the revocation can be read.
func (e *revokedKeyError) hint() string {
	who := "you"
	if e.person != "" {
		who = e.person
	}
	sign := "sign with a key of yours the policy still trusts (git config user.signingKey PATH.pub of that key) and push again through git-remote-secure (a secure:: remote), which records the update anew"
	skip := "an entry already in the log is skipped by an authorized person: git secure rsl skip"
	if !e.org {
		return fmt.Sprintf("this repository's policy revoked %s (git secure trust revoke-key): %s; if %s has no other key, a rules key holder adds one: git secure policy add-key %s --key NEW.pub; %s; the revoked keys: git secure policy list", e.fp, sign, who, who, skip)
	}
	clone := "git secure clone ORG-POLICY-URL org-policy --root-key SHA256:..."
	if e.orgURL != "" && len(e.orgRootKeys) > 0 {
		clone = "git secure clone " + e.orgURL + " org-policy --root-key " + strings.Join(e.orgRootKeys, " --root-key ")
		if len(e.orgRootKeys) > 1 && e.orgThreshold > 0 && e.orgThreshold < len(e.orgRootKeys) {
			clone += fmt.Sprintf(" --root-threshold %d", e.orgThreshold)
		}
	}
	return fmt.Sprintf("%s; if %s has no other key, the organisation adds one in its policy repository: git secure policy add-key %s --key NEW.pub; %s; the organisation policy and its revoked keys: %s && git -C org-policy secure policy list", sign, who, who, skip, clone)
}

// replayWindow applies the window's entries to the recorded state in
// order and judges each ref update against the rules.
func (v *verifier) replayWindow(w *window) error {
	v.records, v.policies, v.signers = w.recs, w.policies, w.signers
	if v.state == nil {
		v.state = map[string]*refStates{}
	}
	if v.used == nil {
		v.used = map[usedDigest]uint64{}
	}
	if v.skipped == nil {
		v.skipped = map[uint64]bool{}
	}
	for i, rec := range w.recs {
		if v.prevRec != nil {
			v.notePushed(v.prevRec)
		}
		v.prevRec = rec
		v.opts.index.add(rec)
		v.findStates(rec)
		e := rec.Entry
		if err := v.src.enter(e.Number); err != nil {
			return &budgetError{rec: rec, err: err}
		}
		switch e.Type {
		case rsl.TypeAnnotation:
			if err := v.annotation(i, rec); err != nil {
				return err
			}
			if err := v.src.check(); err != nil {
				return &budgetError{rec: rec, err: err}
			}
			continue
		case rsl.TypeRef:
		}
		var old gitrepo.Hash
		if last, ok := v.latest(e.Ref); ok {
			old = last.target
		}
		judged := v.judged(v.policies[i], e.Ref)
		if e.Old != old && judged {
			v.fail(rec, e.Ref, "", ErrChain, "entries must record the exact transition from the latest recorded state",
				"records a move from %s, but the log had the ref at %s", shortOrNone(e.Old), shortOrNone(old))
		}
		st := v.state[e.Ref]
		if st == nil {
			st = &refStates{}
			v.state[e.Ref] = st
		}
		if err := v.stateLog().push(st, recorded{number: e.Number, id: rec.ID, target: e.New}); err != nil {
			return err
		}
		if e.IsPolicy() || !judged || v.signers[i] == "" {
			continue
		}
		if err := v.authorize(i, rec, e.Ref, e.Old, e.New, false); err != nil {
			return err
		}
		if err := v.src.check(); err != nil {
			return &budgetError{rec: rec, err: err}
		}
	}
	if v.opts.Progress != nil {
		v.opts.Progress(int(w.recs[len(w.recs)-1].Entry.Number-v.base), v.res.Checked)
	}
	return nil
}

// findStates notes which of Options.FindStates rec records as a ref's old
// or new state.
func (v *verifier) findStates(rec *rsl.Record) {
	if len(v.opts.FindStates) == 0 {
		return
	}
	e := rec.Entry
	if e.Number == v.statesThrough+1 {
		v.statesThrough++
	}
	if e.Type != rsl.TypeRef {
		return
	}
	for _, h := range []gitrepo.Hash{e.Old, e.New} {
		if v.opts.FindStates[h] {
			if v.res.FoundStates == nil {
				v.res.FoundStates = map[gitrepo.Hash]bool{}
			}
			v.res.FoundStates[h] = true
		}
	}
}
