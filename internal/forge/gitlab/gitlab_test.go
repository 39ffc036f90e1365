package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/forgereplay"
)

// replay is the recorded GitLab API answers a test serves (forgereplay).
type (
	replay = forgereplay.Replay
	answer = forgereplay.Answer
)

// serve starts a server answering rp as GitLab does.
func serve(t *testing.T, rp replay) *httptest.Server {
	t.Helper()
	return forgereplay.GitLab().Serve(t, rp)
}

const api = "/api/v4/projects/acme%2Fwidget"

func client(t *testing.T, rp replay, token string) *Client {
	t.Helper()
	srv := serve(t, rp)
	c, err := New(srv.URL+"/api/v4", token, "acme/widget", srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMergeRequestAndApprovals(t *testing.T) {
	c := client(t, replay{
		api + "/merge_requests/7":           {File: "mr-7.json"},
		api + "/merge_requests/7/approvals": {File: "approvals-7.json"},
		api + "/merge_requests/8":           {File: "mr-8-merged.json"},
		api + "/approvals":                  {File: "project-approvals.json"},
	}, "t0ken")
	ctx := context.Background()
	mr, err := c.MergeRequest(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if mr.TargetBranch != "main" || mr.HeadSHA != strings.Repeat("1", 40) || mr.MergeSHA != "" || mr.State != "opened" {
		t.Fatalf("merge request: %+v", mr)
	}
	// A merged, squashed merge request: its merge is the squash commit.
	if mr, err := c.MergeRequest(ctx, 8); err != nil || mr.MergeSHA != strings.Repeat("5", 40) || mr.State != "merged" {
		t.Fatalf("merged merge request: %+v, %v", mr, err)
	}
	as, err := c.Approvals(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	// In the order they approved, whatever order the API lists them in.
	if len(as) != 2 || as[0].Username != "bob.gl" || as[0].UserID != 22 || as[1].Username != "carol_gl" || as[1].UserID != 23 {
		t.Fatalf("approvals: %+v", as)
	}
	if ok, err := c.ResetsApprovalsOnPush(ctx); err != nil || !ok {
		t.Fatalf("reset_approvals_on_push: %v, %v", ok, err)
	}
}

// An unapproval drops the user from approved_by: the next read no
// longer lists them (the bridge then records a withdrawal).
func TestUnapproval(t *testing.T) {
	c := client(t, replay{api + "/merge_requests/7/approvals": {File: "approvals-7-unapproved.json"}}, "t0ken")
	as, err := c.Approvals(context.Background(), 7)
	if err != nil || len(as) != 1 || as[0].Username != "bob.gl" {
		t.Fatalf("after carol's unapproval: %+v, %v", as, err)
	}
}

func TestErrors(t *testing.T) {
	malformedMR := `{"iid":7,"state":"opened","target_branch":"main","sha":"not-a-sha"}`
	otherMR := `{"iid":9,"state":"opened","target_branch":"main","sha":"` + strings.Repeat("1", 40) + `"}`
	dupApproval := `{"iid":7,"approved_by":[{"user":{"id":22,"username":"bob.gl"}},{"user":{"id":22,"username":"bob.gl"}}]}`
	noUser := `{"iid":7,"approved_by":[{"approved_at":"2026-12-01T10:01:00Z"}]}`
	tests := []struct {
		name  string
		rp    replay
		token string
		call  func(*Client) error
		want  string
		is    error
	}{
		{"bad token", replay{}, "wrong", func(c *Client) error { _, err := c.MergeRequest(context.Background(), 7); return err },
			"gitlab: read merge request !7 of acme/widget: 401 Unauthorized: the token (GITLAB_TOKEN) is missing or lacks read_api", nil},
		{"not found", replay{}, "t0ken", func(c *Client) error { _, err := c.Approvals(context.Background(), 7); return err },
			"gitlab: read the approvals of merge request !7 of acme/widget: not found (a wrong --repo or --mr, or a token that cannot read the project: give it read_api)", nil},
		{"rate limited", replay{api + "/merge_requests/7": {Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "60"}, Body: `{"message":"Retry later"}`}}, "t0ken",
			func(c *Client) error { _, err := c.MergeRequest(context.Background(), 7); return err },
			"gitlab: API rate limit exhausted: read merge request !7 of acme/widget: retry after 60 s", ErrRateLimited},
		{"server error", replay{api + "/merge_requests/7": {Status: http.StatusBadGateway, Body: `{"message":"502"}`}}, "t0ken",
			func(c *Client) error { _, err := c.MergeRequest(context.Background(), 7); return err },
			"gitlab: read merge request !7 of acme/widget: 502 Bad Gateway", nil},
		{"malformed merge request", replay{api + "/merge_requests/7": {Body: malformedMR}}, "t0ken",
			func(c *Client) error { _, err := c.MergeRequest(context.Background(), 7); return err },
			"gitlab: merge request !7 of acme/widget: the API answered a malformed merge request", nil},
		{"another merge request", replay{api + "/merge_requests/7": {Body: otherMR}}, "t0ken",
			func(c *Client) error { _, err := c.MergeRequest(context.Background(), 7); return err },
			"the API answered a malformed merge request", nil},
		{"duplicate approval", replay{api + "/merge_requests/7/approvals": {Body: dupApproval}}, "t0ken",
			func(c *Client) error { _, err := c.Approvals(context.Background(), 7); return err },
			"gitlab: merge request !7: the API answered a malformed approval", nil},
		{"approval without user", replay{api + "/merge_requests/7/approvals": {Body: noUser}}, "t0ken",
			func(c *Client) error { _, err := c.Approvals(context.Background(), 7); return err },
			"the API answered a malformed approval", nil},
		{"approval settings unreadable", replay{api + "/approvals": {Status: http.StatusForbidden, Body: `{"message":"403 Forbidden"}`}}, "t0ken",
			func(c *Client) error { _, err := c.ResetsApprovalsOnPush(context.Background()); return err },
			"gitlab: read the approval settings of acme/widget: 403 Forbidden: the token (GITLAB_TOKEN) is missing or lacks read_api", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(client(t, tt.rp, tt.token))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("error %v is not %v", err, tt.is)
			}
		})
	}
}

func TestNewRefusesBadProject(t *testing.T) {
	for _, p := range []string{"", "widget", "acme/../x", "acme/wid get", "/acme/widget", "acme/widget/"} {
		if _, err := New("", "", p, nil); err == nil || !strings.Contains(err.Error(), "is not GROUP/NAME or a project id") {
			t.Errorf("project %q: %v", p, err)
		}
	}
	for _, p := range []string{"acme/widget", "acme/tools/widget", "12345"} {
		if _, err := New("", "", p, nil); err != nil {
			t.Errorf("project %q: %v", p, err)
		}
	}
}

// The merge requests of a commit come in pages (X-Next-Page); only those
// merged into the branch count.
func TestMergedRequestsOfCommitPaginated(t *testing.T) {
	sha := strings.Repeat("6", 40)
	page1 := `[{"id":1,"iid":12,"state":"merged","target_branch":"main"},{"id":2,"iid":3,"state":"opened","target_branch":"main"}]`
	page2 := `[{"id":3,"iid":9,"state":"merged","target_branch":"release"},{"id":4,"iid":5,"state":"merged","target_branch":"main"},{"id":1,"iid":12,"state":"merged","target_branch":"main"}]`
	c := client(t, replay{
		api + "/repository/commits/" + sha + "/merge_requests":        {Body: page1, Header: map[string]string{"X-Next-Page": "2", "X-Page": "1", "X-Total-Pages": "2"}},
		api + "/repository/commits/" + sha + "/merge_requests?page=2": {Body: page2, Header: map[string]string{"X-Page": "2", "X-Total-Pages": "2"}},
	}, "t0ken")
	got, err := c.MergedRequestsOfCommit(context.Background(), sha, "main")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[5 12]" {
		t.Fatalf("merged merge requests of main: %v, want [5 12]", got)
	}
	bad := client(t, replay{api + "/repository/commits/" + sha + "/merge_requests": {Body: `[{"id":1,"iid":0,"state":"merged"}]`}}, "t0ken")
	if _, err := bad.MergedRequestsOfCommit(context.Background(), sha, "main"); err == nil || !strings.Contains(err.Error(), "the API answered a malformed merge request") {
		t.Fatalf("malformed: %v", err)
	}
	if _, err := c.MergedRequestsOfCommit(context.Background(), "HEAD", "main"); err == nil || !strings.Contains(err.Error(), `"HEAD" is not a commit id`) {
		t.Fatalf("bad sha: %v", err)
	}
}

