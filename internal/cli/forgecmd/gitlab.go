package forgecmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/forge/gitlab"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
)

// recordGitLab is forge record-approvals --gitlab: --mr N, or --commit
// SHA for the merge requests merged as it.
func recordGitLab(ctx context.Context, gc *gitlab.Client, repo string, r *porcelain.Repo, opts *RecordApprovalsOptions) error {
	f := opts.F
	if err := checkResetsApprovals(ctx, gc, repo); err != nil {
		return err
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

// gitlabClient is the GitLab API client of project repo (default
// $CI_PROJECT_PATH) at api (default $CI_API_V4_URL, else gitlab.com),
// with the token $GITLAB_TOKEN; it returns the project it reads.
func gitlabClient(f *factory.Factory, repo, api string) (*gitlab.Client, string, error) {
	repo = orEnv(f, repo, "CI_PROJECT_PATH")
	gc, err := gitlab.New(orEnv(f, api, "CI_API_V4_URL"), f.Getenv("GITLAB_TOKEN"), repo, nil)
	if err != nil {
		return nil, "", report.Usagef("%v (pass --repo GROUP/NAME)", err)
	}
	return gc, repo, nil
}

// checkResetsApprovals refuses a project that keeps approvals when
// commits are pushed: GitLab's API does not say which commit an approval
// was given on, and only a project that drops approvals on push makes a
// listed approval one of the current head.
func checkResetsApprovals(ctx context.Context, gc *gitlab.Client, repo string) error {
	reset, err := gc.ResetsApprovalsOnPush(ctx)
	if err != nil {
		return envErr(err)
	}
	if !reset {
		return fmt.Errorf("%w: project %s keeps approvals when commits are pushed to a merge request, so an approval GitLab lists may be of an older commit; nothing recorded: turn on Settings > Merge requests > Approval settings > \"Remove all approvals when commits are added to the source branch\"", porcelain.ErrRefused, repo)
	}
	return nil
}

// recordGitLabMR records the approvals of merge request iid.
func recordGitLabMR(ctx context.Context, gc *gitlab.Client, r *porcelain.Repo, opts *RecordApprovalsOptions, repo string, iid int64) error {
	in, err := gitlabMergeRequest(ctx, gc, iid)
	if err != nil {
		return err
	}
	return recordAndSay(opts.F, r, in, opts)
}

// gitlabMergeRequest reads merge request iid and its approvals as the
// bridge records them.
func gitlabMergeRequest(ctx context.Context, gc *gitlab.Client, iid int64) (porcelain.ForgePullRequest, error) {
	mr, err := gc.MergeRequest(ctx, iid)
	if err != nil {
		return porcelain.ForgePullRequest{}, envErr(err)
	}
	approvals, err := gc.Approvals(ctx, iid)
	if err != nil {
		return porcelain.ForgePullRequest{}, envErr(err)
	}
	in := porcelain.ForgePullRequest{Forge: "gitlab", Repository: gc.Project(), RepositoryID: strconv.FormatInt(mr.ProjectID, 10), Number: strconv.FormatInt(iid, 10), BaseRef: mr.TargetBranch, HeadSHA: mr.HeadSHA, MergeSHA: mr.MergeSHA, Merged: mr.State == "merged"}
	if mr.State == "opened" {
		// GitLab's test merge (refs/merge-requests/IID/merge): what
		// merging makes when the head does not contain the target's tip.
		switch ref, err := gc.MergeRef(ctx, iid); {
		case err == nil:
			in.MergeSHA = ref
		case !errors.Is(err, gitlab.ErrNoMergeRef):
			return porcelain.ForgePullRequest{}, envErr(err)
		}
	}
	for _, a := range approvals {
		id, err := gitlab.ApprovalID(a)
		if err != nil {
			return porcelain.ForgePullRequest{}, envErr(err)
		}
		in.Reviews = append(in.Reviews, porcelain.ForgeReviewEvent{ID: id, Account: a.Username, AccountID: strconv.FormatInt(a.UserID, 10), State: "APPROVED", CommitID: mr.HeadSHA})
	}
	return in, nil
}

// gitlabLookup is the porcelain.ForgeLookup of record-merge --forge
// gitlab: the merge requests of a commit merged into the ref, with their
// approvals. The project's approval settings are checked on first use.
func gitlabLookup(ctx context.Context, f *factory.Factory, opts *RecordMergeOptions, r *porcelain.Repo, ref string) (porcelain.ForgeLookup, error) {
	gc, repo, err := gitlabClient(f, opts.Repo, opts.APIURL)
	if err != nil {
		return nil, err
	}
	branch, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok {
		return nil, report.Usagef("--forge gitlab: %s is not a branch (merge requests merge into branches)", ref)
	}
	checked := false
	return func(c gitrepo.Hash) ([]porcelain.ForgePullRequest, error) {
		if !checked {
			if err := checkResetsApprovals(ctx, gc, repo); err != nil {
				return nil, err
			}
			checked = true
		}
		iids, err := gc.MergedRequestsOfCommit(ctx, c.String(), branch)
		if err != nil {
			return nil, envErr(err)
		}
		var out []porcelain.ForgePullRequest
		for _, iid := range iids {
			in, err := gitlabMergeRequest(ctx, gc, iid)
			if err != nil {
				return nil, err
			}
			r.FetchForgeHead(forgeRemote(f), in)
			out = append(out, in)
		}
		return out, nil
	}, nil
}
