package github

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/testing/forgereplay"
)

// replay is the recorded GitHub API answers a test serves (forgereplay).
type (
	replay = forgereplay.Replay
	answer = forgereplay.Answer
)

// client is a client of acme/widget with token, served rp as GitHub
// would.
func client(t *testing.T, rp replay, token string) *Client {
	t.Helper()
	srv := forgereplay.GitHub().Serve(t, rp)
	c, err := New(srv.URL, token, "acme/widget", srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var recorded = replay{
	"/repos/acme/widget/pulls/7": {File: "pull-7.json"},
	"/repos/acme/widget/pulls/7/reviews?per_page=100": {File: "reviews-7-page1.json", Header: map[string]string{
		"Link": `<{URL}/repos/acme/widget/pulls/7/reviews?page=2&per_page=100>; rel="next", <{URL}/repos/acme/widget/pulls/7/reviews?page=2&per_page=100>; rel="last"`}},
	"/repos/acme/widget/pulls/7/reviews?page=2&per_page=100": {File: "reviews-7-page2.json"},
}

func TestPullRequestAndReviewsPaginated(t *testing.T) {
	c := client(t, recorded, "t0ken")
	pr, err := c.PullRequest(context.Background(), 7)
	if err != nil {
		t.Fatal(err)
	}
	if pr.BaseRef != "main" || pr.HeadSHA != strings.Repeat("1", 40) || pr.MergeSHA != strings.Repeat("3", 40) || pr.State != "open" {
		t.Fatalf("pull request: %+v", pr)
	}
	rs, err := c.Reviews(context.Background(), 7)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, fmt.Sprintf("%d:%s/%d:%s", r.ID, r.Login, r.UserID, r.State))
	}
	// Both pages, in submission order (page 2's dismissed review 504 was
	// submitted before page 2's approval 503).
	want := "501:bob-gh/12:APPROVED 502:carol-gh/13:COMMENTED 504:dave-gh/14:DISMISSED 503:bob-gh/12:APPROVED"
	if strings.Join(got, " ") != want {
		t.Fatalf("reviews: %s\nwant:    %s", strings.Join(got, " "), want)
	}
}

func TestAPIErrors(t *testing.T) {
	reset := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		replay replay
		token  string
		want   []string
		rate   bool
	}{
		{"rate limit", replay{"/repos/acme/widget/pulls/7": {Status: 403, Body: `{"message":"API rate limit exceeded for installation ID 1.","documentation_url":"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"}`,
			Header: map[string]string{"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": fmt.Sprint(reset.Unix())}}},
			"t0ken", []string{"rate limit exhausted", "limit of 5000 requests resets at 2026-12-05T10:00:00Z", "GITHUB_TOKEN"}, true},
		{"secondary rate limit", replay{"/repos/acme/widget/pulls/7": {Status: 403, Body: `{"message":"You have exceeded a secondary rate limit.","documentation_url":"https://docs.github.com/rest/overview/resources-in-the-rest-api#secondary-rate-limits"}`,
			Header: map[string]string{"Retry-After": "60"}}},
			"t0ken", []string{"secondary rate limit", "retry after 1m0s"}, true},
		{"not found", replay{}, "t0ken", []string{"read pull request 7 of acme/widget: not found", "token without read access"}, false},
		{"bad token", recorded, "wrong", []string{"401 Unauthorized", "pull-requests: read"}, false},
		{"server error", replay{"/repos/acme/widget/pulls/7": {Status: 502, Body: `{"message":"Server Error"}`}}, "t0ken", []string{"502", "Server Error"}, false},
		{"malformed head", replay{"/repos/acme/widget/pulls/7": {Body: `{"number":7,"state":"open","head":{"sha":"xyz"},"base":{"ref":"main"}}`}}, "t0ken", []string{"malformed pull request"}, false},
		{"other pull request", replay{"/repos/acme/widget/pulls/7": {Body: `{"number":8,"state":"open","head":{"sha":"` + strings.Repeat("1", 40) + `"},"base":{"ref":"main"}}`}}, "t0ken", []string{"malformed pull request"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := client(t, tc.replay, tc.token)
			_, err := c.PullRequest(context.Background(), 7)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if errors.Is(err, ErrRateLimited) != tc.rate {
				t.Errorf("errors.Is(err, ErrRateLimited) = %v, want %v", !tc.rate, tc.rate)
			}
		})
	}
}

