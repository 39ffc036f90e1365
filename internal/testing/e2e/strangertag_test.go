package e2e

import (
	"strings"
	"testing"
)

// tagDay is a project with a release-tag rule only alice may meet, pushed
// to an enforcing server, and bob's clone made with git secure clone.
func tagDay(t *testing.T, tags string) (srv *server, repo string, alice, bob *user, adir, bdir string) {
	t.Helper()
	srv = startServer(t, trFile)
	repo, url := srv.newRepo("tags.git", true)
	alice, bob = newUser(t, "alice"), newUser(t, "bob")
	adir = alice.sb.InitRepo("project", 2)
	alice.configure(adir)
	alice.secure(adir, "init")
	alice.secure(adir, "policy", "add-person", "alice", "--key", alice.key.Public)
	alice.secure(adir, "policy", "add-person", "bob", "--key", bob.key.Public)
	alice.secure(adir, "policy", "add-rule", "releases", "--ref", tags, "--allow", "alice")
	alice.secure(adir, "policy", "apply")
	alice.git(adir, "remote", "add", "origin", url)
	alice.git(adir, "push", "-q", "-u", "origin", "main")
	bdir = bob.path("project")
	bob.secure(bob.sb.Home, "clone", url, bdir, "--root-key", alice.fingerprint())
	bob.configure(bdir)
	return srv, repo, alice, bob, adir, bdir
}

// hintLine returns the line of out holding want, trimmed of its
// "git-secure: hint:" label, or fails the test.
func hintLine(t *testing.T, out, want string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if _, cmd, ok := strings.Cut(line, "hint:"); ok && strings.Contains(cmd, want) {
			return strings.TrimSpace(cmd)
		}
	}
	t.Fatalf("no hint line with %q in:\n%s", want, out)
	return ""
}

