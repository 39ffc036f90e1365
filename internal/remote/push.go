package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/display"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

func bgctx() context.Context { return context.Background() }

type pushSpec struct {
	force    bool
	src, dst string
	raw      string
	// pinned is what src resolved to when the entry was recorded: the
	// push sends exactly that, even if src moves meanwhile.
	pinned gitrepo.Hash
}

// maxPushAttempts bounds retries after losing a race for the log.
const maxPushAttempts = 6

func (h *Helper) push(in *bufio.Reader, first string) error {
	var specs []pushSpec
	for line := first; line != ""; {
		raw := strings.TrimPrefix(line, "push ")
		s := pushSpec{raw: raw}
		spec := raw
		if strings.HasPrefix(spec, "+") {
			s.force, spec = true, spec[1:]
		}
		src, dst, ok := strings.Cut(spec, ":")
		if !ok || gitrepo.ValidRefName(dst) != nil || strings.HasPrefix(src, "-") {
			return fmt.Errorf("remote helper: bad push command %q", line)
		}
		s.src, s.dst = src, dst
		specs = append(specs, s)
		var err error
		if line, err = readLine(in); err != nil {
			return err
		}
	}
	// Metadata refs named by the user (git push origin refs/secure/...)
	// are sent by the helper itself, from the local state, never forced.
	var branchSpecs []pushSpec
	for _, s := range specs {
		if !strings.HasPrefix(s.dst, "refs/secure/") {
			branchSpecs = append(branchSpecs, s)
		}
	}
	upToDate := h.upToDate(specs)
	var results map[string]string
	if h.dryRun {
		if results = h.dryRunPush(branchSpecs); len(results) == 0 {
			results = h.dryRunPolicy(branchSpecs)
		}
	} else {
		results = h.pushSpecs(branchSpecs)
		h.remember(results)
	}
	if len(results) > 0 {
		for _, s := range specs {
			if _, failed := results[s.dst]; !failed && strings.HasPrefix(s.dst, "refs/secure/") {
				results[s.dst] = "not sent: the push failed"
			}
		}
	}
	for _, s := range specs {
		if msg, refused := notCarried(s.dst); refused {
			fmt.Fprintf(h.Out, "error %s %s\n", s.dst, msg)
		} else if msg, failed := results[s.dst]; failed {
			fmt.Fprintf(h.Out, "error %s %s\n", s.dst, display.Escape(oneLine(msg)))
		} else if upToDate[s.dst] {
			fmt.Fprintf(h.Out, "ok %s up to date\n", s.dst)
		} else {
			fmt.Fprintf(h.Out, "ok %s\n", s.dst)
		}
	}
	fmt.Fprint(h.Out, "\n")
	return nil
}

// upToDate returns the destinations of specs that relistForMetadata
// listed behind their real value and that the push leaves where the
// remote has them: git is told "up to date" for them.
func (h *Helper) upToDate(specs []pushSpec) map[string]bool {
	if len(h.relisted) == 0 {
		return nil
	}
	h.awaitSnap()
	out := map[string]bool{}
	for _, s := range specs {
		real, ok := h.relisted[s.dst]
		if !ok || !strings.HasPrefix(s.src, "refs/") {
			continue
		}
		if v, ok := h.localSnap[s.src]; ok && v == real {
			out[s.dst] = true
		}
	}
	return out
}

func oneLine(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", " ")
	if s == "" {
		return "rejected"
	}
	return s
}

// failAll marks every spec failed with msg.
func failAll(specs []pushSpec, msg string) map[string]string {
	out := map[string]string{}
	for _, s := range specs {
		out[s.dst] = msg
	}
	return out
}

