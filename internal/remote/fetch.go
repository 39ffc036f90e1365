package remote

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/freshness"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/pushcert"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// secureRefs are the metadata refs the helper carries.
// The push certificates are taken, never sent: only the server writes them.
var secureRefs = []string{rsl.Ref, policy.Ref, attest.Ref, policy.StagingRef, pushcert.Ref}

// ErrVerifyFailed is returned when what a remote serves does not verify.
var ErrVerifyFailed = errors.New("the remote's state does not verify")

func (h *Helper) configKey(suffix string) string {
	return "remote." + h.Remote + "." + suffix
}

// fetchAndVerify mirrors the remote, but for the forges' namespaces
// (select.go), into the private namespace, checks its
// log against the local one, verifies it, moves the local refs/secure/*,
// and returns the remote's refs (without refs/secure/*) and HEAD.
// With forPush (a push bringing the remote's metadata in), a remote state
// that fails only on freshness is warned about (staleForPush).
func (h *Helper) fetchAndVerify(forPush bool) (map[string]gitrepo.Hash, string, error) {
	refs, head, err := h.fetchAndVerifyOnce(forPush)
	if errors.Is(err, errRefetch) {
		// A server updates a push's refs one at a time: a fetch racing a
		// push can see the branch before its log entry. Look again once.
		time.Sleep(300 * time.Millisecond)
		h.refetched = true
		refs, head, err = h.fetchAndVerifyOnce(forPush)
	}
	return refs, head, err
}

// errRefetch asks for one more fetch before judging the remote.
var errRefetch = errors.New("the remote's refs moved during the fetch")

func (h *Helper) fetchAndVerifyOnce(forPush bool) (map[string]gitrepo.Hash, string, error) {
	listing, head, err := h.prelisted, h.prelistedHead, error(nil)
	h.prelisted, h.prelistedHead = nil, ""
	if listing == nil {
		if listing, head, err = h.lsRemote(); err != nil {
			return nil, "", err
		}
	}
	if d := h.doubted; d != nil && h.refetched && h.Mode != "warn" && head == d.head && maps.Equal(listing, d.listing) {
		// The same refs as the state that failed: verifying them again
		// would fail the same way, at the same cost (a server serving
		// 800 moved tags doubled a fresh clone's 80 s, attack s15 04).
		h.Trace.Mark("fetch: listing unchanged, judged as before")
		return nil, "", h.judgeProblems(d.err, d.remoteTip)
	}
	h.doubted = nil
	ns := h.namespace
	h.fetched = true
	h.sayDepthIgnored()
	h.sayFilterIgnored()
	if !forPush && !h.refetched {
		if remote, ok := h.nothingNew(listing, head); ok {
			h.Trace.Mark("fetch: nothing new")
			h.remote = remote
			return visibleRefs(remote), head, nil
		}
	}
	remote, err := h.fetchListed(listing, ns)
	if err != nil {
		return nil, "", err
	}
	h.Trace.Mark("fetch: git fetch")
	remote = addUnfetched(remote, listing)
	if err := h.checkRemoteLog(remote, forPush); err != nil {
		if h.doubted != nil {
			h.doubted.listing, h.doubted.head = listing, head
		}
		return nil, "", err
	}
	h.Trace.Mark("fetch: verify and adopt")
	h.remote = remote
	return visibleRefs(remote), head, nil
}

