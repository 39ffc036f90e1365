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
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/git-secure/git-secure/internal/attest"
)

// Client reads one project's merge requests.
type Client struct {
	gl      *gl.Client
	project string // "group/sub/name" or a numeric id
}

// New returns a client of project ("group/name", nested groups allowed,
// or the numeric id) at the REST API baseURL ("" for
// https://gitlab.com/api/v4; a self-managed instance's
// https://HOST/api/v4, $CI_API_V4_URL in a job; or a test server). The
// token (a project, group or personal access token with read_api) is
// sent as PRIVATE-TOKEN. Requests are not retried: a failure is reported
// as it is.
func New(baseURL, token, project string, hc *http.Client) (*Client, error) {
	if attest.ValidForgeRepository("gitlab", project) != nil {
		return nil, fmt.Errorf("gitlab: project %q is not GROUP/NAME or a project id", project)
	}
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	opts := []gl.ClientOptionFunc{gl.WithHTTPClient(hc), gl.WithoutRetries()}
	if baseURL != "" {
		opts = append(opts, gl.WithBaseURL(baseURL))
	}
	c, err := gl.NewClient(token, opts...)
	if err != nil {
		return nil, fmt.Errorf("gitlab: API URL %q: %v", baseURL, err)
	}
	return &Client{gl: c, project: project}, nil
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
	mr, _, err := c.gl.MergeRequests.GetMergeRequest(c.project, iid, nil, gl.WithContext(ctx))
	if err != nil {
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
	a, _, err := c.gl.MergeRequestApprovals.GetConfiguration(c.project, iid, gl.WithContext(ctx))
	if err != nil {
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
// branch's tip (as GitHub's refs/pull/N/merge). client-go has no call for
// GET merge_ref, so it is made with the client's request builder.
func (c *Client) MergeRef(ctx context.Context, iid int64) (string, error) {
	path := fmt.Sprintf("projects/%s/merge_requests/%d/merge_ref", gl.PathEscape(c.project), iid)
	req, err := c.gl.NewRequest(http.MethodGet, path, nil, []gl.RequestOptionFunc{gl.WithContext(ctx)})
	if err != nil {
		return "", fmt.Errorf("gitlab: merge ref of !%d: %v", iid, err)
	}
	var out struct {
		CommitID string `json:"commit_id"`
	}
	if _, err := c.gl.Do(req, &out); err != nil {
		var er *gl.ErrorResponse
		if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusBadRequest {
			why := strings.TrimSuffix(strings.TrimPrefix(er.Message, "{message: "), "}")
			return "", fmt.Errorf("%w: merge request !%d of %s cannot be merged (%s): resolve its conflicts", ErrNoMergeRef, iid, c.project, why)
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
	opts := []gl.RequestOptionFunc{gl.WithContext(ctx)}
	for page := 0; ; page++ {
		if page == 100 {
			return nil, fmt.Errorf("gitlab: commit %s is in more than 100 pages of merge requests: refusing to read on", sha)
		}
		mrs, resp, err := c.gl.Commits.ListMergeRequestsByCommit(c.project, sha, opts...)
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
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opts = []gl.RequestOptionFunc{gl.WithContext(ctx), gl.WithOffsetPaginationParameters(resp.NextPage)}
	}
	slices.Sort(out)
	return out, nil
}

// ResetsApprovalsOnPush reports whether the project drops every approval
// of a merge request when commits are added to it: only then is an
// approval GitLab lists an approval of the current head (GitLab's API
// does not say which commit was approved).
func (c *Client) ResetsApprovalsOnPush(ctx context.Context) (bool, error) {
	p, _, err := c.gl.Projects.GetApprovalConfiguration(c.project, gl.WithContext(ctx))
	if err != nil {
		return false, c.apiError("read the approval settings", err)
	}
	return p.ResetApprovalsOnPush, nil
}

// ErrRateLimited is wrapped by errors from an exhausted API rate limit.
var ErrRateLimited = errors.New("gitlab: API rate limit exhausted")

func (c *Client) apiError(what string, err error) error {
	var er *gl.ErrorResponse
	if errors.Is(err, gl.ErrNotFound) {
		return fmt.Errorf("gitlab: %s of %s: not found (a wrong --repo or --mr, or a token that cannot read the project: give it read_api)", what, c.project)
	}
	if errors.As(err, &er) && er.Response != nil {
		switch er.Response.StatusCode {
		case http.StatusTooManyRequests:
			wait := er.Response.Header.Get("Retry-After")
			if wait == "" {
				wait = "a while"
			} else {
				wait += " s"
			}
			return fmt.Errorf("%w: %s of %s: retry after %s, or use a token with a higher limit", ErrRateLimited, what, c.project, wait)
		case http.StatusNotFound:
			return fmt.Errorf("gitlab: %s of %s: not found (a wrong --repo or --mr, or a token that cannot read the project: give it read_api)", what, c.project)
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("gitlab: %s of %s: %s: the token (GITLAB_TOKEN) is missing or lacks read_api", what, c.project, er.Response.Status)
		}
		return fmt.Errorf("gitlab: %s of %s: %s", what, c.project, er.Response.Status)
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
