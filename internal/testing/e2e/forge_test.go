package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var repoPathRe = regexp.MustCompile(`^/repos/[^/]+/[^/]+/`)

// fakeGitHub replays the two GitHub REST answers the bridge reads, with
// reviews the test changes between runs, as GitHub's API shapes them.
type fakeGitHub struct {
	mu      sync.Mutex
	head    string
	merge   string // merge_commit_sha, "" for none
	base    string // base.ref, "main" when empty
	reviews []map[string]any
	// ids are the accounts' numeric ids by login, when not forgeUserID's
	// (a login GitHub gave to another account).
	ids map[string]int
}

// forgeUserID is the numeric account id the replaying forges give login.
func forgeUserID(login string) int {
	return 1000 + int(crc32.ChecksumIEEE([]byte(strings.ToLower(login)))%1000000)
}

func (g *fakeGitHub) review(id int, login, state, commit string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	uid := forgeUserID(login)
	if n, ok := g.ids[login]; ok {
		uid = n
	}
	for _, r := range g.reviews {
		if r["id"] == id {
			r["state"] = state // a dismissal changes the review in place
			return
		}
	}
	g.reviews = append(g.reviews, map[string]any{"id": id, "user": map[string]any{"login": login, "id": uid, "type": "User"}, "state": state,
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
		// Every repository's pull request 1 is this one: the bridge run
		// for another repository reads it too.
		switch repoPathRe.ReplaceAllString(r.URL.Path, "/repos/acme/widget/") {
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

// recordGitHub is a CI job of the forge bridge: a fresh clone of url
// (directory name) with the server's metadata, git secure forge
// record-approvals --pr 1 of repo against the replayed GitHub API at api,
// signed with key, and when it succeeds the push of the store.
func recordGitHub(ci *user, url, name, api, repo, key string) result {
	d := ci.path(name)
	ci.git(ci.sb.Home, "clone", "-q", url, d)
	ci.git(d, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
	saved := ci.sb.Extra
	ci.sb.Extra = append(append([]string{}, saved...), "GITHUB_TOKEN=ci-token")
	r := ci.run(d, "git", "secure", "forge", "record-approvals", "--pr", "1", "--repo", repo, "--api-url", api, "--key", key)
	ci.sb.Extra = saved
	if r.code == 0 {
		ci.git(d, "push", "-q", "origin", "refs/secure/attestations")
	}
	return r
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
	alice.secure(dir, "trust", "add-forge-app", "ci-bridge", "--key", bridge.key.Public, "--repository", "acme/widget")
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
		t.Helper()
		r := recordGitHub(ci, url, name, api, "acme/widget", bridge.key.Private)
		if r.code != 0 {
			t.Fatalf("git secure forge record-approvals:\n%s", r)
		}
		return r.stdout
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
	if !strings.Contains(out, "github review 101 by bob-gh (bob): approved") || !strings.Contains(out, "review 102 by mallory-gh will not count: the policy maps that account to no person") {
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
	// The bridge runs again once it has landed (a CI job on the merged
	// pull request): it records the reviews for the update that landed,
	// not one from the result to itself ("approval from and to are
	// equal", exit 2, before).
	r = recordGitHub(ci, url, "rec5", api, "acme/widget", bridge.key.Private)
	wantCode(t, "record-approvals after the pull request landed", r, 0,
		"note: pull request 1 has landed (log entry #", "github review 103 by carol-gh (carol): approved", "next: git push origin refs/secure/attestations")
	fresh := ci.path("fresh")
	ci.git(ci.sb.Home, "clone", "-q", url, fresh)
	ci.git(fresh, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
	if r := ci.run(fresh, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("verify in a fresh clone:\n%s", r)
	}
}

// Issue 17: forge records name the repository and the reviewer's numeric
// account id, against the server replaying GitHub's API. The policy maps
// bob and carol with their account ids. A review under bob's login by
// another account (GitHub gave the freed login to someone else) never
// counts, and record-approvals and verify --mergeable say why; a review by
// bob's account under a new login is explained as a rename, and counts
// once the mapping is updated (policy set-forge-account). Reviews recorded
// while the bridge was bound to another repository stop counting when it
// is bound to this one, the bridge refuses to record for a repository it
// is not bound to, and the reviews recorded again count: the merge lands
// on the enforcing server and a fresh clone verifies.
func TestForgeRecycledLoginAndOtherRepository(t *testing.T) {
	srv := startServer(t, trFile)
	_, url := srv.newRepo("forgeids.git", true)
	alice, bob, carol, bridge, ci := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "carol"), newUser(t, "bridge"), newUser(t, "ci")
	dir := benchRepo(t, alice, "work", url, true)
	alice.secure(dir, "policy", "add-person", "bob", "--key", bob.key.Public, "--github", "bob-gh", "--github-id", "583231")
	if out := alice.secure(dir, "policy", "add-person", "carol", "--key", carol.key.Public, "--github", "carol-gh"); !strings.Contains(out, "note: without --github-id, the github login carol-gh counts as carol whoever holds it") {
		t.Fatalf("add-person without an id must say what that leaves open:\n%s", out)
	}
	alice.secure(dir, "policy", "set-forge-account", "carol", "--github", "carol-gh", "--github-id", "583232")
	alice.secure(dir, "policy", "add-rule", "reviewed", "--ref", "refs/heads/main", "--allow", "bob", "--allow", "carol", "--threshold", "2")
	// The bridge first serves another repository.
	alice.secure(dir, "trust", "add-forge-app", "ci-bridge", "--key", bridge.key.Public, "--repository", "acme/other")
	alice.secure(dir, "policy", "apply")
	if out := alice.secure(dir, "policy", "list"); !strings.Contains(out, "bound to github acme/other") || !strings.Contains(out, "bob              github bob-gh (id 583231)") {
		t.Fatalf("policy list:\n%s", out)
	}
	alice.git(dir, "push", "-q", "origin", "main")

	alice.git(dir, "checkout", "-q", "-b", "review/x")
	head := alice.commit(dir, "f.txt", "change\n")
	alice.git(dir, "push", "-q", "origin", "HEAD:refs/heads/review/x")
	alice.git(dir, "checkout", "-q", "main")

	gh := &fakeGitHub{head: head, ids: map[string]int{"bob-gh": 583231, "carol-gh": 583232, "robert-gh": 583231}}
	api := gh.serve(t)
	record := func(name, repo string) result { return recordGitHub(ci, url, name, api, repo, bridge.key.Private) }
	mergeable := func(name string) result {
		d := ci.path(name)
		ci.git(ci.sb.Home, "clone", "-q", url, d)
		ci.git(d, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
		return ci.run(d, "git", "secure", "verify", "--mergeable", "--signer", "alice", "main", head)
	}

	// Both approve; the bridge, bound to acme/other, records them there.
	gh.review(101, "bob-gh", "APPROVED", head)
	gh.review(102, "carol-gh", "APPROVED", head)
	if r := record("rec1", "acme/other"); r.code != 0 || !strings.Contains(r.stdout, "github review 101 by bob-gh (bob): approved") {
		t.Fatalf("record-approvals for the bound repository:\n%s", r)
	}
	// The root binds the bridge to this repository: what it recorded for
	// acme/other stops counting, saying why.
	alice.secure(dir, "trust", "bind-forge-app", "ci-bridge", "--repository", "acme/widget")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "origin", "main")
	r := mergeable("m1")
	wantCode(t, "reviews of another repository", r, 1, "needs 2 of bob, carol, has 0",
		"github review 101 by bob-gh ignored: it was recorded for github acme/other, but forge app ci-bridge is bound to github acme/widget: a review of another repository never counts here")
	// The bridge refuses to record for a repository it is not bound to.
	r = record("rec2", "acme/other")
	wantCode(t, "record-approvals for another repository", r, 1, "forge app ci-bridge is bound to github acme/widget, not github acme/other, so its records of acme/other would never count; nothing recorded")

	// bob deleted his account and GitHub gave the login to someone else:
	// the new bob-gh's approval never counts for bob.
	gh.ids["bob-gh"] = 999
	gh.review(103, "bob-gh", "APPROVED", head)
	r = record("rec3", "acme/widget")
	wantCode(t, "record-approvals of a recycled login", r, 0, "github review 102 by carol-gh (carol): approved",
		"review 103 by bob-gh will not count: the github login bob-gh now belongs to account id 999, but the policy maps bob's account id 583231 to it")
	r = mergeable("m3")
	wantCode(t, "a recycled login", r, 1, "needs 2 of bob, carol, has 1 (carol)", "bob can approve",
		"github review 103 by bob-gh ignored: the github login bob-gh now belongs to account id 999, but the policy maps bob's account id 583231 to it: another account with the same login (recycled or renamed) never counts for bob")

	// bob approves from his account, renamed robert-gh: explained as a
	// rename; the server refuses the merge until the mapping says so.
	gh.review(104, "robert-gh", "APPROVED", head)
	record("rec4", "acme/widget")
	r = mergeable("m4")
	wantCode(t, "a renamed account", r, 1, "has 1 (carol)",
		"github review 104 by robert-gh ignored: the policy maps no person to the github login robert-gh, but its account id 583231 is bob's, mapped as bob-gh: the account was renamed; a rules key holder updates it (git secure policy set-forge-account bob --github robert-gh --github-id 583231)")
	alice.git(dir, "merge", "-q", "--ff-only", "review/x")
	if r := alice.run(dir, "git", "push", "origin", "main"); r.code == 0 || !strings.Contains(r.stderr, "rule reviewed") || !strings.Contains(r.stderr, "has 1 (carol)") {
		t.Fatalf("the push of main with a recycled login's and a renamed account's reviews must be refused:\n%s", r)
	}
	alice.secure(dir, "policy", "set-forge-account", "bob", "--github", "robert-gh", "--github-id", "583231")
	alice.secure(dir, "policy", "apply")
	if r := alice.run(dir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("the push of main approved by two reviews:\n%s", r)
	}
	fresh := ci.path("fresh")
	ci.git(ci.sb.Home, "clone", "-q", url, fresh)
	ci.git(fresh, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
	if r := ci.run(fresh, "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("verify in a fresh clone:\n%s", r)
	}

	// The root revokes the bridge's key: record-approvals refuses to sign
	// records that would never count, and says what to do.
	from := len(alice.rslLog(dir)) + 2
	alice.secure(dir, "trust", "revoke-key", bridge.key.Public, "--from-entry", strconv.Itoa(from))
	alice.secure(dir, "policy", "apply")
	if r := alice.run(dir, "git", "push", "origin", "main"); r.code != 0 {
		t.Fatalf("alice pushes the revocation:\n%s", r)
	}
	r = record("rec5", "acme/widget")
	wantCode(t, "record-approvals with a revoked bridge key", r, 1, "forge app ci-bridge's key", "is revoked", "git secure trust add-forge-app")
}

// wantCode checks r's exit code and that its output says each of subs.
func wantCode(t *testing.T, what string, r result, code int, subs ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("%s: exit %d, want %d:\n%s", what, r.code, code, r)
	}
	wantAll(t, what, r, subs...)
}
