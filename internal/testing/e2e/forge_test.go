package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeGitHub replays the two GitHub REST answers the bridge reads, with
// reviews the test changes between runs, as GitHub's API shapes them.
type fakeGitHub struct {
	mu      sync.Mutex
	head    string
	merge   string // merge_commit_sha, "" for none
	base    string // base.ref, "main" when empty
	reviews []map[string]any
}

func (g *fakeGitHub) review(id int, login, state, commit string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.reviews {
		if r["id"] == id {
			r["state"] = state // a dismissal changes the review in place
			return
		}
	}
	g.reviews = append(g.reviews, map[string]any{"id": id, "user": map[string]any{"login": login, "type": "User"}, "state": state,
		"commit_id": commit, "submitted_at": fmt.Sprintf("2026-12-01T10:%02d:00Z", len(g.reviews)), "author_association": "MEMBER"})
}

func (g *fakeGitHub) serve(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer ci-token" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"message":"Bad credentials"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/repos/acme/widget/pulls/1":
			pr := map[string]any{"number": 1, "state": "open", "merged": false,
				"head": map[string]any{"ref": "review/x", "sha": g.head}, "base": map[string]any{"ref": cmp.Or(g.base, "main")}}
			if g.merge != "" {
				pr["merge_commit_sha"] = g.merge
			}
			json.NewEncoder(w).Encode(pr)
		case "/repos/acme/widget/pulls/1/reviews":
			json.NewEncoder(w).Encode(g.reviews)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"Not Found"}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Issue 17 item 2, the GitHub flow against a server replaying GitHub's
// API: a pull request reviewed by two mapped persons is mergeable and
// lands (the enforcing server counts the forge's approvals) and verifies
// in a fresh clone; with one review missing it is not, naming who must
// approve; a review by an unmapped account never counts; a dismissed
// review stops counting.
func TestForgeReviewsCountAsApprovals(t *testing.T) {
	srv := startServer(t, trFile)
	_, url := srv.newRepo("forge.git", true)
	alice, bob, carol, bridge, ci := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "carol"), newUser(t, "bridge"), newUser(t, "ci")
	dir := benchRepo(t, alice, "work", url, true)
	alice.secure(dir, "policy", "add-person", "bob", "--key", bob.key.Public, "--github", "Bob-GH")
	alice.secure(dir, "policy", "add-person", "carol", "--key", carol.key.Public, "--github", "carol-gh")
	alice.secure(dir, "policy", "add-rule", "reviewed", "--ref", "refs/heads/main", "--allow", "bob", "--allow", "carol", "--threshold", "2")
	alice.secure(dir, "trust", "add-forge-app", "ci-bridge", "--key", bridge.key.Public)
	alice.secure(dir, "policy", "apply")
	if out := alice.secure(dir, "policy", "list"); !strings.Contains(out, "ci-bridge") {
		t.Logf("policy list does not show the forge app:\n%s", out)
	}
	alice.git(dir, "push", "-q", "origin", "main")

	alice.git(dir, "checkout", "-q", "-b", "review/x")
	head := alice.commit(dir, "f.txt", "change\n")
	alice.git(dir, "push", "-q", "origin", "HEAD:refs/heads/review/x")
	alice.git(dir, "checkout", "-q", "main")

	gh := &fakeGitHub{head: head}
	api := gh.serve(t)
	record := func(name string) string {
		d := ci.path(name)
		ci.git(ci.sb.Home, "clone", "-q", url, d)
		ci.git(d, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
		saved := ci.sb.Extra
		ci.sb.Extra = append(append([]string{}, saved...), "GITHUB_TOKEN=ci-token")
		out := ci.secure(d, "forge", "record-approvals", "--pr", "1", "--repo", "acme/widget", "--api-url", api, "--key", bridge.key.Private)
		ci.sb.Extra = saved
		ci.git(d, "push", "-q", "origin", "refs/secure/attestations")
		return out
	}
	mergeable := func(name string) result {
		d := ci.path(name)
		ci.git(ci.sb.Home, "clone", "-q", url, d)
		ci.git(d, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
		return ci.run(d, "git", "secure", "verify", "--mergeable", "--signer", "alice", "main", head) // alice pushes the merge
	}

	// bob approves (as Bob-GH: logins are case-insensitive) and mallory,
	// whom the policy does not know, approves too: one person counts.
	gh.review(101, "bob-gh", "APPROVED", head)
	gh.review(102, "mallory-gh", "APPROVED", head)
	out := record("rec1")
	if !strings.Contains(out, "github review 101 by bob-gh (bob): approved") || !strings.Contains(out, "review 102 by mallory-gh: the policy maps that github account to no person") {
		t.Fatalf("record-approvals:\n%s", out)
	}
	r := mergeable("m1")
	if r.code != 1 || !strings.Contains(r.stdout, "needs 2 of bob, carol, has 1 (bob)") || !strings.Contains(r.stdout, "carol can approve") ||
		!strings.Contains(r.stdout, "through the forge: bob via github review 101 by bob-gh on pull request 1 (recorded by forge app ci-bridge)") ||
		!strings.Contains(r.stdout, "github review 102 by mallory-gh ignored: the policy maps that account to no person") {
		t.Fatalf("one mapped review: not mergeable, naming carol:\n%s", r)
	}

	// carol approves: mergeable, both through the forge.
	gh.review(103, "carol-gh", "APPROVED", head)
	record("rec2")
	if r := mergeable("m2"); r.code != 0 || !strings.Contains(r.stdout, "result: satisfied") || !strings.Contains(r.stdout, "through the forge: carol via github review 103") {
		t.Fatalf("two mapped reviews: mergeable:\n%s", r)
	}

	// bob's review is dismissed: it stops counting.
	gh.review(101, "bob-gh", "DISMISSED", head)
	if out := record("rec3"); !strings.Contains(out, "github review 101 by bob-gh (bob): withdrawn") {
		t.Fatalf("record-approvals after the dismissal:\n%s", out)
	}
	if r := mergeable("m3"); r.code != 1 || !strings.Contains(r.stdout, "has 1 (carol)") || !strings.Contains(r.stdout, "bob can approve") ||
		!strings.Contains(r.stdout, "github review 101 by bob-gh was withdrawn") {
		t.Fatalf("dismissed review must stop counting:\n%s", r)
	}
	// alice's push of the merge is refused by the server while it is so.
	alice.git(dir, "merge", "-q", "--ff-only", "review/x")
	if r := alice.run(dir, "git", "push", "origin", "main"); r.code == 0 || !strings.Contains(r.stderr, "rule reviewed") {
		t.Fatalf("the push of main with one review must be refused:\n%s", r)
	}

	// bob approves again (a new review): the merge lands, and a fresh
	// clone verifies it.
	gh.review(104, "bob-gh", "APPROVED", head)
	record("rec4")
	if r := alice.run(dir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("the push of main approved by two reviews:\n%s", r)
	}
	fresh := ci.path("fresh")
	ci.git(ci.sb.Home, "clone", "-q", url, fresh)
	ci.git(fresh, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
	if r := ci.run(fresh, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("verify in a fresh clone:\n%s", r)
	}
}
