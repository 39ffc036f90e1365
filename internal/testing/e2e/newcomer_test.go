package e2e

import (
	"strconv"
	"strings"
	"testing"
)

// A server made as git's manual says, git init --bare on a machine without
// init.defaultBranch, keeps HEAD on master; the project pushes main. A
// clone through git-secure checked out nothing and warned that "the branch
// checked out, master, is protected by no rule", which is not what
// happened: it says now that the remote's HEAD names a branch the remote
// does not have, which branch to check out, and how the server fixes it.
func TestCloneRemoteHeadNamesNoBranch(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("master.git", true)
	srv.admin.git(repo, "symbolic-ref", "HEAD", "refs/heads/master") // git init --bare without -b, default branch master
	alice, bob := newUser(t, "alice"), newUser(t, "bob")
	adir := alice.sb.InitRepo("project", 2)
	alice.configure(adir)
	alice.secure(adir, "init")
	alice.secure(adir, "policy", "add-person", "alice", "--key", alice.key.Public)
	alice.secure(adir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice")
	alice.secure(adir, "policy", "apply")
	alice.git(adir, "remote", "add", "origin", url)
	alice.git(adir, "push", "-q", "-u", "origin", "main")

	// bob's HOME is fresh: no init.defaultBranch, which git clone would
	// otherwise check out when the remote's HEAD names nothing.
	bob.git(bob.sb.Home, "config", "--global", "--unset", "init.defaultBranch")
	bdir := bob.path("project")
	r := bob.run(bob.sb.Home, "git", "secure", "clone", url, bdir)
	if r.code != 0 {
		t.Fatalf("clone of a server whose HEAD names master:\n%s", r)
	}
	for _, want := range []string{
		"the remote's HEAD names branch master, which the remote does not have",
		"git init --bare without -b",
		"checked out main instead, a branch the policy protects (protected: main)",
		"in its repository: git symbolic-ref HEAD refs/heads/main",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the clone does not say %q:\n%s", want, r)
		}
	}
	if strings.Contains(r.stderr, "protected by no rule") {
		t.Errorf("the clone calls the unborn master a checked-out unprotected branch:\n%s", r)
	}
	// main is checked out (nothing was, before session 14).
	if got, want := bob.rev(bdir, "HEAD"), srv.admin.rev(repo, "refs/heads/main"); got != want {
		t.Errorf("HEAD = %s, want the server's main %s", got, want)
	}
	bob.secure(bdir, "verify")

	// The server's fix: clones check out main, without a warning.
	srv.admin.git(repo, "symbolic-ref", "HEAD", "refs/heads/main")
	cdir := bob.path("again")
	r = bob.run(bob.sb.Home, "git", "secure", "clone", url, cdir)
	if r.code != 0 || strings.Contains(r.stderr, "warning:") {
		t.Fatalf("clone after the server's HEAD names main:\n%s", r)
	}
	if got := bob.git(cdir, "symbolic-ref", "--short", "HEAD"); got != "main" {
		t.Errorf("the clone checked out %s, want main", got)
	}
}

