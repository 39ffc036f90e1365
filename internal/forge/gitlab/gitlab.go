// Package gitlab reads what the forge bridge needs from the GitLab REST
// API (a merge request, who approves it, and whether the project drops
// approvals when commits are pushed) through GitLab's client-go. It
// trusts nothing it reads: every value is checked for shape here and the
// bridge (internal/porcelain) decides what it means. It holds no global
// state; a Client is safe for use by one goroutine at a time.
package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/forge/rest"
)

// Client reads one project's merge requests.
type Client struct {
	hc      *http.Client
	base    string // the API root, ending in "/api/v4/"
	token   string
	project string // "group/sub/name" or a numeric id
}

// defaultBase is gitlab.com's REST API.
const defaultBase = "https://gitlab.com/api/v4/"

// New returns a client of project ("group/name", nested groups allowed,
// or the numeric id) at the REST API baseURL ("" for
// https://gitlab.com/api/v4; a self-managed instance's
// https://HOST/api/v4 or https://HOST, $CI_API_V4_URL in a job; or a
// test server). The token (a project, group or personal access token
// with read_api) is sent as PRIVATE-TOKEN. Requests are not retried: a
// failure is reported as it is.
func New(baseURL, token, project string, hc *http.Client) (*Client, error) {
	if attest.ValidForgeRepository("gitlab", project) != nil {
		return nil, fmt.Errorf("gitlab: project %q is not GROUP/NAME or a project id", project)
	}
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	base, err := apiBase(baseURL)
	if err != nil {
		return nil, fmt.Errorf("gitlab: API URL %q: %v", baseURL, err)
	}
	return &Client{hc: hc, base: base, token: token, project: project}, nil
}

// apiBase is the API root of baseURL, as client-go took it: a URL whose
// path does not end in api/v4 gets it added.
func apiBase(baseURL string) (string, error) {
	if baseURL == "" {
		return defaultBase, nil
	}
	u, err := url.Parse(strings.TrimSuffix(baseURL, "/") + "/")
	if err != nil {
		return "", err
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("not an http(s) URL of a host")
	}
	if !strings.HasSuffix(u.Path, "/api/v4/") {
		u.Path += "api/v4/"
		u.RawPath = ""
	}
	return u.String(), nil
}

// get reads the project's API path (after "projects/ID/") into out.
func (c *Client) get(ctx context.Context, path string, out any) (http.Header, error) {
	// GitLab takes a project path in one segment, its slashes and dots
	// escaped (as client-go's PathEscape).
	id := strings.ReplaceAll(url.PathEscape(c.project), ".", "%2E")
	h := http.Header{"Accept": {"application/json"}, "User-Agent": {"git-secure"}}
	if c.token != "" {
		h.Set("PRIVATE-TOKEN", c.token)
	}
	return rest.Get(ctx, c.hc, c.base+"projects/"+id+"/"+path, h, out)
}

// Project is the project the client reads, as it was given (a numeric
// id or a full path).
func (c *Client) Project() string { return c.project }

// MergeRequest is what the bridge needs of a merge request.
type MergeRequest struct {
	IID          int64
	TargetBranch string // the branch it merges into ("main")
	HeadSHA      string // 40 hex: the source branch's head
	// MergeSHA is, once merged, the commit the merge made (the merge
	// commit, else the squash commit), "" before: the test merge of an
	// open merge request is MergeRef's.
	MergeSHA string
	State    string // opened, closed, locked, merged
	// ProjectID is the numeric id of the project it belongs to (the one
	// it merges into), which GitLab keeps across renames and transfers;
	// 0 when the API did not say.
	ProjectID int64
}

// apiMergeRequest is the part of the API's merge request the client reads.
type apiMergeRequest struct {
	IID             int64  `json:"iid"`
	ProjectID       int64  `json:"project_id"`
	State           string `json:"state"`
	TargetBranch    string `json:"target_branch"`
	SHA             string `json:"sha"`
	MergeCommitSHA  string `json:"merge_commit_sha"`
	SquashCommitSHA string `json:"squash_commit_sha"`
}

// apiApprovals is the part of the API's approval state the client reads.
type apiApprovals struct {
	IID        int64 `json:"iid"`
	ApprovedBy []*struct {
		User *struct {
			ID       int64  `json:"id"`
			Username string `json:"username"`
		} `json:"user"`
		ApprovedAt *time.Time `json:"approved_at"`
	} `json:"approved_by"`
}

