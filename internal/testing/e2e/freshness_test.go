package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/freshness"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// freshSetup is an enforcing server whose policy requires a freshness
// statement at most 24h old, signed by the server's key; alice holds the
// root and main. The server signs nothing by itself yet.
type freshSetup struct {
	srv       *server
	repo, url string
	alice     *user
	dir       string // alice's clone
	srvKey    testutil.Key
}

func newFreshSetup(t *testing.T) *freshSetup {
	t.Helper()
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("fresh.git", true)
	alice := newUser(t, "alice")
	dir := benchRepo(t, alice, "one", url, true)
	srvKey := srv.admin.sb.NewKey("timestamp", "ed25519")
	alice.secure(dir, "policy", "set-freshness", "--key", srvKey.Public, "--max-age", "24h")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "origin", "main")
	if out := alice.secure(dir, "policy", "list"); !containsAll(out, "freshness: statements of the log tip at most 24h0m0s old, signed by 1 of SHA256:") {
		t.Errorf("policy list does not show the freshness setting:\n%s", out)
	}
	return &freshSetup{srv: srv, repo: repo, url: url, alice: alice, dir: dir, srvKey: srvKey}
}

// signOnServer runs git secure timestamp sign in the server repository,
// as its cron job does, dated at.
func (f *freshSetup) signOnServer(t *testing.T, at time.Time) {
	t.Helper()
	f.srv.admin.secure(f.repo, "timestamp", "sign", "--key", f.srvKey.Private, "--time", at.UTC().Format(time.RFC3339))
}

// freshClone clones the server as a newcomer does: verified before
// anything is checked out.
func (f *freshSetup) freshClone(t *testing.T, name string) result {
	t.Helper()
	bob := newUser(t, "bob")
	return bob.run(bob.sb.Home, "git", "secure", "clone", f.url, filepath.Join(bob.sb.Home, name))
}

