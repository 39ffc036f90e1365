package forgecmd

import (
	"context"
	"fmt"
	"strconv"

	"github.com/git-secure/git-secure/internal/forge/gitlab"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
)

// runRecordGitLab is forge record-approvals --gitlab --mr N.
func runRecordGitLab(ctx context.Context, opts *RecordApprovalsOptions) error {
	f := opts.F
	repo := orEnv(f, opts.Repo, "CI_PROJECT_PATH")
	api := orEnv(f, opts.APIURL, "CI_API_V4_URL")
	if (opts.MR <= 0) == (opts.Commit == "") {
		return report.Usagef("--gitlab takes --mr IID (a merge request, as in !7) or --commit SHA (the merge requests merged as it), one of them")
	}
	gc, err := gitlab.New(api, f.Getenv("GITLAB_TOKEN"), repo, nil)
	if err != nil {
		return report.Usagef("%v (pass --repo GROUP/NAME)", err)
	}
	r, err := f.Repo()
	if err != nil {
		return err
	}
	ctx, cancel := apiContext(ctx)
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
	if opts.Commit != "" {
		// A push pipeline of a branch: the merge requests it landed.
		branch := orEnv(f, opts.Branch, "CI_COMMIT_BRANCH")
		if branch == "" {
			return report.Usagef("--commit needs --branch (the branch the merge requests were merged into; default $CI_COMMIT_BRANCH)")
		}
		sha, err := r.Git.ResolveRevision(opts.Commit)
		if err != nil {
			return report.Usagef("unknown commit %q: fetch it first", opts.Commit)
		}
		iids, err := gc.MergedRequestsOfCommit(ctx, sha.String(), branch)
		if err != nil {
			return envErr(err)
		}
		if len(iids) == 0 {
			f.Out("no merge request merged into %s contains %s: nothing to record\n", branch, sha.String()[:12])
			return nil
		}
		for _, iid := range iids {
			if err := recordGitLabMR(ctx, gc, r, opts, repo, iid); err != nil {
				return err
			}
		}
		return nil
	}
	return recordGitLabMR(ctx, gc, r, opts, repo, int64(opts.MR))
}

// recordGitLabMR records the approvals of merge request iid.
func recordGitLabMR(ctx context.Context, gc *gitlab.Client, r *porcelain.Repo, opts *RecordApprovalsOptions, repo string, iid int64) error {
	f := opts.F
	mr, err := gc.MergeRequest(ctx, iid)
	if err != nil {
		return envErr(err)
	}
	approvals, err := gc.Approvals(ctx, iid)
	if err != nil {
		return envErr(err)
	}
	in := porcelain.ForgePullRequest{Forge: "gitlab", Number: strconv.FormatInt(iid, 10), BaseRef: mr.TargetBranch, HeadSHA: mr.HeadSHA, MergeSHA: mr.MergeSHA}
	for _, a := range approvals {
		id, err := gitlab.ApprovalID(a)
		if err != nil {
			return envErr(err)
		}
		in.Reviews = append(in.Reviews, porcelain.ForgeReviewEvent{ID: id, Account: a.Username, State: "APPROVED", CommitID: mr.HeadSHA})
	}
	return recordAndSay(f, r, in, opts)
}