// fetchListed brings the objects of the listed refs here, the forges'
// namespaces aside (select.go), and returns those refs at the values
// fetched. It asks for each by the object id the listing gave, and writes
// no ref: with every refspec an object id, git fetch asks the remote for
// no listing of its own (protocol v2: over HTTP one request fewer, one
// http-backend and one upload-pack), skips the transfer when every object
// is here already, and still checks the connectivity of everything it
// fetched; the state judged is exactly the one listed (the forge refs'
// too), and nothing is written per ref: a private namespace of loose refs
// cost seconds per 10 000 refs to write and as many to delete (20 000
// tags: 14 s and 7 s of a 27 s clone, against 1.5 s for a plain clone).
// The objects are unreferenced until the refs that need them are written
// (the adoption, git's own); git gc keeps unreachable objects for two
// weeks. A server speaking protocol v0 serves only the tips it
// advertises: when a ref moved since the listing, or the fetch by id
// fails for any other reason, every ref is fetched by name into the
// private namespace as before (one more session; the refs fetched are
// then the later state).
func (h *Helper) fetchListed(listing map[string]gitrepo.Hash, ns string) (map[string]gitrepo.Hash, error) {
	fetched := map[string]gitrepo.Hash{}
	var ids strings.Builder
	for name, hash := range listing {
		if strings.HasPrefix(name, "refs/") && !isForgeRef(name) && gitrepo.ValidRefName(name) == nil {
			fetched[name] = hash
			ids.WriteString(hash.String() + "\n")
		}
	}
	if len(fetched) == 0 {
		return fetched, nil // nothing to fetch: git fetch would take the remote's HEAD
	}
	args := h.urlArgs("fetch", "--no-tags", "--no-write-fetch-head", h.progressArgs(), "--no-recurse-submodules", "--no-auto-maintenance", "--stdin", "--", h.URL)
	_, err := h.Repo.Git.RunStdinTee(bgctx(), []byte(ids.String()), h.Err, args...)
	if err == nil {
		return fetched, nil
	}
	h.logf("note: fetching the %d listed refs by object id failed (git's message above); fetching them by name", len(fetched))
	args = h.urlArgs("fetch", "--no-tags", "--no-write-fetch-head", h.progressArgs(), "--no-recurse-submodules", "--no-auto-maintenance", "--", h.URL, "+refs/*:"+ns+"/*")
	if _, err := h.Repo.Git.RunTee(bgctx(), h.Err, append(args, forgeExcludes()...)...); err != nil {
		return nil, fmt.Errorf("fetch from %s: %w", h.URL, err)
	}
	return h.Repo.NamespaceRefs(ns)
}

// visibleRefs is what git is told of the remote: everything but its
// metadata.
func visibleRefs(remote map[string]gitrepo.Hash) map[string]gitrepo.Hash {
	visible := map[string]gitrepo.Hash{}
	for name, hash := range remote {
		if !strings.HasPrefix(name, "refs/secure/") && !strings.HasPrefix(name, "refs/secure-incoming/") {
			visible[name] = hash
		}
	}
	return visible
}

// syncForPush brings the remote's metadata in before a push. One ls-remote
// tells whether the remote's refs/secure/* are what this clone holds (the
// common case: nothing more to do); otherwise everything is fetched and
// verified as for a fetch.
func (h *Helper) syncForPush() error {
	refs := h.forPush
	h.forPush = nil
	if refs == nil {
		var err error
		if refs, _, err = h.lsRemote(); err != nil {
			return err
		}
	}
	have, err := h.localSecure()
	if err != nil {
		return err
	}
	same := true
	for _, name := range secureRefs {
		if r := refs[name]; !r.IsZero() && r != have[name] {
			same = false // the remote holds metadata we lack
		}
	}
	if same {
		h.remote = refs
		return nil
	}
	h.localSnap = nil // the fetch below moves refs/secure/*
	_, _, err = h.fetchAndVerify(true)
	return err
}