// TestFreshnessFreeze: a server replaced by an old copy of itself after
// newer pushes. Without freshness a newcomer's clone verifies the old
// state (every entry in it is genuinely signed); with it, the clone is
// refused once the old copy's newest statement is older than the max age,
// naming the statement's time, the limit and the likely cause. A mirror
// that serves the new statement with the old log is refused at once.
func TestFreshnessFreeze(t *testing.T) {
	f := newFreshSetup(t)
	old := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Second)
	f.signOnServer(t, old) // the snapshot is two days old
	snap := f.repo + ".snapshot"
	if out, err := exec.Command("cp", "-a", f.repo, snap).CombinedOutput(); err != nil {
		t.Fatalf("snapshot: %v\n%s", err, out)
	}
	// From now on the server refreshes the statement after each push.
	f.srv.admin.git(f.repo, "config", "secure.timestampKey", f.srvKey.Private)
	c := f.alice.commit(f.dir, "f.txt", "newer\n")
	if r := f.alice.run(f.dir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("push:\n%s", r)
	}
	if got := f.alice.git(f.repo, "rev-parse", "main"); got != c {
		t.Fatalf("server main = %s, want %s", got, c)
	}
	// The legitimate flow: the live server's statement is fresh, and the
	// clone keeps it, so that verify in the clone judges it too.
	carol := newUser(t, "carol")
	cdir := filepath.Join(carol.sb.Home, "live")
	if r := carol.run(carol.sb.Home, "git", "secure", "clone", f.url, cdir); r.code != 0 {
		t.Fatalf("a fresh clone of the live server was refused:\n%s", r)
	}
	if got, want := carol.refValue(cdir, freshness.Ref), f.alice.git(f.repo, "rev-parse", freshness.Ref); got != want {
		t.Errorf("the clone's %s = %q, want the server's %s", freshness.Ref, got, want)
	}
	if v := carol.run(cdir, "git", "secure", "verify"); v.code != 0 {
		t.Errorf("verify in the fresh clone:\n%s", v)
	}
	// Three days later, without a fetch, the clone's copy is stale.
	later := time.Now().Add(72 * time.Hour).UTC().Format(time.RFC3339)
	if v := carol.run(cdir, "git", "secure", "verify", "--now", later); v.code != 1 || !containsAll(v.stderr, "stale state", "git fetch first") {
		t.Errorf("verify of a clone's stale statement:\n%s", v)
	}
	if r := f.srv.admin.run(f.repo, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("verify on the live server:\n%s", r)
	}
	newStmt := f.alice.git(f.repo, "rev-parse", freshness.Ref)

	// The server is put back to the two-day-old snapshot.
	live := f.repo + ".live"
	if err := os.Rename(f.repo, live); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(snap, f.repo); err != nil {
		t.Fatal(err)
	}
	r := f.freshClone(t, "frozen")
	if r.code == 0 {
		t.Fatalf("a fresh clone accepted a server frozen for two days:\n%s", r)
	}
	if !containsAll(r.stderr, "stale", old.Format(time.RFC3339), "24h0m0s", "frozen") {
		t.Errorf("the refusal does not name the statement's time, the limit and the cause:\n%s", r)
	}
	v := f.srv.admin.run(f.repo, "git", "secure", "verify")
	if v.code != 1 || !containsAll(v.stderr, "stale state", freshness.Ref, old.Format(time.RFC3339)) {
		t.Errorf("verify of the frozen server:\n%s", v)
	}
	// An audit of the past state says so explicitly.
	if v := f.srv.admin.run(f.repo, "git", "secure", "verify", "--no-freshness"); v.code != 0 {
		t.Errorf("verify --no-freshness of the frozen state:\n%s", v)
	}
	if v := f.srv.admin.run(f.repo, "git", "secure", "verify", "--now", old.Add(time.Hour).Format(time.RFC3339)); v.code != 0 {
		t.Errorf("verify --now (as of the snapshot's time):\n%s", v)
	}

	// A mirror that copies the new statement over the old log: the
	// statement vouches for a log this one does not contain.
	f.srv.admin.git(f.repo, "fetch", "-q", "--no-tags", "file://"+live, "+"+freshness.Ref+":refs/tmp")
	f.srv.admin.git(f.repo, "-c", "core.hooksPath=/dev/null", "update-ref", "-d", "refs/tmp")
	f.srv.admin.git(f.repo, "-c", "core.hooksPath=/dev/null", "update-ref", freshness.Ref, newStmt)
	r = f.freshClone(t, "mirror")
	if r.code == 0 || !containsAll(r.stderr, "does not contain", "went back") {
		t.Errorf("a clone of an old log with a new statement:\n%s", r)
	}
}

