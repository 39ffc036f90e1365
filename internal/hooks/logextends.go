package hooks

import (
	"fmt"

	"github.com/git-secure/git-secure/internal/rsl"
)

// logExtends checks a push of the log (l.New not zero) on the cheap,
// decisive facts first, in time and memory bounded by
// secure.maxPushEntries: the pushed tip is a well-formed, signed entry; its
// number is after the server's tip and adds at most maxPushEntries; and
// walking back exactly that many entries, each well-formed and numbered one
// less, reaches the server's tip. A general ancestry check (git merge-base)
// walked the whole pushed history first: a junk log of 300 000 cheap
// commits kept the hook busy for 7-11 s before the tip was looked at.
func (c *Context) logExtends(l RefLine) error {
	g := c.Repo.Git
	refuse := func(format string, args ...any) error {
		c.say("rejected: %s %s: %s", l.Ref, short(l.New), fmt.Sprintf(format, args...))
		c.say("hint: push the log git-secure wrote (fetch the remote's %s and record on it), not another history", l.Ref)
		return ErrRejected
	}
	nc, err := g.ReadCommit(l.New)
	if err != nil {
		return refuse("cannot be read as a commit: %v", err)
	}
	ne, err := rsl.FromCommit(nc)
	if err != nil {
		return refuse("its tip is not a log entry: %v", err)
	}
	if l.Old.IsZero() {
		return nil // a new log: pushBudget bounds its length, verification reads it
	}
	oc, err := g.ReadCommit(l.Old)
	if err != nil {
		return fmt.Errorf("hooks: read the log's tip %s: %w", l.Old, err)
	}
	oe, err := rsl.FromCommit(oc)
	if err != nil {
		return fmt.Errorf("hooks: the log's tip: %w", err)
	}
	if ne.Number <= oe.Number {
		return refuse("can only grow: its tip is entry #%d, the server's log is at #%d", ne.Number, oe.Number)
	}
	maxEntries, err := c.configInt("secure.maxPushEntries", defaultMaxPushEntries)
	if err != nil {
		return err
	}
	if ne.Number-oe.Number > uint64(maxEntries) {
		c.say("rejected: this push adds %d log entries; the server verifies at most %d per push", ne.Number-oe.Number, maxEntries)
		c.say("hint: push in smaller steps, or ask the administrator to raise git config secure.maxPushEntries")
		return ErrRejected
	}
	cur, want := nc, ne.Number
	for want > oe.Number+1 {
		if len(cur.Parents) != 1 {
			return refuse("can only grow: entry #%d (%s) has no parent, so the log does not extend the server's #%d", want, short(cur.Hash), oe.Number)
		}
		p := cur.Parents[0]
		pc, err := g.ReadCommit(p)
		if err != nil {
			return refuse("cannot read entry #%d (%s): %v", want-1, short(p), err)
		}
		pe, err := rsl.FromCommit(pc)
		if err != nil {
			return refuse("below its tip, %s is not a log entry: %v", short(p), err)
		}
		if pe.Number != want-1 {
			return refuse("%s holds entry #%d where #%d was expected (entries removed or reordered)", short(p), pe.Number, want-1)
		}
		cur, want = pc, want-1
	}
	if len(cur.Parents) != 1 || cur.Parents[0] != l.Old {
		return refuse("can only grow: its entry #%d does not follow the server's log tip %s (#%d)", want, short(l.Old), oe.Number)
	}
	return nil
}