// checkRemoteLog decides whether the remote's metadata can be trusted and,
// if so, adopts it locally.
func (h *Helper) checkRemoteLog(remote map[string]gitrepo.Hash, forPush bool) error {
	g := h.Repo.Git
	local, err := h.localSecure()
	if err != nil {
		return err
	}
	localTip := local[rsl.Ref]
	remoteTip := remote[rsl.Ref]
	h.verifiedUntil = time.Time{}
	seen, _, _ := g.Config(h.configKey("securetip"))
	if remoteTip.IsZero() {
		return h.noRemoteLog(seen, localTip)
	}
	adopt, err := h.extendsLocal(localTip, remoteTip, seen)
	if errors.Is(err, errDiverged) {
		// Unpublished policy entries of ours on an older tip (an apply
		// that raced someone's push) are replayed on top of the remote's
		// log; the verification below judges the result.
		remote, err = h.replayOwn(remote, local, seen)
		adopt = err == nil
	}
	if err != nil {
		return err
	}
	keeps := newKeeps(remote, local)
	res, err := h.Repo.VerifyProposed(remote, verify.Options{AllowShallow: h.allowShallow(), RequireFreshness: freshness.Required(g), FindStates: keeps})
	verified := err == nil // before any problem is forgiven below
	if err == nil && !res.Freshness {
		h.verifiedUntil = res.ValidUntil
	}
	if forPush && h.staleForPush(err) {
		err = nil
	}
	if err != nil {
		if err := h.judgeProblems(err, remoteTip); err != nil {
			return err
		}
	}
	if adopt {
		if err := h.adopt(remote, local, keeps, res); err != nil {
			return err
		}
		if forPush && verified {
			h.catchUpTracking(remote, res)
		}
	}
	// The remembered tip is what detects a later rollback: failing to keep
	// it must not pass silently.
	if err := g.SetConfig(h.configKey("securetip"), remoteTip.String()); err != nil {
		return h.refuse("cannot remember the verified state of the remote's log (%v); without it a later rollback would go unnoticed: fix the git config (a stale .git/config.lock?) and fetch again", err)
	}
	if err == nil {
		h.sayPin(res, localTip.IsZero())
		h.sayShallow(res)
	}
	return nil
}

// noRemoteLog judges a remote that serves no log (seen: the tip this clone
// last saw there).
func (h *Helper) noRemoteLog(seen string, localTip gitrepo.Hash) error {
	if seen != "" {
		return h.refuse("the remote no longer has a git-secure log (refs/secure/rsl), which it had before (%s): it may be hiding it", shortStr(seen))
	}
	if !localTip.IsZero() {
		h.logf("note: the remote has no git-secure metadata yet; push to set it up")
		return nil
	}
	// A pinned clone expects a log anchored at its keys: a remote that
	// serves none must not pass for one that is merely not set up.
	if pin, _, err := h.Repo.PinnedRoot(); err != nil {
		return err
	} else if len(pin) > 0 {
		return h.refuse("the remote has no git-secure log (refs/secure/rsl), but this clone pins its root of trust (secure.rootKeys %s): nothing it serves can be verified; check the URL, or unset the pin to fetch a repository that does not use git-secure", strings.Join(pin, " "))
	}
	return nil
}

// extendsLocal refuses a remote log that forked from the local one, or
// went back from the tip this clone saw there (seen); it reports whether
// the remote's metadata is to be adopted (false while the local log is
// ahead: unpushed local work).
func (h *Helper) extendsLocal(localTip, remoteTip gitrepo.Hash, seen string) (bool, error) {
	g := h.Repo.Git
	if localTip.IsZero() || localTip == remoteTip {
		return true, nil
	}
	switch {
	case mustAncestor(g, localTip, remoteTip):
		return true, nil
	case mustAncestor(g, remoteTip, localTip):
		// We hold entries the remote lacks: unpushed local work, or the
		// remote went back in time.
		if seenTip, err := gitrepo.ParseHash(seen); err == nil && seenTip != remoteTip && mustAncestor(g, remoteTip, seenTip) {
			return false, h.refuse("the remote's log went back from %s to %s: it serves an older state than it did before (rollback or freeze)", shortStr(seen), remoteTip.String()[:12])
		}
		return false, nil
	}
	return false, errDiverged
}

// errDiverged says the remote's log and the local one forked.
var errDiverged = errors.New("the logs diverged")

// maxPrinted bounds the problems a refused fetch prints: a remote chooses
// how many refs it serves out of step. git secure verify lists them all.
const maxPrinted = 50

// judgeProblems says what is wrong with a remote state that does not
// verify (err) and refuses it, unless secure.verifyOnFetch=warn; a state
// that may be a push caught halfway asks for one more fetch (errRefetch).
func (h *Helper) judgeProblems(err error, remoteTip gitrepo.Hash) error {
	var failed *verify.Failed
	if !errors.As(err, &failed) {
		return err
	}
	if !h.refetched && onlyUnrecorded(failed) {
		h.doubted = &doubtedState{err: err, remoteTip: remoteTip}
		return errRefetch
	}
	report.Printer{W: h.Err, Wrap: h.Wrap, Max: maxPrinted}.Problems("error", failed, func(p *verify.Problem) string { return h.problemHint(p, remoteTip) })
	if h.Mode == "warn" {
		h.forgiven = true // never remembered as verified (nothingnew.go)
		h.logf("warning: the remote's state does NOT verify (%d problem(s)); continuing because secure.verifyOnFetch=warn", len(failed.Problems))
		return nil
	}
	return h.refuse("the remote's state does not verify (%d problem(s)); nothing was updated. To fetch anyway (unsafe): git -c secure.verifyOnFetch=warn fetch", len(failed.Problems))
}

