// Package remote is git-secure's git remote helper (gitremote-helpers(7)):
// with remote.<name>.vcs = secure, git runs "git-remote-secure <name> <url>"
// for every fetch, pull, clone and push of that remote, so plain git
// commands carry and check git-secure's metadata:
//
//   - fetch: what the remote has but the forges' refs (branches, tags,
//     refs/secure/*; see select.go) is fetched into a private namespace, the remote's log is checked to
//     extend the local one (no fork, no rollback) and verified against the
//     remote's branches and tags; only then are the local refs/secure/*
//     moved and the refs handed to git. A failure stops the fetch, so no
//     branch moves onto unverified state.
//   - push: every pushed branch or tag gets a signed log entry, and the
//     branches, the log and any unpushed metadata go in one atomic push
//     (git push --atomic). When someone else pushed first, the entries are
//     made again on top of theirs and the push retried.
//
// The helper talks to the real remote with the git binary and the real URL,
// so every transport git supports works. It trusts nothing it receives
// before verification.
package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/display"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/hooks"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/trace"
)

// Helper serves one invocation of git-remote-secure.
type Helper struct {
	Repo   *porcelain.Repo
	Remote string // remote name, or the URL when git has none
	URL    string
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	// Mode is secure.verifyOnFetch: "" or "fail" (default) or "warn".
	Mode string
	// Trace, when set, is told when each phase ends (GIT_SECURE_TRACE).
	Trace *trace.Tracer
	// Wrap wraps messages to display.Width columns (set when stderr is a
	// terminal; logs and scripts keep one line per message).
	Wrap bool

	namespace string
	listed    map[string]gitrepo.Hash
	// remote holds the remote's refs as last listed or fetched.
	remote map[string]gitrepo.Hash
	// refetched is set once a fetch was repeated to rule out a race.
	refetched bool
	// doubted is the failure that asked for the refetch, with the listing
	// it was judged from: a refetch that lists the same refs judges it
	// without verifying again.
	doubted *doubtedState
	// forgiven is set when secure.verifyOnFetch=warn let through a state
	// that does not verify.
	forgiven bool
	// verifiedUntil is, after a fetch, until when its verdict holds (the
	// policy's expiry); zero when it must not be remembered (no log, a
	// freshness policy, a state that did not verify).
	verifiedUntil time.Time
	// prelisted is the listing "list" made to decide whether the remote
	// uses git-secure (a clone), used once by the fetch that follows:
	// a clone lists the remote once, not twice.
	prelisted     map[string]gitrepo.Hash
	prelistedHead string
	// forPush is the listing "list for-push" just made, used once;
	// forPushRemembered says it came from memory (state.go), not from
	// the remote.
	forPush           map[string]gitrepo.Hash
	forPushRemembered bool
	// localSnap is the local refs/secure/* and refs/heads/* read while
	// "list for-push" talked to the remote, used once by the push.
	localSnap map[string]gitrepo.Hash
	// fetched is set once something was fetched into the namespace.
	fetched bool
	// plain is set when this repository does not use git-secure: the
	// fetch is passed through unverified, as plain git (select.go).
	plain bool
	// saidDepth is set once the helper said it fetched whole history
	// instead of opts.depth.
	saidDepth bool
	// filter is git fetch --filter's object filter ("" without);
	// saidFilter is set once the note that a verified fetch ignored it
	// was printed.
	filter     string
	saidFilter bool
	// listedHead is the branch "list" gave as HEAD, which git may fetch
	// by the name HEAD.
	listedHead string
	// marked is set while the pre-push marker is this helper's.
	marked bool
	// opts are the options git gave ("option" lines).
	opts gitOptions
	// head is the remote's HEAD as last listed.
	head string
	// snapDone, when set, is closed once the background snapshot is in
	// localSnap (nil there if it failed).
	snapDone chan struct{}
	// pre is what a push needs, loaded in the background while git runs
	// the pre-push hook (nil when not started).
	pre *prefetched
	// relisted holds the branches "list for-push" reported one commit
	// behind (or absent) so that git sends them and the helper can send
	// unpushed metadata with them (relistForMetadata), at their real
	// value on both sides.
	relisted map[string]gitrepo.Hash
}

