package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// world is one transport's server and the people using it.
type world struct {
	t       *testing.T
	srv     *server
	repo    string // the project's bare repository on the server
	url     string
	alice   *user
	bob     *user
	mallory *user
	old     *user // an old client: no git-secure in the clone
	auditor *user // makes fresh mirror clones to verify the server

	aliceDir, bobDir string
}

// TestTransparentWorkflow runs scenarios a-i of the transparent workflow
// (plain git commands, git-secure behind them) against each transport. The
// scenarios of one transport build on each other and run in order; the
// transports run in parallel.
func TestTransparentWorkflow(t *testing.T) {
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			t.Parallel()
			if testing.Short() && tr != trFile {
				t.Skip("-short: file:// only")
			}
			w := &world{t: t, srv: startServer(t, tr)}
			w.repo, w.url = w.srv.newRepo("project.git", true)
			w.alice, w.bob, w.mallory = newUser(t, "alice"), newUser(t, "bob"), newUser(t, "mallory")
			w.old, w.auditor = newUser(t, "olduser"), newUser(t, "auditor")
			steps := []struct {
				name string
				fn   func(*testing.T)
			}{
				{"a_first_setup_and_push", w.firstSetup},
				{"b_clone_fetch_verify", w.cloneAndVerify},
				{"c_push_pull_both_ways", w.pushPull},
				{"d_mallory_refused", w.malloryRefused},
				{"e_old_client", w.oldClient},
				{"f1_race_same_branch", w.raceSameBranch},
				{"f2_race_different_branches", func(t *testing.T) { w.raceDifferentBranches(t, false) }},
				{"f3_race_different_branches_slow_server", func(t *testing.T) { w.raceDifferentBranches(t, true) }},
				{"g_server_moves_branch_back", w.serverMovesBranch},
				{"h_server_rolls_back_log", w.serverRollsBackLog},
				{"i_hooks_chaining", func(t *testing.T) { hooksChaining(t, w.srv) }},
			}
			for _, s := range steps {
				if !t.Run(s.name, func(t *testing.T) { w.bind(t); s.fn(t) }) {
					t.Fatalf("%s failed; the later scenarios depend on it", s.name)
				}
			}
		})
	}
}

// bind makes the people's helpers report failures to t, the scenario
// running now.
func (w *world) bind(t *testing.T) {
	for _, u := range []*user{w.alice, w.bob, w.mallory, w.old, w.auditor, w.srv.admin} {
		u.t, u.sb.T = t, t
	}
	w.srv.t = t
}

// serverRef is the value of ref on the server ("" when absent).
func (w *world) serverRef(ref string) string { return w.srv.admin.refs(w.repo)[ref] }

// verifyMirror makes a fresh mirror clone of the server and runs git secure
// verify in it, which must exit 0. It returns the mirror's log.
func (w *world) verifyMirror(t *testing.T) []rslEntry {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mirror.git")
	w.auditor.git(w.auditor.sb.Home, "clone", "-q", "--mirror", w.url, dir)
	if r := w.auditor.run(dir, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("git secure verify in a fresh mirror of the server failed:\n%s", r)
	}
	return w.auditor.checkLinearLog(dir)
}

