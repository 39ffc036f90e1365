package attest

import (
	"errors"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

func testForgeReview() ForgeReview {
	return ForgeReview{Ref: "refs/heads/main", From: gitrepo.Hash{1}, To: gitrepo.Hash{2}, Forge: "github", Account: "bob-gh", Review: "101", PullRequest: "7", State: ReviewApproved}
}

// A forge review statement round-trips, and every field is checked.
func TestForgeReviewStatement(t *testing.T) {
	f := testForgeReview()
	st, err := f.Statement()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseForgeReview(st)
	if err != nil || got != f {
		t.Fatalf("ParseForgeReview = %+v, %v; want %+v", got, err, f)
	}
	if _, err := ParseApproval(st); err == nil {
		t.Error("a forge review parses as a person's approval")
	}
	for name, edit := range map[string]func(*ForgeReview){
		"state":        func(f *ForgeReview) { f.State = "APPROVED" },
		"forge":        func(f *ForgeReview) { f.Forge = "gitea" },
		"account":      func(f *ForgeReview) { f.Account = "bob gh" },
		"review":       func(f *ForgeReview) { f.Review = "0101" },
		"pull request": func(f *ForgeReview) { f.PullRequest = "-1" },
		"same ends":    func(f *ForgeReview) { f.To = f.From },
		"ref":          func(f *ForgeReview) { f.Ref = "main" },
		"repository":   func(f *ForgeReview) { f.Repository = "widget" },
		"gitlab path":  func(f *ForgeReview) { f.Forge, f.Account, f.Repository = "gitlab", "bob", "acme/../x" },
		"account id":   func(f *ForgeReview) { f.AccountID = "012" },
		"account id 0": func(f *ForgeReview) { f.AccountID = "0" },
	} {
		bad := testForgeReview()
		edit(&bad)
		if _, err := bad.Statement(); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Statement() = %v, want ErrMalformed", name, err)
		}
	}
	// The repository and the reviewer's account id round-trip; present,
	// they are never empty.
	bound := testForgeReview()
	bound.Repository, bound.AccountID = "acme/widget", "583231"
	bst, err := bound.Statement()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ParseForgeReview(bst); err != nil || got != bound || !strings.Contains(string(bst), `"accountId":"583231"`) || !strings.Contains(string(bst), `"repository":"acme/widget"`) {
		t.Fatalf("ParseForgeReview = %+v, %v; want %+v\n%s", got, err, bound, bst)
	}
	for _, edit := range [][2]string{{`"repository":"acme/widget"`, `"repository":""`}, {`"accountId":"583231"`, `"accountId":""`}, {`"accountId":"583231"`, `"accountId":583231`}, {`"repository":"acme/widget"`, `"repository":"acme"`}} {
		if _, err := ParseForgeReview([]byte(strings.Replace(string(bst), edit[0], edit[1], 1))); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", edit[1], err)
		}
	}
	// A record naming its repository has a file of its own: recording a
	// review again after an older record of it never lands on the older
	// file (the store keeps the first).
	if ForgeReviewFile("S.json", "github", "", "101", ReviewApproved) == ForgeReviewFile("S.json", "github", "acme/widget", "101", ReviewApproved) {
		t.Error("a record with a repository has the file of one without")
	}
	// Unknown predicate keys are refused.
	extra := strings.Replace(string(st), `"state":"approved"`, `"state":"approved","person":"alice"`, 1)
	if _, err := ParseForgeReview([]byte(extra)); !errors.Is(err, ErrMalformed) {
		t.Errorf("extra key: %v", err)
	}
}

