package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// ghPull is one pull request as the replaying GitHub API serves it.
type ghPull struct {
	head, merge string // head sha; merge_commit_sha ("" none)
	merged      bool
	reviews     []map[string]any
}

// fakeGitHubPulls replays GitHub's REST answers for several pull requests
// of acme/widget (GET pulls/N and pulls/N/reviews), shaped as GitHub's
// API shapes them; the test changes them between runs.
type fakeGitHubPulls struct {
	mu    sync.Mutex
	pulls map[int]*ghPull
	n     int // review ids
}

func (g *fakeGitHubPulls) pull(n int, head string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pulls == nil {
		g.pulls = map[int]*ghPull{}
	}
	g.pulls[n] = &ghPull{head: head}
}

// review adds a review (an approval or a request for changes) and returns
// its id.
func (g *fakeGitHubPulls) review(n int, login, state string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.pulls[n]
	g.n++
	id := 500 + g.n
	p.reviews = append(p.reviews, map[string]any{"id": id, "user": map[string]any{"login": login, "id": forgeUserID(login), "type": "User"}, "state": state,
		"commit_id": p.head, "submitted_at": fmt.Sprintf("2026-12-01T10:%02d:00Z", g.n), "author_association": "MEMBER"})
	return id
}

// dismiss changes review id in place, as a dismissal on GitHub does.
func (g *fakeGitHubPulls) dismiss(n, id int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.pulls[n].reviews {
		if r["id"] == id {
			r["state"] = "DISMISSED"
		}
	}
}

// merged marks pull n merged as commit sha (GitHub's merge_commit_sha
// after a merge: the merge, squash or last rebased commit).
func (g *fakeGitHubPulls) merged(n int, sha string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pulls[n].merged, g.pulls[n].merge = true, sha
}