// gitOptions are the options git gives the helper before a fetch or push.
type gitOptions struct {
	// depth is git fetch --depth's N ("" without).
	depth string
	// dryRun is git push --dry-run; leases (--force-with-lease) and
	// pushOptions (-o) go on to the real push.
	dryRun      bool
	progress    bool
	quiet       bool // git push -q (verbosity 0): no news of success
	leases      []string
	pushOptions []string
	// signed is git push --signed's value ("true" or "if-asked"; "" for
	// an unsigned push): the real push signs a push certificate for the
	// server, which stores it with the log entries (internal/pushcert).
	signed string
}

// prefetched is the signed policy at the snapshot's refs/secure/policy
// (not yet combined with an organisation policy) and the signing key,
// loaded in the background after "list for-push"; the push
// takes them (takePrefetch) once done is closed.
type prefetched struct {
	done         chan struct{}
	policyCommit gitrepo.Hash
	pol          *policy.Policy
	polErr       error
	signer       sign.Signer
	signErr      error
}

// snapshotAsync starts reading the local refs/secure/* and refs/heads/*
// into localSnap in the background (awaitSnap waits for it). With
// forPush, it then loads the policy and the signing key for the push
// (takePrefetch), while git runs the pre-push hook.
func (h *Helper) snapshotAsync(forPush bool) {
	h.awaitSnap() // one at a time
	h.dropPrefetch()
	done := make(chan struct{})
	h.snapDone = done
	var pre *prefetched
	if forPush {
		pre = &prefetched{done: make(chan struct{})}
		h.pre = pre
	}
	go func() {
		snap, err := h.Repo.RefValues("refs/secure/", "refs/heads/")
		if err != nil {
			snap = nil // later reads ask git again
		}
		h.localSnap = snap
		close(done)
		if pre == nil {
			return
		}
		defer close(pre.done)
		if p := snap[policy.Ref]; !p.IsZero() {
			// Only the signed policy: combining it with an organisation
			// policy uses the Repo's organisation cache, which the main
			// goroutine uses meanwhile (the push's sync verifies the
			// remote with it) and which is not safe for concurrent use.
			// policyOf combines it on the main goroutine.
			pre.policyCommit = p
			pre.pol, pre.polErr = h.Repo.SignedPolicyAt(p)
		}
		pre.signer, pre.signErr = h.Repo.LoadSigner("")
	}()
}

// relistUnrecorded lists a ref that the remote moved without a log entry
// at the value its log records, when that value is what an earlier push
// of this clone sent and never saw succeed (its in-flight note), the
// remote's log is the one this clone verified last (its checkpoint) and
// the local branch is where the remote's is. git then pushes the ref
// again, and the push records the missing entry; the ref itself is
// already there. Only this clone's own push is repaired so: a branch
// moved without an entry by anyone else (a teleport) is never signed for.
//
// That state is what a server killed in the middle of committing a push
// leaves: git's files ref store renames one lock file per ref, so a kill
// between two renames commits the branch without the log. Without this, a
// retry of the push would find the branch "up to date" and leave the
// server failing verification for everyone.
func (h *Helper) relistUnrecorded(refs map[string]gitrepo.Hash) map[string]gitrepo.Hash {
	tip := refs[rsl.Ref]
	inflight := h.loadInflight()
	if tip.IsZero() || len(inflight) == 0 {
		return refs
	}
	recorded, ok := h.recordedSinceCheckpoint(tip)
	if !ok {
		return refs
	}
	var out map[string]gitrepo.Hash
	for ref, target := range recorded {
		v, ok := refs[ref]
		if !ok || target.IsZero() || v == target || inflight[ref] != v || !strings.HasPrefix(ref, "refs/heads/") {
			continue
		}
		h.awaitSnap()
		if h.localSnap[ref] != v {
			continue // not the branch this clone has: nothing to record for it
		}
		if out == nil {
			out = make(map[string]gitrepo.Hash, len(refs))
			for k, v := range refs {
				out[k] = v
			}
		}
		out[ref] = target
		h.logf("note: the remote's %s is at %s, but its log records %s (a push interrupted on the server?): pushing it records the missing entry", ref, shortStr(v.String()), shortStr(target.String()))
	}
	if out == nil {
		return refs
	}
	return out
}

