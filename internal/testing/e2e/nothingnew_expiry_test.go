package e2e

import (
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
)

// expiryWindow is how long the policies and statements of these tests
// stay valid: long enough for a push and two fetches on a loaded machine.
const expiryWindow = 60 * time.Second

// waitPast sleeps until just after t; a test that got there before it
// could make its valid-state checks is skipped, not failed (the machine
// was too slow for the window, which says nothing of the code).
func waitPast(tb testing.TB, t time.Time, checked time.Time) {
	tb.Helper()
	if !checked.Before(t) {
		tb.Skipf("the checks before expiry ended at %s, after the expiry %s: machine too slow for a %s window", checked.Format(time.RFC3339), t.Format(time.RFC3339), expiryWindow)
	}
	time.Sleep(time.Until(t) + 1500*time.Millisecond)
}

// renewUntil puts in force, in alice's clone dir, rules that expire at
// about now+d: the renewal is made as if a year less d ago (the lifetime
// git-secure gives), in-process, since no command takes a date. It
// returns the expiry.
func renewUntil(t *testing.T, u *user, dir string, d time.Duration) time.Time {
	t.Helper()
	g, err := gitrepo.OpenWithEnv(dir, u.sb.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	then := time.Now().Add(d - policy.DefaultLifetime)
	r := &porcelain.Repo{Git: g, Now: func() time.Time { return then }, Home: u.sb.Home}
	if _, err := r.Stage("renew", func(p, base *policy.Policy, now time.Time) error { return p.Renew(base, false, now) }); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.ApplyReviewed("", "", ""); err != nil {
		t.Fatal(err)
	}
	p, _, err := r.CurrentPolicy()
	if err != nil {
		t.Fatal(err)
	}
	return p.Expires()
}

// TestFetchNothingNewAfterExpiry: a fetch that finds the remote as this
// clone last verified it answers from memory only while the policy it was
// verified under is in force: once its rules expired, the same fetch
// verifies in full and is refused, naming the expiry and what to do.
func TestFetchNothingNewAfterExpiry(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	_, url := srv.newRepo("project.git", true)
	alice, carol := newUser(t, "alice"), newUser(t, "carol")
	dir := benchRepo(t, alice, "project", url, true)
	expires := renewUntil(t, alice, dir, expiryWindow)
	alice.commit(dir, "renewed.txt", "renewed\n")
	alice.git(dir, "push", "-q", "origin", "main")

	dest := carol.path("clone")
	carol.git(carol.sb.Home, "clone", "-q", "secure::"+url, dest)
	trace := carol.path("trace.txt")
	if r := carol.run(dest, "env", "GIT_TRACE="+trace, "git", "fetch"); r.code != 0 {
		t.Fatalf("fetch with nothing new before the policy expired:\n%s", r)
	}
	checked := time.Now()
	if c := countTraced(t, trace, "git ls-remote", "git fetch --no-tags"); c[0] != 1 || c[1] != 0 {
		t.Fatalf("fetch with nothing new before the policy expired: %d listings and %d private fetches, want 1 and 0", c[0], c[1])
	}
	waitPast(t, expires, checked)
	r := carol.run(dest, "git", "fetch")
	if r.code == 0 || !containsAll(r.stderr, "expired on "+expires.Format(time.RFC3339), "git secure policy renew") {
		t.Fatalf("fetch with nothing new after the policy expired: want a refusal naming the expiry:\n%s", r)
	}
}

// TestFetchNothingNewStaleStatement: under a policy with freshness keys a
// fetch that finds nothing new still judges the statement's age: once it
// is older than the policy's limit, the fetch is refused as stale.
func TestFetchNothingNewStaleStatement(t *testing.T) {
	t.Parallel()
	f := newFreshSetup(t)
	signed := time.Now().Add(expiryWindow - 24*time.Hour).UTC().Truncate(time.Second)
	f.signOnServer(t, signed)
	carol := newUser(t, "carol")
	dest := carol.path("clone")
	carol.git(carol.sb.Home, "clone", "-q", "secure::"+f.url, dest)
	if r := carol.run(dest, "git", "fetch"); r.code != 0 {
		t.Fatalf("fetch with nothing new while the statement is fresh:\n%s", r)
	}
	waitPast(t, signed.Add(24*time.Hour), time.Now())
	r := carol.run(dest, "git", "fetch")
	if r.code == 0 || !containsAll(r.stderr, "stale", signed.Format(time.RFC3339), "24h0m0s") {
		t.Fatalf("fetch with nothing new after the statement went stale: want a refusal naming it:\n%s", r)
	}
}