// forgeStatement writes into the repository dir a statement of tip at
// time at signed by key, and returns the statement commit.
func forgeStatement(t *testing.T, dir string, key testutil.Key, tip string, at time.Time, maxAge time.Duration) string {
	t.Helper()
	g, err := gitrepo.OpenWithEnv(dir, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s, err := sign.LoadSigner(sign.KeySpec{File: key.Private})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := gitrepo.ParseHash(tip)
	if err != nil {
		t.Fatal(err)
	}
	st := freshness.Statement{Tip: h, Time: at.UTC().Truncate(time.Second), Expires: at.UTC().Truncate(time.Second).Add(maxAge)}
	data, err := freshness.Sign(st, s)
	if err != nil {
		t.Fatal(err)
	}
	c, err := freshness.Write(g, data, st)
	if err != nil {
		t.Fatal(err)
	}
	return c.String()
}

// TestFreshnessForgedAndReplayed: a statement signed by a key the policy
// does not name (here a person's key: alice may record entries but not
// vouch for freshness) is refused by the server and by verify; an old,
// genuinely signed statement pushed over a newer one (a replay, to make a
// frozen server look fresh again later) is refused by the server; a fresh
// one by the freshness key from elsewhere (a bot) is accepted.
func TestFreshnessForgedAndReplayed(t *testing.T) {
	f := newFreshSetup(t)
	now := time.Now().UTC().Truncate(time.Second)
	f.signOnServer(t, now.Add(-time.Hour))
	saved := f.alice.git(f.repo, "rev-parse", freshness.Ref)
	f.signOnServer(t, now.Add(-time.Minute))
	tip := f.alice.git(f.repo, "rev-parse", "refs/secure/rsl")
	f.alice.git(f.dir, "fetch", "-q", "origin")

	push := func(commit string) result {
		f.alice.git(f.dir, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/tmp/stmt", commit)
		return f.alice.pushDirect(f.dir, f.url, f.url, "+refs/tmp/stmt:"+freshness.Ref)
	}
	forged := forgeStatement(t, f.dir, f.alice.key, tip, now, 24*time.Hour)
	if r := push(forged); r.code == 0 || !containsAll(r.stderr, "not signed by enough freshness keys", "0 valid signature") {
		t.Errorf("the server accepted a statement by a key the policy does not name:\n%s", r)
	}
	// The same forgery planted behind the server's back fails verify.
	f.srv.admin.git(f.repo, "fetch", "-q", "--no-tags", "file://"+f.dir, "+refs/tmp/stmt:refs/tmp/stmt")
	f.srv.admin.git(f.repo, "-c", "core.hooksPath=/dev/null", "update-ref", "-d", "refs/tmp/stmt")
	good := f.alice.git(f.repo, "rev-parse", freshness.Ref)
	f.srv.admin.git(f.repo, "-c", "core.hooksPath=/dev/null", "update-ref", freshness.Ref, forged)
	if v := f.srv.admin.run(f.repo, "git", "secure", "verify"); v.code != 1 || !containsAll(v.stderr, "stale state", "not signed by enough freshness keys") {
		t.Errorf("verify with a forged statement:\n%s", v)
	}
	f.srv.admin.git(f.repo, "-c", "core.hooksPath=/dev/null", "update-ref", freshness.Ref, good)

	// A replay of the older statement (fetched when it was current).
	f.alice.git(f.dir, "fetch", "-q", "--no-tags", "file://"+f.repo, "+"+saved+":refs/tmp/old")
	if r := push(saved); r.code == 0 || !containsAll(r.stderr, "older than the one the server holds", "replayed") {
		t.Errorf("the server accepted a replayed older statement:\n%s", r)
	}
	if got := f.alice.git(f.repo, "rev-parse", freshness.Ref); got != good {
		t.Errorf("the server's statement moved to %s", got)
	}
	// A bot holding the freshness key signs elsewhere and pushes: accepted.
	bot := forgeStatement(t, f.dir, f.srvKey, tip, now, 24*time.Hour)
	if r := push(bot); r.code != 0 {
		t.Errorf("the server refused a fresh statement by the freshness key:\n%s", r)
	}
	// Garbage in its place (a blob, a commit of another shape) is refused.
	blob := f.alice.must(f.dir, "sh", "-c", "echo not a statement | git hash-object -w --stdin")
	if r := push(blob); r.code == 0 || !containsAll(r.stderr, "malformed statement") {
		t.Errorf("the server accepted a blob as the statement:\n%s", r)
	}
	if r := push(f.alice.rev(f.dir, "main")); r.code == 0 || !containsAll(r.stderr, "malformed statement") {
		t.Errorf("the server accepted a source commit as the statement:\n%s", r)
	}
	// The signing command refuses a key the role does not list, and a
	// time before the stored statement's.
	if r := f.alice.run(f.dir, "git", "secure", "timestamp", "sign", "--key", f.alice.key.Private); r.code != 1 || !containsAll(r.stderr, "is not a freshness key") {
		t.Errorf("timestamp sign with a person's key:\n%s", r)
	}
	if r := f.srv.admin.run(f.repo, "git", "secure", "timestamp", "sign", "--key", f.srvKey.Private, "--time", now.Add(-2*time.Hour).Format(time.RFC3339)); r.code != 1 || !containsAll(r.stderr, "already holds a statement made at") {
		t.Errorf("timestamp sign dated before the stored statement:\n%s", r)
	}
	// Through git-remote-secure the push is refused, not reported done.
	if r := f.alice.run(f.dir, "git", "push", "origin", "+refs/tmp/stmt:"+freshness.Ref); r.code == 0 || !containsAll(r.stderr, "does not carry "+freshness.Ref) {
		t.Errorf("a push of the statement through the helper:\n%s", r)
	}
	// Nobody may delete it: every client would fail closed.
	if r := f.alice.pushDirect(f.dir, f.url, f.url, ":"+freshness.Ref); r.code == 0 || !containsAll(r.stderr, "cannot be deleted") {
		t.Errorf("the server let the statement be deleted:\n%s", r)
	}
}

// TestFreshnessRequiredMissing: the policy requires freshness and the
// server holds no statement: clients fail closed, saying what is missing.
// A push is still accepted (a stopped timestamp job must not jam the
// server), also when the server's key cannot be loaded: it says why.
func TestFreshnessRequiredMissing(t *testing.T) {
	f := newFreshSetup(t)
	r := f.freshClone(t, "none")
	if r.code == 0 || !containsAll(r.stderr, "no freshness statement", freshness.Ref) {
		t.Errorf("a clone without any statement:\n%s", r)
	}
	f.srv.admin.git(f.repo, "config", "secure.timestampKey", filepath.Join(f.srv.admin.sb.Home, "no-such-key"))
	f.alice.commit(f.dir, "g.txt", "more\n")
	p := f.alice.run(f.dir, "git", "push", "origin", "main")
	if p.code != 0 {
		t.Fatalf("a push was refused because the server could not sign:\n%s", p)
	}
	if !containsAll(p.stderr, "freshness statement not refreshed") {
		t.Errorf("the server did not say it could not sign:\n%s", p)
	}
	// With a key, the next push signs, and clients accept the state.
	f.srv.admin.git(f.repo, "config", "secure.timestampKey", f.srvKey.Private)
	f.alice.commit(f.dir, "h.txt", "more\n")
	f.alice.git(f.dir, "push", "-q", "origin", "main")
	if r := f.freshClone(t, "signed"); r.code != 0 {
		t.Errorf("a clone after the server signed:\n%s", r)
	}
	// Removing freshness (a root change) turns the check off again.
	f.alice.git(f.dir, "fetch", "-q", "origin")
	f.alice.secure(f.dir, "policy", "remove-freshness")
	f.alice.secure(f.dir, "policy", "apply")
	f.alice.git(f.dir, "push", "-q", "origin", "main")
	if v := f.srv.admin.run(f.repo, "git", "secure", "verify", "--now", time.Now().Add(72*time.Hour).UTC().Format(time.RFC3339)); v.code != 0 {
		t.Errorf("verify after remove-freshness still judges freshness:\n%s", v)
	}
}

// TestFreshnessUnset: without the setting nothing changes: no statement
// is needed, and none is accepted by the server.
func TestFreshnessUnset(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("plain.git", true)
	alice := newUser(t, "alice")
	dir := benchRepo(t, alice, "one", url, true)
	bob := newUser(t, "bob")
	if r := bob.run(bob.sb.Home, "git", "secure", "clone", url, filepath.Join(bob.sb.Home, "c")); r.code != 0 {
		t.Fatalf("clone without freshness:\n%s", r)
	}
	if v := srv.admin.run(repo, "git", "secure", "verify"); v.code != 0 {
		t.Fatalf("verify without freshness:\n%s", v)
	}
	k := alice.sb.NewKey("ts", "ed25519")
	stmt := forgeStatement(t, dir, k, alice.git(dir, "rev-parse", "refs/secure/rsl"), time.Now(), time.Hour)
	alice.git(dir, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/tmp/stmt", stmt)
	if r := alice.pushDirect(dir, url, url, "+refs/tmp/stmt:"+freshness.Ref); r.code == 0 || !containsAll(r.stderr, "sets no freshness") {
		t.Errorf("the server accepted a statement the policy does not ask for:\n%s", r)
	}
	if r := alice.run(dir, "git", "secure", "timestamp", "sign", "--key", k.Private); r.code != 1 || !containsAll(r.stderr, "sets no freshness") {
		t.Errorf("timestamp sign without the setting:\n%s", r)
	}
}