// a. alice sets up git-secure in an existing repository with history; a
// plain git push -u carries the policy and the log to the server.
func (w *world) firstSetup(t *testing.T) {
	a := w.alice
	w.aliceDir = a.sb.InitRepo("alice", 3)
	a.configure(w.aliceDir)
	a.git(w.aliceDir, "remote", "add", "origin", w.url)
	// init leaves origin's fetches to plain git (origin has no log yet:
	// it may be an upstream); the first push sends the log and routes
	// them.
	if out := a.secure(w.aliceDir, "init"); !strings.Contains(out, "fetches from origin stay plain git") {
		t.Errorf("git secure init does not say origin's fetches stay plain git until the first push:\n%s", out)
	}
	if r := a.run(w.aliceDir, "git", "config", "remote.origin.vcs"); r.code == 0 {
		t.Fatalf("after git secure init, remote.origin.vcs = %q, want unset until the first push", r.stdout)
	}
	a.secure(w.aliceDir, "policy", "add-person", "alice", "--key", a.key.Public)
	a.secure(w.aliceDir, "policy", "add-person", "bob", "--key", w.bob.key.Public)
	a.secure(w.aliceDir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob", "--threshold", "1")
	a.secure(w.aliceDir, "policy", "apply")

	r := a.run(w.aliceDir, "git", "push", "-u", "origin", "main")
	if r.code != 0 {
		t.Fatalf("first push failed:\n%s", r)
	}
	if v := a.git(w.aliceDir, "config", "remote.origin.vcs"); v != "secure" {
		t.Fatalf("after the first push, remote.origin.vcs = %q, want secure", v)
	}
	srv := w.srv.admin.refs(w.repo)
	for _, ref := range []string{"refs/heads/main", "refs/secure/rsl", "refs/secure/policy"} {
		want := a.rev(w.aliceDir, ref)
		if srv[ref] != want {
			t.Errorf("server %s = %q, want alice's %s\n%s", ref, srv[ref], want, r)
		}
	}
	if got := a.git(w.aliceDir, "rev-parse", "--abbrev-ref", "main@{upstream}"); got != "origin/main" {
		t.Errorf("main's upstream = %q, want origin/main", got)
	}
	entries := w.srv.admin.checkLinearLog(w.repo)
	if len(entries) != 3 || entries[0].Ref != "refs/secure/policy" || entries[1].Ref != "refs/heads/main" || entries[2].Ref != "refs/secure/policy" {
		t.Errorf("server log = %+v, want policy, main, policy", entries)
	}
	w.verifyMirror(t)
}

// b. bob clones; after git secure hooks install, a plain git fetch brings
// and verifies refs/secure/*.
func (w *world) cloneAndVerify(t *testing.T) {
	b := w.bob
	w.bobDir = b.path("bob")
	b.git(b.sb.Home, "clone", "-q", w.url, w.bobDir)
	b.configure(w.bobDir)
	b.secure(w.bobDir, "hooks", "install")
	if v := b.git(w.bobDir, "config", "remote.origin.vcs"); v != "secure" {
		t.Fatalf("remote.origin.vcs = %q after hooks install", v)
	}
	if r := b.run(w.bobDir, "git", "fetch"); r.code != 0 {
		t.Fatalf("bob's first fetch failed:\n%s", r)
	}
	for _, ref := range []string{"refs/secure/rsl", "refs/secure/policy"} {
		if got, want := b.refValue(w.bobDir, ref), w.serverRef(ref); got != want || got == "" {
			t.Errorf("bob's %s = %q, want the server's %q", ref, got, want)
		}
	}
	if r := b.run(w.bobDir, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("git secure verify in bob's clone:\n%s", r)
	}
}

// c. Both push and pull with plain git; every push is recorded.
func (w *world) pushPull(t *testing.T) {
	a, b := w.alice, w.bob
	c1 := a.commit(w.aliceDir, "c1.txt", "from alice\n")
	r := a.run(w.aliceDir, "git", "push")
	if r.code != 0 {
		t.Fatalf("alice's push failed:\n%s", r)
	}
	if !strings.Contains(r.stderr, "recorded refs/heads/main as entry") {
		t.Errorf("push did not say it recorded main:\n%s", r)
	}
	if got := w.serverRef("refs/heads/main"); got != c1 {
		t.Fatalf("server main = %s, want %s", got, c1)
	}
	if r := b.run(w.bobDir, "git", "pull", "--ff-only"); r.code != 0 {
		t.Fatalf("bob's pull failed:\n%s", r)
	}
	if got := b.rev(w.bobDir, "main"); got != c1 {
		t.Fatalf("bob's main = %s after pull, want %s", got, c1)
	}
	if r := b.run(w.bobDir, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("verify after pull:\n%s", r)
	}

	c2 := b.commit(w.bobDir, "c2.txt", "from bob\n")
	if r := b.run(w.bobDir, "git", "push"); r.code != 0 {
		t.Fatalf("bob's push failed:\n%s", r)
	}
	if r := a.run(w.aliceDir, "git", "pull", "--ff-only"); r.code != 0 {
		t.Fatalf("alice's pull failed:\n%s", r)
	}
	if got := a.rev(w.aliceDir, "main"); got != c2 {
		t.Fatalf("alice's main = %s after pull, want bob's %s", got, c2)
	}
	if r := a.run(w.aliceDir, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("verify in alice's clone:\n%s", r)
	}
	entries := w.srv.admin.checkLinearLog(w.repo)
	if countNew(entries, "refs/heads/main", c1) != 1 || countNew(entries, "refs/heads/main", c2) != 1 {
		t.Errorf("each push must be recorded once; log: %+v", entries)
	}
	if got, want := a.rev(w.aliceDir, "refs/secure/rsl"), w.serverRef("refs/secure/rsl"); got != want {
		t.Errorf("alice's log %s != server's %s", got, want)
	}
}

// d. mallory has git-secure but her key is not in the policy: her push to
// main is refused by her helper, and by the server when she bypasses it.
func (w *world) malloryRefused(t *testing.T) {
	m := w.mallory
	dir := m.path("mallory")
	m.git(m.sb.Home, "clone", "-q", w.url, dir)
	m.configure(dir)
	m.secure(dir, "hooks", "install")
	if r := m.run(dir, "git", "fetch"); r.code != 0 {
		t.Fatalf("mallory's fetch failed:\n%s", r)
	}
	before := w.serverRef("refs/heads/main")
	beforeLog := w.serverRef("refs/secure/rsl")
	m.commit(dir, "evil.txt", "evil\n")
	r := m.run(dir, "git", "push")
	if r.code == 0 {
		t.Fatalf("mallory's push to main succeeded:\n%s", r)
	}
	if !strings.Contains(r.stderr, "not in the policy") {
		t.Errorf("stderr does not say mallory's key is not in the policy:\n%s", r)
	}
	if got := w.serverRef("refs/heads/main"); got != before {
		t.Fatalf("server main moved to %s", got)
	}
	// Bypassing the helper and her pre-push hook: the server refuses.
	r = m.pushDirect(dir, w.url, "--no-verify", w.url, "HEAD:refs/heads/main")
	if r.code == 0 {
		t.Fatalf("mallory's direct push to main succeeded:\n%s", r)
	}
	if !strings.Contains(r.stderr, "does not match the log") || !strings.Contains(r.stderr, "protected by git-secure") {
		t.Errorf("the server's refusal does not explain itself:\n%s", r)
	}
	if got := w.serverRef("refs/heads/main"); got != before {
		t.Fatalf("server main moved to %s", got)
	}
	if got := w.serverRef("refs/secure/rsl"); got != beforeLog {
		t.Fatalf("server log moved to %s", got)
	}
}

// e. An old client without git-secure: unprotected branches go through,
// main is refused with the install help.
func (w *world) oldClient(t *testing.T) {
	o := w.old
	dir := o.path("old")
	o.git(o.sb.Home, "clone", "-q", w.url, dir)
	o.git(dir, "config", "user.name", o.name)
	o.git(dir, "config", "user.email", o.name+"@example.com")
	if r := o.run(dir, "git", "config", "--get-regexp", `^remote\..*\.vcs$`); r.stdout != "" {
		t.Fatalf("a plain clone has vcs config: %s", r.stdout)
	}
	o.git(dir, "checkout", "-q", "-b", "feature")
	feat := o.commit(dir, "feature.txt", "feature\n")
	if r := o.run(dir, "git", "push", "origin", "feature"); r.code != 0 {
		t.Fatalf("old client's push of an unprotected branch failed:\n%s", r)
	}
	if got := w.serverRef("refs/heads/feature"); got != feat {
		t.Fatalf("server feature = %q, want %s", got, feat)
	}
	o.git(dir, "checkout", "-q", "main")
	before := w.serverRef("refs/heads/main")
	o.commit(dir, "old.txt", "old\n")
	r := o.run(dir, "git", "push", "origin", "main")
	if r.code == 0 {
		t.Fatalf("old client's push to main succeeded:\n%s", r)
	}
	if !strings.Contains(r.stderr, "protected by git-secure") {
		t.Errorf("stderr lacks the install help:\n%s", r)
	}
	if got := w.serverRef("refs/heads/main"); got != before {
		t.Fatalf("server main moved to %s", got)
	}
	// The unrecorded, unprotected branch does not break verification.
	w.verifyMirror(t)
}

// pushBoth runs two pushes at the same moment and returns their results.
func pushBoth(a, b *user, aDir, bDir string, aArgs, bArgs []string) (ra, rb result) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	run := func(u *user, dir string, args []string, out *result) {
		defer wg.Done()
		<-start
		*out = u.run(dir, "git", args...)
	}
	wg.Add(2)
	go run(a, aDir, aArgs, &ra)
	go run(b, bDir, bArgs, &rb)
	close(start)
	wg.Wait()
	return ra, rb
}