// git secure init in a clone of a project's upstream (a plain git server
// the team only fetches from) routed origin through git-remote-secure
// (remote.origin.vcs = secure): every fetch from the upstream then said
// "the remote has no git-secure metadata yet; push to set it up", advice
// to publish the log to someone else's repository, and verified nothing.
// No remote can have the log init just made: init leaves fetches plain
// and routes a remote's fetches at its first push through git-secure,
// which sends the log there.
func TestInitLeavesUpstreamFetchesPlain(t *testing.T) {
	srv := startServer(t, trFile)
	upstream, upURL := srv.newRepo("upstream.git", false)
	_, mineURL := srv.newRepo("mine.git", true)
	maint, alice := newUser(t, "maint"), newUser(t, "alice")
	seed := maint.sb.InitRepo("seed", 2)
	maint.git(seed, "push", "-q", upstream, "main")

	adir := alice.path("project")
	alice.git(alice.sb.Home, "clone", "-q", upURL, adir)
	alice.configure(adir)
	out := alice.secure(adir, "init")
	if !strings.Contains(out, "fetches from origin stay plain git: no remote has this new log yet; your first git push to one sends it") {
		t.Errorf("init does not say what it did with origin:\n%s", out)
	}
	if strings.Contains(out, "now routed") {
		t.Errorf("init routed a remote that has no log:\n%s", out)
	}
	if r := alice.run(adir, "git", "config", "remote.origin.vcs"); r.code == 0 {
		t.Fatalf("init set remote.origin.vcs = %q on the upstream", r.stdout)
	}

	// The upstream moves; alice pulls it with plain git, no advice to
	// push her log there.
	maint.commit(seed, "up.txt", "upstream change\n")
	maint.git(seed, "push", "-q", upstream, "main")
	r := alice.run(adir, "git", "pull", "-q", "origin", "main")
	if r.code != 0 {
		t.Fatalf("git pull from the upstream after init:\n%s", r)
	}
	if strings.Contains(r.stderr, "push to set it up") || strings.Contains(r.stderr, "git-secure") {
		t.Errorf("a pull from the upstream speaks of git-secure:\n%s", r)
	}

	// Her own server: the first push sends the log and routes its fetches.
	alice.secure(adir, "policy", "add-person", "alice", "--key", alice.key.Public)
	alice.secure(adir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice")
	alice.secure(adir, "policy", "apply")
	alice.git(adir, "remote", "add", "mine", mineURL)
	r = alice.run(adir, "git", "push", "-u", "mine", "main")
	if r.code != 0 || !strings.Contains(r.stderr, `remote "mine" is now routed through git-remote-secure for fetches too`) {
		t.Fatalf("the first push to her own server:\n%s", r)
	}
	if v := alice.git(adir, "config", "remote.mine.vcs"); v != "secure" {
		t.Errorf("remote.mine.vcs = %q after the first push, want secure", v)
	}
	if r := alice.run(adir, "git", "config", "remote.origin.vcs"); r.code == 0 {
		t.Errorf("the push to mine routed the upstream too: remote.origin.vcs = %q", r.stdout)
	}
	alice.git(adir, "fetch", "-q", "mine")
	alice.secure(adir, "verify")

	// init's first entries say whose key signed them (the init key,
	// alice's once she added herself), not "a root or rules key".
	log := alice.secure(adir, "rsl", "log")
	if want := "by the root and rules key (" + alice.fingerprint() + "), alice's key in the policy now"; !strings.Contains(log, want) {
		t.Errorf("rsl log does not say %q:\n%s", want, log)
	}
}

// Every review branch the hand-off publishes (review/main-<commit>) was
// warned about on every verify and push ("points at ... but the log has no
// entry for it"), long after its commit landed. A review branch waiting
// for approval is not warned about; merged ones are summarised in one
// line that says how to delete them.
func TestReviewBranchesSummarised(t *testing.T) {
	_, _, _, alice, bob, _, adir, bdir := handOffWorld(t)
	merged := alice.commit(adir, "one.txt", "1\n")
	alice.git(adir, "push", "-q", "origin", merged+":refs/heads/review/main-"+merged[:12])
	bob.secure(bdir, "attest", "approve", "main", "--to", merged)
	bob.git(bdir, "push", "-q")
	alice.git(adir, "push", "-q", "origin", "main")
	waiting := alice.commit(adir, "two.txt", "2\n")
	alice.git(adir, "push", "-q", "origin", waiting+":refs/heads/review/main-"+waiting[:12])

	bob.git(bdir, "pull", "-q")
	r := bob.run(bdir, "git", "secure", "verify")
	if r.code != 0 {
		t.Fatalf("verify with review branches:\n%s", r)
	}
	del := "git push origin --delete review/main-" + merged[:12]
	if !strings.Contains(r.stderr, "1 review branch(es) on origin are merged into a protected branch; delete them with: "+del) {
		t.Errorf("verify does not summarise the merged review branch with how to delete it:\n%s", r)
	}
	if strings.Contains(r.stderr, "has no entry for it") || strings.Contains(r.stderr, waiting[:12]) {
		t.Errorf("verify warns about a review branch one by one:\n%s", r)
	}
	if !strings.Contains(r.stdout, "review branch: a proposal, pushed without an entry") {
		t.Errorf("verify does not list the review branches as such:\n%s", r)
	}
	// Doing what it says ends the warning.
	bob.git(bdir, strings.Fields(del)[1:]...)
	bob.git(bdir, "fetch", "-q", "--prune")
	if r := bob.run(bdir, "git", "secure", "verify"); r.code != 0 || strings.Contains(r.stderr, "review") {
		t.Errorf("verify after deleting the merged review branch:\n%s", r)
	}
}

// verify listed every ref it judged, one line per release tag: a project
// with 29 tags read 29 lines on every verify. Refs no rule protects are
// counted per kind; --verbose and --json list each; protected refs and
// problems are always in full.
func TestVerifySummarisesRoutineRefs(t *testing.T) {
	alice := newUser(t, "alice")
	dir := alice.sb.InitRepo("project", 2)
	alice.configure(dir)
	for i := 1; i <= 6; i++ {
		alice.git(dir, "tag", "v0."+string(rune('0'+i)))
	}
	alice.git(dir, "branch", "topic")
	alice.secure(dir, "init")
	alice.secure(dir, "policy", "add-person", "alice", "--key", alice.key.Public)
	alice.secure(dir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice")
	alice.secure(dir, "policy", "apply")

	out := alice.secure(dir, "verify")
	if !strings.Contains(out, "and 6 tags, 1 branch that no rule protects (--verbose lists each)") {
		t.Errorf("verify does not count the routine refs per kind:\n%s", out)
	}
	if strings.Contains(out, "refs/tags/v0.1") || !strings.Contains(out, "* refs/heads/main") {
		t.Errorf("verify lists a routine tag, or not the protected branch:\n%s", out)
	}
	for _, args := range [][]string{{"verify", "--verbose"}, {"verify", "--json"}} {
		if out := alice.secure(dir, args...); !strings.Contains(out, "refs/tags/v0.6") || !strings.Contains(out, "refs/heads/topic") {
			t.Errorf("git secure %s does not list each ref:\n%s", strings.Join(args, " "), out)
		}
	}
	// A problem is said in full: a tag moved without an entry.
	alice.git(dir, "tag", "-f", "v0.3", "HEAD~1")
	r := alice.run(dir, "git", "secure", "verify")
	if !strings.Contains(r.stdout+r.stderr, "refs/tags/v0.3") {
		t.Errorf("verify does not name the moved tag:\n%s", r)
	}
}

// bob's key was rotated (add-key, apply, remove-key, apply) while his
// clone still signs with the old one: his push was refused with "your key
// ... is not in the policy", which reads like a typo in his
// configuration. It says now that the key was removed from person bob, in
// which policy version, and which key bob has now.
func TestRotatedOutKeySaysWhatHappened(t *testing.T) {
	_, _, _, alice, bob, _, adir, bdir := handOffWorld(t)
	newKey := bob.sb.NewKey("bob-2026", "ed25519")
	alice.secure(adir, "policy", "add-key", "bob", "--key", newKey.Public)
	alice.secure(adir, "policy", "apply")
	alice.secure(adir, "policy", "remove-key", "bob", bob.key.Public)
	alice.secure(adir, "policy", "apply")
	alice.git(adir, "push", "-q")
	entry := alice.rslLog(adir)
	last := entry[len(entry)-1]

	bob.git(bdir, "pull", "-q")
	bob.commit(bdir, "b.txt", "b\n")
	old, now := bob.fingerprintOf(bob.key.Public), bob.fingerprintOf(newKey.Public)
	want := "your key " + old + " was removed from person bob in policy rules v"
	for _, args := range [][]string{{"push", "--dry-run"}, {"push"}} {
		r := bob.run(bdir, "git", args...)
		flat := strings.Join(strings.Fields(r.stderr), " ")
		if r.code == 0 || !strings.Contains(flat, want) || !strings.Contains(flat, "(entry #"+strconv.FormatUint(last.Number, 10)+"); bob's key(s) now: "+now) {
			t.Errorf("git %s with a rotated-out key does not say it was removed from bob at entry #%d and bob's key now (%s):\n%s", strings.Join(args, " "), last.Number, now, r)
		}
	}
	// Doing what it says works.
	bob.git(bdir, "config", "user.signingkey", newKey.Private)
	if r := bob.run(bdir, "git", "push", "origin", "HEAD:refs/heads/review/b"); r.code != 0 {
		t.Fatalf("bob's push with his new key:\n%s", r)
	}
}

// fingerprintOf is the SHA256 fingerprint of a public key file.
func (u *user) fingerprintOf(pub string) string {
	u.t.Helper()
	return strings.Fields(u.must(u.sb.Home, "ssh-keygen", "-lf", pub))[1]
}
