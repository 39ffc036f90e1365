// Package forgecmd is "git secure forge": the bridge from a hosted forge
// (GitHub) to the attestation store. CI runs it with a forge app key the
// policy trusts (git secure trust add-forge-app) to record each review of
// a pull request as an approval, or a withdrawal, of exactly the update
// merging it makes. internal/forge/github reads the forge's API and
// internal/porcelain signs and stores the records.
package forgecmd

import (
	"context"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/forge/github"
	"github.com/git-secure/git-secure/internal/forge/gitlab"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
)

// NewCmdForge is "git secure forge ...".
func NewCmdForge(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:        "forge",
		Usage:       "hosted forges: record pull-request reviews as approvals, and merge-button merges as entries (run by CI with a forge app key)",
		Subcommands: []*cli.Command{newCmdRecordApprovals(f), newCmdRecordMerge(f)},
	}
}

// RecordApprovalsOptions are the flags of forge record-approvals.
type RecordApprovalsOptions struct {
	F  *factory.Factory
	PR int
	// GitLab reads merge request MR of a GitLab project instead.
	GitLab bool
	MR     int
	// Commit (with GitLab) records every merge request merged into
	// Branch that contains it, instead of MR.
	Commit, Branch string
	// Repo is OWNER/NAME on the forge; APIURL the REST API's root. Both
	// default to the variables a GitHub Actions job has.
	Repo   string
	APIURL string
	Key    string // the forge app's signing key
	JSON   bool
}

func newCmdRecordApprovals(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:  "record-approvals",
		Usage: "record each review of a pull request as an approval (or withdrawal) of exactly the update merging it makes",
		Description: `Reads the pull request and its reviews from the forge's API and signs, with the
forge app key (--key; the policy must trust it: trust add-forge-app), one record
per review: an approving review made on the current head as approved; a review
dismissed, made stale by a push or followed by a request for changes as
withdrawn. The update is the base branch from the value the log records to the
head when it contains it, else to the forge's merge commit. Push the store
afterwards: git push origin refs/secure/attestations.
The token is read from $GITHUB_TOKEN.
With --gitlab --mr N it reads a GitLab merge request instead: each current
approval is recorded as approved, an approval recorded before that GitLab no
longer lists (an unapproval) as withdrawn. GitLab does not say which commit an
approval was given on, so the project must drop approvals when commits are
added ("reset approvals on push"): otherwise nothing is recorded.
When the merge request's head does not contain the recorded tip, the
approvals bind GitLab's test merge (refs/merge-requests/N/merge, from the
merge_ref API; fetch it first). --repo is
GROUP/NAME (default $CI_PROJECT_PATH), --api-url the v4 API (default
$CI_API_V4_URL, else gitlab.com), the token $GITLAB_TOKEN (read_api).`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "pr", Usage: "pull request `NUMBER` (GitHub)"},
			&cli.BoolFlag{Name: "gitlab", Usage: "read a GitLab merge request (--mr) instead of a GitHub pull request"},
			&cli.IntFlag{Name: "mr", Usage: "merge request `IID` (GitLab, with --gitlab)"},
			&cli.StringFlag{Name: "commit", Usage: "with --gitlab: record the merge requests merged into --branch that contain `COMMIT` (a push pipeline: $CI_COMMIT_SHA)"},
			&cli.StringFlag{Name: "branch", Usage: "with --commit: the `BRANCH` they were merged into (default $CI_COMMIT_BRANCH)"},
			&cli.StringFlag{Name: "repo", Usage: "`OWNER/NAME` on the forge (default $GITHUB_REPOSITORY)"},
			&cli.StringFlag{Name: "api-url", Usage: "the REST API `URL` (default $GITHUB_API_URL, else api.github.com; GitHub Enterprise: https://HOST/api/v3)"},
			cmdutil.KeyFlag, cmdutil.JSONFlag,
		},
		Action: func(c *cli.Context) error {
			return runRecordApprovals(c.Context, &RecordApprovalsOptions{F: f, PR: c.Int("pr"), GitLab: c.Bool("gitlab"), MR: c.Int("mr"), Commit: c.String("commit"), Branch: c.String("branch"), Repo: c.String("repo"),
				APIURL: c.String("api-url"), Key: c.String("key"), JSON: c.Bool("json")})
		},
	}
}

func runRecordApprovals(ctx context.Context, opts *RecordApprovalsOptions) error {
	f := opts.F
	if err := checkRecordFlags(opts); err != nil {
		return err
	}
	var (
		gh      *github.Client
		gl      *gitlab.Client
		project string
		err     error
	)
	if opts.GitLab {
		gl, project, err = gitlabClient(f, opts.Repo, opts.APIURL)
	} else {
		gh, err = githubClient(f, opts.Repo, opts.APIURL)
	}
	if err != nil {
		return err
	}
	r, err := f.Repo()
	if err != nil {
		return err
	}
	ctx, cancel := apiContext(ctx)
	defer cancel()
	if opts.GitLab {
		return recordGitLab(ctx, gl, project, r, opts)
	}
	in, err := githubPullRequest(ctx, gh, opts.PR, nil)
	if err != nil {
		return err
	}
	return recordAndSay(f, r, in, opts)
}