// syncBoth brings alice's and bob's main to the server's.
func (w *world) syncBoth(t *testing.T) {
	t.Helper()
	for _, p := range []struct {
		u   *user
		dir string
	}{{w.alice, w.aliceDir}, {w.bob, w.bobDir}} {
		p.u.git(p.dir, "checkout", "-q", "main")
		if r := p.u.run(p.dir, "git", "pull", "--ff-only"); r.code != 0 {
			t.Fatalf("pull failed:\n%s", r)
		}
		if got, want := p.u.rev(p.dir, "main"), w.serverRef("refs/heads/main"); got != want {
			t.Fatalf("%s's main %s != server's %s", p.u.name, got, want)
		}
	}
}

// f1. alice and bob both commit on the same main and push at once: one
// wins; the other's branch update is a non-fast-forward and is rejected,
// not lost and not recorded.
func (w *world) raceSameBranch(t *testing.T) {
	a, b := w.alice, w.bob
	w.syncBoth(t)
	base := w.serverRef("refs/heads/main")
	ca := a.commit(w.aliceDir, "race-a.txt", "alice\n")
	cb := b.commit(w.bobDir, "race-b.txt", "bob\n")
	ra, rb := pushBoth(a, b, w.aliceDir, w.bobDir, []string{"push", "origin", "main"}, []string{"push", "origin", "main"})
	if (ra.code == 0) == (rb.code == 0) {
		t.Fatalf("want exactly one push to succeed:\n%s\n\n%s", ra, rb)
	}
	winner, loser, wr, lr := ca, cb, ra, rb
	winU, loseU, winDir, loseDir := a, b, w.aliceDir, w.bobDir
	if rb.code == 0 {
		winner, loser, wr, lr = cb, ca, rb, ra
		winU, loseU, winDir, loseDir = b, a, w.bobDir, w.aliceDir
	}
	t.Logf("winner %s; loser:\n%s", winU.name, lr)
	if got := w.serverRef("refs/heads/main"); got != winner {
		t.Fatalf("server main = %s, want the winner's %s (base %s)\n%s", got, winner, base, wr)
	}
	if lr.stderr == "" || !containsAll(lr.stderr, "rejected", "failed to push") {
		t.Errorf("the loser's push failed without saying so:\n%s", lr)
	}
	entries := w.verifyMirror(t)
	if n := countNew(entries, "refs/heads/main", winner); n != 1 {
		t.Errorf("the winner's main %s has %d entries, want 1: %+v", winner, n, entries)
	}
	if n := countNew(entries, "refs/heads/main", loser); n != 0 {
		t.Errorf("the rejected main %s has %d entries, want 0: %+v", loser, n, entries)
	}
	seen := map[string]bool{}
	for _, e := range entriesFor(entries, "refs/heads/main") {
		if seen[e.New] {
			t.Errorf("main value %s recorded twice", e.New)
		}
		seen[e.New] = true
	}
	if last := entriesFor(entries, "refs/heads/main"); last[len(last)-1].New != winner {
		t.Errorf("latest main entry %+v does not record the server's main %s", last[len(last)-1], winner)
	}
	// The loser's local log was not moved by the failed push: it still
	// extends to the server's after a fetch, and the loser's work is not
	// lost: rebase and push again.
	if r := loseU.run(loseDir, "git", "pull", "--rebase"); r.code != 0 {
		t.Fatalf("the loser's pull --rebase failed:\n%s", r)
	}
	if r := loseU.run(loseDir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("the loser's second push failed:\n%s", r)
	}
	newMain := loseU.rev(loseDir, "main")
	if got := w.serverRef("refs/heads/main"); got != newMain {
		t.Fatalf("server main = %s, want the loser's rebased %s", got, newMain)
	}
	if r := winU.run(winDir, "git", "pull", "--ff-only"); r.code != 0 {
		t.Fatalf("the winner's pull failed:\n%s", r)
	}
	entries = w.verifyMirror(t)
	if n := countNew(entries, "refs/heads/main", newMain); n != 1 {
		t.Errorf("rebased main %s has %d entries, want 1", newMain, n)
	}
}