// metadataRefs are git-secure's refs a push sends when the local one is
// ahead of the remote's.
var metadataRefs = []string{rsl.Ref, policy.Ref, attest.Ref, policy.StagingRef}

// relistForMetadata makes a plain "git push" send git-secure's metadata
// when only the metadata changed (an approval, a signed or applied
// policy): git decides "Everything up-to-date" from this listing and then
// never calls the helper's push. So while some local metadata ref is ahead
// of the remote's, each local branch that the remote has at the same value
// is listed at its first parent (absent for a root commit): git then asks
// to push it, the helper sends the branch (unchanged) and the metadata in
// one atomic push, and answers "up to date" for the branch, so git prints
// what happened to it. Nothing else of the listing changes.
//
// A --force-with-lease of such a branch is refused as "stale info" while
// metadata waits; the push without the lease sends it.
func (h *Helper) relistForMetadata(refs map[string]gitrepo.Hash) map[string]gitrepo.Hash {
	h.awaitSnap()
	if h.localSnap == nil || len(h.pendingMetadata(refs, h.localSnap)) == 0 {
		return refs
	}
	out := make(map[string]gitrepo.Hash, len(refs))
	for k, v := range refs {
		out[k] = v
	}
	h.relisted = map[string]gitrepo.Hash{}
	for name, v := range h.localSnap {
		if !strings.HasPrefix(name, "refs/heads/") || refs[name] != v {
			continue
		}
		h.relisted[name] = v
		if c, err := h.Repo.Git.ReadCommit(v); err == nil && len(c.Parents) > 0 {
			out[name] = c.Parents[0]
		} else {
			delete(out, name)
		}
	}
	return out
}

// pendingMetadata returns git-secure's refs whose local value is ahead of
// remote's listing (or that the remote lacks): what a push sends.
func (h *Helper) pendingMetadata(remote, local map[string]gitrepo.Hash) []string {
	var out []string
	for _, name := range metadataRefs {
		l, r := local[name], remote[name]
		if l.IsZero() || l == r {
			continue
		}
		if !r.IsZero() && !mustAncestor(h.Repo.Git, r, l) && (name != policy.StagingRef || !h.replacesStaging(r, l, local[policy.Ref], false)) {
			continue
		}
		out = append(out, name)
	}
	return out
}

// maxRelistWalk bounds the entries relistUnrecorded reads past the
// checkpoint.
const maxRelistWalk = 64

// recordedSinceCheckpoint returns what the log ending at tip records for
// each ref: this clone's verification checkpoint, updated by the few
// entries since. ok is false without a checkpoint on tip's line, past the
// walk bound, or when an annotation (which can send a ref back) is among
// them.
func (h *Helper) recordedSinceCheckpoint(tip gitrepo.Hash) (map[string]gitrepo.Hash, bool) {
	cp := h.Repo.LoadCheckpoint()
	if cp == nil {
		return nil, false
	}
	recorded := map[string]gitrepo.Hash{}
	reached, steps := false, 0
	err := rsl.WalkBack(h.Repo.Git, tip, func(rec *rsl.Record) (bool, error) {
		if cp.IsEntry(rec.Entry.Number, rec.ID) {
			reached = true
			return false, nil
		}
		if steps++; steps > maxRelistWalk || rec.Entry.Type != rsl.TypeRef {
			return false, nil
		}
		if _, seen := recorded[rec.Entry.Ref]; !seen {
			recorded[rec.Entry.Ref] = rec.Entry.New
		}
		return true, nil
	})
	if err != nil || !reached {
		return nil, false
	}
	for ref, target := range cp.Targets() {
		if _, seen := recorded[ref]; !seen {
			recorded[ref] = target
		}
	}
	return recorded, true
}

// takePrefetch waits for the background loading and hands its results
// over (the caller closes the signer); nil when none was started.
func (h *Helper) takePrefetch() *prefetched {
	pre := h.pre
	h.pre = nil
	if pre != nil {
		<-pre.done
	}
	return pre
}

// dropPrefetch releases a prefetch nobody took.
func (h *Helper) dropPrefetch() {
	if pre := h.takePrefetch(); pre != nil && pre.signer != nil {
		pre.signer.Close()
	}
}

