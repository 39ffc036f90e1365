package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// Steps of the first day that issue 15's items 5 (approvals from a stale
// log, the hand-off of a refused push), 7 (--atomic, --dry-run, one
// failure line) and 9 (shallow and partial clones) made work; they start
// from a smaller day than TestFirstDay's.

// pendingDay is the small version of the first day the pending steps start
// from: alice's project with a threshold-2 rule on main (alice, bob),
// pushed to an enforcing server that carries forge refs/pull/*, and bob's
// clone.
type pendingDay struct {
	srv            *server
	repo, url      string
	alice, bob     *user
	aliceDir, bobD string
}

func newPendingDay(t *testing.T) *pendingDay {
	t.Helper()
	d := &pendingDay{srv: startServer(t, trFile), alice: newUser(t, "alice"), bob: newUser(t, "bob")}
	d.repo, d.url = d.srv.newRepo("project.git", true)
	d.aliceDir = d.alice.sb.InitRepo("project", 5)
	a := d.alice
	a.configure(d.aliceDir)
	a.secure(d.aliceDir, "init")
	a.secure(d.aliceDir, "policy", "add-person", "alice", "--key", a.key.Public)
	a.secure(d.aliceDir, "policy", "add-person", "bob", "--key", d.bob.key.Public)
	a.secure(d.aliceDir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob", "--threshold", "2")
	a.secure(d.aliceDir, "policy", "apply")
	a.git(d.aliceDir, "remote", "add", "origin", d.url)
	a.git(d.aliceDir, "push", "-q", "-u", "origin", "main")
	for i, c := range strings.Fields(d.srv.admin.git(d.repo, "rev-list", "main")) {
		d.srv.admin.git(d.repo, "-c", "core.hooksPath=/dev/null", "update-ref", fmt.Sprintf("refs/pull/%d/head", i+1), c)
	}
	d.bobD = d.bob.path("project")
	d.bob.git(d.bob.sb.Home, "secure", "clone", d.url, d.bobD, "--root-key", a.fingerprint())
	d.bob.configure(d.bobD)
	return d
}

// TestFirstDayFollowUps: the steps of the first day that issue 15's items
// 5, 7 and 9 made work (item 6's steps, a fetch of the forge's refs/pull/*
// through the helper and a global install, pass today: TestFirstDay and
// TestGlobalInstall) (see the constants above).
func TestFirstDayFollowUps(t *testing.T) {
	t.Run("item 5: an approval from a stale log", func(t *testing.T) {
		p, d := t, newPendingDay(t)
		a, b := d.alice, d.bob
		// main moves (alice's entry, bob's approval) while bob does not fetch.
		x := a.commit(d.aliceDir, "x.txt", "x\n")
		a.git(d.aliceDir, "push", "-q", "origin", "HEAD:refs/heads/review/x")
		b.git(d.bobD, "fetch", "-q", "origin")
		b.secure(d.bobD, "attest", "approve", "main", "--to", x)
		b.git(d.bobD, "push", "-q")
		a.git(d.aliceDir, "push", "-q", "origin", "main")
		// alice proposes y on top; bob gets only the commit, his log
		// still says main is where it was.
		y := a.commit(d.aliceDir, "y.txt", "y\n")
		a.git(d.aliceDir, "push", "-q", "origin", "HEAD:refs/heads/review/y")
		b.git(d.bobD, "fetch", "-q", d.url, "refs/heads/review/y")
		r := b.run(d.bobD, "git", "secure", "attest", "approve", "main", "--to", y)
		if r.code != 0 {
			if !strings.Contains(r.stderr, "git fetch") {
				p.Errorf("a refused stale approval does not name the fetch:\n%s", r)
			}
			b.git(d.bobD, "fetch", "-q", "origin")
			r = b.run(d.bobD, "git", "secure", "attest", "approve", "main", "--to", y)
		}
		if r.code != 0 {
			p.Errorf("approve after a fetch:\n%s", r)
		}
		// bob's main is behind: git refuses it until he pulls, as the
		// approval's own hint says.
		if !strings.Contains(r.stderr, "git pull") {
			p.Errorf("approve on a branch behind its upstream does not say to pull before pushing:\n%s", r)
		}
		b.git(d.bobD, "pull", "-q", "--no-rebase")
		b.git(d.bobD, "push", "-q")
		if r := a.run(d.aliceDir, "git", "push", "origin", "main"); r.code != 0 {
			p.Errorf("alice's push with bob's approval made from a stale log (the approval approved an update that can no longer happen, silently):\n%s", r)
		}
	})

	t.Run("item 5: hand-off of a refused push", func(t *testing.T) {
		p, d := t, newPendingDay(t)
		a, b := d.alice, d.bob
		z := a.commit(d.aliceDir, "z.txt", "z\n")
		r := a.run(d.aliceDir, "git", "push", "origin", "main")
		if r.code == 0 {
			t.Fatalf("a push with 1 of 2 was accepted:\n%s", r)
		}
		// With plain git only: alice publishes the commit for review as
		// the refusal says, bob fetches and approves the exact update it
		// named; alice pushes again.
		review := "refs/heads/review/main-" + z[:12]
		if !strings.Contains(r.stderr, "git push origin "+z[:12]+":"+review) {
			p.Errorf("the refusal does not say how to publish the commit for review:\n%s", r)
			return
		}
		a.git(d.aliceDir, "push", "-q", "origin", z+":"+review)
		// The review branch is a hand-off, not an update anyone judges:
		// it goes without a log entry.
		for _, e := range d.srv.admin.rslLog(d.repo) {
			if e.Ref == review {
				p.Errorf("publishing the review branch recorded entry #%d", e.Number)
			}
		}
		b.git(d.bobD, "fetch", "-q", "origin")
		if r := b.run(d.bobD, "git", "secure", "attest", "approve", "main", "--to", z); r.code != 0 {
			p.Errorf("the approver cannot approve the commit of a refused push after git fetch (the pusher must be able to publish it for review):\n%s", r)
			return
		}
		b.git(d.bobD, "push", "-q")
		if r := a.run(d.aliceDir, "git", "push", "origin", "main"); r.code != 0 {
			p.Errorf("alice's push after bob's approval:\n%s", r)
		}
	})

	t.Run("item 7: --atomic, --dry-run and one failure line", func(t *testing.T) {
		p, d := t, newPendingDay(t)
		a := d.alice
		a.commit(d.aliceDir, "d.txt", "d\n")
		r := a.run(d.aliceDir, "git", "push", "--dry-run", "origin", "main")
		if r.code == 0 || !strings.Contains(r.stderr, "would refuse") || !strings.Contains(r.stderr, "rule protect-main") {
			p.Errorf("git push --dry-run of a push the server refuses on its threshold:\n%s", r)
		}
		r = a.run(d.aliceDir, "git", "push", "origin", "main")
		if n := strings.Count(r.stderr, "failed to push"); r.code == 0 || n != 1 {
			p.Errorf("a refused push prints 'failed to push' %d times (want once):\n%s", n, r)
		}
		a.git(d.aliceDir, "checkout", "-q", "-b", "review/atomic")
		a.commit(d.aliceDir, "e.txt", "e\n")
		if r := a.run(d.aliceDir, "git", "push", "--atomic", "origin", "review/atomic"); r.code != 0 {
			p.Errorf("git push --atomic through the helper:\n%s", r)
		}
	})

	t.Run("item 9: shallow and partial clones verify", func(t *testing.T) {
		p, d := t, newPendingDay(t)
		c := newUser(t, "ci")
		for _, args := range [][]string{{"--depth", "1"}, {"--filter=blob:none"}} {
			dir := c.path(strings.Trim(strings.Join(args, ""), "-=:"))
			c.git(c.sb.Home, append(append([]string{"clone", "-q"}, args...), d.url, dir)...)
			r := c.run(dir, "git", "fetch", "origin", "refs/secure/*:refs/secure/*")
			if r.code != 0 {
				p.Errorf("git fetch of the metadata into a %s clone:\n%s", args, r)
				continue
			}
			r = c.run(dir, "git", "secure", "verify")
			if strings.Contains(r.stderr, "malformed") || (r.code != 0 && !strings.Contains(r.stderr, "--allow-shallow")) {
				p.Errorf("verify in a %s clone: want it verified, or refused naming --allow-shallow and the checks it could not make:\n%s", args, r)
			}
		}
	})
}