// nextPage is the page number of X-Next-Page, 0 on the last page.
func nextPage(h http.Header) (int, error) {
	v := h.Get("X-Next-Page")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("the API answered X-Next-Page %q", v)
	}
	return n, nil
}

// Approval is one current approval of a merge request. GitLab keeps one
// per user and drops it on unapproval, so the user's id identifies it.
type Approval struct {
	UserID   int64
	Username string
	At       time.Time
}

var hexRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}$`) })

// MergeRequest reads merge request iid.
func (c *Client) MergeRequest(ctx context.Context, iid int64) (*MergeRequest, error) {
	var mr apiMergeRequest
	if _, err := c.get(ctx, "merge_requests/"+strconv.FormatInt(iid, 10), &mr); err != nil {
		return nil, c.apiError(fmt.Sprintf("read merge request !%d", iid), err)
	}
	out := &MergeRequest{IID: iid, TargetBranch: mr.TargetBranch, HeadSHA: mr.SHA, State: mr.State, ProjectID: mr.ProjectID}
	if mr.State == "merged" {
		out.MergeSHA = mr.MergeCommitSHA
		if out.MergeSHA == "" {
			out.MergeSHA = mr.SquashCommitSHA
		}
	}
	if mr.IID != iid || out.TargetBranch == "" || out.ProjectID < 0 || !hexRe().MatchString(out.HeadSHA) || (out.MergeSHA != "" && !hexRe().MatchString(out.MergeSHA)) {
		return nil, fmt.Errorf("gitlab: merge request !%d of %s: the API answered a malformed merge request", iid, c.project)
	}
	return out, nil
}

// Approvals reads who approves merge request iid now, in the order they
// approved.
func (c *Client) Approvals(ctx context.Context, iid int64) ([]Approval, error) {
	var a apiApprovals
	if _, err := c.get(ctx, "merge_requests/"+strconv.FormatInt(iid, 10)+"/approvals", &a); err != nil {
		return nil, c.apiError(fmt.Sprintf("read the approvals of merge request !%d", iid), err)
	}
	if a.IID != 0 && a.IID != iid {
		return nil, fmt.Errorf("gitlab: merge request !%d of %s: the API answered the approvals of !%d", iid, c.project, a.IID)
	}
	if len(a.ApprovedBy) > 10000 {
		return nil, fmt.Errorf("gitlab: merge request !%d has more than 10000 approvals: refusing to read on", iid)
	}
	out := make([]Approval, 0, len(a.ApprovedBy))
	seen := map[int64]bool{}
	for _, ab := range a.ApprovedBy {
		if ab == nil || ab.User == nil || ab.User.ID <= 0 || ab.User.Username == "" || seen[ab.User.ID] {
			return nil, fmt.Errorf("gitlab: merge request !%d: the API answered a malformed approval", iid)
		}
		seen[ab.User.ID] = true
		ap := Approval{UserID: ab.User.ID, Username: ab.User.Username}
		if ab.ApprovedAt != nil {
			ap.At = *ab.ApprovedAt
		}
		out = append(out, ap)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

// ErrNoMergeRef is wrapped by MergeRef's error when GitLab cannot merge
// the merge request (conflicts, or a state that cannot merge): there is
// then no test merge to bind reviews to.
var ErrNoMergeRef = errors.New("gitlab: no merge ref")

// MergeRef returns the commit of refs/merge-requests/IID/merge: GitLab's
// test merge of the open merge request iid's head into its target
// branch's tip (as GitHub's refs/pull/N/merge).
func (c *Client) MergeRef(ctx context.Context, iid int64) (string, error) {
	var out struct {
		CommitID string `json:"commit_id"`
	}
	if _, err := c.get(ctx, "merge_requests/"+strconv.FormatInt(iid, 10)+"/merge_ref", &out); err != nil {
		var er *rest.Error
		if errors.As(err, &er) && er.StatusCode == http.StatusBadRequest {
			return "", fmt.Errorf("%w: merge request !%d of %s cannot be merged (%s): resolve its conflicts", ErrNoMergeRef, iid, c.project, er.Message)
		}
		return "", c.apiError(fmt.Sprintf("read the merge ref of merge request !%d", iid), err)
	}
	if !hexRe().MatchString(out.CommitID) {
		return "", fmt.Errorf("gitlab: merge request !%d of %s: the API answered a malformed merge ref", iid, c.project)
	}
	return out.CommitID, nil
}

// MergedRequestsOfCommit returns the IIDs of the merge requests of
// commit sha (all pages) that were merged into targetBranch, in
// increasing order: the merge requests a push of targetBranch landed.
func (c *Client) MergedRequestsOfCommit(ctx context.Context, sha, targetBranch string) ([]int64, error) {
	if !hexRe().MatchString(sha) {
		return nil, fmt.Errorf("gitlab: %q is not a commit id", sha)
	}
	var out []int64
	path := "repository/commits/" + sha + "/merge_requests"
	for page := 0; ; page++ {
		if page == 100 {
			return nil, fmt.Errorf("gitlab: commit %s is in more than 100 pages of merge requests: refusing to read on", sha)
		}
		var mrs []*apiMergeRequest
		h, err := c.get(ctx, path, &mrs)
		if err != nil {
			return nil, c.apiError(fmt.Sprintf("list the merge requests of commit %s", sha[:12]), err)
		}
		for _, mr := range mrs {
			if mr == nil || mr.IID <= 0 {
				return nil, fmt.Errorf("gitlab: commit %s: the API answered a malformed merge request", sha[:12])
			}
			if mr.State == "merged" && mr.TargetBranch == targetBranch && !slices.Contains(out, mr.IID) {
				out = append(out, mr.IID)
			}
		}
		next, err := nextPage(h)
		if err != nil {
			return nil, fmt.Errorf("gitlab: list the merge requests of commit %s of %s: %v", sha[:12], c.project, err)
		}
		if next == 0 {
			break
		}
		path = "repository/commits/" + sha + "/merge_requests?page=" + strconv.Itoa(next)
	}
	slices.Sort(out)
	return out, nil
}

// ResetsApprovalsOnPush reports whether the project drops every approval
// of a merge request when commits are added to it: only then is an
// approval GitLab lists an approval of the current head (GitLab's API
// does not say which commit was approved).
func (c *Client) ResetsApprovalsOnPush(ctx context.Context) (bool, error) {
	var p struct {
		ResetApprovalsOnPush bool `json:"reset_approvals_on_push"`
	}
	if _, err := c.get(ctx, "approvals", &p); err != nil {
		return false, c.apiError("read the approval settings", err)
	}
	return p.ResetApprovalsOnPush, nil
}

// ErrRateLimited is wrapped by errors from an exhausted API rate limit.
var ErrRateLimited = errors.New("gitlab: API rate limit exhausted")

func (c *Client) apiError(what string, err error) error {
	var er *rest.Error
	if errors.As(err, &er) {
		switch er.StatusCode {
		case http.StatusTooManyRequests:
			wait := er.Header.Get("Retry-After")
			if wait == "" {
				wait = "a while"
			} else {
				wait += " s"
			}
			return fmt.Errorf("%w: %s of %s: retry after %s, or use a token with a higher limit", ErrRateLimited, what, c.project, wait)
		case http.StatusNotFound:
			return fmt.Errorf("gitlab: %s of %s: not found (a wrong --repo or --mr, or a token that cannot read the project: give it read_api)", what, c.project)
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("gitlab: %s of %s: %s: the token (GITLAB_TOKEN) is missing or lacks read_api", what, c.project, er.Status)
		}
		return fmt.Errorf("gitlab: %s of %s: %s", what, c.project, er.Status)
	}
	return fmt.Errorf("gitlab: %s of %s: %v", what, c.project, err)
}

// ApprovalID returns the decimal id the bridge records for approval a:
// the time it was given (Unix seconds) followed by the approver's user id
// on nine digits. GitLab keeps no id of an approval, and the same user's
// approval after an unapproval must be a review of its own (the withdrawal
// of the first stays recorded).
func ApprovalID(a Approval) (string, error) {
	if a.At.IsZero() || a.At.Unix() <= 0 || a.At.Unix() > 9999999999 {
		return "", fmt.Errorf("gitlab: the approval by %s has no usable approved_at time", a.Username)
	}
	if a.UserID <= 0 || a.UserID > 999999999 {
		return "", fmt.Errorf("gitlab: the approval by %s has user id %d, more than nine digits", a.Username, a.UserID)
	}
	return strconv.FormatInt(a.At.Unix(), 10) + fmt.Sprintf("%09d", a.UserID), nil
}