// awaitSnap waits for a snapshot still being read in the background.
func (h *Helper) awaitSnap() {
	if h.snapDone != nil {
		<-h.snapDone
		h.snapDone = nil
	}
}

// rememberedListing returns the remote's refs as of the last contact when
// they may answer "list for-push" (see state.go).
func (h *Helper) rememberedListing() (*remoteState, bool) {
	if v, _, _ := h.Repo.ConfigValue("secure.pushListing"); v == "remote" {
		return nil, false
	}
	return h.loadState()
}

// logf prints one line for the user: repository text in args is escaped
// for the terminal.
func (h *Helper) logf(format string, args ...any) {
	if h.Wrap {
		display.Fprintw(h.Err, 0, "git-secure: ", format, args...)
		return
	}
	display.Fprintf(h.Err, "git-secure: "+format+"\n", args...)
}

// Run answers git's commands until it closes the pipe.
func (h *Helper) Run() error {
	h.namespace = fmt.Sprintf("refs/secure-incoming/%d", os.Getpid())
	// Every fetch and push needs the configuration and signs or verifies:
	// read the one and set up the other in the background.
	h.Repo.Preload()
	go sign.Warm()
	h.syncHooks()
	h.Trace.Mark("sync hooks")
	defer h.Trace.Mark("clean up")
	defer h.cleanup()
	defer h.unmarkPush()
	defer h.dropPrefetch()
	// Runs first: what follows "clean up" is the clean-up alone.
	defer h.Trace.Mark("answer git's commands")
	in := bufio.NewReader(h.In)
	for {
		line, err := readLine(in)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case line == "":
			return nil
		case line == "capabilities":
			fmt.Fprint(h.Out, "fetch\npush\noption\n\n")
		case strings.HasPrefix(line, "option "):
			fmt.Fprint(h.Out, h.option(strings.TrimPrefix(line, "option "))+"\n")
		case line == "list":
			if err := h.list(false); err != nil {
				return err
			}
		case line == "list for-push":
			if err := h.list(true); err != nil {
				return err
			}
		case strings.HasPrefix(line, "fetch "):
			if err := h.fetch(in, line); err != nil {
				return err
			}
		case strings.HasPrefix(line, "push "):
			if err := h.push(in, line); err != nil {
				return err
			}
		default:
			return fmt.Errorf("remote helper: unsupported command %q", line)
		}
		if f, ok := h.Out.(interface{ Flush() error }); ok {
			f.Flush()
		}
	}
}

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil && (err != io.EOF || line == "") {
		return "", err
	}
	if len(line) > 64<<10 {
		return "", errors.New("remote helper: command line too long")
	}
	return strings.TrimSuffix(line, "\n"), nil
}

func (h *Helper) option(opt string) string {
	name, value, _ := strings.Cut(opt, " ")
	switch name {
	case "verbosity":
		// git sends its verbosity plus one: 0 is -q.
		n, err := strconv.Atoi(value)
		h.opts.quiet = err == nil && n <= 0
		return "ok"
	case "followtags":
		return "ok"
	case "progress":
		// git asks for progress when its stderr is a terminal: the inner
		// fetches and pushes show theirs (progressArgs).
		h.opts.progress = value == "true"
		return "ok"
	case "atomic":
		// Every push of the helper is one git push --atomic already: the
		// branches, their log entries and the metadata land together or
		// not at all.
		return "ok"
	case "dry-run":
		// git push --dry-run: ask the remote what it would do, record
		// nothing, send nothing.
		h.opts.dryRun = value == "true"
		return "ok"
	case "cas":
		// git push --force-with-lease: "<ref>:<expected>" (expected empty:
		// the ref must not exist). Handed to the real push, which checks
		// the lease against the remote itself.
		ref, expect, _ := strings.Cut(value, ":")
		if gitrepo.ValidRefName(ref) != nil {
			return "error invalid lease ref"
		}
		if expect != "" {
			if _, err := gitrepo.ParseHash(expect); err != nil {
				return "error invalid lease value"
			}
		}
		h.opts.leases = append(h.opts.leases, value)
		return "ok"
	case "depth":
		return h.optionDepth(value)
	case "filter":
		return h.optionFilter(value)
	case "pushcert":
		// git push --signed[=true|if-asked]: the certificate must be
		// signed by the push that reaches the server, the helper's own,
		// for the updates it sends (the branch and the log together).
		switch value {
		case "true", "if-asked":
			h.opts.signed = value
		case "false":
			h.opts.signed = ""
		default:
			return "error invalid pushcert value"
		}
		return "ok"
	case "push-option":
		if value == "" || strings.ContainsAny(value, "\n\x00") {
			return "error invalid push option"
		}
		h.opts.pushOptions = append(h.opts.pushOptions, value)
		return "ok"
	}
	return "unsupported"
}