// checkRecordFlags refuses flags of record-approvals that do not go
// together: GitHub takes --pr; GitLab --gitlab and --mr or --commit.
func checkRecordFlags(opts *RecordApprovalsOptions) error {
	if !opts.GitLab && opts.MR == 0 && opts.Commit == "" && opts.Branch == "" {
		if opts.PR <= 0 {
			return report.Usagef("--pr must be a pull request number")
		}
		return nil
	}
	if !opts.GitLab || opts.PR != 0 {
		return report.Usagef("--mr and --commit go with --gitlab, --pr without it (GitHub)")
	}
	if (opts.MR <= 0) == (opts.Commit == "") {
		return report.Usagef("--gitlab takes --mr IID (a merge request, as in !7) or --commit SHA (the merge requests merged as it), one of them")
	}
	return nil
}

// orEnv is the flag's value, or when it is empty the CI environment's
// variable name (GitHub Actions and GitLab CI set them for every job).
func orEnv(f *factory.Factory, flag, name string) string {
	if flag != "" {
		return flag
	}
	return f.Getenv(name)
}

// apiContext bounds a run's forge API calls: a forge that stops answering
// fails the job in minutes rather than at the CI runner's time limit.
func apiContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(ctx, 5*time.Minute)
}

// githubClient is the GitHub API client of repo (default
// $GITHUB_REPOSITORY) at api (default $GITHUB_API_URL), with the token
// $GITHUB_TOKEN.
func githubClient(f *factory.Factory, repo, api string) (*github.Client, error) {
	repo = orEnv(f, repo, "GITHUB_REPOSITORY")
	gc, err := github.New(orEnv(f, api, "GITHUB_API_URL"), f.Getenv("GITHUB_TOKEN"), repo, nil)
	if err != nil {
		return nil, report.Usagef("%v (pass --repo OWNER/NAME)", err)
	}
	return gc, nil
}

// githubPullRequest reads pull request n and its reviews as the bridge
// records them; pr, when given, is the pull request as a listing gave it.
func githubPullRequest(ctx context.Context, gc *github.Client, n int, pr *github.PullRequest) (porcelain.ForgePullRequest, error) {
	if pr == nil {
		var err error
		if pr, err = gc.PullRequest(ctx, n); err != nil {
			return porcelain.ForgePullRequest{}, envErr(err)
		}
	}
	reviews, err := gc.Reviews(ctx, n)
	if err != nil {
		return porcelain.ForgePullRequest{}, envErr(err)
	}
	in := porcelain.ForgePullRequest{Forge: "github", Repository: gc.Repository(), Number: strconv.Itoa(pr.Number), BaseRef: pr.BaseRef, HeadSHA: pr.HeadSHA, MergeSHA: pr.MergeSHA, Merged: pr.Merged}
	for _, rv := range reviews {
		in.Reviews = append(in.Reviews, porcelain.ForgeReviewEvent{ID: github.ReviewID(rv.ID), Account: rv.Login, AccountID: github.ReviewID(rv.UserID), State: rv.State, CommitID: rv.CommitID})
	}
	return in, nil
}

// recordAndSay records pr's reviews and says what was recorded.
func recordAndSay(f *factory.Factory, r *porcelain.Repo, in porcelain.ForgePullRequest, opts *RecordApprovalsOptions) error {
	res, err := r.RecordForgeReviews(in, opts.Key)
	if err != nil {
		return err
	}
	if opts.JSON {
		return f.PrintJSON(res)
	}
	f.Out("%s %s..%s (forge app %s):\n", res.Ref, cmdutil.ShortHash(res.From), cmdutil.ShortHash(res.To), res.App)
	if res.Landed != 0 {
		f.Out("  note: pull request %s has landed (log entry #%d): its reviews are recorded for the update that entry made\n", in.Number, res.Landed)
	}
	for _, l := range res.Records {
		f.Out("  %s review %s by %s (%s): %s\n", in.Forge, l.Review, l.Account, l.Person, l.State)
	}
	for _, s := range res.Skipped {
		f.Out("  note: %s\n", s)
	}
	if len(res.Records) == 0 {
		f.Out("  no review to record\n")
	}
	f.Out("next: git push origin refs/secure/attestations\n")
	return nil
}

// envErr makes a forge API failure an environment error (exit 2): the
// check could not be made, which is not a check that failed.
func envErr(err error) error { return report.Usagef("%v", err) }
