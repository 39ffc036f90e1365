package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/freshness"
)

// plantOnServer sets ref in the server repository behind the hook's back:
// what a hostile mirror or a compromised host does.
func (f *freshSetup) plantOnServer(t *testing.T, ref, value string) {
	t.Helper()
	f.srv.admin.git(f.repo, "-c", "core.hooksPath=/dev/null", "update-ref", ref, value)
}

// TestFreshnessUnverifiedStatementKept: a mirror plants a statement
// dated 2099 and signed by a key nobody trusts while the policy sets no
// freshness. A clone must not keep it: once freshness is turned on, a
// clone that kept it would prefer it (newer) over the server's genuine
// statement, and verify would fail for ever. Also a garbage statement
// planted in the clone itself is replaced by the server's verified one.
func TestFreshnessUnverifiedStatementKept(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("mirror.git", true)
	alice := newUser(t, "alice")
	dir := benchRepo(t, alice, "one", url, true)
	f := &freshSetup{srv: srv, repo: repo, url: url, alice: alice, dir: dir, srvKey: srv.admin.sb.NewKey("timestamp", "ed25519")}
	evil := srv.admin.sb.NewKey("evil", "ed25519")
	future := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	garbage := forgeStatement(t, repo, evil, alice.git(repo, "rev-parse", "refs/secure/rsl"), future, 24*time.Hour)
	f.plantOnServer(t, freshness.Ref, garbage)

	bob := newUser(t, "bob")
	bdir := filepath.Join(bob.sb.Home, "c")
	if r := bob.run(bob.sb.Home, "git", "secure", "clone", url, bdir); r.code != 0 {
		t.Fatalf("clone:\n%s", r)
	}
	if got := bob.refValue(bdir, freshness.Ref); got != "" {
		t.Errorf("the clone adopted an unverified statement (%s) while the policy sets no freshness", got)
	}
	// The mirror stops serving it; freshness is turned on and signed.
	srv.admin.git(repo, "-c", "core.hooksPath=/dev/null", "update-ref", "-d", freshness.Ref)
	alice.secure(dir, "policy", "set-freshness", "--key", f.srvKey.Public, "--max-age", "24h")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "origin", "main")
	f.signOnServer(t, time.Now())
	bob.git(bdir, "fetch", "-q", "origin")
	if v := bob.run(bdir, "git", "secure", "verify"); v.code != 0 {
		t.Errorf("verify after freshness was turned on (a kept garbage statement?):\n%s", v)
	}
	// Garbage planted in the clone itself loses to the server's verified
	// statement at the next fetch.
	bob.git(bdir, "fetch", "-q", "--no-tags", "file://"+repo, "+"+garbage+":refs/tmp/g")
	bob.git(bdir, "-c", "core.hooksPath=/dev/null", "update-ref", freshness.Ref, garbage)
	if v := bob.run(bdir, "git", "secure", "verify"); v.code != 1 || !containsAll(v.stderr, "not signed by enough freshness keys") {
		t.Errorf("verify with the planted statement:\n%s", v)
	}
	bob.git(bdir, "fetch", "-q", "origin")
	if got, want := bob.refValue(bdir, freshness.Ref), alice.git(repo, "rev-parse", freshness.Ref); got != want {
		t.Errorf("the clone kept its unverified statement %s over the server's %s", got, want)
	}
	if v := bob.run(bdir, "git", "secure", "verify"); v.code != 0 {
		t.Errorf("verify after the fetch:\n%s", v)
	}
	// So does a genuinely signed statement dated in the future (a key
	// holder's mistake): kept, it would beat every statement until 2099.
	ahead := forgeStatement(t, bdir, f.srvKey, bob.git(bdir, "rev-parse", "refs/secure/rsl"), future, 24*time.Hour)
	bob.git(bdir, "-c", "core.hooksPath=/dev/null", "update-ref", freshness.Ref, ahead)
	alice.commit(dir, "n.txt", "next\n")
	alice.git(dir, "push", "-q", "origin", "main")
	f.signOnServer(t, time.Now())
	bob.git(bdir, "fetch", "-q", "origin")
	if got, want := bob.refValue(bdir, freshness.Ref), alice.git(repo, "rev-parse", freshness.Ref); got != want {
		t.Errorf("the clone kept its future-dated statement %s over the server's %s", got, want)
	}
}