// pushFlags are the flags of the user's git push the helper hands on to
// its own (leases and push options).
func (h *Helper) pushFlags() []string {
	var out []string
	for _, l := range h.opts.leases {
		out = append(out, "--force-with-lease="+l)
	}
	for _, o := range h.opts.pushOptions {
		out = append(out, "--push-option="+o)
	}
	if h.opts.progress {
		out = append(out, "--progress")
	}
	if h.opts.signed != "" {
		out = append(out, "--signed="+h.opts.signed)
	}
	return out
}

// progressArgs is --progress when git asked for progress (option
// progress true), else --quiet.
func (h *Helper) progressArgs() string {
	if h.opts.progress {
		return "--progress"
	}
	return "--quiet"
}

// urlArgs is a git command line that talks to h.URL: with the options
// that keep git from sending it back through git-remote-secure (a
// repository with url.secure::.insteadOf = "" rewrites every URL).
func (h *Helper) urlArgs(args ...string) []string {
	return append(hooks.NoRewrite(h.URL), args...)
}

func (h *Helper) git(args ...string) ([]byte, error) {
	return h.Repo.Git.Run(context.Background(), nil, args...)
}

// localSecure returns the local refs/secure/*: from the snapshot taken
// during "list for-push" while it is fresh, else read in one process.
func (h *Helper) localSecure() (map[string]gitrepo.Hash, error) {
	h.awaitSnap()
	if h.localSnap != nil {
		out := map[string]gitrepo.Hash{}
		for name, hash := range h.localSnap {
			if strings.HasPrefix(name, "refs/secure/") {
				out[name] = hash
			}
		}
		return out, nil
	}
	return h.Repo.RefValues("refs/secure/")
}

// cleanup deletes the private namespace.
func (h *Helper) cleanup() {
	if !h.fetched {
		return
	}
	h.Repo.DropNamespace(h.namespace, "git-secure: clean up")
}

// lsRemote lists the remote's refs (no objects fetched).
func (h *Helper) lsRemote() (map[string]gitrepo.Hash, string, error) {
	out, err := h.git(h.urlArgs("ls-remote", "--symref", "--", h.URL)...)
	if err != nil {
		return nil, "", fmt.Errorf("list %s: %w", h.URL, err)
	}
	refs := map[string]gitrepo.Hash{}
	head := ""
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		val, name, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		if sym, isSym := strings.CutPrefix(val, "ref: "); isSym {
			if name == "HEAD" {
				head = sym
			}
			continue
		}
		if strings.HasSuffix(name, "^{}") {
			continue
		}
		hash, err := gitrepo.ParseHash(val)
		if err != nil {
			continue
		}
		refs[name] = hash
	}
	return refs, head, nil
}

func writeList(w io.Writer, refs map[string]gitrepo.Hash, head string) {
	names := make([]string, 0, len(refs))
	for n := range refs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "%s %s\n", refs[n], n)
	}
	if head != "" {
		if _, ok := refs[head]; ok {
			fmt.Fprintf(w, "@%s HEAD\n", head)
		}
	}
	fmt.Fprint(w, "\n")
}

