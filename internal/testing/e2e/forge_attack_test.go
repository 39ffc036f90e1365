package e2e

import (
	"strings"
	"testing"
)

// Attack: a pull request whose head does not contain main's recorded tip
// is recorded as approvals of main moving to the forge's merge commit.
// The bridge took whatever commit the forge listed as its merge commit:
// one computed before the last push, or any other, so reviews of the head
// approved a commit carrying a file nobody reviewed (backdoor.txt), and
// the enforcing server let alice push it to main on bob's and carol's
// reviews. Now the bridge records nothing unless the merge commit's
// parents are main's recorded tip and the reviewed head, and the push is
// refused; a genuine merge of the head is recorded and lands.
func TestForgeMergeCommitMustMergeTheReviewedHead(t *testing.T) {
	srv := startServer(t, trFile)
	_, url := srv.newRepo("forge-merge.git", true)
	alice, bob, carol, bridge, ci := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "carol"), newUser(t, "bridge"), newUser(t, "ci")
	dir := benchRepo(t, alice, "work", url, true)
	alice.secure(dir, "policy", "add-person", "bob", "--key", bob.key.Public, "--github", "bob-gh")
	alice.secure(dir, "policy", "add-person", "carol", "--key", carol.key.Public, "--github", "carol-gh")
	alice.secure(dir, "policy", "add-rule", "reviewed", "--ref", "refs/heads/main", "--allow", "bob", "--allow", "carol", "--threshold", "2")
	alice.secure(dir, "trust", "add-forge-app", "ci-bridge", "--key", bridge.key.Public, "--repository", "acme/widget")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "origin", "main")
	tip := alice.rev(dir, "main")

	// The pull request branches from before main's tip: merging it needs
	// a merge commit.
	alice.git(dir, "checkout", "-q", "-b", "review/x", "main~1")
	head := alice.commit(dir, "f.txt", "reviewed change\n")
	alice.git(dir, "push", "-q", "origin", "HEAD:refs/heads/review/x")
	// What the forge lists as its merge commit, once: main's tip plus a
	// file nobody reviewed (one parent; a merge of another head would do
	// as well).
	alice.git(dir, "checkout", "-q", "-b", "stash", "main")
	evil := alice.commit(dir, "backdoor.txt", "nobody reviewed this\n")
	alice.git(dir, "push", "-q", "origin", "HEAD:refs/heads/stash")
	// And a genuine merge of the reviewed head into main's tip.
	alice.git(dir, "checkout", "-q", "-b", "merged", "main")
	alice.git(dir, "merge", "-q", "--no-ff", "-m", "merge pull request 1", "review/x")
	genuine := alice.rev(dir, "HEAD")
	alice.git(dir, "push", "-q", "origin", "HEAD:refs/heads/merged")
	alice.git(dir, "checkout", "-q", "main")

	gh := &fakeGitHub{head: head, merge: evil}
	api := gh.serve(t)
	gh.review(201, "bob-gh", "APPROVED", head)
	gh.review(202, "carol-gh", "APPROVED", head)
	record := func(name string) result { return recordGitHub(ci, url, name, api, "acme/widget", bridge.key.Private) }

	r := record("rec-evil")
	if r.code != 1 {
		t.Fatalf("record-approvals with a merge commit that does not merge the reviewed head must be refused (exit 1):\n%s", r)
	}
	wantAll(t, "record-approvals with the forged merge commit", r,
		"the forge's merge commit "+evil[:12]+" of pull request 1 has parents ["+tip[:12]+"]",
		"not refs/heads/main's recorded tip "+tip[:12]+" and the reviewed head "+head[:12],
		"nothing recorded")
	alice.git(dir, "checkout", "-q", "-B", "main", evil)
	r = alice.run(dir, "git", "push", "origin", "main")
	if r.code == 0 {
		t.Fatalf("main moved to a commit nobody reviewed on the forge's word:\n%s", r)
	}
	wantAll(t, "push of the unreviewed commit", r, "rule reviewed")

	// The forge's genuine merge commit: recorded, and it lands.
	gh.mu.Lock()
	gh.merge = genuine
	gh.mu.Unlock()
	if r := record("rec-genuine"); r.code != 0 || !containsAll(r.stdout, "github review 201 by bob-gh (bob): approved", "github review 202 by carol-gh (carol): approved") {
		t.Fatalf("record-approvals of the genuine merge commit:\n%s", r)
	}
	alice.git(dir, "checkout", "-q", "-B", "main", genuine)
	if r := alice.run(dir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("the push of the reviewed merge:\n%s", r)
	}
}