// pushSpecs returns, per failed destination, why it failed.
func (h *Helper) pushSpecs(specs []pushSpec) map[string]string {
	// Bring the remote's metadata in (verified) before building on it.
	if err := h.syncForPush(); err != nil {
		return failAll(specs, "git-secure: "+err.Error())
	}
	h.Trace.Mark("sync with remote")
	g := h.Repo.Git
	// One ref snapshot serves the whole first attempt.
	local, err := h.localSecure()
	if err != nil {
		return failAll(specs, err.Error())
	}
	h.Trace.Mark("local refs")
	localTip := local[rsl.Ref]
	if localTip.IsZero() {
		return h.runPush(specs, nil)
	}
	targets, err := h.resolveSrcs(specs)
	if err != nil {
		return failAll(specs, err.Error())
	}
	h.localSnap = nil // used once: later reads see the refs as they are then
	h.Trace.Mark("resolve sources")
	var changes []porcelain.RefChange
	for i := range specs {
		specs[i].pinned = targets[i]
		changes = append(changes, porcelain.RefChange{Ref: specs[i].dst, New: targets[i]})
	}
	pre := h.takePrefetch()
	if pre == nil {
		pre = &prefetched{}
		pre.signer, pre.signErr = h.Repo.LoadSigner("")
	}
	if pre.signer != nil {
		defer pre.signer.Close()
	}
	var pol *policy.Policy
	if p := local[policy.Ref]; !p.IsZero() {
		if pre.policyCommit == p {
			pol, err = pre.pol, pre.polErr
		} else {
			pol, err = policy.Load(g, p)
		}
	} else {
		pol, _, err = h.Repo.CurrentPolicy()
	}
	if err != nil {
		return failAll(specs, err.Error())
	}
	h.Trace.Mark("load policy")
	h.Repo.UseAttestations(local[attest.Ref])
	signer, err := pre.signer, pre.signErr
	if err != nil {
		for _, c := range changes {
			if pol.Protected(c.Ref) {
				return failAll(specs, fmt.Sprintf("git-secure: %s is protected and needs a signed log entry, but %s", c.Ref, keyProblem(err)))
			}
		}
		h.logf("note: no signing key configured; pushing without log entries (only unprotected refs)")
		return h.runPush(specs, h.metadataSpecs(localTip))
	}
	h.Trace.Mark("load signer")
	if _, ok := pol.LookupKey(sign.Fingerprint(signer.PublicKey())); !ok {
		for _, c := range changes {
			if pol.Protected(c.Ref) {
				return failAll(specs, fmt.Sprintf("git-secure: %s is protected and your key %s is not in the policy", c.Ref, sign.Fingerprint(signer.PublicKey())))
			}
		}
		return h.runPush(specs, h.metadataSpecs(localTip))
	}
	refreshed := false
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			if local, err = h.localSecure(); err != nil {
				return failAll(specs, err.Error())
			}
			h.Repo.UseAttestations(local[attest.Ref])
		}
		localTip = local[rsl.Ref]
		prepared, err := h.Repo.Prepare(localTip, pol, signer, changes)
		h.Trace.Mark("record entries")
		// Approvals missing here may be on the remote already.
		short := errors.Is(err, porcelain.ErrNotAllowed) || (err == nil && len(prepared.Pending) > 0)
		if short && !refreshed {
			refreshed = true
			if moved, serr := h.metadataMovedSinceListing(local); serr != nil {
				return failAll(specs, "git-secure: "+serr.Error())
			} else if moved {
				if pol, _, err = h.Repo.CurrentPolicy(); err != nil {
					return failAll(specs, err.Error())
				}
				continue // record again, counting what the remote holds
			}
		}
		if err != nil {
			if errors.Is(err, porcelain.ErrNotAllowed) {
				h.sayReviewRefused(changes, err.Error())
			}
			return failAll(specs, "git-secure: "+strings.TrimPrefix(err.Error(), "refused: "))
		}
		extra := h.metadataSpecsFrom(prepared.Tip, local)
		unpublished, err := h.unpublished(prepared.Tip, specs)
		if err != nil {
			return failAll(specs, "git-secure: "+err.Error())
		}
		extra = append(extra, unpublished...)
		before := h.remote[rsl.Ref]
		h.noteInflight(specs)
		failed, raceLost := h.runPushRaw(specs, extra)
		h.Trace.Mark("git push")
		if len(failed) > 0 && !raceLost && !branchNonFF(failed) {
			// However the server worded it (a lock, an atomic transaction,
			// a hook that saw the log move), a log that moved meanwhile
			// means someone else pushed first: retry on top of theirs.
			if refs, _, err := h.lsRemote(); err == nil && refs[rsl.Ref] != before {
				raceLost = true
			}
		}
		if len(failed) == 0 {
			h.clearInflight()
			// The server has the entries; make them ours too.
			if prepared.Tip != localTip {
				if err := g.UpdateRefs([]gitrepo.RefUpdate{{Name: rsl.Ref, Old: localTip, New: prepared.Tip}}, "git-secure: push"); err != nil {
					h.logf("warning: pushed, but could not update the local log (%v); git fetch will bring it", err)
				}
			}
			h.Trace.Mark("update local log")
			for _, e := range prepared.Entries {
				h.logf("recorded %s as entry #%d", e.Ref, e.Number)
			}
			if len(unpublished) > 0 {
				h.logf("also pushed %s: the log records %s and %s did not have %s (a log and the refs it records go together)",
					listRefspecs(unpublished), plural(len(unpublished), "this ref", "these refs"), h.Remote, plural(len(unpublished), "it", "them"))
			}
			if len(prepared.Entries) == 0 && len(extra) > len(unpublished) {
				h.logf("sent %s to %s", describeMetadata(extra[:len(extra)-len(unpublished)]), h.Remote)
			}
			for _, p := range prepared.Pending {
				h.logf("note: %s", p)
			}
			return nil
		}
		if !raceLost || attempt >= maxPushAttempts {
			h.lastPush.Release()
			if raceLost {
				return failAll(specs, "git-secure: others kept pushing; run git push again")
			}
			h.sayReview(prepared, failed)
			return failed
		}
		h.lastPush.Discard() // the refusal of an attempt that is retried
		h.logf("someone else pushed first; recording on top of their entries and retrying (attempt %d)", attempt+1)
		if err := h.syncForPush(); err != nil {
			return failAll(specs, "git-secure: "+err.Error())
		}
		if pol, _, err = h.Repo.CurrentPolicy(); err != nil {
			return failAll(specs, err.Error())
		}
	}
}