func (g *fakeGitHubPulls) serve(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer ci-token" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"message":"Bad credentials"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if sha, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/repos/acme/widget/commits/"), "/pulls"); ok && sha != r.URL.Path {
			json.NewEncoder(w).Encode(g.pullsOf(sha))
			return
		}
		rest, ok := strings.CutPrefix(r.URL.Path, "/repos/acme/widget/pulls/")
		num, sub, _ := strings.Cut(rest, "/")
		n, err := strconv.Atoi(num)
		p := g.pulls[n]
		if !ok || err != nil || p == nil || (sub != "" && sub != "reviews") {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"Not Found"}`)
			return
		}
		if sub == "reviews" {
			json.NewEncoder(w).Encode(p.reviews)
			return
		}
		pr := p.json(n)
		pr["merged"] = p.merged
		json.NewEncoder(w).Encode(pr)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// json is pull n as a listing shapes it (merged_at, no merged).
func (p *ghPull) json(n int) map[string]any {
	state, mergedAt := "open", any(nil)
	if p.merged {
		state, mergedAt = "closed", "2026-12-01T12:00:00Z"
	}
	pr := map[string]any{"number": n, "state": state, "merged_at": mergedAt,
		"head": map[string]any{"ref": fmt.Sprintf("review/%d", n), "sha": p.head}, "base": map[string]any{"ref": "main"}}
	if p.merge != "" {
		pr["merge_commit_sha"] = p.merge
	}
	return pr
}

// pullsOf answers "list pull requests associated with a commit": the
// pull request merged as sha, and the open ones whose head is sha.
func (g *fakeGitHubPulls) pullsOf(sha string) []map[string]any {
	out := []map[string]any{}
	for n, p := range g.pulls {
		if (p.merged && p.merge == sha) || (!p.merged && p.head == sha) {
			out = append(out, p.json(n))
		}
	}
	return out
}

// Issue 17 item 3, the whole GitHub flow against a server replaying
// GitHub's API, on a bare repository with no hook (as GitHub.com): pull
// requests reviewed on the forge, merged with the merge button or
// squashed (a ref move on the server nobody records), the CI job of the
// push records the move signed by the forge bridge exactly when the
// recorded reviews meet the rule, and a fresh clone verifies.
func TestForgeMergeButtonFlow(t *testing.T) {
	srv := startServer(t, trFile)
	path, url := srv.newRepo("gh.git", false) // GitHub runs no hook
	alice, bob, carol, bridge, ci := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "carol"), newUser(t, "bridge"), newUser(t, "ci")
	dir := benchRepo(t, alice, "work", url, true)
	alice.secure(dir, "policy", "add-person", "bob", "--key", bob.key.Public, "--github", "bob-gh")
	alice.secure(dir, "policy", "add-person", "carol", "--key", carol.key.Public, "--github", "carol-gh")
	alice.secure(dir, "policy", "add-rule", "reviewed", "--ref", "refs/heads/main", "--allow", "bob", "--allow", "carol", "--threshold", "2", "--tree-approvals")
	alice.secure(dir, "policy", "remove-rule", "protect-main") // benchRepo's: main is reviewed instead
	alice.secure(dir, "trust", "add-forge-app", "ci-bridge", "--key", bridge.key.Public, "--repository", "acme/widget")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "origin", "main")
	bridgeKey := readFile(t, bridge.key.Private)

	gh := &fakeGitHubPulls{}
	api := gh.serve(t)
	server := func(args ...string) string { return strings.TrimSpace(srv.admin.git(path, args...)) }
	// openPR pushes a branch with one commit on main's current value.
	openPR := func(n int, file string) string {
		alice.git(dir, "fetch", "-q", "origin")
		alice.git(dir, "checkout", "-q", "-B", fmt.Sprintf("review/%d", n), "origin/main")
		head := alice.commit(dir, file, fmt.Sprintf("pull request %d\n", n))
		alice.git(dir, "push", "-q", "origin", fmt.Sprintf("HEAD:refs/heads/review/%d", n))
		alice.git(dir, "checkout", "-q", "main")
		gh.pull(n, head)
		return head
	}
	// mergeButton makes the commit GitHub's merge button (or squash)
	// makes, on the server, and moves main to it with no hook.
	mergeButton := func(n int, squash bool) string {
		base, head := server("rev-parse", "refs/heads/main"), gh.pulls[n].head
		tree := server("merge-tree", "--write-tree", base, head)
		args := []string{"commit-tree", tree, "-p", base}
		if !squash {
			args = append(args, "-p", head)
		}
		x := server(append(args, "-m", fmt.Sprintf("Merge pull request #%d", n))...)
		server("update-ref", "refs/heads/main", x, base)
		gh.merged(n, x)
		return x
	}
	// job runs a CI job in a fresh depth-1 checkout: the fetch step, then
	// the given steps; it returns the last step's result.
	jobN := 0
	// The step "record-approvals" runs the bridge's record-approvals with
	// args (then pushes the store); the others are CI script steps with
	// args as their environment.
	job := func(args []string, steps ...string) result {
		jobN++
		sha := server("rev-parse", "refs/heads/main")
		d := checkoutLikeActions(ci, url, fmt.Sprintf("job%d", jobN), sha, "refs/remotes/origin/main")
		if r := runCI(ci, d, nil, "fetch"); r.code != 0 {
			t.Fatalf("fetch step:\n%s", r)
		}
		var r result
		for _, s := range steps {
			if s == "record-approvals" {
				saved := ci.sb.Extra
				ci.sb.Extra = append(append([]string{}, saved...), "GITHUB_TOKEN=ci-token")
				r = ci.run(d, "git", append([]string{"secure", "forge", "record-approvals", "--repo", "acme/widget", "--api-url", api, "--key", bridge.key.Private}, args...)...)
				ci.sb.Extra = saved
				if r.code != 0 {
					return r
				}
				ci.git(d, "push", "-q", "origin", "refs/secure/attestations")
				continue
			}
			if r = runCI(ci, d, args, s); r.code != 0 {
				return r
			}
		}
		return r
	}
	reviews := func(n int) {
		t.Helper()
		if r := job([]string{"--pr", strconv.Itoa(n)}, "record-approvals"); r.code != 0 {
			t.Fatalf("record-approvals --pr %d:\n%s", n, r)
		}
	}
	// The push job has the token and repository a GitHub Actions job has,
	// so record-merge asks the API about a step it cannot record.
	pushEnv := func(sha string) []string {
		return []string{"GITHUB_EVENT_NAME=push", "GITHUB_REF=refs/heads/main", "GITHUB_SHA=" + sha,
			"GITHUB_TOKEN=ci-token", "GITHUB_REPOSITORY=acme/widget", "GITHUB_API_URL=" + api,
			"GIT_SECURE_BRIDGE_KEY=" + bridgeKey, "GITHUB_STEP_SUMMARY=" + ci.path(fmt.Sprintf("summary-%d.md", jobN+1))}
	}
	freshVerify := func(name string) result {
		d := ci.path(name)
		ci.git(ci.sb.Home, "clone", "-q", url, d)
		ci.git(d, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
		return ci.run(d, "git", "secure", "verify")
	}

	// 1. Two mapped persons approve; the merge button merges; the push's
	// job records the move (signed by the bridge) and verifies.
	openPR(1, "one.txt")
	gh.review(1, "bob-gh", "APPROVED")
	gh.review(1, "carol-gh", "APPROVED")
	reviews(1)
	x1 := mergeButton(1, false)
	if r := freshVerify("fresh0"); r.code != 1 || !strings.Contains(r.stdout+r.stderr, "refs/heads/main") {
		t.Fatalf("before the job, the forge's unrecorded move fails verification:\n%s", r)
	}
	r := job(pushEnv(x1), "record-merge", "verify")
	if r.code != 0 {
		t.Fatalf("the job of the merge-button push:\n%s", r)
	}
	if r := freshVerify("fresh1"); r.code != 0 {
		t.Fatalf("verify in a fresh clone after the recorded merge:\n%s", r)
	}
	if out := ci.secure(ci.path("fresh1"), "rsl", "log"); !strings.Contains(out, x1[:12]+"  by forge app ci-bridge, for the forge's merge") {
		t.Fatalf("the log does not record the merge %s:\n%s", x1[:12], out)
	}

	// 2. One review missing (and one by an account the policy does not
	// map): the job fails naming carol, and a fresh clone does not verify.
	openPR(2, "two.txt")
	gh.review(2, "bob-gh", "APPROVED")
	gh.review(2, "mallory-gh", "APPROVED")
	reviews(2)
	x2 := mergeButton(2, false)
	r = job(pushEnv(x2), "record-merge")
	for _, want := range []string{"the forge moved refs/heads/main from " + x1[:12] + " to " + x2[:12] + " without the approvals the policy needs",
		"rule reviewed: needs 2 of bob, carol, has 1 (bob)", "carol can approve",
		"github review", "by mallory-gh ignored: the policy maps that account to no person",
		"the bridge never counts as a person", "is not allowed with the approvals recorded for it"} {
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Fatalf("a merge with one mapped review: the job must fail saying %q:\n%s", want, r)
		}
	}
	if s := readFile(t, ci.path(fmt.Sprintf("summary-%d.md", jobN))); !strings.Contains(s, "is NOT allowed (exit 1)") {
		t.Fatalf("summary of the refused job:\n%s", s)
	}
	if r := freshVerify("fresh2"); r.code != 1 || !strings.Contains(r.stdout+r.stderr, "refs/heads/main") {
		t.Fatalf("an unapproved forge merge must fail verification of a fresh clone:\n%s", r)
	}
	// carol approves after the merge: the job run again finds her review
	// on the merged pull request, records it bound to the merge commit and
	// records the move.
	gh.review(2, "carol-gh", "APPROVED")
	if r := job(pushEnv(x2), "record-merge"); r.code != 0 || !strings.Contains(r.stderr, "recorded the reviews of github pull request 2 ("+x1[:12]+".."+x2[:12]) {
		t.Fatalf("the job after carol's approval:\n%s", r)
	}
	if r := freshVerify("fresh3"); r.code != 0 {
		t.Fatalf("verify in a fresh clone after carol's approval:\n%s", r)
	}

	// 3. A squash merge: carol's review is dismissed, so it stops
	// counting; approved again, the squash commit (a commit no reviewer
	// saw, with the reviewed tree) records and verifies.
	openPR(3, "three.txt")
	gh.review(3, "bob-gh", "APPROVED")
	c3 := gh.review(3, "carol-gh", "APPROVED")
	reviews(3)
	gh.dismiss(3, c3)
	reviews(3)
	x3 := mergeButton(3, true)
	r = job(pushEnv(x3), "record-merge")
	if r.code != 1 || !strings.Contains(r.stderr, "has 1 (bob)") || !strings.Contains(r.stderr, fmt.Sprintf("github review %d by carol-gh was withdrawn", c3)) {
		t.Fatalf("a dismissed review must stop counting:\n%s", r)
	}
	gh.review(3, "carol-gh", "APPROVED")
	reviews(3)
	if r := job(pushEnv(x3), "record-merge", "verify"); r.code != 0 {
		t.Fatalf("the job of an approved squash merge:\n%s", r)
	}
	if r := freshVerify("fresh4"); r.code != 0 {
		t.Fatalf("verify in a fresh clone after the squash merge:\n%s", r)
	}

	// 4. Two merges in a row before any job ran (the race): the second
	// pull request's reviews were bound to the old base. The job finds,
	// through the API, the pull request merged as the second step, records
	// its reviews bound to the merge commit, and records both in order.
	openPR(4, "four.txt")
	openPR(5, "five.txt")
	for _, n := range []int{4, 5} {
		gh.review(n, "bob-gh", "APPROVED")
		gh.review(n, "carol-gh", "APPROVED")
		reviews(n)
	}
	x4 := mergeButton(4, false)
	x5 := mergeButton(5, false)
	r = job(pushEnv(x5), "record-merge")
	if r.code != 0 || !strings.Contains(r.stderr, "recorded the reviews of github pull request 5 ("+x4[:12]+".."+x5[:12]) ||
		!strings.Contains(r.stderr, x3[:12]+".."+x4[:12]+", signed by forge app ci-bridge") || !strings.Contains(r.stderr, x4[:12]+".."+x5[:12]+", signed by forge app ci-bridge") {
		t.Fatalf("two merges in a row: both must record:\n%s", r)
	}
	// The late job of the first push records nothing.
	if r := job(pushEnv(x4), "record-merge"); r.code != 0 || !strings.Contains(r.stderr, "nothing to record") {
		t.Fatalf("a late job of an earlier push:\n%s", r)
	}
	if r := freshVerify("fresh5"); r.code != 0 {
		t.Fatalf("verify in a fresh clone after both merges:\n%s", r)
	}

	// 4b. The same race where the second pull request is squashed (a
	// commit of one parent, the first merge): the bridge computes the
	// merge of the reviewed head into the first merge (git merge-tree)
	// and, as the squash commit has that tree, binds the reviews to it.
	// The head's branch was deleted after the merge: the bridge fetches
	// refs/pull/7/head, which GitHub keeps.
	openPR(6, "six.txt")
	h7 := openPR(7, "seven.txt")
	for _, n := range []int{6, 7} {
		gh.review(n, "bob-gh", "APPROVED")
		gh.review(n, "carol-gh", "APPROVED")
		reviews(n)
	}
	x6 := mergeButton(6, false)
	x7 := mergeButton(7, true)
	server("update-ref", "refs/pull/7/head", h7)
	server("update-ref", "-d", "refs/heads/review/7")
	r = job(pushEnv(x7), "record-merge")
	if r.code != 0 || !strings.Contains(r.stderr, "recorded the reviews of github pull request 7 ("+x6[:12]+".."+x7[:12]) ||
		!strings.Contains(r.stderr, x6[:12]+".."+x7[:12]+", signed by forge app ci-bridge") {
		t.Fatalf("a squash merge racing a merge: both must record:\n%s", r)
	}
	if r := freshVerify("fresh6"); r.code != 0 {
		t.Fatalf("verify in a fresh clone after the squash race:\n%s", r)
	}

	// 5. A move that rewrites history is never recorded by the bridge.
	base := server("rev-parse", "refs/heads/main")
	rewrite := server("commit-tree", server("rev-parse", base+"^{tree}"), "-p", x1, "-m", "rewritten")
	server("update-ref", "refs/heads/main", rewrite, base)
	if r := job(pushEnv(rewrite), "record-merge"); r.code != 1 || !strings.Contains(r.stderr, "which does not contain it (a force push or history rewrite): a forge app never records that; revert it") {
		t.Fatalf("a forge rewrite must be refused:\n%s", r)
	}
}