// doubtedState is a remote state that failed only on refs out of step
// with the log (judgeProblems), as listed (fetchAndVerifyOnce).
type doubtedState struct {
	listing   map[string]gitrepo.Hash
	head      string
	err       error
	remoteTip gitrepo.Hash
}

// sayPin tells, in one line, what the verified log was anchored to: a
// stale pin, or (first fetch, nothing pinned) trust on first use and the
// command that pins the root in force.
func (h *Helper) sayPin(res *verify.Result, first bool) {
	switch {
	case res == nil:
	case res.StalePin != "":
		h.logf("warning: %s", res.StalePin)
	case res.Pin == "" && first && len(res.RootKeys) > 0:
		h.logf("note: no root key pin (secure.rootKeys), so the remote's first policy was trusted on first use; to refuse a substituted log from now on, pin its root keys after checking them against the ones the project publishes: %s",
			verify.PinCommand(res.RootKeys, res.RootThreshold))
	}
}

func (h *Helper) refuse(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	h.logf("error: %s", msg)
	return fmt.Errorf("%w: %s", ErrVerifyFailed, msg)
}

// adopt moves the local metadata refs to the remote's verified values, each
// with compare-and-swap; attestations and staged policy only fast-forward.
// keeps are the commits of the keep refs the remote serves that this
// clone lacks (newKeeps); res, the verification of the remote's log, may
// already say which of them the log records (nil: not known).
func (h *Helper) adopt(remote, local map[string]gitrepo.Hash, keeps map[gitrepo.Hash]bool, res *verify.Result) error {
	g := h.Repo.Git
	var updates []gitrepo.RefUpdate
	var adoptedOwn gitrepo.Hash
	for _, name := range secureRefs {
		want, have := remote[name], local[name]
		if want.IsZero() || want == have {
			continue
		}
		if name == policy.StagingRef && porcelain.LoadStagedState(g.GitDir()).Discarded == want {
			// Discarded here; the server keeps a staged change for ever
			// (it only grows), so every fetch would bring it back.
			continue
		}
		if name == policy.StagingRef && stagedObsolete(g, want, remote[policy.Ref]) {
			// Made on another policy than the remote's: applied, or
			// overtaken; it can never be applied, and taken it would
			// block every policy edit here until discarded. The server
			// keeps it, so every fetch would bring it back.
			continue
		}
		if name == policy.StagingRef && !have.IsZero() && porcelain.LoadStagedState(g.GitDir()).Own == have &&
			porcelain.StagingAddsSignatures(g, have, want, remote[policy.Ref]) {
			// A co-signer signed our change: take their version, ours still.
			updates = append(updates, gitrepo.RefUpdate{Name: name, Old: have, New: want})
			adoptedOwn = want
			continue
		}
		if name == attest.Ref || name == policy.StagingRef || name == pushcert.Ref {
			if !have.IsZero() && !mustAncestor(g, have, want) {
				if name == attest.Ref && !mustAncestor(g, want, have) {
					h.logf("note: your local approvals and the remote's have diverged; keeping yours (push them with git push)")
				}
				continue
			}
		}
		updates = append(updates, gitrepo.RefUpdate{Name: name, Old: have, New: want})
	}
	if len(keeps) > 0 {
		recorded, err := recordedKeeps(g, remote[rsl.Ref], keeps, res)
		if err != nil {
			return fmt.Errorf("read the log to check the remote's keep refs: %w", err)
		}
		skipped := len(keeps) - len(recorded)
		for want := range recorded {
			updates = append(updates, gitrepo.RefUpdate{Name: rsl.KeepRef(want), New: want})
		}
		if skipped > 0 {
			h.logf("warning: the remote serves %d keep ref(s) (%s*) for commits its log records as no ref's state: not taken (a server that accepts them lets anyone store commits there)", skipped, rsl.KeepRefPrefix)
		}
	}
	if u, ok := h.timestampUpdate(remote); ok {
		updates = append(updates, u)
	}
	if len(updates) == 0 {
		return nil
	}
	if err := g.UpdateRefs(updates, "git-secure: fetch from "+h.Remote); err != nil {
		return fmt.Errorf("update local metadata: %w (another git-secure command ran at the same time; fetch again)", err)
	}
	if !adoptedOwn.IsZero() {
		if err := h.Repo.NoteStagedAdopted(adoptedOwn); err != nil {
			return err
		}
	}
	return nil
}

