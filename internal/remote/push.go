package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
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

// pushSpec is one "push" line of git: the ref change it asks for (Ref is
// the destination; New is pinned to what the source resolved to when the
// entry was recorded, so that the push sends exactly that even if the
// source moves meanwhile; zero until then, or for a deletion) and how git
// asked for it.
type pushSpec struct {
	porcelain.RefChange
	force bool
	src   string
	raw   string
}

// readPushSpecs reads git's batch of "push" lines, first included.
func readPushSpecs(in *bufio.Reader, first string) ([]pushSpec, error) {
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
			return nil, fmt.Errorf("remote helper: bad push command %q", line)
		}
		s.src, s.Ref = src, dst
		specs = append(specs, s)
		var err error
		if line, err = readLine(in); err != nil {
			return nil, err
		}
	}
	return specs, nil
}

// changesOf returns the ref changes specs ask for.
func changesOf(specs []pushSpec) []porcelain.RefChange {
	out := make([]porcelain.RefChange, len(specs))
	for i, s := range specs {
		out[i] = s.RefChange
	}
	return out
}

// push answers git's batch of "push" lines: one atomic push of the
// branches with their log entries (pushSpecs), or for --dry-run what the
// remote and the policy would say, then one status line per ref.
func (h *Helper) push(in *bufio.Reader, first string) error {
	specs, err := readPushSpecs(in, first)
	if err != nil {
		return err
	}
	// Metadata refs named by the user (git push origin refs/secure/...)
	// are sent by the helper itself, from the local state, never forced.
	var branchSpecs []pushSpec
	for _, s := range specs {
		if !strings.HasPrefix(s.Ref, "refs/secure/") {
			branchSpecs = append(branchSpecs, s)
		}
	}
	upToDate := h.upToDate(specs)
	var results, unsent map[string]string
	if h.opts.dryRun {
		if results = h.dryRunPush(branchSpecs); len(results) == 0 {
			results = h.dryRunPolicy(branchSpecs)
		}
	} else {
		res := h.pushSpecs(branchSpecs)
		results = res.failed
		h.remember(res)
		if len(results) == 0 {
			unsent = h.unsentMetadata(specs, res.pushed)
		}
	}
	h.reportPush(specs, results, upToDate, unsent)
	return nil
}