// resolveSrcs resolves every spec's source, full ref names in one
// process; an empty source (a deletion) gives zero.
func (h *Helper) resolveSrcs(specs []pushSpec) ([]gitrepo.Hash, error) {
	var names []string
	for _, s := range specs {
		if strings.HasPrefix(s.src, "refs/") {
			names = append(names, s.src)
		}
	}
	h.awaitSnap()
	refs := map[string]gitrepo.Hash{}
	var missing []string
	for _, n := range names {
		if v, ok := h.localSnap[n]; ok {
			refs[n] = v
		} else {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		list, err := h.Repo.Git.ListRefs(missing...)
		if err != nil {
			return nil, err
		}
		for _, r := range list {
			refs[r.Name] = r.Hash
		}
	}
	out := make([]gitrepo.Hash, len(specs))
	for i, s := range specs {
		if s.src == "" {
			continue
		}
		if v, ok := refs[s.src]; ok {
			out[i] = v
			continue
		}
		v, err := h.resolveSrc(s.src)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (h *Helper) resolveSrc(src string) (gitrepo.Hash, error) {
	if strings.HasPrefix(src, "refs/") {
		if v, ok, err := h.Repo.Git.ResolveRef(src); err != nil {
			return gitrepo.ZeroHash, err
		} else if ok {
			return v, nil
		}
	}
	return h.Repo.Git.ResolveRevision(src)
}

// metadataSpecs returns the refspecs that bring the remote's metadata up to
// the local state: the new log tip, and the policy, approvals and staged
// policy where the local ones are ahead. None is forced, so the remote
// moving meanwhile makes the atomic push fail instead of losing anything.
func (h *Helper) metadataSpecs(tip gitrepo.Hash) []string {
	local, err := h.localSecure()
	if err != nil {
		return nil
	}
	return h.metadataSpecsFrom(tip, local)
}

func (h *Helper) metadataSpecsFrom(tip gitrepo.Hash, locals map[string]gitrepo.Hash) []string {
	g := h.Repo.Git
	remote := h.remote
	var out []string
	if tip != remote[rsl.Ref] {
		out = append(out, fmt.Sprintf("%s:%s", tip, rsl.Ref))
	}
	for _, name := range []string{policy.Ref, attest.Ref, policy.StagingRef} {
		local := locals[name]
		if local.IsZero() || local == remote[name] {
			continue
		}
		if r := remote[name]; !r.IsZero() && !mustAncestor(g, r, local) {
			continue // the remote is ahead or diverged: nothing of ours to send
		}
		out = append(out, fmt.Sprintf("%s:%s", local, name))
	}
	return out
}

// unpublished returns refspecs for the refs that the log ending at tip
// records and the remote lacks, at their recorded values: on the first push
// of an existing repository, the branches and tags git secure init
// recorded. Without them the server holds a log recording refs it does not
// have, which verification (rightly) reports as deleted without an entry,
// so "git push --all" failed for the missing tags and "git push --tags" for
// the missing branches. Only entries the remote's log does not have yet are
// looked at: a ref the remote had and lost is not this push's to restore.
// A recorded value this clone does not have is an error naming the ref.
func (h *Helper) unpublished(tip gitrepo.Hash, specs []pushSpec) ([]string, error) {
	g := h.Repo.Git
	stop := h.remote[rsl.Ref]
	pushed := map[string]bool{}
	for _, s := range specs {
		pushed[s.dst] = true
	}
	var named []string
	seen := map[string]bool{}
	err := rsl.WalkBack(g, tip, func(rec *rsl.Record) (bool, error) {
		if rec.ID == stop {
			return false, nil
		}
		ref := rec.Entry.Ref
		if rec.Entry.Type == rsl.TypeRef && !seen[ref] && !pushed[ref] && !strings.HasPrefix(ref, "refs/secure/") {
			seen[ref] = true
			if _, has := h.remote[ref]; !has {
				named = append(named, ref)
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the log to push: %w", err)
	}
	sort.Strings(named)
	var out []string
	for _, ref := range named {
		last, err := rsl.LatestFor(g, tip, ref)
		if err != nil {
			return nil, fmt.Errorf("read the log to push: %w", err)
		}
		if last == nil || last.Entry.New.IsZero() {
			continue // recorded as deleted
		}
		if ok, err := g.HasObject(last.Entry.New); err != nil {
			return nil, err
		} else if !ok {
			return nil, fmt.Errorf("the log records %s at %s (entry #%d) and %s does not have it, but neither does this clone: fetch it, or record where it is now (git secure rsl record %s)",
				ref, shortStr(last.Entry.New.String()), last.Entry.Number, h.Remote, ref)
		}
		out = append(out, last.Entry.New.String()+":"+ref)
	}
	return out, nil
}

// listRefspecs names the destinations of refspecs, at most ten of them.
func listRefspecs(refspecs []string) string {
	var names []string
	for i, spec := range refspecs {
		if i == 10 {
			names = append(names, fmt.Sprintf("and %d more", len(refspecs)-10))
			break
		}
		_, dst, _ := strings.Cut(spec, ":")
		names = append(names, dst)
	}
	return strings.Join(names, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// describeMetadata names what metadata refspecs ("<hash>:<ref>") send.
func describeMetadata(refspecs []string) string {
	what := map[string]string{
		rsl.Ref: "the log (refs/secure/rsl)", policy.Ref: "the policy (refs/secure/policy)",
		attest.Ref: "the approvals (refs/secure/attestations)", policy.StagingRef: "the staged policy (" + policy.StagingRef + ")",
	}
	var names []string
	for _, spec := range refspecs {
		_, dst, _ := strings.Cut(spec, ":")
		if w, ok := what[dst]; ok {
			names = append(names, w)
		} else {
			names = append(names, dst)
		}
	}
	return strings.Join(names, ", ")
}

// dryRunPush asks the remote whether it would take specs (git push
// --dry-run): no entry is recorded, nothing is fetched or sent, the local
// log does not move. dryRunPolicy then runs the policy check the server
// would make.
func (h *Helper) dryRunPush(specs []pushSpec) map[string]string {
	if len(specs) == 0 {
		return nil
	}
	// Atomic like the real push: one refused ref refuses them all.
	args := append(h.urlArgs("push", "--dry-run", "--atomic", "--porcelain", "--no-verify"), h.pushFlags()...)
	args = append(args, "--", h.URL)
	for _, s := range specs {
		args = append(args, s.raw)
	}
	quiet := newNoiseFilter(h.Err)
	out, err := h.Repo.Git.RunTee(bgctx(), quiet, args...)
	quiet.Flush()
	if err == nil {
		return nil
	}
	failed, _ := failures(specs, refusals(out), err)
	return failed
}

// refusals parses the "!\t<src>:<dst>\t<reason>" lines of git push
// --porcelain: why each refused destination was refused.
func refusals(out []byte) map[string]string {
	reasons := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.SplitN(line, "\t", 3); len(f) == 3 && f[0] == "!" {
			_, dst, _ := strings.Cut(f[1], ":")
			reasons[dst] = f[2]
		}
	}
	return reasons
}

// failures says, per spec, why a failed push failed: its own refusal, or
// the first real one when an atomic push refused it only with the rest. It
// also tells whether the push failed because a metadata ref moved on the
// remote (a race to retry).
func failures(specs []pushSpec, reasons map[string]string, err error) (map[string]string, bool) {
	race := false
	for dst, why := range reasons {
		if strings.HasPrefix(dst, "refs/secure/") && (strings.Contains(why, "fetch first") || strings.Contains(why, "non-fast-forward") || strings.Contains(why, "stale info")) {
			race = true
		}
	}
	if len(specs) == 0 {
		// Only metadata was sent (git push origin refs/secure/...): its
		// refusal is reported under its own names, never as success.
		failed := map[string]string{}
		for dst, why := range reasons {
			failed[dst] = why
		}
		if len(failed) == 0 {
			failed[rsl.Ref] = firstReason(nil, err)
		}
		return failed, race
	}
	var ge *gitrepo.GitError
	if len(reasons) == 0 && errors.As(err, &ge) {
		return failAll(specs, oneLine(ge.Stderr)), false
	}
	failed := map[string]string{}
	for _, s := range specs {
		msg := reasons[s.dst]
		if msg == "" || strings.Contains(msg, "atomic push failed") {
			msg = firstReason(reasons, err)
		}
		failed[s.dst] = msg
	}
	return failed, race
}

// notePushed records what a successful push of refspecs set on the remote.
func (h *Helper) notePushed(refspecs []string) {
	h.awaitSnap()
	h.pushed, h.pushedAll = map[string]gitrepo.Hash{}, true
	for _, spec := range refspecs {
		src, dst, _ := strings.Cut(strings.TrimPrefix(spec, "+"), ":")
		if src == "" {
			h.pushed[dst] = gitrepo.ZeroHash
			continue
		}
		hash, err := gitrepo.ParseHash(src)
		if err != nil {
			if v, ok := h.localSnap[src]; ok {
				hash = v
			} else {
				h.pushedAll = false
				continue
			}
		}
		h.pushed[dst] = hash
	}
}

// remember updates the remembered listing after a push: the listing it
// started from plus what it set; a failed push forgets it, so that the
// next one asks the remote.
func (h *Helper) remember(failed map[string]string) {
	if len(failed) > 0 || !h.pushedAll || h.remote == nil {
		h.forgetState()
		return
	}
	refs := make(map[string]gitrepo.Hash, len(h.remote)+len(h.pushed))
	for name, hash := range h.remote {
		refs[name] = hash
	}
	for name, hash := range h.pushed {
		if hash.IsZero() {
			delete(refs, name)
		} else {
			refs[name] = hash
		}
	}
	h.saveState(refs, h.head)
}

// runPush pushes specs plus extra refspecs atomically and returns failures.
func (h *Helper) runPush(specs []pushSpec, extra []string) map[string]string {
	failed, _ := h.runPushRaw(specs, extra)
	h.lastPush.Release()
	return failed
}

// runPushRaw runs git push --atomic --porcelain and parses its report. It
// also tells whether the push failed because a metadata ref moved on the
// remote (a race to retry).
func (h *Helper) runPushRaw(specs []pushSpec, extra []string) (map[string]string, bool) {
	var refspecs []string
	for _, s := range specs {
		switch {
		case s.pinned.IsZero():
			refspecs = append(refspecs, s.raw)
		case s.force:
			refspecs = append(refspecs, "+"+s.pinned.String()+":"+s.dst)
		default:
			refspecs = append(refspecs, s.pinned.String()+":"+s.dst)
		}
	}
	refspecs = append(refspecs, extra...)
	if len(refspecs) == 0 {
		h.notePushed(nil)
		return nil, false // nothing to send
	}
	args := append(h.urlArgs("push", "--atomic", "--porcelain", "--no-verify"), h.pushFlags()...)
	args = append(append(args, "--", h.URL), refspecs...)
	quiet := newNoiseFilter(h.Err)
	quiet.hold = true
	h.lastPush = quiet
	out, err := h.Repo.Git.RunTee(bgctx(), quiet, args...)
	quiet.Flush()
	if err == nil {
		quiet.Release()
		h.notePushed(refspecs)
		if tip := h.pushed[rsl.Ref]; !tip.IsZero() {
			// The remote's log is now at least this tip: a later fetch that
			// finds it behind (a server restored from an older snapshot, a
			// stale mirror) is a rollback of this push, not unpushed work.
			if err := h.Repo.Git.SetConfig(h.configKey("securetip"), tip.String()); err != nil {
				h.logf("warning: pushed, but cannot remember the remote's new log tip (%v): a later rollback of this push would not be noticed; git fetch will remember it", err)
			}
		}
		return nil, false
	}
	return failures(specs, refusals(out), err)
}

func firstReason(reasons map[string]string, err error) string {
	for dst, r := range reasons {
		if !strings.Contains(r, "atomic push failed") {
			return fmt.Sprintf("%s: %s (atomic push)", dst, r)
		}
	}
	return err.Error()
}

// branchNonFF reports whether a branch itself was refused as not a
// fast-forward, or its --force-with-lease lease failed: retrying cannot
// help, the user must integrate first.
func branchNonFF(failed map[string]string) bool {
	for dst, why := range failed {
		if !strings.HasPrefix(dst, "refs/secure/") && (strings.Contains(why, "fetch first") || strings.Contains(why, "non-fast-forward") || strings.Contains(why, "stale info")) {
			return true
		}
	}
	return false
}

// metadataMovedSinceListing is asked when an entry about to be pushed
// lacks approvals (or its signer may make it only with approvals, which
// Prepare refuses as not allowed). A remembered listing predates whatever others pushed
// since this clone's last contact, and approvals move no log entry, so
// the server may hold approvals that the local store lacks: the push
// would land (the server counts them) while saying approvals are
// missing, and leave a local log whose newest entry does not verify here.
// When the listing came from memory, it asks the remote and, if its
// metadata differs from local, brings it in verified (true: record
// again).
func (h *Helper) metadataMovedSinceListing(local map[string]gitrepo.Hash) (bool, error) {
	if !h.forPushRemembered {
		return false, nil
	}
	h.forPushRemembered = false
	refs, _, err := h.lsRemote()
	if err != nil {
		return false, nil // the server judges the push; its answer says what is missing
	}
	moved := false
	for _, name := range secureRefs {
		if r := refs[name]; !r.IsZero() && r != local[name] {
			moved = true
		}
	}
	h.Trace.Mark("ask the remote for approvals")
	if !moved {
		return false, nil
	}
	h.forPush = refs
	if err := h.syncForPush(); err != nil {
		return false, err
	}
	return true, nil
}

// keyProblem says why no signing key could be loaded, without the
// "usage: " and "sign: " that mark the error's kind for exit codes: in a
// refusal they read as garbage ("but usage: sign: private key not
// available").
func keyProblem(err error) string {
	msg := strings.TrimPrefix(err.Error(), porcelain.ErrUsage.Error()+": ")
	return strings.TrimPrefix(msg, "sign: ")
}
