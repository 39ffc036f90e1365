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

// forgeFixture is a policy that trusts one forge app, ci-bridge, bound
// to github acme/widget, and maps persons to GitHub accounts, with an
// attestation store in a new repository.
type forgeFixture struct {
	base, pol *policy.Policy // without and with the persons and the app
	store     *attest.Store
	now       time.Time
}

// forgeTestPerson is a person of a forgeFixture, mapped to the GitHub
// login NAME-gh (and account id, when set).
type forgeTestPerson struct {
	name string
	key  ssh.Signer
	id   string
}

// newForgeFixture adds persons and trusts app as ci-bridge.
func newForgeFixture(t *testing.T, app ssh.Signer, persons ...forgeTestPerson) *forgeFixture {
	t.Helper()
	fx := &forgeFixture{now: time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)}
	var err error
	if fx.base, err = policy.New(forgeSigner(t, 1).PublicKey(), fx.now); err != nil {
		t.Fatal(err)
	}
	if fx.pol, err = fx.base.Clone(); err != nil {
		t.Fatal(err)
	}
	for _, p := range persons {
		if err := fx.pol.AddPerson(fx.base, p.name, []ssh.PublicKey{p.key.PublicKey()}, fx.now); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range persons {
		if err := fx.pol.SetForgeAccount(fx.base, p.name, "github", p.name+"-gh", p.id, fx.now); err != nil {
			t.Fatal(err)
		}
	}
	if err := fx.pol.AddForgeApp(fx.base, "ci-bridge", app.PublicKey(), "github", "acme/widget", fx.now); err != nil {
		t.Fatal(err)
	}
	sb := testutil.NewSandbox(t)
	repo, err := gitrepo.OpenWithEnv(sb.InitRepo("repo", 1), sb.Environ())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	if fx.store, err = attest.OpenStore(repo); err != nil {
		t.Fatal(err)
	}
	return fx
}

// who is the bridge's identity on the store's commits.
func (fx *forgeFixture) who() gitrepo.Ident {
	return gitrepo.Ident{Name: "ci", Email: "ci@example.com", When: fx.now}
}

// put stores r signed by s where a forge bridge stores it (tree-bound
// when r.ToTree is set).
func (fx *forgeFixture) put(t *testing.T, s ssh.Signer, r attest.ForgeReview) {
	t.Helper()
	st, err := r.Statement()
	if err != nil {
		t.Fatal(err)
	}
	env, err := attest.Sign(st, s)
	if err != nil {
		t.Fatal(err)
	}
	dir := attest.ForgeReviewDir(r.Ref, r.From, r.To)
	if !r.ToTree.IsZero() {
		dir = attest.ForgeReviewTreeDir(r.Ref, r.From, r.ToTree)
	}
	p := dir + "/" + attest.ForgeReviewFile(attest.SignerFile(s.PublicKey()), r.Forge, r.Repository, r.Review, r.State)
	if _, err := fx.store.Add(p, env, fx.who(), "test"); err != nil {
		t.Fatal(err)
	}
}

// The trust decision for forge reviews: only a trusted app's record of
// exactly this update counts, only for the mapped person, once, and not
// once withdrawn or revoked.
func TestForgeApproversTrust(t *testing.T) {
	bob, carol, app, rogue := forgeSigner(t, 2), forgeSigner(t, 3), forgeSigner(t, 4), forgeSigner(t, 5)
	fx := newForgeFixture(t, app, forgeTestPerson{name: "bob", key: bob}, forgeTestPerson{name: "carol", key: carol})
	base, pol, store, who := fx.base, fx.pol, fx.store, fx.who()
	ref, from, to := "refs/heads/main", gitrepo.Hash{1}, gitrepo.Hash{2}
	put := func(s ssh.Signer, r attest.ForgeReview) { fx.put(t, s, r) }
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
	bob, app := forgeSigner(t, 2), forgeSigner(t, 4)
	fx := newForgeFixture(t, app, forgeTestPerson{name: "bob", key: bob})
	pol, store := fx.pol, fx.store
	ref, from, head, tree := "refs/heads/main", gitrepo.Hash{1}, gitrepo.Hash{2}, gitrepo.Hash{9}
	fx.put(t, app, attest.ForgeReview{Ref: ref, From: from, To: head, ToTree: tree, Forge: "github", Repository: "acme/widget", Account: "bob-gh", Review: "1", PullRequest: "7", State: attest.ReviewApproved})
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