// unsentMetadata returns, for the metadata refs the user named that the
// push did not bring to the local value (the remote's diverged: the helper
// never forces them), why and what to do: git must not say "ok" for a
// staged change that stayed in this clone.
func (h *Helper) unsentMetadata(specs []pushSpec, pushed map[string]gitrepo.Hash) map[string]string {
	if pushed == nil {
		return nil // what the remote holds now is not known
	}
	local, err := h.localSecure()
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, s := range specs {
		l := local[s.Ref]
		if !slices.Contains(metadataRefs, s.Ref) || l.IsZero() {
			continue
		}
		r, ok := pushed[s.Ref]
		if !ok {
			r = h.remote[s.Ref]
		}
		if r == l || (!r.IsZero() && mustAncestor(h.Repo.Git, l, r)) {
			continue
		}
		out[s.Ref] = h.whyUnsent(s.Ref, r, l, local[policy.Ref])
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// whyUnsent says why the local value l of metadata ref name was not sent
// over the remote's r, and what to do.
func (h *Helper) whyUnsent(name string, r, l, polTip gitrepo.Hash) string {
	if name != policy.StagingRef {
		return fmt.Sprintf("not sent: %s has another history of %s; fetch (git fetch) and push again", h.Remote, name)
	}
	if porcelain.LoadStagedState(h.Repo.Git.GitDir()).Own != l {
		return fmt.Sprintf("not sent: the local staged change %s was not made or signed in this clone, and %s has another; fetch (git fetch) and review it (git secure policy list --staged)", shortStr(l.String()), h.Remote)
	}
	why, err := porcelain.StagingReplaceable(h.Repo.Git, r, l, polTip)
	if err != nil {
		why = err.Error()
	}
	return fmt.Sprintf("not sent: %s keeps its staged change: %s; fetch (git fetch), review and sign it (git secure policy list --staged; git secure policy sign --staged COMMIT), or wait until it is applied", h.Remote, why)
}

// reportPush tells git the outcome of each spec; unsent are the metadata
// refs a successful push left behind (unsentMetadata).
func (h *Helper) reportPush(specs []pushSpec, results map[string]string, upToDate map[string]bool, unsent map[string]string) {
	if len(results) > 0 {
		for _, s := range specs {
			if _, failed := results[s.Ref]; !failed && strings.HasPrefix(s.Ref, "refs/secure/") {
				results[s.Ref] = "not sent: the push failed"
			}
		}
	}
	if len(unsent) > 0 && results == nil {
		results = map[string]string{}
	}
	for ref, why := range unsent {
		results[ref] = why
	}
	for _, s := range specs {
		if msg, refused := notCarried(s.Ref); refused {
			fmt.Fprintf(h.Out, "error %s %s\n", s.Ref, msg)
		} else if msg, refused := notMetadata(s.Ref); refused {
			fmt.Fprintf(h.Out, "error %s %s\n", s.Ref, msg)
		} else if msg, refused := h.keepRefNotSent(s); refused {
			fmt.Fprintf(h.Out, "error %s %s\n", s.Ref, msg)
		} else if msg, failed := results[s.Ref]; failed {
			fmt.Fprintf(h.Out, "error %s %s\n", s.Ref, display.Escape(oneLine(msg)))
		} else if upToDate[s.Ref] {
			fmt.Fprintf(h.Out, "ok %s up to date\n", s.Ref)
		} else {
			fmt.Fprintf(h.Out, "ok %s\n", s.Ref)
		}
	}
	fmt.Fprint(h.Out, "\n")
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
		real, ok := h.relisted[s.Ref]
		if !ok || !strings.HasPrefix(s.src, "refs/") {
			continue
		}
		if v, ok := h.localSnap[s.src]; ok && v == real {
			out[s.Ref] = true
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

// notPushedWith says, for every ref of an all-or-nothing push but refused,
// that it was not pushed because refused was: each ref's line showed the
// refused ref's reason, so an unprotected tag read as refused by a rule
// about another.
func (h *Helper) notPushedWith(failed map[string]string, refused string) {
	if _, ok := failed[refused]; !ok {
		return
	}
	for ref := range failed {
		if ref != refused {
			failed[ref] = fmt.Sprintf("git-secure: not pushed: %s in the same push was refused, and a push through git-secure is all or nothing; to push this one alone: git push %s %s",
				refused, h.Remote, ref)
		}
	}
}

// failAll marks every spec failed with msg.
func failAll(specs []pushSpec, msg string) map[string]string {
	out := map[string]string{}
	for _, s := range specs {
		out[s.Ref] = msg
	}
	return out
}

// pushPlan is what a push records under, read once before its first
// attempt: the specs pinned to the values they send, the local metadata
// the entries build on, the policy in force and the signer.
type pushPlan struct {
	specs []pushSpec
	local map[string]gitrepo.Hash // the local refs/secure/*
	pol   *policy.Policy
	// signer signs the entries; keyErr says why there is none.
	signer sign.Signer
	keyErr error
}

// plain reports whether this clone has no log: the push is plain git's.
func (p *pushPlan) plain() bool { return p.local[rsl.Ref].IsZero() }

// close releases the signer.
func (p *pushPlan) close() {
	if p.signer != nil {
		p.signer.Close()
	}
}

// planPush reads what a push of specs records under (see pushPlan). In a
// clone without a log it stops at the local metadata (plain is set). The
// caller closes the plan.
func (h *Helper) planPush(specs []pushSpec) (*pushPlan, error) {
	local, err := h.localSecure()
	if err != nil {
		return nil, err
	}
	h.Trace.Mark("local refs")
	plan := &pushPlan{specs: specs, local: local}
	if plan.plain() {
		return plan, nil
	}
	targets, err := h.resolveSrcs(specs)
	if err != nil {
		return nil, err
	}
	h.Trace.Mark("resolve sources")
	for i := range specs {
		specs[i].New = targets[i]
	}
	pre := h.takePrefetch()
	if pre == nil {
		pre = &prefetched{}
		pre.signer, pre.signErr = h.Repo.LoadSigner("")
	}
	plan.signer, plan.keyErr = pre.signer, pre.signErr
	if plan.pol, err = h.policyOf(local, pre); err != nil {
		plan.close()
		return nil, err
	}
	h.Trace.Mark("load policy")
	h.Repo.UseAttestations(local[attest.Ref])
	return plan, nil
}

// policyOf is the one source of the policy a push records under: the
// policy at the local refs/secure/policy of the snapshot local, taken from
// the background load of "list for-push" (pre) when that read the same
// commit.
func (h *Helper) policyOf(local map[string]gitrepo.Hash, pre *prefetched) (*policy.Policy, error) {
	p := local[policy.Ref]
	switch {
	case p.IsZero():
		pol, _, err := h.Repo.CurrentPolicy() // says the repository is not set up
		return pol, err
	case pre != nil && pre.policyCommit == p:
		if pre.polErr != nil {
			return nil, pre.polErr
		}
		return h.Repo.Judging(pre.pol)
	}
	return h.Repo.PolicyAt(p)
}

// replan reads the local metadata and the policy again after a sync with
// the remote (a push that lost the race for the log).
func (h *Helper) replan(plan *pushPlan) error {
	if err := h.syncForPush(); err != nil {
		return fmt.Errorf("git-secure: %w", err)
	}
	return h.reload(plan)
}

// reload reads the local metadata and the policy again (after a sync).
func (h *Helper) reload(plan *pushPlan) error {
	local, err := h.localSecure()
	if err != nil {
		return err
	}
	pol, err := h.policyOf(local, nil)
	if err != nil {
		return err
	}
	plan.local, plan.pol = local, pol
	h.Repo.UseAttestations(local[attest.Ref])
	return nil
}

// pushSpecs pushes specs with their log entries and returns the outcome
// (per failed destination why, or what the push set): plan, then prepare,
// send and adopt (recordAndSend) as often as the recording path's retry
// policy allows.
func (h *Helper) pushSpecs(specs []pushSpec) pushResult {
	// Bring the remote's metadata in (verified) before building on it.
	if err := h.syncForPush(); err != nil {
		return pushResult{failed: failAll(specs, "git-secure: "+err.Error())}
	}
	h.Trace.Mark("sync with remote")
	plan, err := h.planPush(specs)
	if err != nil {
		return pushResult{failed: failAll(specs, err.Error())}
	}
	defer plan.close()
	if plan.plain() {
		return h.runPush(specs, nil)
	}
	h.localSnap = nil // used once: later reads see the refs as they are then
	if plan.keyErr != nil {
		for _, c := range specs {
			if plan.pol.Protected(c.Ref) {
				return pushResult{failed: failAll(specs, fmt.Sprintf("git-secure: %s is protected and needs a signed log entry, but %s", c.Ref, keyProblem(plan.keyErr)))}
			}
		}
		h.logf("note: no signing key configured; pushing without log entries (only unprotected refs)")
		return h.runPush(specs, h.metadataSpecs(plan.local[rsl.Ref]))
	}
	h.Trace.Mark("load signer")
	if fp := sign.Fingerprint(plan.signer.PublicKey()); !keyInPolicy(plan.pol, fp) {
		if res, done := h.pushOutsidePolicy(plan, fp); done {
			return res
		}
	}
	return h.recordAndSend(plan)
}

// pushOutsidePolicy handles a signer whose key fp the local policy does
// not list. A listing remembered from the last contact predates any policy
// pushed since (a key rotation someone else applied): the remote's
// metadata is brought in, verified, and the key looked up again (done is
// false when it is listed now: record as usual). A key still not listed
// signs nothing that counts: a protected ref is refused, saying how to get
// the key in; other refs go without a log entry, and the push says so.
func (h *Helper) pushOutsidePolicy(plan *pushPlan, fp string) (res pushResult, done bool) {
	moved, err := h.metadataMovedSinceListing(plan.local)
	if err != nil {
		return pushResult{failed: failAll(plan.specs, "git-secure: "+err.Error())}, true
	}
	if moved {
		if err := h.reload(plan); err != nil {
			return pushResult{failed: failAll(plan.specs, err.Error())}, true
		}
		if keyInPolicy(plan.pol, fp) {
			return pushResult{}, false
		}
	}
	why := h.keyNotInPolicy(plan.pol, fp, plan.local[rsl.Ref])
	for _, c := range plan.specs {
		if plan.pol.Protected(c.Ref) {
			h.logf("hint: %s", keyOutsidePolicyHint)
			return pushResult{failed: failAll(plan.specs, fmt.Sprintf("git-secure: %s is protected and %s", c.Ref, why))}, true
		}
	}
	h.logf("note: %s: pushing without a log entry (only unprotected refs)", why)
	h.logf("hint: %s", keyOutsidePolicyHint)
	return h.runPush(plan.specs, h.metadataSpecs(plan.local[rsl.Ref])), true
}

// keyOutsidePolicyHint says what a person whose signing key the policy
// does not list does next.
const keyOutsidePolicyHint = "git secure policy list shows the persons' keys: set user.signingkey to yours, " +
	"or ask a rules key holder to add it (git secure policy add-key PERSON --key YOUR.pub, or add-person for a new person)"

func keyInPolicy(pol *policy.Policy, fp string) bool {
	_, ok := pol.LookupKey(fp)
	return ok
}

// keyNotInPolicy says why key fp, which keyInPolicy refused, signs
// nothing that counts.
func (h *Helper) keyNotInPolicy(pol *policy.Policy, fp string, logTip gitrepo.Hash) string {
	if pol.RevokedByOrg(fp) {
		return fmt.Sprintf("your key %s is revoked by the organisation policy (use your new key)", fp)
	}
	if !logTip.IsZero() {
		if why := h.Repo.KeyRemoval(logTip, pol, fp); why != "" {
			return why
		}
	}
	return fmt.Sprintf("your key %s is not in the policy", fp)
}

// recordAndSend prepares the entries on top of the local log, sends them
// with the branches in one atomic push and adopts them locally; when
// someone else pushed first it syncs and starts again on top of theirs
// (porcelain.Retry).
func (h *Helper) recordAndSend(plan *pushPlan) pushResult {
	var out pushResult
	var last *noiseFilter // the stderr of the last git push
	refreshed := false    // the remote was asked for approvals once
	lost, _ := porcelain.Retry(func(n int) (bool, error) {
		if n > 1 {
			last.Discard() // the refusal of an attempt that is retried
			h.logf("someone else pushed first; recording on top of their entries and retrying (attempt %d)", n)
			if err := h.replan(plan); err != nil {
				out = pushResult{failed: failAll(plan.specs, err.Error())}
				return false, nil
			}
		}
		batch, err := h.preparePushCounting(plan, &refreshed)
		if err != nil {
			if errors.Is(err, porcelain.ErrNotAllowed) {
				h.sayReviewRefused(changesOf(plan.specs), err.Error())
			}
			out = pushResult{failed: failAll(plan.specs, "git-secure: "+strings.TrimPrefix(err.Error(), "refused: "))}
			if ref := porcelain.RefusedRef(err); ref != "" && len(plan.specs) > 1 {
				h.notPushedWith(out.failed, ref)
			}
			return false, nil
		}
		// The git update-ref that adopts the entries locally starts now
		// and waits while the push runs: its start overlaps the push
		// instead of following it. A failed attempt aborts it (it has
		// read nothing: no change, no lock).
		tx, _ := h.Repo.Git.StartUpdateRefs(pushReflog)
		if tx != nil {
			defer tx.Abort() // after Apply, nothing
		}
		res := h.sendPush(plan, batch)
		last = res.stderr
		switch {
		case len(res.failed) == 0:
			h.adoptPush(plan, batch, tx)
			out = res
		case !res.raceLost && branchNonFF(res.failed):
			// git says it, with its advice to pull first; the inner
			// push's "atomic push failed ... status: 2" and "the remote
			// end hung up" would only read as a crash above it.
			last.Discard()
			out = res
		case !res.raceLost:
			last.Release()
			h.sayReview(batch.Prepared, res.failed)
			out = res
		}
		return res.raceLost, nil
	})
	if lost {
		last.Release()
		return pushResult{failed: failAll(plan.specs, "git-secure: others kept pushing; run git push again")}
	}
	return out
}

// pushBatch is one attempt of a push: its signed entries, and the
// refspecs sent with the branches (the log and other metadata, then the
// recorded refs the remote lacks).
type pushBatch struct {
	*porcelain.Prepared
	metadata    []string
	unpublished []string
}

// preparePush signs the entries of plan on top of the local log and
// lists what goes with them.
func (h *Helper) preparePush(plan *pushPlan) (*pushBatch, error) {
	prepared, err := h.Repo.Prepare(plan.local[rsl.Ref], plan.pol, plan.signer, changesOf(plan.specs))
	if err != nil {
		return nil, err
	}
	h.Trace.Mark("record entries")
	b := &pushBatch{Prepared: prepared, metadata: h.metadataSpecsFrom(prepared.Tip, plan.local)}
	if b.unpublished, err = h.unpublished(prepared.Tip, plan.specs); err != nil {
		return nil, err
	}
	return b, nil
}

// preparePushCounting is preparePush, once more after bringing the
// remote's metadata in when the entries lack approvals (or the signer may
// make them only with approvals) and the listing came from memory: the
// server may hold approvals the local store lacks (metadataMovedSinceListing).
func (h *Helper) preparePushCounting(plan *pushPlan, refreshed *bool) (*pushBatch, error) {
	batch, err := h.preparePush(plan)
	short := errors.Is(err, porcelain.ErrNotAllowed) || (err == nil && len(batch.Pending) > 0)
	if !short || *refreshed {
		return batch, err
	}
	*refreshed = true
	moved, serr := h.metadataMovedSinceListing(plan.local)
	if serr != nil {
		return nil, serr
	}
	if !moved {
		return batch, err
	}
	if err := h.reload(plan); err != nil {
		return nil, err
	}
	return h.preparePush(plan) // record again, counting what the remote holds
}

// sendPush runs the atomic push of one attempt. A push refused while the
// remote's log moved lost the race (raceLost), however the server worded
// it (a lock, an atomic transaction, a hook that saw the log move).
func (h *Helper) sendPush(plan *pushPlan, b *pushBatch) pushResult {
	before := h.remote[rsl.Ref]
	h.noteInflight(plan.specs)
	res := h.runPushRaw(plan.specs, append(append([]string(nil), b.metadata...), b.unpublished...))
	h.Trace.Mark("git push")
	if len(res.failed) > 0 && !res.raceLost && !branchNonFF(res.failed) {
		if refs, _, err := h.lsRemote(); err == nil && refs[rsl.Ref] != before {
			res.raceLost = true
		}
	}
	return res
}

// pushReflog is the reflog message of the local log's move after a push.
const pushReflog = "git-secure: push"

// adoptPush makes the pushed entries this clone's too (the server has
// them) and tells what was sent.
func (h *Helper) adoptPush(plan *pushPlan, b *pushBatch, tx *gitrepo.RefTransaction) {
	h.clearInflight()
	var err error
	if tx != nil {
		err = h.Repo.CommitWith(tx, b.Prepared)
	} else {
		err = h.Repo.Commit(b.Prepared, pushReflog)
	}
	if err != nil {
		h.logf("warning: pushed, but could not update the local log (%v); git fetch will bring it", err)
	}
	h.Trace.Mark("update local log")
	if !h.opts.quiet { // git push -q: silence on success, as plain git
		h.sayPushed(b)
	}
	for _, p := range b.Pending {
		h.logf("note: %s", p)
	}
}

// sayPushed tells what a successful push recorded and sent besides.
func (h *Helper) sayPushed(b *pushBatch) {
	for _, e := range b.Entries {
		h.logf("recorded %s as entry #%d", e.Ref, e.Number)
	}
	if n := len(b.unpublished); n > 0 {
		h.logf("also pushed %s: the log records %s and %s did not have %s (a log and the refs it records go together)",
			listRefspecs(b.unpublished), plural(n, "this ref", "these refs"), h.Remote, plural(n, "it", "them"))
	}
	if len(b.Entries) == 0 && len(b.metadata) > 0 {
		h.logf("sent %s to %s", describeMetadata(b.metadata), h.Remote)
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
	// As git push takes it: an annotated tag's hash pushes the tag
	// object, never its commit (which would drop the tag and its
	// signature from what the server stores).
	return h.Repo.Git.ResolveObject(src)
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
			if name == policy.StagingRef && h.replacesStaging(r, local, locals[policy.Ref], true) {
				// Our own staged change (or our signature on the remote's)
				// in place of one that holds no signature it would lose:
				// the server checks the same (porcelain.StagingReplaceable).
				out = append(out, fmt.Sprintf("+%s:%s", local, name))
			}
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
	pushed := map[string]bool{}
	for _, s := range specs {
		pushed[s.Ref] = true
	}
	latest, err := unpublishedEntries(h.Repo.Git, tip, h.remote[rsl.Ref], h.remote, pushed)
	if err != nil {
		return nil, fmt.Errorf("read the log to push: %w", err)
	}
	var out []string
	for _, last := range latest {
		ref := last.Entry.Ref
		if ok, err := h.Repo.Git.HasObject(last.Entry.New); err != nil {
			return nil, err
		} else if !ok {
			return nil, fmt.Errorf("the log records %s at %s (entry #%d) and %s does not have it, but neither does this clone: fetch it, or record where it is now (git secure rsl record %s)",
				ref, shortStr(last.Entry.New.String()), last.Entry.Number, h.Remote, ref)
		}
		out = append(out, last.Entry.New.String()+":"+ref)
	}
	return out, nil
}

// unpublishedEntries returns, sorted by ref, the latest entries (as
// rsl.LatestFor finds them: an entry that an annotation newer than it
// skips does not count) of the refs that entries after stop (the remote's
// log tip) record, that the remote (its refs) lacks and pushed does not
// name, leaving out refs recorded as deleted and the log's own refs.
//
// One walk serves every ref: skips only accumulate going back, so one set
// of them answers for all. A walk per ref (LatestFor each) cost
// O(refs x entries): a first push of 5 357 recorded refs ran 11 minutes.
// The walk goes on past stop only while a ref named above it has no
// latest entry yet (its entries above stop were all skipped).
func unpublishedEntries(r rsl.Reader, tip, stop gitrepo.Hash, remote map[string]gitrepo.Hash, pushed map[string]bool) ([]*rsl.Record, error) {
	named := map[string]bool{}
	latest := map[string]*rsl.Record{}
	skipped := map[uint64]bool{}
	above, missing := true, 0
	err := rsl.WalkBack(r, tip, func(rec *rsl.Record) (bool, error) {
		if rec.ID == stop {
			above = false
		}
		if !above && missing == 0 {
			return false, nil
		}
		e := rec.Entry
		switch {
		case e.Type == rsl.TypeAnnotation:
			for _, s := range e.Skips {
				skipped[s.Number] = true
			}
			return true, nil
		case e.Type != rsl.TypeRef:
			return true, nil
		}
		ref := e.Ref
		if _, known := named[ref]; !known && above && !pushed[ref] && !strings.HasPrefix(ref, "refs/secure/") {
			_, has := remote[ref]
			named[ref] = !has
			if !has {
				missing++
			}
		}
		if latest[ref] == nil && !skipped[e.Number] {
			latest[ref] = rec
			if named[ref] {
				missing--
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	var refs []string
	for ref, want := range named {
		if want {
			refs = append(refs, ref)
		}
	}
	sort.Strings(refs)
	var out []*rsl.Record
	for _, ref := range refs {
		if last := latest[ref]; last != nil && !last.Entry.New.IsZero() {
			out = append(out, last)
		}
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

// notMetadata says why a name under refs/secure/ that is none of
// git-secure's refs is not pushed: the helper sends the metadata itself,
// from the local state, so such a spec was dropped, and reporting it ok
// told git (and the user: "* [new reference]", exit 0) that the server
// had a ref it never received (attack review, session 14).
func notMetadata(dst string) (string, bool) {
	switch {
	case !strings.HasPrefix(dst, "refs/secure/"), dst == rsl.Ref, dst == policy.Ref, dst == attest.Ref, dst == policy.StagingRef, strings.HasPrefix(dst, rsl.KeepRefPrefix):
		return "", false
	}
	return fmt.Sprintf("not a git-secure ref: refs/secure/ holds only %s, %s, %s and %s, which git-remote-secure sends by itself; push other refs under another name", rsl.Ref, policy.Ref, attest.Ref, policy.StagingRef), true
}

// keepRefNotSent says why a keep ref the user named (git push origin
// :refs/secure/keep/H, or H:refs/secure/keep/H) is not sent: keep refs
// are only ever created, by git-secure's push itself (for a recorded state
// a force-push or deletion leaves behind), and never deleted. Both were
// reported done ("- [deleted]", "* [new reference]", exit 0) though
// nothing was sent, a deletion also when the remote had no such ref.
func (h *Helper) keepRefNotSent(s pushSpec) (string, bool) {
	if !strings.HasPrefix(s.Ref, rsl.KeepRefPrefix) {
		return "", false
	}
	// Asked, not taken from the listing, which may be the memory of an
	// earlier contact (secure.pushListing).
	out, err := h.git(h.urlArgs("ls-remote", "--", h.URL, s.Ref)...)
	listed := string(out)
	remoteHas := err == nil && (strings.Contains(listed, "\t"+s.Ref+"\n") || strings.HasSuffix(listed, "\t"+s.Ref))
	if s.src != "" {
		if remoteHas {
			return "", false // the push made it (a force-push's keep ref): done
		}
		return "not sent: git-secure's push creates keep refs itself, for the recorded state a force-push or deletion leaves behind; there is nothing to push by hand", true
	}
	local := ""
	if _, ok, err := h.Repo.Git.ResolveRef(s.Ref); err == nil && ok {
		local = fmt.Sprintf("; to drop it from this clone only: git update-ref -d %s", s.Ref)
	}
	if err == nil && !remoteHas {
		return fmt.Sprintf("%s has no %s: there is nothing to delete (git ls-remote %s '%s*' lists the keep refs it has)%s", h.Remote, s.Ref, h.Remote, rsl.KeepRefPrefix, local), true
	}
	return fmt.Sprintf("not sent: a keep ref keeps a state the log records reachable for fresh clones and is never deleted (the server refuses it)%s", local), true
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
			reasons[dst] = unwrapRemoteRejected(f[2])
		}
	}
	return reasons
}

// unwrapRemoteRejected turns git's "[remote rejected] (why)" into "why":
// git prints the helper's reason inside its own "[remote rejected] ...
// (reason)" line, so the wrapper would show twice.
func unwrapRemoteRejected(reason string) string {
	inner, ok := strings.CutPrefix(reason, "[remote rejected] (")
	if !ok || !strings.HasSuffix(inner, ")") {
		return reason
	}
	return strings.TrimSuffix(inner, ")")
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
	if race && branchNonFF(reasons) {
		// A branch the user pushes is behind the remote's: the log moved
		// too (whoever pushed the branch recorded it), but recording on
		// top of their entries sends the same branch value and fails
		// again. The user must integrate first.
		race = false
	}
	var ge *gitrepo.GitError
	if len(reasons) == 0 && errors.As(err, &ge) {
		return failAll(specs, oneLine(ge.Stderr)), false
	}
	failed := map[string]string{}
	for _, s := range specs {
		msg := reasons[s.Ref]
		if status, ok := behindStatus(msg); ok && !strings.HasPrefix(s.Ref, "refs/secure/") {
			// git's own words: it prints its "! [rejected] ... (fetch
			// first)" line and its hint to pull first, as without the
			// helper.
			failed[s.Ref] = status
			continue
		}
		if msg == "" || strings.Contains(msg, "atomic push failed") {
			msg = firstReason(reasons, err)
		}
		failed[s.Ref] = msg
	}
	return failed, race
}

// pushedBy returns what a successful push of refspecs set on the remote
// (zero: deleted), and whether every value is known.
func (h *Helper) pushedBy(refspecs []string) (map[string]gitrepo.Hash, bool) {
	h.awaitSnap()
	pushed, all := map[string]gitrepo.Hash{}, true
	for _, spec := range refspecs {
		src, dst, _ := strings.Cut(strings.TrimPrefix(spec, "+"), ":")
		if src == "" {
			pushed[dst] = gitrepo.ZeroHash
			continue
		}
		hash, err := gitrepo.ParseHash(src)
		if err != nil {
			if v, ok := h.localSnap[src]; ok {
				hash = v
			} else {
				all = false
				continue
			}
		}
		pushed[dst] = hash
	}
	return pushed, all
}

// remember updates the remembered listing after a push: the listing it
// started from plus what it set; a failed push, or one that set values it
// cannot name, forgets it, so that the next one asks the remote.
func (h *Helper) remember(res pushResult) {
	if len(res.failed) > 0 || res.pushed == nil || h.remote == nil {
		h.forgetState()
		return
	}
	refs := make(map[string]gitrepo.Hash, len(h.remote)+len(res.pushed))
	for name, hash := range h.remote {
		refs[name] = hash
	}
	for name, hash := range res.pushed {
		if hash.IsZero() {
			delete(refs, name)
		} else {
			refs[name] = hash
		}
	}
	h.saveState(refs, h.head)
}

// pushResult is the outcome of one git push: per failed destination why,
// whether it failed because a metadata ref moved on the remote (a race to
// retry), and its stderr, held until the caller knows whether the push is
// retried (Discard) or final (Release). A successful push says what it
// set on the remote (zero: deleted; nil when some value is unknown).
type pushResult struct {
	failed   map[string]string
	raceLost bool
	stderr   *noiseFilter
	pushed   map[string]gitrepo.Hash
}

// runPush pushes specs plus extra refspecs atomically.
func (h *Helper) runPush(specs []pushSpec, extra []string) pushResult {
	res := h.runPushRaw(specs, extra)
	res.stderr.Release()
	return res
}

// runPushRaw runs git push --atomic --porcelain and parses its report.
func (h *Helper) runPushRaw(specs []pushSpec, extra []string) pushResult {
	var refspecs []string
	for _, s := range specs {
		switch {
		case s.New.IsZero():
			refspecs = append(refspecs, s.raw)
		case s.force:
			refspecs = append(refspecs, "+"+s.New.String()+":"+s.Ref)
		default:
			refspecs = append(refspecs, s.New.String()+":"+s.Ref)
		}
	}
	refspecs = append(refspecs, extra...)
	keeps := h.keepSpecs(specs) // read before the push changes h.remote
	if len(refspecs) == 0 {
		return pushResult{pushed: map[string]gitrepo.Hash{}} // nothing to send
	}
	args := append(h.urlArgs("push", "--atomic", "--porcelain", "--no-verify"), h.pushFlags()...)
	args = append(append(args, "--", h.URL), refspecs...)
	quiet := newNoiseFilter(h.Err)
	quiet.hold = true
	out, err := h.Repo.Git.RunTee(bgctx(), quiet, args...)
	quiet.Flush()
	if err != nil {
		failed, race := failures(specs, refusals(out), err)
		return pushResult{failed: failed, raceLost: race, stderr: quiet}
	}
	quiet.Release()
	h.pushKeeps(keeps)
	pushed, all := h.pushedBy(refspecs)
	res := pushResult{stderr: quiet, pushed: pushed}
	if !all {
		res.pushed = nil
	}
	if tip := pushed[rsl.Ref]; !tip.IsZero() {
		// The remote's log is now at least this tip: a later fetch that
		// finds it behind (a server restored from an older snapshot, a
		// stale mirror) is a rollback of this push, not unpushed work.
		if err := h.Repo.Git.SetConfig(h.configKey("securetip"), tip.String()); err != nil {
			h.logf("warning: pushed, but cannot remember the remote's new log tip (%v): a later rollback of this push would not be noticed; git fetch will remember it", err)
		}
		if h.opts.signed != "" {
			h.takePushCerts()
		}
	}
	return res
}

// keepSpecs returns, for each spec that overwrites the remote's recorded
// state of its ref with one that does not contain it (a force-push or a
// deletion), the refspec creating refs/secure/keep/<that state> on the
// remote (rsl.KeepRef): once nothing else reaches the old state, fresh
// clones would lack it and could no longer diff the next entry from it
// exactly (verification then makes the ref's path rules apply in full).
// A state this clone lacks, or the remote keeps already, is skipped.
func (h *Helper) keepSpecs(specs []pushSpec) []string {
	g := h.Repo.Git
	var out []string
	for _, s := range specs {
		old := h.remote[s.Ref]
		if old.IsZero() || old == s.New || strings.HasPrefix(s.Ref, "refs/secure/") {
			continue
		}
		if _, kept := h.remote[rsl.KeepRef(old)]; kept {
			continue
		}
		if !s.New.IsZero() && mustAncestor(g, old, s.New) {
			continue
		}
		if c, err := g.ReadCommit(old); err != nil || c == nil {
			continue // not here, or not a commit: nothing to keep
		}
		last, err := h.Repo.LatestEntry(h.remote[rsl.Ref], s.Ref)
		if err != nil || last == nil || last.Entry.New != old {
			continue // not a recorded state
		}
		out = append(out, old.String()+":"+rsl.KeepRef(old))
	}
	return out
}

// pushKeeps creates the keep refs (keepSpecs) after the push landed, in
// a push of their own: a server whose hook predates keep refs refuses
// them, and that must not fail the push itself. A refusal is a warning
// (a server with the hook keeps the state itself).
func (h *Helper) pushKeeps(keeps []string) {
	if len(keeps) == 0 {
		return
	}
	args := append(h.urlArgs("push", "--porcelain", "--no-verify", "--quiet"), "--", h.URL)
	if _, err := h.Repo.Git.Run(bgctx(), nil, append(args, keeps...)...); err != nil {
		h.logf("warning: could not keep the state(s) this push left behind on %s (%s): fresh clones will judge the next entry's path rules in full (%v)", h.Remote, strings.Join(keeps, ", "), err)
	}
}

func firstReason(reasons map[string]string, err error) string {
	for dst, r := range reasons {
		if !strings.Contains(r, "atomic push failed") {
			return fmt.Sprintf("%s: %s (atomic push)", dst, r)
		}
	}
	return err.Error()
}

// behindStatus turns the inner push's refusal of a ref that is behind the
// remote's ("[rejected] (fetch first)") into the status word a remote
// helper reports for it (gitremote-helpers(7): "error <ref> fetch first"),
// for which git prints its usual line and advice.
func behindStatus(reason string) (string, bool) {
	for _, status := range []string{"fetch first", "non-fast-forward", "stale info"} {
		if reason == "[rejected] ("+status+")" || reason == status {
			return status, true
		}
	}
	return "", false
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

// replacesStaging reports whether the local staged change should replace
// the remote's: it was made (or signed) in this clone, and the remote's
// may be replaced without losing a signature.
func (h *Helper) replacesStaging(remote, local, polTip gitrepo.Hash, say bool) bool {
	if porcelain.LoadStagedState(h.Repo.Git.GitDir()).Own != local {
		return false
	}
	why, err := porcelain.StagingReplaceable(h.Repo.Git, remote, local, polTip)
	if err != nil || why != "" {
		if err == nil && say {
			h.logf("note: the remote's staged policy change is not replaced by yours: %s", why)
		}
		return false
	}
	return true
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