// Attack: a pull request's base is a branch (GitHub's base.ref is its
// name), but the bridge took a base name starting with "refs/" for a full
// ref. Alice opens a pull request into a branch she named refs/tags/v2.0
// (refs/heads/refs/tags/v2.0, an unprotected branch), bob and carol
// approve it, and the bridge recorded their reviews as approvals of
// creating the tag refs/tags/v2.0 at the head: the release rule's two
// reviewers were met for a tag nobody was asked about, and the enforcing
// server took alice's push of the tag. Now the base is always the branch
// refs/heads/<name>: the approvals are of that branch, and the tag's push
// is refused.
func TestForgeBaseIsAlwaysABranch(t *testing.T) {
	srv := startServer(t, trFile)
	_, url := srv.newRepo("forge-base.git", true)
	alice, bob, carol, bridge, ci := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "carol"), newUser(t, "bridge"), newUser(t, "ci")
	dir := benchRepo(t, alice, "work", url, true)
	alice.secure(dir, "policy", "add-person", "bob", "--key", bob.key.Public, "--github", "bob-gh")
	alice.secure(dir, "policy", "add-person", "carol", "--key", carol.key.Public, "--github", "carol-gh")
	alice.secure(dir, "policy", "add-rule", "releases", "--ref", "refs/tags/v*", "--allow", "bob", "--allow", "carol", "--threshold", "2")
	alice.secure(dir, "trust", "add-forge-app", "ci-bridge", "--key", bridge.key.Public, "--repository", "acme/widget")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "origin", "main")

	alice.git(dir, "checkout", "-q", "-b", "topic", "main")
	head := alice.commit(dir, "f.txt", "a change\n")
	alice.git(dir, "push", "-q", "origin", "HEAD:refs/heads/topic", "main:refs/heads/refs/tags/v2.0")
	alice.git(dir, "checkout", "-q", "main")

	gh := &fakeGitHub{head: head, base: "refs/tags/v2.0"}
	api := gh.serve(t)
	gh.review(301, "bob-gh", "APPROVED", head)
	gh.review(302, "carol-gh", "APPROVED", head)
	r := recordGitHub(ci, url, "rec", api, "acme/widget", bridge.key.Private)
	if r.code != 0 || !strings.Contains(r.stdout, "refs/heads/refs/tags/v2.0 ") {
		t.Fatalf("record-approvals of a pull request into the branch refs/tags/v2.0 must record approvals of that branch:\n%s", r)
	}

	// The base branch goes (git would otherwise match the tag's name to
	// it on push), and alice pushes the tag.
	alice.git(dir, "push", "-q", "origin", ":refs/heads/refs/tags/v2.0")
	alice.git(dir, "tag", "v2.0", head)
	r = alice.run(dir, "git", "push", "origin", "refs/tags/v2.0")
	if r.code == 0 {
		t.Fatalf("the tag v2.0 was created on approvals of a pull request into a branch:\n%s", r)
	}
	wantAll(t, "push of the tag", r, "rule releases")
}

// Attack: an evil merge. The bridge bound the reviews of a pull request's
// head to the forge's merge commit when its parents were main's recorded
// tip and the reviewed head, whatever its tree. A merge commit is any
// tree its author chose: alice merges the reviewed head herself, adds a
// file nobody reviewed (backdoor.txt) in the merge, and the forge lists
// that commit as the pull request's merge commit (GitHub marks a pull
// request merged, as the pushed commit, when its head reaches the base
// by a push). bob's and carol's reviews of the head became approvals of
// main moving to the backdoor and the enforcing server took alice's push.
// Now the merge commit's tree must be the tree of merging the head into
// the recorded tip (git merge-tree): the evil merge is refused naming
// both trees, and the push with it.
func TestForgeEvilMergeIsNotTheReviewedMerge(t *testing.T) {
	srv := startServer(t, trFile)
	_, url := srv.newRepo("forge-evil-merge.git", true)
	alice, bob, carol, bridge, ci := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "carol"), newUser(t, "bridge"), newUser(t, "ci")
	dir := benchRepo(t, alice, "work", url, true)
	alice.secure(dir, "policy", "add-person", "bob", "--key", bob.key.Public, "--github", "bob-gh")
	alice.secure(dir, "policy", "add-person", "carol", "--key", carol.key.Public, "--github", "carol-gh")
	alice.secure(dir, "policy", "add-rule", "reviewed", "--ref", "refs/heads/main", "--allow", "bob", "--allow", "carol", "--threshold", "2")
	alice.secure(dir, "trust", "add-forge-app", "ci-bridge", "--key", bridge.key.Public, "--repository", "acme/widget")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "origin", "main")
	tip := alice.rev(dir, "main")

	alice.git(dir, "checkout", "-q", "-b", "review/x", "main~1")
	head := alice.commit(dir, "f.txt", "reviewed change\n")
	alice.git(dir, "push", "-q", "origin", "HEAD:refs/heads/review/x")
	// The evil merge: parents main's tip and the reviewed head, and a file
	// nobody reviewed.
	alice.git(dir, "checkout", "-q", "-b", "evil", "main")
	alice.git(dir, "merge", "-q", "--no-ff", "--no-commit", "review/x")
	evil := alice.commit(dir, "backdoor.txt", "nobody reviewed this\n")
	alice.git(dir, "push", "-q", "origin", "HEAD:refs/heads/evil")
	alice.git(dir, "checkout", "-q", "main")
	if parents := alice.git(dir, "rev-parse", evil+"^1", evil+"^2"); parents != tip+"\n"+head {
		t.Fatalf("the evil merge's parents are %q, want main's tip and the head", parents)
	}

	gh := &fakeGitHub{head: head, merge: evil}
	api := gh.serve(t)
	gh.review(401, "bob-gh", "APPROVED", head)
	gh.review(402, "carol-gh", "APPROVED", head)
	r := recordGitHub(ci, url, "rec", api, "acme/widget", bridge.key.Private)
	if r.code == 0 {
		t.Errorf("record-approvals bound the head's reviews to an evil merge:\n%s", r)
	} else {
		wantAll(t, "record-approvals with the evil merge", r,
			"the forge's merge commit "+evil[:12]+" of pull request 1 has the tree",
			"not the tree of merging the reviewed head "+head[:12]+" into refs/heads/main's recorded tip "+tip[:12],
			"nothing recorded")
	}
	alice.git(dir, "checkout", "-q", "-B", "main", evil)
	r = alice.run(dir, "git", "push", "origin", "main")
	if r.code == 0 {
		t.Fatalf("main moved to an evil merge on reviews of the head alone:\n%s", r)
	}
	wantAll(t, "push of the evil merge", r, "rule reviewed")
}
