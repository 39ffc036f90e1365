package hooks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/freshness"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/rsl"
)

// checkStatementPush judges a push of the freshness statement (a bot
// that signs elsewhere): it must be signed by the freshness keys of the
// policy the push leaves in force, fresh, for the log tip the server will
// hold or an entry before it, and not older than the statement it
// replaces (a replayed old statement would make a frozen server look
// fresh again). Deleting it would make every client fail: refused.
func (c *Context) checkStatementPush(l RefLine, proposed map[string]gitrepo.Hash) error {
	g := c.Repo.Git
	if l.New.IsZero() {
		c.say("error: %s cannot be deleted (clients of a policy that sets freshness would refuse every state)", l.Ref)
		return ErrRejected
	}
	refuse := func(err error) error {
		c.say("error: %s: %v", l.Ref, err)
		c.say("hint: sign a fresh statement of the current log with a freshness key: git secure timestamp sign --key FILE")
		return ErrRejected
	}
	pol, err := c.Repo.PolicyAt(proposed[policy.Ref])
	if err != nil {
		return refuse(err)
	}
	f := pol.Freshness()
	if f == nil {
		c.say("error: %s: the policy sets no freshness, so no statement is accepted", l.Ref)
		return ErrRejected
	}
	sd, err := freshness.Read(g, l.New)
	if err != nil {
		return refuse(err)
	}
	if err := freshness.VerifySignatures(sd, pol); err != nil {
		return refuse(err)
	}
	if err := freshness.CheckAge(sd, f, c.Repo.Now()); err != nil {
		return refuse(err)
	}
	logTip := proposed[rsl.Ref]
	if ok, err := g.IsAncestor(sd.Tip, logTip); err != nil || !ok {
		return refuse(freshnessNotInLog(sd, logTip))
	}
	if l.Old.IsZero() {
		return nil
	}
	old, err := freshness.Read(g, l.Old)
	if err != nil || freshness.VerifySignatures(old, pol) != nil || old.Time.After(c.Repo.Now().Add(freshness.MaxSkew)) {
		// A statement that does not verify, or is dated in the future
		// (planted behind the hook's back), may be replaced: judged by
		// it, no genuine statement could land until its date.
		return nil
	}
	if sd.Time.Before(old.Time) {
		c.say("error: %s: the statement is from %s, older than the one the server holds (%s): a replayed statement", l.Ref, sd.Time.Format(time.RFC3339), old.Time.Format(time.RFC3339))
		return ErrRejected
	}
	if ok, err := g.IsAncestor(old.Tip, sd.Tip); err != nil || !ok {
		return refuse(freshnessNotInLog(sd, old.Tip))
	}
	return nil
}

func freshnessNotInLog(sd *freshness.Signed, tip gitrepo.Hash) error {
	return fmt.Errorf("%w: it vouches for log tip %s, which does not extend the log's %s", freshness.ErrNotInLog, sd.Tip, tip)
}

// postReceiveSkip is where pre-receive tells the post-receive script of
// the same receive-pack that the server has no timestamp key: the file
// holds the receive-pack's pid (the hooks' parent), and a script whose
// parent is that pid does not start git-secure (a git config of the key
// cost every push a process). A missing file, or one naming another pid
// (a concurrent push, a forge that runs hooks through a wrapper of its
// own), starts git-secure, which reads the key itself: the file can only
// save a start.
func postReceiveSkip(gitDir string) string {
	return filepath.Join(gitDir, "secure", "post-receive-skip")
}

// notePostReceive writes or removes postReceiveSkip for this push: a
// key, or a configuration that cannot be read, removes it.
func (c *Context) notePostReceive(gitDir string, lines []RefLine) {
	path := postReceiveSkip(gitDir)
	if c.mayLeaveStates(lines) {
		_ = os.Remove(path) // post-receive keeps what it left (keepOverwritten)
		return
	}
	if key, ok, err := c.Repo.ConfigValue(porcelain.TimestampKeyConfig); err != nil || (ok && key != "") {
		_ = os.Remove(path)
		return
	}
	if err := writeAtomic(path, []byte(strconv.Itoa(os.Getppid())+"\n")); err != nil {
		_ = os.Remove(path) // no note: post-receive starts git-secure
	}
}