// raceSymptom tells whether a failed push shows the server-side
// compare-and-swap failure that the helper does not retry (see BUG 1 in
// the report).
func raceSymptom(r result) bool {
	if r.code == 0 {
		return false
	}
	if containsAny(r.stderr, "atomic transaction failed", "cannot lock ref") {
		return true
	}
	// The hook's silent "moved during the push" refusal (BUG 2), not a
	// verification failure, which the hook explains.
	return strings.Contains(r.stderr, "pre-receive hook declined") && !strings.Contains(r.stderr, "git-secure: rejected")
}

// f2/f3. alice pushes main while bob pushes a new branch at the same
// moment: both must succeed, the loser of the race for the log recording
// again on top of the winner's entries. With slow, the server's
// pre-receive takes 1.5s, which makes both pushes reach the server before
// either updates its refs, so the race is decided by the server's
// compare-and-swap.
func (w *world) raceDifferentBranches(t *testing.T, slow bool) {
	a, b := w.alice, w.bob
	w.syncBoth(t)
	branch := "bobwork"
	if slow {
		branch = "bobwork-slow"
		chained := filepath.Join(w.repo, "hooks", "pre-receive.git-secure-chained")
		writeScript(t, chained, "cat >/dev/null\nsleep 1.5\n")
		defer os.Remove(chained)
	}
	ca := a.commit(w.aliceDir, "race2-a-"+branch+".txt", "alice\n")
	b.git(w.bobDir, "checkout", "-q", "-b", branch)
	defer b.git(w.bobDir, "checkout", "-q", "main")
	cb := b.commit(w.bobDir, "race2-b-"+branch+".txt", "bob\n")
	ra, rb := pushBoth(a, b, w.aliceDir, w.bobDir, []string{"push", "origin", "main"}, []string{"push", "origin", branch})

	// Whatever happened, nothing that was refused is on the server or in
	// its log, and the server verifies.
	entries := w.verifyMirror(t)
	srvMain, srvBranch := w.serverRef("refs/heads/main"), w.serverRef("refs/heads/"+branch)
	check := func(u string, r result, ref, commit, srvVal string) {
		if r.code == 0 {
			if srvVal != commit {
				t.Errorf("%s's push succeeded but the server's %s = %q, want %s", u, ref, srvVal, commit)
			}
			if n := countNew(entries, ref, commit); n != 1 {
				t.Errorf("%s's accepted %s %s has %d entries, want 1: %+v", u, ref, commit, n, entries)
			}
		} else {
			if srvVal == commit {
				t.Errorf("%s's push failed but the server has %s = %s", u, ref, commit)
			}
			if n := countNew(entries, ref, commit); n != 0 {
				t.Errorf("%s's refused %s %s has %d entries, want 0", u, ref, commit, n)
			}
		}
	}
	check("alice", ra, "refs/heads/main", ca, srvMain)
	check("bob", rb, "refs/heads/"+branch, cb, srvBranch)

	if ra.code == 0 && rb.code == 0 {
		return
	}
	var bug []string
	for _, p := range []struct {
		r   result
		u   *user
		dir string
		arg string
	}{{ra, a, w.aliceDir, "main"}, {rb, b, w.bobDir, branch}} {
		if p.r.code == 0 {
			continue
		}
		if !raceSymptom(p.r) {
			t.Fatalf("%s's push of a different branch failed:\n%s\n\nother push:\n%s", p.u.name, p.r, map[bool]result{true: rb, false: ra}[p.u == a])
		}
		bug = append(bug, fmt.Sprintf("%s's push (%s) failed instead of retrying: %s", p.u.name, p.arg, oneLine(p.r.stderr)))
		// Recover so the next scenarios start from a clean state: the
		// same push again (the log race is over) must succeed.
		if r := p.u.run(p.dir, "git", "push", "origin", p.arg); r.code != 0 {
			t.Fatalf("%s's second push failed:\n%s", p.u.name, r)
		}
	}
	entries = w.verifyMirror(t)
	if n := countNew(entries, "refs/heads/main", ca); n != 1 {
		t.Errorf("alice's main has %d entries after the retry", n)
	}
	if n := countNew(entries, "refs/heads/"+branch, cb); n != 1 {
		t.Errorf("bob's %s has %d entries after the retry", branch, n)
	}
	if len(bug) > 0 {
		t.Errorf("the loser of a race for refs/secure/rsl decided by the server (the remote's ref transaction or its pre-receive hook) must be retried; pushes of different branches at the same moment must both succeed: %s", strings.Join(bug, "; "))
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " | ")), " ")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