// GET merge_ref (not in client-go, made with its request builder): the
// test merge of an open merge request, or why there is none.
func TestMergeRef(t *testing.T) {
	const path = api + "/merge_requests/7/merge_ref"
	merge := strings.Repeat("9", 40)
	c := client(t, replay{path: {Body: `{"commit_id":"` + merge + `"}`}}, "t0ken")
	if got, err := c.MergeRef(context.Background(), 7); err != nil || got != merge {
		t.Fatalf("merge ref: %q, %v", got, err)
	}
	for _, tc := range []struct {
		name  string
		a     answer
		token string
		want  string
		is    error
	}{
		{"conflicts", answer{Status: http.StatusBadRequest, Body: `{"message":"Merge request is not mergeable"}`}, "t0ken",
			"gitlab: no merge ref: merge request !7 of acme/widget cannot be merged (Merge request is not mergeable): resolve its conflicts", ErrNoMergeRef},
		{"not found", answer{Status: http.StatusNotFound, Body: `{"message":"404 Not found"}`}, "t0ken",
			"gitlab: read the merge ref of merge request !7 of acme/widget: not found", nil},
		{"bad token", answer{Body: `{}`}, "wrong", "gitlab: read the merge ref of merge request !7 of acme/widget: 401 Unauthorized", nil},
		{"rate limited", answer{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "30"}, Body: `{"message":"Retry later"}`}, "t0ken",
			"read the merge ref of merge request !7 of acme/widget: retry after 30 s", ErrRateLimited},
		{"malformed", answer{Body: `{"commit_id":"abc"}`}, "t0ken", "gitlab: merge request !7 of acme/widget: the API answered a malformed merge ref", nil},
		{"not json", answer{Body: `<html>`}, "t0ken", "gitlab: read the merge ref of merge request !7 of acme/widget:", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client(t, replay{path: tc.a}, tc.token).MergeRef(context.Background(), 7)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("error %v is not %v", err, tc.is)
			}
			if tc.is == nil && errors.Is(err, ErrNoMergeRef) {
				t.Fatalf("error %v must not say there is no merge ref", err)
			}
		})
	}
}

