package verify

import (
	"bytes"
	"crypto/ed25519"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

func forgeSigner(t *testing.T, seed byte) ssh.Signer {
	t.Helper()
	s, err := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The trust decision for forge reviews: only a trusted app's record of
// exactly this update counts, only for the mapped person, once, and not
// once withdrawn or revoked.
func TestForgeApproversTrust(t *testing.T) {
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	root, bob, carol, app, rogue := forgeSigner(t, 1), forgeSigner(t, 2), forgeSigner(t, 3), forgeSigner(t, 4), forgeSigner(t, 5)
	base, err := policy.New(root.PublicKey(), now)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := base.Clone()
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []error{
		pol.AddPerson(base, "bob", []ssh.PublicKey{bob.PublicKey()}, now),
		pol.AddPerson(base, "carol", []ssh.PublicKey{carol.PublicKey()}, now),
		pol.SetForgeAccount(base, "bob", "github", "bob-gh", "", now),
		pol.SetForgeAccount(base, "carol", "github", "carol-gh", "", now),
		pol.AddForgeApp(base, "ci-bridge", app.PublicKey(), "github", "acme/widget", now),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	sb := testutil.NewSandbox(t)
	repo, err := gitrepo.OpenWithEnv(sb.InitRepo("repo", 1), sb.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	store, err := attest.OpenStore(repo)
	if err != nil {
		t.Fatal(err)
	}
	ref, from, to := "refs/heads/main", gitrepo.Hash{1}, gitrepo.Hash{2}
	who := gitrepo.Ident{Name: "ci", Email: "ci@example.com", When: now}
	put := func(s ssh.Signer, f attest.ForgeReview) {
		t.Helper()
		st, err := f.Statement()
		if err != nil {
			t.Fatal(err)
		}
		env, err := attest.Sign(st, s)
		if err != nil {
			t.Fatal(err)
		}
		p := attest.ForgeReviewDir(f.Ref, f.From, f.To) + "/" + attest.ForgeReviewFile(attest.SignerFile(s.PublicKey()), f.Forge, f.Repository, f.Review, f.State)
		if _, err := store.Add(p, env, who, "test"); err != nil {
			t.Fatal(err)
		}
	}
	review := func(account, id, state string) attest.ForgeReview {
		return attest.ForgeReview{Ref: ref, From: from, To: to, Forge: "github", Repository: "acme/widget", Account: account, Review: id, PullRequest: "7", State: state}
	}
	put(app, review("BOB-gh", "1", attest.ReviewApproved))     // counts for bob (case-insensitive)
	put(app, review("bob-gh", "2", attest.ReviewApproved))     // bob again: once
	put(app, review("mallory-gh", "3", attest.ReviewApproved)) // unmapped
	put(rogue, review("carol-gh", "4", attest.ReviewApproved)) // not a trusted app
	put(bob, review("carol-gh", "5", attest.ReviewApproved))   // a person's key is no app
	put(app, review("carol-gh", "6", attest.ReviewApproved))   // then withdrawn
	put(app, review("carol-gh", "6", attest.ReviewWithdrawn))  //
	other := review("carol-gh", "7", attest.ReviewApproved)    // another update
	other.To = gitrepo.Hash{3}
	put(app, other)

	persons, via, notes, err := ForgeApprovers(store, pol, ref, from, to, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(persons, ",") != "bob" || len(via) != 1 || via[0].App != "ci-bridge" || via[0].Person != "bob" {
		t.Fatalf("persons %v via %+v; want bob alone, through ci-bridge\nnotes: %v", persons, via, notes)
	}
	all := strings.Join(notes, "\n")
	for _, want := range []string{"mallory-gh ignored: the policy maps that account to no person", "not signed by a forge app the policy trusts", "review 6 by carol-gh was withdrawn"} {
		if !strings.Contains(all, want) {
			t.Errorf("notes do not say %q:\n%s", want, all)
		}
	}
	// Approvers counts them with the persons' own approvals, each once.
	st, err := attest.Approval{Ref: ref, From: from, To: to}.Statement()
	if err != nil {
		t.Fatal(err)
	}
	env, err := attest.Sign(st, bob)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Add(attest.ApprovalDir(ref, from, to)+"/"+attest.SignerFile(bob.PublicKey()), env, who, "bob approves"); err != nil {
		t.Fatal(err)
	}
	if got, _, err := Approvers(store, pol, ref, from, to, nil); err != nil || strings.Join(got, ",") != "bob" {
		t.Fatalf("Approvers = %v, %v; want bob once", got, err)
	}
	// A revoked app key, or no app in the policy, counts nothing.
	appFP := sign.Fingerprint(app.PublicKey())
	if got, _, _, _ := ForgeApprovers(store, pol, ref, from, to, func(fp string) bool { return fp == appFP }); len(got) != 0 {
		t.Errorf("revoked app counted: %v", got)
	}
	if got, _, _, _ := ForgeApprovers(store, base, ref, from, to, nil); len(got) != 0 {
		t.Errorf("a policy without the app counted: %v", got)
	}
}

// Tree-bound forge reviews count through TreeApprovers (for the tree of
// the commit a merge button made), for the mapped person, and never as
// approvals of a commit: a merge that changes the tree, or moves from
// another recorded tip, finds none.
func TestForgeTreeApprovers(t *testing.T) {
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	root, bob, app := forgeSigner(t, 1), forgeSigner(t, 2), forgeSigner(t, 4)
	base, err := policy.New(root.PublicKey(), now)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := base.Clone()
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []error{
		pol.AddPerson(base, "bob", []ssh.PublicKey{bob.PublicKey()}, now),
		pol.SetForgeAccount(base, "bob", "github", "bob-gh", "", now),
		pol.AddForgeApp(base, "ci-bridge", app.PublicKey(), "github", "acme/widget", now),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	sb := testutil.NewSandbox(t)
	repo, err := gitrepo.OpenWithEnv(sb.InitRepo("repo", 1), sb.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	store, err := attest.OpenStore(repo)
	if err != nil {
		t.Fatal(err)
	}
	ref, from, head, tree := "refs/heads/main", gitrepo.Hash{1}, gitrepo.Hash{2}, gitrepo.Hash{9}
	f := attest.ForgeReview{Ref: ref, From: from, To: head, ToTree: tree, Forge: "github", Repository: "acme/widget", Account: "bob-gh", Review: "1", PullRequest: "7", State: attest.ReviewApproved}
	st, err := f.Statement()
	if err != nil {
		t.Fatal(err)
	}
	env, err := attest.Sign(st, app)
	if err != nil {
		t.Fatal(err)
	}
	p := attest.ForgeReviewTreeDir(ref, from, tree) + "/" + attest.ForgeReviewFile(attest.SignerFile(app.PublicKey()), "github", "acme/widget", "1", attest.ReviewApproved)
	if _, err := store.Add(p, env, gitrepo.Ident{Name: "ci", Email: "ci@example.com", When: now}, "test"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		from, tree gitrepo.Hash
		want       string
	}{
		{"the reviewed tree", from, tree, "bob"},
		{"another tree", from, gitrepo.Hash{8}, ""},
		{"another recorded tip", gitrepo.Hash{3}, tree, ""},
	}
	for _, tt := range tests {
		got, _, err := TreeApprovers(store, pol, ref, tt.from, tt.tree, nil)
		if err != nil || strings.Join(got, ",") != tt.want {
			t.Errorf("%s: TreeApprovers = %v, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	// Not an approval of any commit, the head's included.
	if got, _, err := Approvers(store, pol, ref, from, head, nil); err != nil || len(got) != 0 {
		t.Errorf("Approvers = %v, %v; a tree-bound forge review counted for a commit", got, err)
	}
	// A revoked bridge counts nothing.
	appFP := sign.Fingerprint(app.PublicKey())
	if got, _, _ := TreeApprovers(store, pol, ref, from, tree, func(fp string) bool { return fp == appFP }); len(got) != 0 {
		t.Errorf("revoked bridge counted: %v", got)
	}
}