// g. A server admin moves main back to an older commit; bob's fetch
// refuses and moves nothing.
func (w *world) serverMovesBranch(t *testing.T) {
	b, admin := w.bob, w.srv.admin
	w.syncBoth(t)
	cur := w.serverRef("refs/heads/main")
	older := admin.rev(w.repo, "refs/heads/main~1")
	beforeRemote := b.refValue(w.bobDir, "refs/remotes/origin/main")
	beforeLog := b.refValue(w.bobDir, "refs/secure/rsl")
	admin.git(w.repo, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/heads/main", older, cur) // past the server's hooks
	r := b.run(w.bobDir, "git", "fetch")
	admin.git(w.repo, "update-ref", "refs/heads/main", cur, older)
	if r.code == 0 {
		t.Fatalf("bob's fetch of a rolled-back main succeeded:\n%s", r)
	}
	// The refusal names the ref, that it does not match the log, and
	// that it went back (it says so in words, not "rollback").
	if !containsAll(r.stderr, "refs/heads/main", "does not match the log", "behind the recorded", "back to an older commit") {
		t.Errorf("stderr does not name the rollback:\n%s", r)
	}
	if got := b.refValue(w.bobDir, "refs/remotes/origin/main"); got != beforeRemote {
		t.Errorf("bob's origin/main moved from %s to %s", beforeRemote, got)
	}
	if got := b.refValue(w.bobDir, "refs/secure/rsl"); got != beforeLog {
		t.Errorf("bob's log moved from %s to %s", beforeLog, got)
	}
	// Restored: fetching works again.
	if r := b.run(w.bobDir, "git", "fetch"); r.code != 0 {
		t.Fatalf("fetch after the admin restored main:\n%s", r)
	}
}

// h. The server rolls its log back (and main with it) after bob has seen
// the newer log: bob's fetch refuses ("went back"). Then someone builds on
// the rolled-back log, so the server's log forks from bob's: "diverged".
func (w *world) serverRollsBackLog(t *testing.T) {
	a, b, admin := w.alice, w.bob, w.srv.admin
	w.syncBoth(t)
	c := a.commit(w.aliceDir, "h.txt", "before the rollback\n")
	if r := a.run(w.aliceDir, "git", "push"); r.code != 0 {
		t.Fatalf("alice's push:\n%s", r)
	}
	if r := b.run(w.bobDir, "git", "fetch"); r.code != 0 {
		t.Fatalf("bob's fetch:\n%s", r)
	}
	tip := w.serverRef("refs/secure/rsl")
	if got := b.refValue(w.bobDir, "refs/secure/rsl"); got != tip {
		t.Fatalf("bob's log %s != server's %s after fetch", got, tip)
	}
	entries := admin.rslLog(w.repo)
	last := entries[len(entries)-1]
	if last.Ref != "refs/heads/main" || last.New != c {
		t.Fatalf("latest entry %+v is not alice's push of %s", last, c)
	}
	// The admin rolls the log and main back by one entry.
	admin.git(w.repo, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/secure/rsl", tip+"~1", tip) // past the server's hooks
	admin.git(w.repo, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/heads/main", last.Old, c)
	beforeRemote := b.refValue(w.bobDir, "refs/remotes/origin/main")
	r := b.run(w.bobDir, "git", "fetch")
	if r.code == 0 {
		t.Fatalf("bob's fetch of a rolled-back log succeeded:\n%s", r)
	}
	// Went back, not diverged (that is the fork below): the refusal
	// names the log tip bob holds and says the server serves older state.
	if !containsAll(r.stderr, "log went back from "+tip[:12], "older state than it did before") {
		t.Errorf("stderr does not say the log went back:\n%s", r)
	}
	if got := b.refValue(w.bobDir, "refs/secure/rsl"); got != tip {
		t.Errorf("bob's log moved to %s", got)
	}
	if got := b.refValue(w.bobDir, "refs/remotes/origin/main"); got != beforeRemote {
		t.Errorf("bob's origin/main moved to %s", got)
	}

	// alice, in a fresh clone, unknowingly builds on the rolled-back log:
	// the server's log now forks from the one bob has.
	dir := a.path("alice-fresh")
	a.git(a.sb.Home, "clone", "-q", w.url, dir)
	a.configure(dir)
	a.secure(dir, "hooks", "install")
	if r := a.run(dir, "git", "fetch"); r.code != 0 {
		t.Fatalf("fresh clone's fetch:\n%s", r)
	}
	a.commit(dir, "fork.txt", "after the rollback\n")
	if r := a.run(dir, "git", "push"); r.code != 0 {
		t.Fatalf("push on the rolled-back log:\n%s", r)
	}
	r = b.run(w.bobDir, "git", "fetch")
	if r.code == 0 {
		t.Fatalf("bob's fetch of a forked log succeeded:\n%s", r)
	}
	if !strings.Contains(r.stderr, "diverged") {
		t.Errorf("stderr does not say the logs diverged:\n%s", r)
	}
	if got := b.refValue(w.bobDir, "refs/secure/rsl"); got != tip {
		t.Errorf("bob's log moved to %s", got)
	}
	if got := b.refValue(w.bobDir, "refs/remotes/origin/main"); got != beforeRemote {
		t.Errorf("bob's origin/main moved to %s", got)
	}
}

// TestServerHookExplainsRefusal feeds the server's pre-receive hook, the
// way receive-pack does, an update whose old value is not the ref's
// current one (what a concurrent push looks like to the second pusher).
func TestServerHookExplainsRefusal(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("p.git", true)
	benchRepo(t, newUser(t, "alice"), "alice", url, true) // protected, pushed
	cur := srv.admin.rev(repo, "refs/heads/main")
	older := srv.admin.rev(repo, "refs/heads/main~1")
	var in bytes.Buffer
	fmt.Fprintf(&in, "%s %s refs/heads/main\n", older, cur)
	r := srv.admin.runStdin(repo, in.Bytes(), "git", "secure", "hook", "pre-receive")
	if r.code == 0 {
		t.Fatalf("the hook accepted an update whose old value is stale:\n%s", r)
	}
	if !strings.Contains(r.stderr, "moved during the push") {
		t.Fatalf("the server's pre-receive hook must say why it refuses a push whose ref moved meanwhile:\n%s", r)
	}
}

// TestServerRootPin: a server that pins the project's root keys in its
// git configuration (here the global file of the account running git
// daemon, which the hook reads without starting git config) refuses a log
// whose root of trust is another, and accepts it once the pin matches.
func TestServerRootPin(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trDaemon)
	repo, url := srv.newRepo("pin.git", true)
	a := newUser(t, "alice")
	dir := benchRepo(t, a, "alice", url, true) // protected, pushed
	fp := strings.Fields(a.must(dir, "ssh-keygen", "-lf", a.key.Public))[1]

	srv.admin.git(srv.admin.sb.Home, "config", "--global", "secure.rootKeys", "SHA256:AAAAnotTheProjectsRootKeyAAAAAAAAAAAAAAAAAAA")
	before := srv.admin.rev(repo, "refs/heads/main")
	a.commit(dir, "f.txt", "one\n")
	r := a.run(dir, "git", "push", "origin", "main")
	if r.code == 0 || !containsAll(r.stderr, "root of trust is not the pinned one", "no root version of the log is signed by the pinned root keys") {
		t.Fatalf("push to a server pinning another root: want a refusal naming the unpinned root key:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/heads/main"); got != before {
		t.Fatalf("server main moved to %s on a refused push", got)
	}

	srv.admin.git(srv.admin.sb.Home, "config", "--global", "secure.rootKeys", fp)
	if r := a.run(dir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("push with the pin matching the log's root:\n%s", r)
	}
	if got, want := srv.admin.rev(repo, "refs/heads/main"), a.rev(dir, "main"); got != want {
		t.Fatalf("server main = %s, want %s", got, want)
	}
	// Every object the metadata names is stored, on both sides.
	a.git(dir, "fsck", "--strict", "--no-dangling", "--no-progress")
	srv.admin.git(repo, "fsck", "--strict", "--no-dangling", "--no-progress")
}