// newKeeps returns the commits of the keep refs the remote serves that
// this clone lacks. Keep refs bring states force-pushes left behind
// (rsl.KeepRef), so that verification diffs from them exactly; trusted for
// nothing else, so only one naming its own commit is taken, never moved,
// and only for a state the verified log records (a server that took any
// commit under that name would otherwise fill every clone).
func newKeeps(remote, local map[string]gitrepo.Hash) map[gitrepo.Hash]bool {
	var keeps map[gitrepo.Hash]bool
	for name, want := range remote {
		if strings.HasPrefix(name, rsl.KeepRefPrefix) && local[name].IsZero() && name == rsl.KeepRef(want) {
			if keeps == nil {
				keeps = map[gitrepo.Hash]bool{}
			}
			keeps[want] = true
		}
	}
	return keeps
}

// stagedObsolete reports whether the staged change at staged was made on
// top of another policy than polTip (the policy in force after the fetch).
func stagedObsolete(g *gitrepo.Repo, staged, polTip gitrepo.Hash) bool {
	if polTip.IsZero() {
		return false
	}
	c, err := g.ReadCommit(staged)
	return err == nil && len(c.Parents) == 1 && c.Parents[0] != polTip
}

func mustAncestor(g *gitrepo.Repo, a, b gitrepo.Hash) bool {
	ok, err := g.IsAncestor(a, b)
	return err == nil && ok
}

func shortStr(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func onlyUnrecorded(f *verify.Failed) bool {
	for _, p := range f.Problems {
		if !errors.Is(p, verify.ErrUnrecorded) {
			return false
		}
	}
	return len(f.Problems) > 0
}

// problemHint is p's hint for someone fetching: a ref the remote serves
// out of step with its log (a push cut on the server) is repaired from a
// clone, never by recording a local value.
func (h *Helper) problemHint(p *verify.Problem, remoteTip gitrepo.Hash) string {
	// A commit an entry records that the fetch did not bring: the remote
	// no longer serves it (a branch put back or rewritten on the server
	// by hand). verify's "fetch the missing commits" names the step that
	// just failed (stranger run, session 14); the commit is in the clone
	// of whoever recorded it.
	if errors.Is(p, verify.ErrMissingObject) && p.Entry != 0 && p.Ref != "" && p.Ref != rsl.PolicyRef && !strings.HasPrefix(p.Ref, "refs/secure/") && !h.shallow() {
		return fmt.Sprintf("%s does not serve a commit its log records (entry #%d): the server's %s was moved back or rewritten without an entry, or the commit was pruned; nothing was updated here. Whoever has that commit (the signer of entry #%d has it) puts it back from their clone: git secure rsl repair %s --restore %s",
			h.Remote, p.Entry, p.Ref, p.Entry, h.Remote, p.Ref)
	}
	if p.Entry != 0 || p.Ref == "" || p.Ref == rsl.PolicyRef || !errors.Is(p, verify.ErrUnrecorded) {
		return p.Hint
	}
	// The verifier's own answer: reading the log again for each problem
	// cost (problems x log) reads.
	return verify.RepairHint(h.Remote, p.Ref, p.Recorded)
}

// shallow reports whether the clone has a shallow (or grafts) file: its
// missing commits lie beyond its own boundary, not the remote's doing.
func (h *Helper) shallow() bool {
	files, err := h.Repo.Git.HistoryFiles()
	return err != nil || len(files) > 0
}
