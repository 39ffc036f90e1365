// Package github reads what the forge bridge needs from the GitHub REST
// API (a pull request and its reviews) through go-github. It trusts
// nothing it reads: every value is checked for shape here and the bridge
// (internal/porcelain) decides what it means. It holds no global state; a
// Client is safe for use by one goroutine at a time.
package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	gh "github.com/google/go-github/v75/github"

	"github.com/git-secure/git-secure/internal/attest"
)

// Client reads one repository's pull requests.
type Client struct {
	gh          *gh.Client
	owner, repo string
}

// New returns a client of repository ("owner/name") at the REST API
// baseURL ("" for api.github.com; a GitHub Enterprise Server's
// https://HOST/api/v3/, or a test server). token may be empty (public
// repositories, 60 requests an hour).
func New(baseURL, token, repository string, hc *http.Client) (*Client, error) {
	if attest.ValidForgeRepository("github", repository) != nil {
		return nil, fmt.Errorf("github: repository %q is not OWNER/NAME", repository)
	}
	owner, repo, _ := strings.Cut(repository, "/")
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	c := gh.NewClient(hc)
	if token != "" {
		c = c.WithAuthToken(token)
	}
	if baseURL != "" {
		if !strings.HasSuffix(baseURL, "/") {
			baseURL += "/"
		}
		var err error
		if c, err = c.WithEnterpriseURLs(baseURL, baseURL); err != nil {
			return nil, fmt.Errorf("github: API URL %q: %v", baseURL, err)
		}
		// WithEnterpriseURLs adds api/v3/ to a bare host; a URL that
		// already names the API root is taken as it is.
		if u := c.BaseURL; u != nil && strings.HasSuffix(u.Path, "/api/v3/") && !strings.Contains(baseURL, "/api/v3") {
			u.Path = strings.TrimSuffix(u.Path, "api/v3/")
		}
	}
	return &Client{gh: c, owner: owner, repo: repo}, nil
}

// Repository is the repository the client reads, OWNER/NAME.
func (c *Client) Repository() string { return c.owner + "/" + c.repo }

// PullRequest is what the bridge needs of a pull request.
type PullRequest struct {
	Number   int
	BaseRef  string // the branch it merges into ("main")
	HeadSHA  string // 40 hex
	MergeSHA string // GitHub's test merge commit (refs/pull/N/merge), "" when none
	State    string // open or closed
	Merged   bool
}

// Review is one submitted review.
type Review struct {
	ID        int64
	Login     string
	UserID    int64  // the reviewer's numeric account id: a login can change hands, the id never does
	State     string // APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING
	CommitID  string // the head the review was made on
	Submitted time.Time
}

var hexRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}$`) })

// PullRequest reads pull request n.
func (c *Client) PullRequest(ctx context.Context, n int) (*PullRequest, error) {
	pr, _, err := c.gh.PullRequests.Get(ctx, c.owner, c.repo, n)
	if err != nil {
		return nil, c.apiError(fmt.Sprintf("read pull request %d", n), err)
	}
	out, err := c.pullRequest(pr)
	if err != nil || out.Number != n {
		return nil, fmt.Errorf("github: pull request %d of %s/%s: the API answered a malformed pull request", n, c.owner, c.repo)
	}
	return out, nil
}

// pullRequest checks the shape of pr as the API answered it.
func (c *Client) pullRequest(pr *gh.PullRequest) (*PullRequest, error) {
	if pr == nil {
		return nil, errors.New("no pull request")
	}
	out := &PullRequest{Number: pr.GetNumber(), BaseRef: pr.GetBase().GetRef(), HeadSHA: pr.GetHead().GetSHA(), MergeSHA: pr.GetMergeCommitSHA(), State: pr.GetState(),
		// A listed pull request carries merged_at, not merged.
		Merged: pr.GetMerged() || pr.MergedAt != nil}
	if out.Number <= 0 || out.BaseRef == "" || !hexRe().MatchString(out.HeadSHA) || (out.MergeSHA != "" && !hexRe().MatchString(out.MergeSHA)) {
		return nil, errors.New("malformed pull request")
	}
	return out, nil
}

// maxPages bounds the pages of one listing read (100 items each).
const maxPages = 100

// PullRequestsOfCommit lists the pull requests GitHub associates with
// commit sha (all pages): for a commit of the default branch, the pull
// request merged as it (merge button, squash, rebase), else the open ones
// that contain it.
func (c *Client) PullRequestsOfCommit(ctx context.Context, sha string) ([]PullRequest, error) {
	if !hexRe().MatchString(sha) {
		return nil, fmt.Errorf("github: %q is not a commit id", sha)
	}
	var out []PullRequest
	opts := &gh.ListOptions{PerPage: 100}
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("github: commit %s is in more than %d pull requests: refusing to read on", sha[:12], maxPages*100)
		}
		prs, resp, err := c.gh.PullRequests.ListPullRequestsWithCommit(ctx, c.owner, c.repo, sha, opts)
		if err != nil {
			return nil, c.apiError(fmt.Sprintf("list the pull requests of commit %s", sha[:12]), err)
		}
		for _, p := range prs {
			pr, err := c.pullRequest(p)
			if err != nil {
				return nil, fmt.Errorf("github: commit %s of %s/%s: the API answered a malformed pull request", sha[:12], c.owner, c.repo)
			}
			out = append(out, *pr)
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

// Reviews reads every review of pull request n, all pages, in the order
// they were submitted.
func (c *Client) Reviews(ctx context.Context, n int) ([]Review, error) {
	var out []Review
	opts := &gh.ListOptions{PerPage: 100}
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("github: pull request %d has more than %d reviews: refusing to read on", n, maxPages*100)
		}
		rs, resp, err := c.gh.PullRequests.ListReviews(ctx, c.owner, c.repo, n, opts)
		if err != nil {
			return nil, c.apiError(fmt.Sprintf("list the reviews of pull request %d", n), err)
		}
		for _, r := range rs {
			rv := Review{ID: r.GetID(), Login: r.GetUser().GetLogin(), UserID: r.GetUser().GetID(), State: r.GetState(), CommitID: r.GetCommitID(), Submitted: r.GetSubmittedAt().Time}
			if rv.ID <= 0 || rv.Login == "" || rv.UserID <= 0 || (rv.CommitID != "" && !hexRe().MatchString(rv.CommitID)) {
				return nil, fmt.Errorf("github: pull request %d: the API answered a malformed review", n)
			}
			out = append(out, rv)
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Submitted.Equal(out[j].Submitted) {
			return out[i].Submitted.Before(out[j].Submitted)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// ErrRateLimited is wrapped by errors from an exhausted API rate limit.
var ErrRateLimited = errors.New("github: API rate limit exhausted")

func (c *Client) apiError(what string, err error) error {
	var rl *gh.RateLimitError
	var abuse *gh.AbuseRateLimitError
	var er *gh.ErrorResponse
	switch {
	case errors.As(err, &rl):
		return fmt.Errorf("%w: %s of %s/%s: the limit of %d requests resets at %s; run again after it, or give a token (GITHUB_TOKEN) with a higher limit", ErrRateLimited, what, c.owner, c.repo, rl.Rate.Limit, rl.Rate.Reset.UTC().Format(time.RFC3339))
	case errors.As(err, &abuse):
		wait := "a while"
		if abuse.RetryAfter != nil {
			wait = abuse.RetryAfter.String()
		}
		return fmt.Errorf("%w: %s of %s/%s: secondary rate limit; retry after %s", ErrRateLimited, what, c.owner, c.repo, wait)
	case errors.As(err, &er) && er.Response != nil:
		switch er.Response.StatusCode {
		case http.StatusNotFound:
			return fmt.Errorf("github: %s of %s/%s: not found (a wrong --repo or --pr, or a token without read access to pull requests)", what, c.owner, c.repo)
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("github: %s of %s/%s: %s: the token (GITHUB_TOKEN) is missing or lacks pull-requests: read", what, c.owner, c.repo, er.Response.Status)
		}
		return fmt.Errorf("github: %s of %s/%s: %s: %s", what, c.owner, c.repo, er.Response.Status, er.Message)
	}
	return fmt.Errorf("github: %s of %s/%s: %v", what, c.owner, c.repo, err)
}

// ReviewID returns a review or account id as the decimal string
// attestations carry.
func ReviewID(id int64) string { return strconv.FormatInt(id, 10) }
