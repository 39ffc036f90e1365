package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeGitLab replays GitLab's REST answers for merge request !1 of
// acme/widget (the merge request, its approvals, the project's approval
// settings), shaped as GitLab's v4 API shapes them.
type fakeGitLab struct {
	mu        sync.Mutex
	head      string
	state     string
	merge     string
	mergeRef  string // refs/merge-requests/1/merge of the open merge request ("" cannot be merged)
	reset     bool
	approvals []map[string]any
	minute    int
}

func (g *fakeGitLab) approve(id int, username string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.minute++
	g.approvals = append(g.approvals, map[string]any{"user": map[string]any{"id": id, "username": username, "state": "active"},
		"approved_at": fmt.Sprintf("2026-12-01T10:%02d:00.000Z", g.minute)})
}

func (g *fakeGitLab) unapprove(username string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var keep []map[string]any
	for _, a := range g.approvals {
		if a["user"].(map[string]any)["username"] != username {
			keep = append(keep, a)
		}
	}
	g.approvals = keep
}

func (g *fakeGitLab) serve(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if r.Header.Get("PRIVATE-TOKEN") != "gl-token" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"message":"401 Unauthorized"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		const p = "/api/v4/projects/acme%2Fwidget"
		switch r.URL.EscapedPath() {
		case p + "/approvals":
			json.NewEncoder(w).Encode(map[string]any{"approvals_before_merge": 0, "reset_approvals_on_push": g.reset})
		case p + "/merge_requests/1":
			mr := map[string]any{"id": 901, "iid": 1, "project_id": 42, "state": g.state, "target_branch": "main", "source_branch": "review/1", "sha": g.head}
			if g.merge != "" {
				mr["merge_commit_sha"] = g.merge
			}
			json.NewEncoder(w).Encode(mr)
		case p + "/repository/commits/" + g.head + "/merge_requests":
			if g.state != "merged" {
				json.NewEncoder(w).Encode([]any{})
				return
			}
			json.NewEncoder(w).Encode([]map[string]any{{"id": 901, "iid": 1, "state": "merged", "target_branch": "main"}})
		case p + "/merge_requests/1/merge_ref":
			if g.mergeRef == "" {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"message":"Merge request is not mergeable"}`)
				return
			}
			json.NewEncoder(w).Encode(map[string]any{"commit_id": g.mergeRef})
		case p + "/merge_requests/1/approvals":
			approved := g.approvals
			if approved == nil {
				approved = []map[string]any{}
			}
			json.NewEncoder(w).Encode(map[string]any{"id": 901, "iid": 1, "project_id": 42, "approved_by": approved})
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"404 Not found"}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/api/v4"
}

// Issue 17 items 2 and 3 on GitLab, against a server replaying GitLab's
// API: approvals of a merge request by two mapped persons count, an
// unapproval is recorded as withdrawn and stops counting, a project that
// keeps approvals across pushes is refused, and GitLab's merge (a
// fast-forward on the server, no hook) is recorded by the CI job and
// verifies in a fresh clone.
func TestForgeGitLabApprovalsAndMerge(t *testing.T) {
	srv := startServer(t, trFile)
	path, url := srv.newRepo("gl.git", false)
	alice, bob, carol, bridge, ci := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "carol"), newUser(t, "bridge"), newUser(t, "ci")
	dir := benchRepo(t, alice, "work", url, true)
	alice.secure(dir, "policy", "remove-rule", "protect-main")
	alice.secure(dir, "policy", "add-person", "bob", "--key", bob.key.Public, "--gitlab", "bob.gl")
	alice.secure(dir, "policy", "add-person", "carol", "--key", carol.key.Public, "--gitlab", "carol_gl")
	alice.secure(dir, "policy", "add-rule", "reviewed", "--ref", "refs/heads/main", "--allow", "bob", "--allow", "carol", "--threshold", "2", "--tree-approvals")
	alice.secure(dir, "trust", "add-forge-app", "ci-bridge", "--key", bridge.key.Public, "--forge", "gitlab", "--repository", "acme/widget")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "origin", "main")
	alice.git(dir, "checkout", "-q", "-b", "review/1")
	head := alice.commit(dir, "f.txt", "merge request 1\n")
	alice.git(dir, "push", "-q", "origin", "HEAD:refs/heads/review/1")
	alice.git(dir, "checkout", "-q", "main")

	gl := &fakeGitLab{head: head, state: "opened", reset: true}
	api := gl.serve(t)
	n := 0
	clone := func() string {
		n++
		d := ci.path(fmt.Sprintf("c%d", n))
		ci.git(ci.sb.Home, "clone", "-q", url, d)
		ci.git(d, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
		return d
	}
	record := func() result {
		d := clone()
		saved := ci.sb.Extra
		ci.sb.Extra = append(append([]string{}, saved...), "GITLAB_TOKEN=gl-token", "CI_PROJECT_PATH=acme/widget", "CI_API_V4_URL="+api)
		r := ci.run(d, "git", "secure", "forge", "record-approvals", "--gitlab", "--mr", "1", "--key", bridge.key.Private)
		ci.sb.Extra = saved
		if r.code == 0 {
			ci.git(d, "push", "-q", "origin", "refs/secure/attestations")
		}
		return r
	}
	mergeable := func() result {
		return ci.run(clone(), "git", "secure", "verify", "--mergeable", "main", head)
	}

	// bob and carol approve: both count through the forge.
	gl.approve(22, "bob.gl")
	gl.approve(23, "carol_gl")
	if r := record(); r.code != 0 || !strings.Contains(r.stdout, "by bob.gl (bob): approved") || !strings.Contains(r.stdout, "by carol_gl (carol): approved") {
		t.Fatalf("record-approvals --gitlab:\n%s", r)
	}
	if r := mergeable(); r.code != 0 || !strings.Contains(r.stdout, "result: satisfied") || !strings.Contains(r.stdout, "carol via gitlab review") {
		t.Fatalf("two GitLab approvals: mergeable:\n%s", r)
	}

	// carol unapproves: recorded as withdrawn, she no longer counts.
	gl.unapprove("carol_gl")
	if r := record(); r.code != 0 || !strings.Contains(r.stdout, "by carol_gl (carol): withdrawn") || !strings.Contains(r.stdout, "by bob.gl (bob): approved") {
		t.Fatalf("record-approvals after the unapproval:\n%s", r)
	}
	if r := mergeable(); r.code != 1 || !strings.Contains(r.stdout, "has 1 (bob)") || !strings.Contains(r.stdout, "carol can approve") || !strings.Contains(r.stdout, "by carol_gl was withdrawn") {
		t.Fatalf("an unapproval must stop counting:\n%s", r)
	}

	// A project that keeps approvals across pushes: nothing recorded.
	gl.reset = false
	if r := record(); r.code != 1 || !strings.Contains(r.stderr, "project acme/widget keeps approvals when commits are pushed to a merge request") || !strings.Contains(r.stderr, "Remove all approvals when commits are added to the source branch") {
		t.Fatalf("approvals that survive pushes must be refused:\n%s", r)
	}
	gl.reset = true

	// carol approves again (a new approval; GitLab runs no pipeline for
	// it): GitLab fast-forwards main on the server, the CI job of the push
	// records the approvals of the merge request it landed, then the move,
	// and a fresh clone verifies.
	gl.approve(23, "carol_gl")
	base := strings.TrimSpace(srv.admin.git(path, "rev-parse", "refs/heads/main"))
	srv.admin.git(path, "update-ref", "refs/heads/main", head, base)
	gl.state, gl.merge = "merged", head
	d := checkoutLikeActions(ci, url, "job", head, "refs/remotes/origin/main")
	if r := runCI(ci, d, nil, "fetch"); r.code != 0 {
		t.Fatalf("fetch step:\n%s", r)
	}
	env := []string{"GITLAB_TOKEN=gl-token", "CI_API_V4_URL=" + api, "CI_PROJECT_PATH=acme/widget", "CI_PIPELINE_SOURCE=push", "CI_COMMIT_BRANCH=main", "CI_COMMIT_SHA=" + head, "GIT_SECURE_BRIDGE_KEY_FILE=" + bridge.key.Private, "GIT_SECURE_SUMMARY=" + ci.path("summary.md")}
	if r := runCI(ci, d, env, "record-merge"); r.code != 0 || !strings.Contains(r.stderr, "by carol_gl (carol): approved") || !strings.Contains(r.stderr, "signed by forge app ci-bridge, approved by") {
		t.Fatalf("record-merge of GitLab's merge:\n%s", r)
	}
	if r := ci.run(clone(), "git", "secure", "verify"); r.code != 0 {
		t.Fatalf("verify in a fresh clone:\n%s", r)
	}
}

// Issue 17: an open GitLab merge request whose head does not contain the
// target's recorded tip (main moved after the branch was made): its
// approvals bind GitLab's test merge, the commit of
// refs/merge-requests/1/merge read through GET merge_ref, as GitHub's
// approvals bind refs/pull/N/merge; merging it is then mergeable.
//
// The bridge is bound to the project's numeric id and the persons are
// mapped with their account ids: the records name the id GitLab answers
// for the merge request's project, and the approvers' ids.
func TestForgeGitLabMergeRef(t *testing.T) {
	srv := startServer(t, trFile)
	path, url := srv.newRepo("glref.git", false)
	alice, bob, carol, bridge, ci := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "carol"), newUser(t, "bridge"), newUser(t, "ci")
	dir := benchRepo(t, alice, "work", url, true)
	alice.git(dir, "checkout", "-q", "-b", "review/1")
	head := alice.commit(dir, "f.txt", "merge request 1\n")
	alice.git(dir, "push", "-q", "origin", "HEAD:refs/heads/review/1")
	alice.git(dir, "checkout", "-q", "main")
	// main moves on after the branch was made.
	alice.commit(dir, "g.txt", "meanwhile\n")
	alice.git(dir, "push", "-q", "origin", "main")
	alice.secure(dir, "policy", "add-person", "bob", "--key", bob.key.Public, "--gitlab", "bob.gl", "--gitlab-id", "22")
	alice.secure(dir, "policy", "add-person", "carol", "--key", carol.key.Public, "--gitlab", "carol_gl", "--gitlab-id", "23")
	alice.secure(dir, "policy", "add-rule", "reviewed", "--ref", "refs/heads/main", "--allow", "bob", "--allow", "carol", "--threshold", "2")
	alice.secure(dir, "policy", "remove-rule", "protect-main")
	alice.secure(dir, "trust", "add-forge-app", "ci-bridge", "--key", bridge.key.Public, "--forge", "gitlab", "--repository", "42") // the project's id, kept across renames
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "origin", "main")
	server := func(args ...string) string { return strings.TrimSpace(srv.admin.git(path, args...)) }
	base := server("rev-parse", "refs/heads/main")
	// GitLab writes its test merge to refs/merge-requests/1/merge.
	mergeRef := server("commit-tree", server("merge-tree", "--write-tree", base, head), "-p", base, "-p", head, "-m", "Merge branch 'review/1' into 'main'")
	server("update-ref", "refs/merge-requests/1/merge", mergeRef)

	gl := &fakeGitLab{head: head, state: "opened", reset: true}
	api := gl.serve(t)
	gl.approve(22, "bob.gl")
	gl.approve(23, "carol_gl")
	record := func() result {
		d := ci.path(fmt.Sprintf("c-%d", len(gl.mergeRef)))
		ci.git(ci.sb.Home, "clone", "-q", url, d)
		ci.git(d, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*", "refs/merge-requests/1/merge")
		saved := ci.sb.Extra
		ci.sb.Extra = append(append([]string{}, saved...), "GITLAB_TOKEN=gl-token", "CI_PROJECT_PATH=acme/widget", "CI_API_V4_URL="+api)
		defer func() { ci.sb.Extra = saved }()
		r := ci.run(d, "git", "secure", "forge", "record-approvals", "--gitlab", "--mr", "1", "--key", bridge.key.Private)
		if r.code == 0 {
			ci.git(d, "push", "-q", "origin", "refs/secure/attestations")
		}
		return r
	}
	// No merge ref (GitLab answers 400: conflicts): nothing is recorded,
	// and the message says to update the merge request.
	if r := record(); r.code != 1 || !strings.Contains(r.stderr, "does not contain refs/heads/main's recorded tip "+base[:12]+" and the forge made no merge commit: update the pull request") {
		t.Fatalf("a merge request GitLab cannot merge:\n%s", r)
	}
	gl.mergeRef = mergeRef
	if r := record(); r.code != 0 || !strings.Contains(r.stdout, "refs/heads/main "+base[:12]+".."+mergeRef[:12]) || !strings.Contains(r.stdout, "by carol_gl (carol): approved") {
		t.Fatalf("approvals of a merge request behind main must bind its merge ref %s:\n%s", mergeRef[:12], r)
	}
	d := ci.path("check")
	ci.git(ci.sb.Home, "clone", "-q", url, d)
	ci.git(d, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*", "refs/merge-requests/1/merge")
	if r := ci.run(d, "git", "secure", "verify", "--mergeable", "main", mergeRef); r.code != 0 || !strings.Contains(r.stdout, "result: satisfied") || !strings.Contains(r.stdout, "carol via gitlab review") {
		t.Fatalf("merging the merge ref must be mergeable:\n%s", r)
	}
}