// The store takes a forge review only at its own path: the directory of
// the update it names, the file of its bridge, review and state; an
// approval and a withdrawal of one review have two files.
func TestStoreAddForgeReview(t *testing.T) {
	_, _, repo := openRepo(t)
	store, err := OpenStore(repo)
	if err != nil {
		t.Fatal(err)
	}
	bridge := seedSigner(t, 9)
	sign := func(f ForgeReview) []byte {
		st, err := f.Statement()
		if err != nil {
			t.Fatal(err)
		}
		env, err := Sign(st, bridge)
		if err != nil {
			t.Fatal(err)
		}
		return env
	}
	f := testForgeReview()
	dir := ForgeReviewDir(f.Ref, f.From, f.To)
	sf := SignerFile(bridge.PublicKey())
	who := gitrepo.Ident{Name: "ci", Email: "ci@example.com"}
	approved := dir + "/" + ForgeReviewFile(sf, "github", "", "101", ReviewApproved)
	if _, err := store.Add(approved, sign(f), who, "approved"); err != nil {
		t.Fatal(err)
	}
	w := f
	w.State = ReviewWithdrawn
	withdrawn := dir + "/" + ForgeReviewFile(sf, "github", "", "101", ReviewWithdrawn)
	if withdrawn == approved {
		t.Fatal("approval and withdrawal share a file")
	}
	if _, err := store.Add(withdrawn, sign(w), who, "withdrawn"); err != nil {
		t.Fatal(err)
	}
	files, err := store.Envelopes(dir)
	if err != nil || len(files) != 2 {
		t.Fatalf("Envelopes: %d files, %v", len(files), err)
	}
	for name, path := range map[string]string{
		"withdrawal at the approval's file": approved,
		"signer file":                       dir + "/" + sf,
		"other update":                      ForgeReviewDir(f.Ref, f.From, gitrepo.Hash{3}) + "/" + ForgeReviewFile(sf, "github", "", "101", ReviewWithdrawn),
		"other review":                      dir + "/" + ForgeReviewFile(sf, "github", "", "102", ReviewWithdrawn),
	} {
		if err := checkAdd(path, sign(w)); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: checkAdd = %v, want ErrMismatch", name, err)
		}
	}
}

// A tree-bound forge review (toTree) round-trips, is refused with a zero
// or malformed toTree, and is stored only in the tree directory of its
// update (ref, from, toTree), never in the commit-bound one.
func TestForgeReviewTreeBound(t *testing.T) {
	f := testForgeReview()
	f.ToTree = gitrepo.Hash{0xee}
	st, err := f.Statement()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(st), `"toTree":"ee00000000000000000000000000000000000000"`) {
		t.Fatalf("statement without toTree: %s", st)
	}
	got, err := ParseForgeReview(st)
	if err != nil || got != f {
		t.Fatalf("ParseForgeReview = %+v, %v; want %+v", got, err, f)
	}
	zero := strings.Replace(string(st), "ee00000000000000000000000000000000000000", strings.Repeat("0", 40), 1)
	if _, err := ParseForgeReview([]byte(zero)); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "toTree is present but zero") {
		t.Errorf("zero toTree: %v", err)
	}
	short := strings.Replace(string(st), "ee00000000000000000000000000000000000000", "ee00", 1)
	if _, err := ParseForgeReview([]byte(short)); !errors.Is(err, ErrMalformed) {
		t.Errorf("short toTree: %v", err)
	}
	del := testForgeReview()
	del.To, del.ToTree = gitrepo.ZeroHash, gitrepo.Hash{0xee}
	if _, err := del.Statement(); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "deletion has toTree") {
		t.Errorf("tree-bound deletion: %v", err)
	}

	_, _, repo := openRepo(t)
	store, err := OpenStore(repo)
	if err != nil {
		t.Fatal(err)
	}
	bridge := seedSigner(t, 9)
	env, err := Sign(st, bridge)
	if err != nil {
		t.Fatal(err)
	}
	name := ForgeReviewFile(SignerFile(bridge.PublicKey()), f.Forge, "", f.Review, f.State)
	who := gitrepo.Ident{Name: "ci", Email: "ci@example.com"}
	if _, err := store.Add(ForgeReviewDir(f.Ref, f.From, f.To)+"/"+name, env, who, "x"); !errors.Is(err, ErrMismatch) {
		t.Errorf("tree-bound review in the commit directory: %v", err)
	}
	if _, err := store.Add(ForgeReviewTreeDir(f.Ref, f.From, gitrepo.Hash{0xef})+"/"+name, env, who, "x"); !errors.Is(err, ErrMismatch) {
		t.Errorf("tree-bound review in another tree's directory: %v", err)
	}
	if _, err := store.Add(ForgeReviewTreeDir(f.Ref, f.From, f.ToTree)+"/"+name, env, who, "x"); err != nil {
		t.Fatalf("tree-bound review at its path: %v", err)
	}
	if ForgeReviewTreeDir(f.Ref, f.From, f.ToTree) == ForgeReviewDir(f.Ref, f.From, f.ToTree) {
		t.Error("tree and commit directories of the same hex collide")
	}
}