// TestFreshnessKeyGainsEntryPower: after set-freshness, a rules change
// that gives the (online) freshness key to a person, or to a root role,
// is refused with an error that says why: the server's key would then
// sign entries.
func TestFreshnessKeyGainsEntryPower(t *testing.T) {
	f := newFreshSetup(t)
	r := f.alice.run(f.dir, "git", "secure", "policy", "add-person", "bot", "--key", f.srvKey.Public)
	if r.code == 0 || !containsAll(r.stderr, "freshness key", "also a person's key") {
		t.Errorf("add-person with the freshness key:\n%s", r)
	}
	if out := f.alice.secure(f.dir, "policy", "list"); containsAny(out, "bot") {
		t.Errorf("the refused person was staged:\n%s", out)
	}
	r = f.alice.run(f.dir, "git", "secure", "policy", "set-freshness", "--key", f.srvKey.Public, "--key", f.alice.key.Public, "--threshold", "2", "--max-age", "24h")
	if r.code == 0 || !containsAll(r.stderr, "above 1 is not supported") {
		t.Errorf("set-freshness with threshold 2:\n%s", r)
	}
}

// TestFreshnessStalePushThrough: the server's timestamp job stopped two
// days ago. A clone whose metadata is behind must fetch it before a push
// (the helper's push-time sync): that sync does not fail on freshness,
// it warns naming the stale statement, and the push lands. A plain fetch
// and git secure verify still refuse the stale state.
func TestFreshnessStalePushThrough(t *testing.T) {
	f := newFreshSetup(t)
	now := time.Now().UTC().Truncate(time.Second)
	f.signOnServer(t, now.Add(-time.Hour))
	dir2 := filepath.Join(f.alice.sb.Home, "second")
	if r := f.alice.run(f.alice.sb.Home, "git", "secure", "clone", f.url, dir2); r.code != 0 {
		t.Fatalf("second clone:\n%s", r)
	}
	f.alice.configure(dir2)
	// Someone else pushes; two days pass without a new statement.
	f.alice.commit(f.dir, "f.txt", "newer\n")
	f.alice.git(f.dir, "push", "-q", "origin", "main")
	tip := f.alice.git(f.repo, "rev-parse", "refs/secure/rsl")
	f.plantOnServer(t, freshness.Ref, forgeStatement(t, f.repo, f.srvKey, tip, now.Add(-48*time.Hour), 24*time.Hour))

	f.alice.git(dir2, "checkout", "-q", "-b", "feature")
	c := f.alice.commit(dir2, "g.txt", "feature\n")
	p := f.alice.run(dir2, "git", "push", "origin", "feature")
	if p.code != 0 {
		t.Fatalf("a push was blocked by the stale statement:\n%s", p)
	}
	if !containsAll(p.stderr, "warning:", freshness.Ref, "stale", "pushing anyway") {
		t.Errorf("the push did not warn about the stale statement:\n%s", p)
	}
	if got := f.alice.git(f.repo, "rev-parse", "refs/heads/feature"); got != c {
		t.Errorf("server feature = %s, want %s", got, c)
	}
	if r := f.alice.run(dir2, "git", "fetch", "origin"); r.code == 0 || !containsAll(r.stderr, "stale") {
		t.Errorf("a plain fetch accepted the stale state:\n%s", r)
	}
	if v := f.srv.admin.run(f.repo, "git", "secure", "verify"); v.code != 1 || !containsAll(v.stderr, "stale state", freshness.Ref) {
		t.Errorf("verify accepted the stale state:\n%s", v)
	}
	if r := f.freshClone(t, "newcomer"); r.code == 0 || !containsAll(r.stderr, "stale") {
		t.Errorf("a clone accepted the stale state:\n%s", r)
	}
}

