// Package github reads what the forge bridge needs from the GitHub REST
// API (a pull request and its reviews) with internal/forge/rest. It trusts
// nothing it reads: every value is checked for shape here and the bridge
// (internal/porcelain) decides what it means. It holds no global state; a
// Client is safe for use by one goroutine at a time.
package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/forge/rest"
)

// Client reads one repository's pull requests.
type Client struct {
	hc          *http.Client
	base        string // the API root, ending in "/"
	token       string
	owner, repo string
}

// New returns a client of repository ("owner/name") at the REST API
// baseURL ("" for api.github.com; a GitHub Enterprise Server's
// https://HOST/api/v3/, or a test server: the URL is the API root as it
// is given). token may be empty (public repositories, 60 requests an
// hour).
func New(baseURL, token, repository string, hc *http.Client) (*Client, error) {
	if attest.ValidForgeRepository("github", repository) != nil {
		return nil, fmt.Errorf("github: repository %q is not OWNER/NAME", repository)
	}
	owner, repo, _ := strings.Cut(repository, "/")
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	base := "https://api.github.com/"
	if baseURL != "" {
		u, err := url.Parse(strings.TrimSuffix(baseURL, "/") + "/")
		if err != nil {
			return nil, fmt.Errorf("github: API URL %q: %v", baseURL, err)
		}
		if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("github: API URL %q: not an http(s) URL of a host", baseURL)
		}
		base = u.String()
	}
	return &Client{hc: hc, base: base, token: token, owner: owner, repo: repo}, nil
}

// get reads the repository's API path (after "repos/OWNER/NAME/") into
// out.
func (c *Client) get(ctx context.Context, path string, out any) (http.Header, error) {
	h := http.Header{"Accept": {"application/vnd.github+json"}, "X-Github-Api-Version": {"2022-11-28"}, "User-Agent": {"git-secure"}}
	if c.token != "" {
		h.Set("Authorization", "Bearer "+c.token)
	}
	return rest.Get(ctx, c.hc, c.base+"repos/"+c.owner+"/"+c.repo+"/"+path, h, out)
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
	var pr apiPullRequest
	if _, err := c.get(ctx, "pulls/"+strconv.Itoa(n), &pr); err != nil {
		return nil, c.apiError(fmt.Sprintf("read pull request %d", n), err)
	}
	out, err := c.pullRequest(&pr)
	if err != nil || out.Number != n {
		return nil, fmt.Errorf("github: pull request %d of %s/%s: the API answered a malformed pull request", n, c.owner, c.repo)
	}
	return out, nil
}

// pullRequest checks the shape of pr as the API answered it.
func (c *Client) pullRequest(pr *apiPullRequest) (*PullRequest, error) {
	if pr == nil {
		return nil, errors.New("no pull request")
	}
	out := &PullRequest{Number: pr.Number, BaseRef: pr.Base.Ref, HeadSHA: pr.Head.SHA, MergeSHA: pr.MergeCommitSHA, State: pr.State,
		// A listed pull request carries merged_at, not merged.
		Merged: pr.Merged || pr.MergedAt != nil}
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
	next := 1
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("github: commit %s is in more than %d pull requests: refusing to read on", sha[:12], maxPages*100)
		}
		var prs []*apiPullRequest
		h, err := c.get(ctx, "commits/"+sha+"/pulls"+pageQuery(next), &prs)
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
		if next = nextPage(h); next == 0 {
			break
		}
	}
	return out, nil
}