// list answers "list": for a fetch it fetches and verifies everything
// first, so that what git is told is exactly what was verified. For a push
// it answers from the remote's remembered refs when it may (see state.go),
// else from ls-remote; either way the local snapshot the push needs is read
// meanwhile.
func (h *Helper) list(forPush bool) error {
	if forPush {
		h.snapshotAsync(true)
		refs, head := map[string]gitrepo.Hash(nil), ""
		h.forPushRemembered = false
		if st, ok := h.rememberedListing(); ok {
			refs, head = st.Refs, st.Head
			h.forPushRemembered = true
			h.Trace.Mark("list for-push (remembered)")
		} else {
			var err error
			if refs, head, err = h.lsRemote(); err != nil {
				return err
			}
			h.Trace.Mark("list for-push")
		}
		h.markPush()
		h.adoptRemote()
		h.forPush, h.head = refs, head // the push that follows needs no second round trip
		writeList(h.Out, h.relistForMetadata(h.relistUnrecorded(refs)), head)
		return nil
	}
	var listing map[string]gitrepo.Hash
	var listHead string
	lister := func() (map[string]gitrepo.Hash, error) {
		var err error
		if listing == nil {
			listing, listHead, err = h.lsRemote()
		}
		return listing, err
	}
	if uses, err := h.usesSecure(lister); err != nil {
		return err
	} else if !uses {
		if _, err := lister(); err != nil {
			return err
		}
		h.passThrough(listing, listHead)
		return nil
	}
	h.prelisted, h.prelistedHead = listing, listHead
	refs, head, err := h.fetchAndVerify(false)
	if err != nil {
		return err
	}
	h.saveState(h.remote, head)
	if !h.forgiven {
		h.saveVerified(h.remote, head, h.verifiedUntil)
	}
	h.listed, h.listedHead = refs, head
	writeList(h.Out, refs, head)
	return nil
}

// fetch answers a batch of "fetch <sha> <name>": the verified objects
// arrived with list already; what did not is fetched by name when the
// private fetch left it out (select.go).
func (h *Helper) fetch(in *bufio.Reader, first string) error {
	return h.fetchMissing(in, first)
}

// syncHooks picks up hooks the repository gained since git secure hooks
// install (the pre-push hook may no longer start git-secure, so the helper,
// which runs on every fetch and push, does it).
func (h *Helper) syncHooks() { hooks.SyncInstalled(h.Repo, h.logf) }

// adoptRemote routes the fetches of a named remote that only its pushes
// reached the helper by (url.secure::.pushInsteadOf): its first push sets
// remote.<name>.vcs = secure, and says so.
func (h *Helper) adoptRemote() {
	if h.Remote == "" || h.Remote == h.URL || strings.Contains(h.Remote, "::") {
		return
	}
	if _, ok, err := h.Repo.ConfigValue("remote." + h.Remote + ".vcs"); err != nil || ok {
		return
	}
	changed, err := hooks.AdoptRemote(h.Repo.Git, h.Remote)
	if err != nil {
		h.logf("warning: cannot route the fetches of remote %q through git-remote-secure (%v); run git secure hooks install", h.Remote, err)
		return
	}
	if changed {
		h.logf("remote %q is now routed through git-remote-secure for fetches too (remote.%s.vcs = secure)", h.Remote, h.Remote)
	}
}

// markPush tells git-secure's pre-push hook, which git runs between "list
// for-push" and "push", that this helper carries the push of remote
// h.Remote, so that the hook needs no process to find out (it checks the
// pid is alive and the remote name matches). The file sits directly in the
// git directory (no directory to create in repositories without
// git-secure) and is removed when the helper exits. Best effort: without
// it the hook starts git-secure, which asks git's configuration.
func (h *Helper) markPush() {
	if h.Remote == "" || strings.ContainsAny(h.Remote, " \t\n\r") {
		return
	}
	path := filepath.Join(h.Repo.Git.GitDir(), hooks.HelperMarker)
	tmp := fmt.Sprintf("%s.%d", path, os.Getpid())
	if err := os.WriteFile(tmp, fmt.Appendf(nil, "%d %s\n", os.Getpid(), h.Remote), 0o644); err != nil {
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return
	}
	h.marked = true
}

// unmarkPush removes the marker if it is still this helper's.
func (h *Helper) unmarkPush() {
	if !h.marked {
		return
	}
	path := filepath.Join(h.Repo.Git.GitDir(), hooks.HelperMarker)
	if data, err := os.ReadFile(path); err == nil && strings.HasPrefix(string(data), fmt.Sprintf("%d ", os.Getpid())) {
		_ = os.Remove(path)
	}
}