// writeAtomic replaces path with data through a file of its own in the
// same directory, so that concurrent writers never mix their contents.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// postReceive refreshes the freshness statement after a push that moved
// the log, when the server has a key (secure.timestampKey). It never
// fails the push (it has landed already): a failure is reported, and
// clients notice a stopped timestamp job by the statement's age.
func (c *Context) postReceive(input []byte) error {
	lines, perr := ParseRefLines(input)
	if perr == nil {
		c.keepOverwritten(lines)
	}
	key, ok, err := c.Repo.ConfigValue(porcelain.TimestampKeyConfig)
	if err != nil || !ok || key == "" {
		return nil
	}
	if perr != nil {
		c.say("warning: freshness statement not refreshed: %v", perr)
		return nil
	}
	moved := false
	for _, l := range lines {
		moved = moved || l.Ref == rsl.Ref
	}
	if !moved {
		return nil
	}
	// Two pushes' hooks may sign at once: the loser of the ref update
	// (compare-and-swap) tries again on top of the winner's statement.
	for try := 0; try < 3; try++ {
		var res *porcelain.TimestampResult
		if res, err = c.Repo.SignTimestamp(porcelain.TimestampOptions{KeyFile: key, At: c.Repo.Now()}); err == nil {
			for _, w := range res.Warnings {
				c.say("warning: %s", w)
			}
			return nil
		}
	}
	if err != nil {
		c.say("warning: freshness statement not refreshed: %v", err)
		c.say("hint: the server's timestamp job (git secure timestamp sign, from cron) keeps it fresh; clients refuse the server's state once the newest statement is older than the policy's max age")
	}
	return nil
}

// overwrites reports whether l moves a ref (not git-secure's own) away
// from a state the new one does not contain: a force-push or a deletion.
func (c *Context) overwrites(l RefLine) bool {
	if l.Old.IsZero() || l.Old == l.New || strings.HasPrefix(l.Ref, "refs/secure/") {
		return false
	}
	if l.New.IsZero() {
		return true
	}
	ok, err := c.Repo.Git.IsAncestor(l.Old, l.New)
	return err != nil || !ok
}

// mayLeaveStates reports whether a push may leave a recorded state behind
// (overwrites), so that post-receive must run to keep it.
func (c *Context) mayLeaveStates(lines []RefLine) bool {
	for _, l := range lines {
		if c.overwrites(l) {
			return true
		}
	}
	return false
}

// keepOverwritten creates refs/secure/keep/<old> (rsl.KeepRef) for each
// recorded state the push just left behind: the push moved the ref away
// from old, not to a descendant, with a log entry recording exactly that
// move. Then fresh clones still have old and diff the entry exactly. A
// client's push through git-secure usually created it already. It never
// fails the push (it has landed): a failure is a warning.
func (c *Context) keepOverwritten(lines []RefLine) {
	g := c.Repo.Git
	var left []RefLine
	refs := map[string]bool{}
	for _, l := range lines {
		if !c.overwrites(l) {
			continue
		}
		if h, ok, err := g.ResolveRef(rsl.KeepRef(l.Old)); err != nil || ok || !h.IsZero() {
			continue
		}
		left, refs[l.Ref] = append(left, l), true
	}
	if len(left) == 0 {
		return
	}
	logTip, ok, err := g.ResolveRef(rsl.Ref)
	if err != nil || !ok {
		return
	}
	// One walk for every ref: a push of many force-pushes read the log
	// once per ref.
	latest, _, err := rsl.LatestForEach(g, logTip, refs, nil)
	if err != nil {
		return
	}
	kept := map[gitrepo.Hash]bool{}
	for _, l := range left {
		keep := rsl.KeepRef(l.Old)
		rec := latest[l.Ref]
		if rec == nil || rec.Entry.Old != l.Old || rec.Entry.New != l.New || kept[l.Old] {
			continue // not a recorded move from a recorded state, or kept already
		}
		kept[l.Old] = true
		if _, err := g.ReadCommit(l.Old); err != nil {
			continue
		}
		if err := g.UpdateRefs([]gitrepo.RefUpdate{{Name: keep, New: l.Old}}, "git-secure: keep the state entry #"+strconv.FormatUint(rec.Entry.Number, 10)+" moved "+l.Ref+" away from"); err != nil && !errors.Is(err, gitrepo.ErrRefChanged) {
			c.say("warning: could not keep %s, which the push to %s left behind (%v): fresh clones will judge the next entry's path rules in full", short(l.Old), l.Ref, err)
		}
	}
}