// The API root as client-go took it: api/v4 added to a bare host.
func TestAPIBase(t *testing.T) {
	for in, want := range map[string]string{
		"":                              "https://gitlab.com/api/v4/",
		"https://gitlab.example":        "https://gitlab.example/api/v4/",
		"https://gitlab.example/":       "https://gitlab.example/api/v4/",
		"https://gitlab.example/api/v4": "https://gitlab.example/api/v4/",
		"https://host/gitlab/api/v4/":   "https://host/gitlab/api/v4/",
		"http://127.0.0.1:8080/api/v4":  "http://127.0.0.1:8080/api/v4/",
		"https://host/gitlab":           "https://host/gitlab/api/v4/",
		"gitlab.example":                "",
		"ftp://host/api/v4":             "",
		"https://host/api/v4?x=1":       "",
		"https://host:bad/api/v4":       "",
	} {
		got, err := apiBase(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("apiBase(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// A project path goes in one segment, its slash and dots escaped.
func TestProjectPathEscaped(t *testing.T) {
	c := client(t, replay{"/api/v4/projects/acme%2Fwid%2Eget/approvals": {Body: `{"reset_approvals_on_push":true}`}}, "t0ken")
	c.project = "acme/wid.get"
	if ok, err := c.ResetsApprovalsOnPush(context.Background()); err != nil || !ok {
		t.Fatalf("escaped project path: %v, %v", ok, err)
	}
}