// TestFreshnessSignerFutureStatement: timestamp sign refuses a --time
// beyond now plus the skew (it would stop the signer until that date),
// and replaces, with a warning, a stored statement that is dated in the
// future or does not verify, instead of refusing to sign until then.
func TestFreshnessSignerFutureStatement(t *testing.T) {
	f := newFreshSetup(t)
	r := f.srv.admin.run(f.repo, "git", "secure", "timestamp", "sign", "--key", f.srvKey.Private, "--time", "2030-01-01T00:00:00Z")
	if r.code != 2 || !containsAll(r.stderr, "2030-01-01T00:00:00Z", "after now", "5m0s") {
		t.Errorf("timestamp sign --time 2030:\n%s", r)
	}
	if got := f.alice.refValue(f.repo, freshness.Ref); got != "" {
		t.Errorf("a refused sign stored %s", got)
	}
	tip := f.alice.git(f.repo, "rev-parse", "refs/secure/rsl")
	for _, tc := range []struct {
		name string
		stmt string
		want string
	}{
		{"future", forgeStatement(t, f.repo, f.srvKey, tip, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), 24*time.Hour), "in the future"},
		{"bad key", forgeStatement(t, f.repo, f.alice.key, tip, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), 24*time.Hour), "does not verify"},
	} {
		f.plantOnServer(t, freshness.Ref, tc.stmt)
		r := f.srv.admin.run(f.repo, "git", "secure", "timestamp", "sign", "--key", f.srvKey.Private)
		if r.code != 0 || !containsAll(r.stderr, "warning:", "replacing the stored statement "+tc.stmt, tc.want) {
			t.Errorf("%s: timestamp sign over the stored statement:\n%s", tc.name, r)
		}
		if v := f.srv.admin.run(f.repo, "git", "secure", "verify"); v.code != 0 {
			t.Errorf("%s: verify after the signer replaced the statement:\n%s", tc.name, v)
		}
		// A bot signing elsewhere may replace it by a push as well.
		f.plantOnServer(t, freshness.Ref, tc.stmt)
		bot := forgeStatement(t, f.dir, f.srvKey, tip, time.Now(), 24*time.Hour)
		f.alice.git(f.dir, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/tmp/bot", bot)
		if r := f.alice.pushDirect(f.dir, f.url, f.url, "+refs/tmp/bot:"+freshness.Ref); r.code != 0 {
			t.Errorf("%s: a bot's fresh statement pushed over it:\n%s", tc.name, r)
		}
	}
}