// Reviews reads every review of pull request n, all pages, in the order
// they were submitted.
func (c *Client) Reviews(ctx context.Context, n int) ([]Review, error) {
	var out []Review
	next := 1
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("github: pull request %d has more than %d reviews: refusing to read on", n, maxPages*100)
		}
		var rs []*apiReview
		h, err := c.get(ctx, "pulls/"+strconv.Itoa(n)+"/reviews"+pageQuery(next), &rs)
		if err != nil {
			return nil, c.apiError(fmt.Sprintf("list the reviews of pull request %d", n), err)
		}
		for _, r := range rs {
			if r == nil {
				return nil, fmt.Errorf("github: pull request %d: the API answered a malformed review", n)
			}
			rv := Review{ID: r.ID, Login: r.User.Login, UserID: r.User.ID, State: r.State, CommitID: r.CommitID}
			if r.SubmittedAt != nil {
				rv.Submitted = *r.SubmittedAt
			}
			if rv.ID <= 0 || rv.Login == "" || rv.UserID <= 0 || (rv.CommitID != "" && !hexRe().MatchString(rv.CommitID)) {
				return nil, fmt.Errorf("github: pull request %d: the API answered a malformed review", n)
			}
			out = append(out, rv)
		}
		if next = nextPage(h); next == 0 {
			break
		}
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
	var er *rest.Error
	if !errors.As(err, &er) {
		return fmt.Errorf("github: %s of %s/%s: %v", what, c.owner, c.repo, err)
	}
	// GitHub tells an exhausted rate limit by a 403 (or 429) with no
	// requests remaining, a secondary limit by its documentation URL.
	limited := er.StatusCode == http.StatusForbidden || er.StatusCode == http.StatusTooManyRequests
	switch {
	case limited && er.Header.Get("X-Ratelimit-Remaining") == "0":
		limit, _ := strconv.Atoi(er.Header.Get("X-Ratelimit-Limit"))
		reset, _ := strconv.ParseInt(er.Header.Get("X-Ratelimit-Reset"), 10, 64)
		return fmt.Errorf("%w: %s of %s/%s: the limit of %d requests resets at %s; run again after it, or give a token (GITHUB_TOKEN) with a higher limit", ErrRateLimited, what, c.owner, c.repo, limit, time.Unix(reset, 0).UTC().Format(time.RFC3339))
	case limited && (strings.HasSuffix(er.DocURL, "#abuse-rate-limits") || strings.HasSuffix(er.DocURL, "secondary-rate-limits")):
		wait := "a while"
		if s, err := strconv.ParseInt(er.Header.Get("Retry-After"), 10, 64); err == nil && s >= 0 {
			wait = (time.Duration(s) * time.Second).String()
		}
		return fmt.Errorf("%w: %s of %s/%s: secondary rate limit; retry after %s", ErrRateLimited, what, c.owner, c.repo, wait)
	case er.StatusCode == http.StatusNotFound:
		return fmt.Errorf("github: %s of %s/%s: not found (a wrong --repo or --pr, or a token without read access to pull requests)", what, c.owner, c.repo)
	case er.StatusCode == http.StatusUnauthorized || er.StatusCode == http.StatusForbidden:
		return fmt.Errorf("github: %s of %s/%s: %s: the token (GITHUB_TOKEN) is missing or lacks pull-requests: read", what, c.owner, c.repo, er.Status)
	}
	return fmt.Errorf("github: %s of %s/%s: %s: %s", what, c.owner, c.repo, er.Status, er.Message)
}

// apiPullRequest is the part of the API's pull request the client reads.
type apiPullRequest struct {
	Number         int        `json:"number"`
	State          string     `json:"state"`
	Merged         bool       `json:"merged"`
	MergedAt       *time.Time `json:"merged_at"`
	MergeCommitSHA string     `json:"merge_commit_sha"`
	Head           struct {
		SHA string `json:"sha"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
}

// apiReview is the part of the API's review the client reads.
type apiReview struct {
	ID   int64 `json:"id"`
	User struct {
		Login string `json:"login"`
		ID    int64  `json:"id"`
	} `json:"user"`
	State       string     `json:"state"`
	CommitID    string     `json:"commit_id"`
	SubmittedAt *time.Time `json:"submitted_at"`
}

// pageQuery asks for page n of a listing, 100 items a page.
func pageQuery(n int) string {
	if n <= 1 {
		return "?per_page=100"
	}
	return "?page=" + strconv.Itoa(n) + "&per_page=100"
}

// nextPage is the page number of the Link header's rel="next", 0 when
// there is none. Only the number is taken: the next request is built
// here, so that the token goes nowhere but the API root.
func nextPage(h http.Header) int {
	for _, link := range strings.Split(h.Get("Link"), ",") {
		target, params, ok := strings.Cut(strings.TrimSpace(link), ";")
		if !ok || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") || !hasRelNext(params) {
			continue
		}
		u, err := url.Parse(target[1 : len(target)-1])
		if err != nil {
			return 0
		}
		if n, err := strconv.Atoi(u.Query().Get("page")); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

func hasRelNext(params string) bool {
	for _, p := range strings.Split(params, ";") {
		if strings.TrimSpace(p) == `rel="next"` {
			return true
		}
	}
	return false
}

// ReviewID returns a review or account id as the decimal string
// attestations carry.
func ReviewID(id int64) string { return strconv.FormatInt(id, 10) }
