package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Found adopting git-secure as a stranger (README quick start): bob's push
// of main was refused for a second signer; he published a review branch
// (the push succeeded, so the helper remembered the remote's listing);
// alice approved and pushed her approval. bob's retry then answered git
// from the remembered listing, which predates alice's approval, so it
// never fetched it: the server took the push (it holds the approval), but
// the push said "1 more needed" and bob's own verify and explain failed
// until his next fetch. A push whose entry lacks approvals the local store
// does not hold asks the remote for its metadata before recording.
func TestPushFetchesApprovalsMadeSinceLastContact(t *testing.T) {
	srv, repo, _, alice, bob, _, adir, bdir := handOffWorld(t)
	change := bob.commit(bdir, "fix.txt", "fix\n")
	if r := bob.run(bdir, "git", "push"); r.code == 0 {
		t.Fatalf("a push of main with one signer of two was accepted:\n%s", r)
	}
	bob.git(bdir, "push", "-q", "origin", "HEAD:refs/heads/review/fix")
	alice.git(adir, "fetch", "-q")
	alice.secure(adir, "attest", "approve", "main", "--to", change)
	alice.git(adir, "push", "-q")

	r := bob.run(bdir, "git", "push")
	if r.code != 0 {
		t.Fatalf("bob's push after alice's approval:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/heads/main"); got != change {
		t.Fatalf("server main = %s, want %s", got, change)
	}
	if strings.Contains(r.stderr, "more needed") {
		t.Errorf("the push says an approval is missing although the server holds it:\n%s", r)
	}
	if got, want := bob.rev(bdir, "refs/secure/attestations"), srv.admin.rev(repo, "refs/secure/attestations"); got != want {
		t.Errorf("bob's approvals after his push are %s, the server's %s", got, want)
	}
	if r := bob.run(bdir, "git", "secure", "verify"); r.code != 0 {
		t.Errorf("bob's verify right after his accepted push:\n%s", r)
	}
	if r := bob.run(bdir, "git", "secure", "explain", "main"); r.code != 0 || !strings.Contains(r.stdout, "counted: alice, bob") {
		t.Errorf("bob's explain right after his accepted push:\n%s", r)
	}
}

// Found adopting git-secure on a GitHub mirror (1 123 refs/pull/N/head):
// git secure init records branches and tags only, and verify never judges
// a forge's refs unless a rule names them, but pushing the mirror's
// refs/pull/* through the helper signed one log entry per ref: 1 123
// entries, a push 9 times slower than plain git's, and a log every clone
// replays for refs nobody protects. A forge ref the log never recorded
// and no rule names is pushed without an entry; one a rule names is
// recorded.
func TestPushForgeRefsWithoutEntries(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("mirror.git", true)
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "mirror", url, true)
	head := u.rev(dir, "HEAD")
	for i := 1; i <= 5; i++ {
		u.git(dir, "update-ref", fmt.Sprintf("refs/pull/%d/head", i), head+strings.Repeat("~", i%3))
	}
	before := u.rev(dir, "refs/secure/rsl")
	r := u.run(dir, "git", "push", "origin", "refs/pull/*:refs/pull/*")
	if r.code != 0 {
		t.Fatalf("push of the forge refs:\n%s", r)
	}
	if got := srv.admin.run(repo, "git", "for-each-ref", "refs/pull/").stdout; len(strings.Fields(got)) != 3*5 {
		t.Fatalf("the server holds these forge refs:\n%s", got)
	}
	if got := srv.admin.rev(repo, "refs/secure/rsl"); got != before {
		t.Errorf("pushing forge refs no rule names recorded log entries:\n%s", u.run(dir, "git", "secure", "rsl", "log"))
	}
	if strings.Contains(r.stderr, "recorded refs/pull") {
		t.Errorf("the push says it recorded forge refs:\n%s", r)
	}
	for _, who := range []struct {
		u   *user
		dir string
	}{{srv.admin, repo}, {u, dir}} {
		if r := who.u.run(who.dir, "git", "secure", "verify"); r.code != 0 || strings.Contains(r.stderr, "refs/pull") {
			t.Errorf("verify after pushing forge refs:\n%s", r)
		}
	}

	// A rule that names the namespace makes a forge ref recorded, as any
	// protected ref (one that covers none of the unrecorded ones: those
	// would have to be recorded at reviewed commits first).
	u.secure(dir, "policy", "add-rule", "pulls", "--ref", "refs/pull/9/**", "--allow", u.name)
	u.secure(dir, "policy", "apply")
	u.git(dir, "push", "-q")
	u.git(dir, "update-ref", "refs/pull/9/head", head)
	r = u.run(dir, "git", "push", "origin", "refs/pull/9/head")
	if r.code != 0 || !strings.Contains(r.stderr, "recorded refs/pull/9/head") {
		t.Fatalf("a forge ref a rule names is recorded:\n%s", r)
	}
	srv.admin.secure(repo, "verify")
}