// TestFreshnessRestoredFromBackup: the server is restored from its own
// backup, statement included. The signer's state file (beside its key)
// remembers the newer log tip it vouched for: it refuses to present the
// old state as current, saying what happened and how to override; with
// --allow-restored it signs.
func TestFreshnessRestoredFromBackup(t *testing.T) {
	f := newFreshSetup(t)
	f.signOnServer(t, time.Now().Add(-time.Hour))
	backup := f.repo + ".backup"
	if out, err := exec.Command("cp", "-a", f.repo, backup).CombinedOutput(); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	f.srv.admin.git(f.repo, "config", "secure.timestampKey", f.srvKey.Private)
	f.alice.commit(f.dir, "f.txt", "newer\n")
	f.alice.git(f.dir, "push", "-q", "origin", "main")
	newTip := f.alice.git(f.repo, "rev-parse", "refs/secure/rsl")
	if !containsAll(readFile(t, f.srvKey.Private+".state"), newTip) {
		t.Fatalf("the state file does not record the signed tip %s", newTip)
	}
	if err := os.Rename(f.repo, f.repo+".lost"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(backup, f.repo); err != nil {
		t.Fatal(err)
	}
	r := f.srv.admin.run(f.repo, "git", "secure", "timestamp", "sign", "--key", f.srvKey.Private)
	if r.code != 1 || !containsAll(r.stderr, newTip, "does not contain", "backup", "--allow-restored") {
		t.Errorf("timestamp sign of a restored repository:\n%s", r)
	}
	// A state file that cannot be read fails closed.
	state := f.srvKey.Private + ".state"
	saved := readFile(t, state)
	if err := os.WriteFile(state, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := f.srv.admin.run(f.repo, "git", "secure", "timestamp", "sign", "--key", f.srvKey.Private, "--allow-restored"); r.code == 0 || !containsAll(r.stderr, "timestamp state", state, "move it away") {
		t.Errorf("timestamp sign with a corrupt state file:\n%s", r)
	}
	if err := os.WriteFile(state, []byte(saved), 0o600); err != nil {
		t.Fatal(err)
	}
	before := f.alice.git(f.repo, "rev-parse", freshness.Ref)
	r = f.srv.admin.run(f.repo, "git", "secure", "timestamp", "sign", "--key", f.srvKey.Private, "--allow-restored")
	if r.code != 0 {
		t.Fatalf("timestamp sign --allow-restored:\n%s", r)
	}
	if after := f.alice.git(f.repo, "rev-parse", freshness.Ref); after == before {
		t.Errorf("--allow-restored did not sign")
	}
	if v := f.srv.admin.run(f.repo, "git", "secure", "verify"); v.code != 0 {
		t.Errorf("verify after the deliberate restore:\n%s", v)
	}
}

// TestFreshnessStatementWrapper: a pusher re-wraps a genuine statement in
// a commit of its own (another author, a 512 KiB message): the signatures
// still verify, but the server refuses the commit, and verify refuses it
// planted behind the server's back, naming the wrapper format.
func TestFreshnessStatementWrapper(t *testing.T) {
	f := newFreshSetup(t)
	f.signOnServer(t, time.Now().Add(-time.Hour))
	good := f.alice.git(f.repo, "rev-parse", freshness.Ref)
	f.alice.git(f.dir, "fetch", "-q", "--no-tags", "file://"+f.repo, "+"+freshness.Ref+":refs/tmp/good")
	tree := f.alice.git(f.dir, "rev-parse", good+"^{tree}")
	big := filepath.Join(f.alice.sb.Home, "msg")
	if err := os.WriteFile(big, bytes.Repeat([]byte("x"), 512<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	rewrapped := f.alice.git(f.dir, "commit-tree", tree, "-F", big)
	f.alice.git(f.dir, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/tmp/stmt", rewrapped)
	r := f.alice.pushDirect(f.dir, f.url, f.url, "+refs/tmp/stmt:"+freshness.Ref)
	if r.code == 0 || !containsAll(r.stderr, "malformed statement", "exactly the one git secure timestamp sign writes") {
		t.Errorf("the server accepted a re-wrapped statement:\n%s", r)
	}
	if got := f.alice.git(f.repo, "rev-parse", freshness.Ref); got != good {
		t.Errorf("the server's statement moved to %s", got)
	}
	f.srv.admin.git(f.repo, "fetch", "-q", "--no-tags", "file://"+f.dir, "+refs/tmp/stmt:refs/tmp/stmt")
	f.srv.admin.git(f.repo, "-c", "core.hooksPath=/dev/null", "update-ref", "-d", "refs/tmp/stmt")
	f.plantOnServer(t, freshness.Ref, rewrapped)
	if v := f.srv.admin.run(f.repo, "git", "secure", "verify"); v.code != 1 || !containsAll(v.stderr, "stale state", "exactly the one") {
		t.Errorf("verify with a re-wrapped statement:\n%s", v)
	}
}

// TestFreshnessRequiredByClone: a server put back to a snapshot from
// before the project set freshness serves a policy that asks for none: a
// newcomer's plain clone accepts it (the documented limit), a clone with
// --require-freshness refuses it, naming the setting; a clone of the live
// server with the flag works, and its fetch and verify refuse a state
// without freshness too.
func TestFreshnessRequiredByClone(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("req.git", true)
	alice := newUser(t, "alice")
	dir := benchRepo(t, alice, "one", url, true)
	snap := repo + ".before"
	if out, err := exec.Command("cp", "-a", repo, snap).CombinedOutput(); err != nil {
		t.Fatalf("snapshot: %v\n%s", err, out)
	}
	srvKey := srv.admin.sb.NewKey("timestamp", "ed25519")
	alice.secure(dir, "policy", "set-freshness", "--key", srvKey.Public, "--max-age", "24h")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "origin", "main")
	srv.admin.secure(repo, "timestamp", "sign", "--key", srvKey.Private)

	bob := newUser(t, "bob")
	bdir := filepath.Join(bob.sb.Home, "live")
	if r := bob.run(bob.sb.Home, "git", "secure", "clone", "--require-freshness", url, bdir); r.code != 0 {
		t.Fatalf("clone --require-freshness of the live server:\n%s", r)
	}
	if got := bob.git(bdir, "config", "secure.requireFreshness"); got != "true" {
		t.Errorf("the clone's secure.requireFreshness = %q", got)
	}
	if v := bob.run(bdir, "git", "secure", "verify"); v.code != 0 {
		t.Errorf("verify in the clone:\n%s", v)
	}

	// The server is put back to the snapshot from before freshness.
	if err := os.Rename(repo, repo+".live"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(snap, repo); err != nil {
		t.Fatal(err)
	}
	carol := newUser(t, "carol")
	if r := carol.run(carol.sb.Home, "git", "secure", "clone", url, filepath.Join(carol.sb.Home, "plain")); r.code != 0 {
		t.Errorf("a plain clone of the old snapshot (the documented limit):\n%s", r)
	}
	r := carol.run(carol.sb.Home, "git", "secure", "clone", "--require-freshness", url, filepath.Join(carol.sb.Home, "strict"))
	if r.code == 0 || !containsAll(r.stderr, "requires freshness", "secure.requireFreshness", "sets none") {
		t.Errorf("clone --require-freshness of a snapshot from before freshness:\n%s", r)
	}
	// The setting in an existing clone: verify and fetch refuse too.
	cdir := filepath.Join(carol.sb.Home, "plain")
	carol.git(cdir, "config", "secure.requireFreshness", "true")
	if v := carol.run(cdir, "git", "secure", "verify"); v.code != 1 || !containsAll(v.stderr, "stale state", "requires freshness") {
		t.Errorf("verify with secure.requireFreshness:\n%s", v)
	}
	if r := carol.run(cdir, "git", "fetch", "origin"); r.code == 0 || !containsAll(r.stderr, "requires freshness") {
		t.Errorf("fetch with secure.requireFreshness:\n%s", r)
	}
}
