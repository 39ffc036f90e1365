package verify_test

import (
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/verify"
)

// Attack: bob's review was recorded by the forge bridge as approved, then
// as withdrawn (dismissed). On a server without the git-secure hook (a
// forge), anyone can push a new attestation store commit that drops the
// withdrawal record and keeps the rest. Verification read the store's tip
// first and walked its history only when the rules were not met, so the
// dismissed review counted again: alice's entry moving main, which needs
// two persons, verified with bob's withdrawn review. The store's union
// over its history is what counts, and that holds the withdrawal. Now a
// verification that counts a forge review reads the store's history (once)
// before trusting that none of its reviews was withdrawn, and fails the
// entry, naming the withdrawn review.
func TestDroppedForgeWithdrawalStillCounts(t *testing.T) {
	tmpl := NewScenarioTemplate(t)
	f := tmpl.Clone(t)
	bridgePub := f.Pub("dave2")
	f.Stage("forge", func(p, base *policy.Policy, now time.Time) error {
		if err := p.SetForgeAccount(base, "bob", "github", "bob-gh", "", now); err != nil {
			return err
		}
		return p.AddForgeApp(base, "ci-bridge", bridgePub, "github", "acme/widget", now)
	})
	f.Apply("alice")

	old := f.Ref("refs/heads/main")
	c := f.CommitMain("reviewed on the forge")
	bridge, err := sign.LoadSigner(sign.KeySpec{File: f.Key("dave2")})
	if err != nil {
		t.Fatal(err)
	}
	defer bridge.Close()
	store, err := attest.OpenStore(f.G)
	if err != nil {
		t.Fatal(err)
	}
	who, err := f.R.Ident()
	if err != nil {
		t.Fatal(err)
	}
	dir := attest.ForgeReviewDir("refs/heads/main", old, c)
	var withdrawal string
	for _, state := range []string{attest.ReviewApproved, attest.ReviewWithdrawn} {
		fr := attest.ForgeReview{Ref: "refs/heads/main", From: old, To: c, Forge: "github", Repository: "acme/widget", Account: "bob-gh", Review: "101", PullRequest: "7", State: state}
		st, err := fr.Statement()
		if err != nil {
			t.Fatal(err)
		}
		env, err := attest.Sign(st, bridge)
		if err != nil {
			t.Fatal(err)
		}
		name := attest.ForgeReviewFile(attest.SignerFile(bridge.PublicKey()), "github", "acme/widget", "101", state)
		if _, err := store.Add(dir+"/"+name, env, who, "forge app ci-bridge records review 101 as "+state); err != nil {
			t.Fatal(err)
		}
		withdrawal = dir + "/" + name
	}
	dropFromStore(t, f, withdrawal)
	f.Record("alice", "refs/heads/main")

	f.MustFail(verify.Options{}, verify.ErrThreshold, "refs/heads/main", "protect-main", "github review 101 by bob-gh was withdrawn")
}

// dropFromStore commits the attestation store's tip tree without path on
// top of the tip, as a push to a server without the hook can.
func dropFromStore(t *testing.T, f *ScenarioFixture, path string) {
	t.Helper()
	tip := f.Ref(attest.Ref)
	c, err := f.G.ReadCommit(tip)
	if err != nil {
		t.Fatal(err)
	}
	var without func(tree gitrepo.Hash, parts []string) gitrepo.Hash
	without = func(tree gitrepo.Hash, parts []string) gitrepo.Hash {
		entries, err := f.G.ReadTree(tree)
		if err != nil {
			t.Fatal(err)
		}
		var out []gitrepo.TreeEntry
		for _, e := range entries {
			switch {
			case e.Name != parts[0]:
				out = append(out, e)
			case len(parts) > 1:
				e.Hash = without(e.Hash, parts[1:])
				out = append(out, e)
			}
		}
		h, err := f.G.WriteTree(out)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	tree := without(c.Tree, strings.Split(path, "/"))
	out := f.S.Git(f.Dir, "commit-tree", tree.String(), "-p", tip.String(), "-m", "git-secure: tidy up")
	h, err := gitrepo.ParseHash(strings.TrimSpace(out))
	if err != nil {
		t.Fatal(err)
	}
	f.SetRef(attest.Ref, h)
}