// A review with a bad commit id, or whose reviewer has no numeric account
// id (the bridge records it, so that a login that changed hands is told
// apart), is refused.
func TestMalformedReviewRefused(t *testing.T) {
	for _, body := range []string{
		`[{"id":1,"user":{"login":"bob-gh","id":12},"state":"APPROVED","commit_id":"not-a-sha"}]`,
		`[{"id":1,"user":{"login":"bob-gh"},"state":"APPROVED","commit_id":"` + strings.Repeat("1", 40) + `"}]`,
		`[{"id":1,"user":{"login":"bob-gh","id":0},"state":"APPROVED","commit_id":"` + strings.Repeat("1", 40) + `"}]`,
	} {
		c := client(t, replay{"/repos/acme/widget/pulls/7/reviews?per_page=100": {Body: body}}, "t0ken")
		if _, err := c.Reviews(context.Background(), 7); err == nil || !strings.Contains(err.Error(), "malformed review") {
			t.Fatalf("%s: err = %v", body, err)
		}
	}
}

func TestNewRefusesBadRepository(t *testing.T) {
	for _, r := range []string{"", "acme", "acme/", "/widget", "acme/wid get", "a/b/c"} {
		if _, err := New("", "", r, nil); err == nil {
			t.Errorf("New accepted repository %q", r)
		}
	}
}

const commit4 = "4444444444444444444444444444444444444444"

// The pull requests of a commit, both pages: the merged one (a listing
// carries merged_at, not merged) and an open one into another branch.
func TestPullRequestsOfCommitPaginated(t *testing.T) {
	c := client(t, replay{
		"/repos/acme/widget/commits/" + commit4 + "/pulls?per_page=100": {File: "commit-pulls-page1.json", Header: map[string]string{
			"Link": `<{URL}/repos/acme/widget/commits/` + commit4 + `/pulls?page=2&per_page=100>; rel="next"`}},
		"/repos/acme/widget/commits/" + commit4 + "/pulls?page=2&per_page=100": {File: "commit-pulls-page2.json"},
	}, "t0ken")
	prs, err := c.PullRequestsOfCommit(context.Background(), commit4)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range prs {
		got = append(got, fmt.Sprintf("%d:%s:%s:%v:%s", p.Number, p.BaseRef, p.State, p.Merged, p.MergeSHA[:4]))
	}
	if want := "7:main:closed:true:4444 9:release:open:false:6666"; strings.Join(got, " ") != want {
		t.Fatalf("pull requests: %s\nwant:          %s", strings.Join(got, " "), want)
	}
}

func TestPullRequestsOfCommitErrors(t *testing.T) {
	path := "/repos/acme/widget/commits/" + commit4 + "/pulls?per_page=100"
	for _, tc := range []struct {
		name  string
		sha   string
		a     answer
		token string
		want  string
		rate  bool
	}{
		{"not a commit", "HEAD", answer{}, "t0ken", `github: "HEAD" is not a commit id`, false},
		{"unknown commit", commit4, answer{Status: 422, Body: `{"message":"No commit found for SHA: 4444"}`}, "t0ken", "list the pull requests of commit 444444444444 of acme/widget: 422", false},
		{"bad token", commit4, answer{Body: `[]`}, "wrong", "401 Unauthorized: the token (GITHUB_TOKEN) is missing or lacks pull-requests: read", false},
		{"rate limit", commit4, answer{Status: 403, Body: `{"message":"API rate limit exceeded"}`, Header: map[string]string{"X-RateLimit-Limit": "1000", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1796205600"}},
			"t0ken", "list the pull requests of commit 444444444444 of acme/widget: the limit of 1000 requests resets at", true},
		{"malformed head", commit4, answer{Body: `[{"number":7,"state":"closed","head":{"sha":"xyz"},"base":{"ref":"main"}}]`}, "t0ken", "commit 444444444444 of acme/widget: the API answered a malformed pull request", false},
		{"no base", commit4, answer{Body: `[{"number":7,"state":"closed","head":{"sha":"` + commit4 + `"}}]`}, "t0ken", "the API answered a malformed pull request", false},
		{"not a list", commit4, answer{Body: `{"number":7}`}, "t0ken", "list the pull requests of commit 444444444444 of acme/widget: decode the answer: json: cannot unmarshal object", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := client(t, replay{path: tc.a}, tc.token)
			_, err := c.PullRequestsOfCommit(context.Background(), tc.sha)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if errors.Is(err, ErrRateLimited) != tc.rate {
				t.Errorf("errors.Is(err, ErrRateLimited) = %v, want %v", !tc.rate, tc.rate)
			}
		})
	}
}

// Only the page number of a Link is taken: a next link to another host
// does not send the token there, the next page is read from the API root.
func TestNextPageStaysOnTheAPIRoot(t *testing.T) {
	c := client(t, replay{
		"/repos/acme/widget/pulls/7/reviews?per_page=100": {File: "reviews-7-page1.json", Header: map[string]string{
			"Link": `<https://evil.example/steal?page=2&per_page=100>; rel="next"`}},
		"/repos/acme/widget/pulls/7/reviews?page=2&per_page=100": {File: "reviews-7-page2.json"},
	}, "t0ken")
	rs, err := c.Reviews(context.Background(), 7)
	if err != nil || len(rs) != 4 {
		t.Fatalf("reviews of both pages: %d, %v", len(rs), err)
	}
}