// approveAndLandTag: alice pulls and runs, word for word, the approval
// line the refusal printed (every git command of it: a fetch, the
// approval, the push), which must approve the tag object itself; bob's
// tag push then lands the tag object on the server.
func approveAndLandTag(t *testing.T, srv *server, repo string, alice, bob *user, adir, bdir, approve, tag string) {
	t.Helper()
	alice.git(adir, "pull", "-q")
	for _, cmd := range strings.Split(approve, " && ") {
		out := alice.git(adir, strings.Fields(cmd)[1:]...)
		if strings.HasPrefix(cmd, "git secure attest approve ") && !strings.Contains(out, tag[:12]) {
			t.Errorf("alice approved something else than the tag %s: %s", tag[:12], out)
		}
	}
	if r := bob.run(bdir, "git", "push", "origin", "v1.1"); r.code != 0 {
		t.Fatalf("bob's tag push after alice's approval:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/tags/v1.1"); got != tag {
		t.Fatalf("server v1.1 = %s, want the tag object %s", got, tag)
	}
}

// Found as a stranger on a mirror of spf13/cobra: bob's annotated release
// tag was refused (only alice may make it) and the refusal told him to
// publish it as refs/heads/review/v1.11.0-<tag>: plain git refuses a tag
// object on a branch, and git-remote-secure peeled it to its commit, so
// alice never received the tag object and could not approve it ("object
// ... is not in this repository"). Her approval of the abbreviated hash
// the hint printed was of the commit, not the tag, and never counted. A
// push of an annotated tag by its hash also stored a lightweight tag of its
// commit on the server. The hand-off now publishes a tag as a review tag,
// pushes and approvals keep the tag object, and following the refusal
// word for word lands the tag.
func TestTagRefusalHandOff(t *testing.T) {
	srv, repo, alice, bob, adir, bdir := tagDay(t, "refs/tags/v*")
	bob.git(bdir, "tag", "-a", "-m", "release 1.1", "v1.1")
	tag := bob.rev(bdir, "refs/tags/v1.1")
	r := bob.run(bdir, "git", "push", "origin", "v1.1")
	if r.code != 1 || !strings.Contains(r.stderr, "rule releases") {
		t.Fatalf("bob's release tag was not refused by rule releases:\n%s", r)
	}
	if strings.Contains(r.stderr, "refs/heads/review/") {
		t.Errorf("the refusal publishes a tag object on a branch, which git refuses:\n%s", r)
	}
	// The review tag is published outside refs/tags/: git pull brought
	// one under refs/tags/review/ to every clone, listed by git tag.
	review := "refs/review/tags/v1.1-" + tag[:12]
	publish := hintLine(t, r.stderr, "git push origin "+tag[:12]+":"+review)
	bob.git(bdir, strings.Fields(publish)[1:]...)
	if got := srv.admin.rev(repo, review); got != tag {
		t.Fatalf("the server's review tag = %s, want the tag object %s", got, tag)
	}
	for _, e := range srv.admin.rslLog(repo) {
		if e.Ref == review {
			t.Errorf("publishing the review tag recorded entry #%d", e.Number)
		}
	}

	approve := hintLine(t, r.stderr, "git fetch origin "+review+" && git secure attest approve refs/tags/v1.1 --to "+tag[:12])
	approveAndLandTag(t, srv, repo, alice, bob, adir, bdir, approve, tag)
	bob.git(bdir, "pull", "-q")
	for _, c := range []struct {
		u   *user
		dir string
	}{{alice, adir}, {bob, bdir}} {
		if tags := c.u.git(c.dir, "tag", "--list"); strings.Contains(tags, "review") {
			t.Errorf("%s's git tag lists the review tag:\n%s", c.u.name, tags)
		}
	}

	// A push of an annotated tag by its hash stores the tag, as git does.
	bob.git(bdir, "tag", "-a", "-m", "candidate", "rc1")
	rc := bob.rev(bdir, "refs/tags/rc1")
	bob.git(bdir, "push", "-q", "origin", rc[:12]+":refs/tags/rc1")
	if got := srv.admin.rev(repo, "refs/tags/rc1"); got != rc {
		t.Fatalf("server rc1 = %s, want the tag object %s (peeled to its commit)", got, rc)
	}
	srv.admin.secure(repo, "verify")
	bob.secure(bdir, "verify")
}

// Found as a stranger: under a rule on every tag (refs/tags/**) the review
// tag the hand-off published was itself protected, so bob's push of it,
// word for word from the hint, was refused again: a dead end. Such a tag
// is published under refs/review/tags/, where no rule reaches, and the
// approver's line fetches it by name first.
func TestTagRefusalHandOffEveryTagProtected(t *testing.T) {
	srv, repo, alice, bob, adir, bdir := tagDay(t, "refs/tags/**")
	bob.git(bdir, "tag", "-a", "-m", "release 1.1", "v1.1")
	tag := bob.rev(bdir, "refs/tags/v1.1")
	r := bob.run(bdir, "git", "push", "origin", "v1.1")
	if r.code != 1 || !strings.Contains(r.stderr, "rule releases") {
		t.Fatalf("bob's release tag was not refused by rule releases:\n%s", r)
	}
	review := "refs/review/tags/v1.1-" + tag[:12]
	publish := hintLine(t, r.stderr, "git push origin "+tag[:12]+":"+review)
	bob.git(bdir, strings.Fields(publish)[1:]...)
	if got := srv.admin.rev(repo, review); got != tag {
		t.Fatalf("the server's %s = %s, want the tag object %s", review, got, tag)
	}
	approve := hintLine(t, r.stderr, "git fetch origin "+review+" && git secure attest approve refs/tags/v1.1 --to "+tag[:12])
	approveAndLandTag(t, srv, repo, alice, bob, adir, bdir, approve, tag)
	srv.admin.secure(repo, "verify")
	bob.secure(bdir, "verify")
}

// Found as a stranger on a mirror of spf13/cobra: bob's lightweight release
// tag of the commit main already is on the server was refused (only alice
// may make it), and the hand-off told him to publish that commit on a
// review branch first: a step for nothing, since the server has it as
// main. The hand-off now names where the server holds it and goes
// straight to the approval; following it lands the tag.
func TestTagRefusalOfCommitOnServerSkipsReviewBranch(t *testing.T) {
	srv, repo, alice, bob, adir, bdir := tagDay(t, "refs/tags/v*")
	main := bob.rev(bdir, "main")
	bob.git(bdir, "tag", "v1.2")
	r := bob.run(bdir, "git", "push", "origin", "v1.2")
	if r.code != 1 || !strings.Contains(r.stderr, "rule releases") {
		t.Fatalf("bob's release tag was not refused by rule releases:\n%s", r)
	}
	if strings.Contains(r.stderr, "review/") {
		t.Errorf("the refusal has bob publish for review a commit the server holds as main:\n%s", r)
	}
	hintLine(t, r.stderr, main[:12]+" is refs/heads/main on origin")
	approve := hintLine(t, r.stderr, "git secure attest approve refs/tags/v1.2 --to "+main[:12])
	alice.git(adir, "pull", "-q")
	for _, cmd := range strings.Split(approve, " && ") {
		alice.git(adir, strings.Fields(cmd)[1:]...)
	}
	if r := bob.run(bdir, "git", "push", "origin", "v1.2"); r.code != 0 {
		t.Fatalf("bob's tag push after alice's approval:\n%s", r)
	}
	if got := srv.admin.rev(repo, "refs/tags/v1.2"); got != main {
		t.Fatalf("server v1.2 = %s, want %s", got, main)
	}
}