// Found adopting git-secure: a push refused because a folder rule does not
// name the pusher said who could approve, but not how: nothing of the
// push reached the server, so the approver has no commit to fetch. The
// threshold refusal's hand-off (publish a review branch, approve, push
// again) is printed for it too, and following it lands the change.
func TestFolderRefusalSaysHowToHandOff(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("folder.git", true)
	alice, bob := newUser(t, "alice"), newUser(t, "bob")
	adir := alice.sb.InitRepo("project", 2)
	alice.configure(adir)
	alice.secure(adir, "init")
	alice.secure(adir, "policy", "add-person", "alice", "--key", alice.key.Public)
	alice.secure(adir, "policy", "add-person", "bob", "--key", bob.key.Public)
	alice.secure(adir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob")
	alice.secure(adir, "policy", "add-rule", "security", "--path", "security/**", "--allow", "alice")
	alice.secure(adir, "policy", "apply")
	alice.git(adir, "remote", "add", "origin", url)
	alice.git(adir, "push", "-q", "-u", "origin", "main")
	bdir := bob.path("project")
	bob.secure(bob.sb.Home, "clone", url, bdir)
	bob.configure(bdir)

	change := commitFile(t, bob, bdir, "security/policy.txt", "stricter\n")
	r := bob.run(bdir, "git", "push")
	if r.code == 0 {
		t.Fatalf("bob changed security/ on main without alice:\n%s", r)
	}
	review := "git push origin " + change[:12] + ":refs/heads/review/main-" + change[:12]
	for _, want := range []string{"security", "alice", review, "git secure attest approve refs/heads/main --to " + change[:12]} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, r)
		}
	}
	bob.git(bdir, strings.Fields(review)[1:]...)
	alice.git(adir, "fetch", "-q")
	alice.secure(adir, "attest", "approve", "refs/heads/main", "--to", change[:12])
	alice.git(adir, "push", "-q")
	if r := bob.run(bdir, "git", "push"); r.code != 0 {
		t.Fatalf("bob's push after alice's approval:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/heads/main"); got != change {
		t.Fatalf("server main = %s, want %s", got, change)
	}
	srv.admin.secure(repo, "verify")
	bob.secure(bdir, "verify")
}

// Found following the README: a push of a protected ref whose signing key
// could not be loaded was refused with "... needs a signed log entry, but
// usage: sign: private key not available: ...". The refusal names the
// key problem and the way out, without the error's kind markers.
func TestPushWithoutKeySaysWhy(t *testing.T) {
	srv := startServer(t, trFile)
	_, url := srv.newRepo("nokey.git", true)
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "repo", url, true)
	// The public key alone: no agent, no private key file beside it.
	pub := filepath.Join(u.sb.Home, "only.pub")
	u.must(dir, "cp", u.key.Public, pub)
	u.git(dir, "config", "user.signingkey", pub)
	u.commit(dir, "f.txt", "1\n")
	r := u.run(dir, "git", "push", "origin", "main")
	if r.code == 0 {
		t.Fatalf("a push of a protected ref without a usable key was accepted:\n%s", r)
	}
	if !containsAll(r.stderr, "is protected and needs a signed log entry, but private key not available", "ssh-agent", "private key file") {
		t.Errorf("the refusal does not say what is wrong and what to do:\n%s", r)
	}
	if strings.Contains(r.stderr, "usage:") {
		t.Errorf("the refusal shows the error's kind marker:\n%s", r)
	}
}
