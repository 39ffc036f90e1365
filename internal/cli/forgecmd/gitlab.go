package forgecmd

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/git-secure/git-secure/internal/forge/gitlab"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
)

// runRecordGitLab is forge record-approvals --gitlab --mr N.
func runRecordGitLab(ctx context.Context, opts *RecordApprovalsOptions) error {
	f := opts.F
	repo := opts.Repo
	if repo == "" {
		repo = f.Getenv("CI_PROJECT_PATH")
	}
	api := opts.APIURL
	if api == "" {
		api = f.Getenv("CI_API_V4_URL")
	}
	if opts.MR <= 0 {
		return report.Usagef("--mr must be a merge request number (its IID, as in !7)")
	}
	gc, err := gitlab.New(api, f.Getenv("GITLAB_TOKEN"), repo, nil)
	if err != nil {
		return report.Usagef("%v (pass --repo GROUP/NAME)", err)
	}
	r, err := f.Repo()
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	// GitLab's API does not say which commit an approval was given on:
	// only a project that drops approvals when commits are pushed makes a
	// listed approval one of the current head.
	reset, err := gc.ResetsApprovalsOnPush(ctx)
	if err != nil {
		return envErr(err)
	}
	if !reset {
		return fmt.Errorf("%w: project %s keeps approvals when commits are pushed to a merge request, so an approval GitLab lists may be of an older commit; nothing recorded: turn on Settings > Merge requests > Approval settings > \"Remove all approvals when commits are added to the source branch\"", porcelain.ErrRefused, repo)
	}
	mr, err := gc.MergeRequest(ctx, int64(opts.MR))
	if err != nil {
		return envErr(err)
	}
	approvals, err := gc.Approvals(ctx, int64(opts.MR))
	if err != nil {
		return envErr(err)
	}
	in := porcelain.ForgePullRequest{Forge: "gitlab", Number: strconv.Itoa(opts.MR), BaseRef: mr.TargetBranch, HeadSHA: mr.HeadSHA, MergeSHA: mr.MergeSHA}
	for _, a := range approvals {
		id, err := gitlab.ApprovalID(a)
		if err != nil {
			return envErr(err)
		}
		in.Reviews = append(in.Reviews, porcelain.ForgeReviewEvent{ID: id, Account: a.Username, State: "APPROVED", CommitID: mr.HeadSHA})
	}
	return recordAndSay(f, r, in, opts)
}
