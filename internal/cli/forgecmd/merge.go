package forgecmd

import (
	"context"
	"errors"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
)

// RecordMergeOptions are the flags of forge record-merge.
type RecordMergeOptions struct {
	F   *factory.Factory
	Ref string
	To  string // the forge's value of Ref (default: Ref's value here)
	Key string // the forge app's signing key
	// Forge ("github" or "gitlab"), when set, is asked which merged pull
	// (merge) requests made a step the recorded approvals do not allow;
	// their reviews are recorded before the step is judged again. Repo
	// and APIURL are as for record-approvals.
	Forge, Repo, APIURL string
	// JSON writes the result (or the refusal's recorded part) as JSON.
	JSON bool
}

func newCmdRecordMerge(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "record-merge",
		Usage:     "record the forge's move of a branch (merge button, squash, rebase merge) if the approvals recorded for it meet the policy",
		ArgsUsage: "REF",
		Description: `Run by the CI job a push to a protected branch triggers, with the forge app key
(--key; the policy must trust it: trust add-forge-app). It records, signed by the
bridge, the move of REF from the value the log records to --to (default: REF's
value here) if and only if the policy allows it with the approvals recorded for
it: the bridge is no person and never counts, so persons must meet every rule,
with their own approvals or forge reviews (git secure forge record-approvals,
bound to the tree of the reviewed result: the commit a merge button, squash or
rebase merge makes has that tree; the rule needs --tree-approvals). Two merges
made before the job ran are recorded as two steps, each needing its own
approvals. Otherwise it exits 1 naming who must still approve, or saying the
move must be reverted.
With --forge github (or gitlab), a step the recorded approvals do not allow
is looked up on the forge first: the reviews of the pull requests merged as
that commit (GitHub: the pull requests associated with a commit; GitLab: the
merge requests of a commit, merged into REF) are recorded, as
record-approvals would, and the step is judged again; so two pull requests
merged before the job ran both record. --repo, --api-url and the token are
as for record-approvals ($GITHUB_TOKEN with pull-requests: read; GitLab:
$GITLAB_TOKEN with read_api, and the project must reset approvals on push).
Push the store and the log afterwards:
  git push origin refs/secure/attestations refs/secure/rsl`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "to", Usage: "the `COMMIT` the forge moved REF to (default: REF's value here)"},
			&cli.StringFlag{Name: "forge", Usage: "`FORGE` (github or gitlab) to ask for the merged pull requests of a step not yet approved"},
			&cli.StringFlag{Name: "repo", Usage: "with --forge: `OWNER/NAME` on the forge (default $GITHUB_REPOSITORY, GitLab $CI_PROJECT_PATH)"},
			&cli.StringFlag{Name: "api-url", Usage: "with --forge: the REST API `URL` (default $GITHUB_API_URL, GitLab $CI_API_V4_URL)"},
			cmdutil.KeyFlag, cmdutil.JSONFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return report.Usagef("forge record-merge takes one REF (the branch the forge moved), got %d arguments", c.NArg())
			}
			return runRecordMerge(c.Context, &RecordMergeOptions{F: f, Ref: c.Args().First(), To: c.String("to"), Key: c.String("key"),
				Forge: c.String("forge"), Repo: c.String("repo"), APIURL: c.String("api-url"), JSON: c.Bool("json")})
		},
	}
}

func runRecordMerge(ctx context.Context, opts *RecordMergeOptions) error {
	f := opts.F
	r, ref, err := f.RepoRef(opts.Ref)
	if err != nil {
		return err
	}
	rev := opts.To
	if rev == "" {
		rev = ref
	}
	to, err := r.Git.ResolveRevision(rev)
	if err != nil {
		return report.Usagef("unknown commit %q: fetch it first (git fetch origin %s)", rev, opts.Ref)
	}
	ctx, cancel := apiContext(ctx)
	defer cancel()
	lookup, err := forgeLookup(ctx, opts, r, ref)
	if err != nil {
		return err
	}
	res, err := r.RecordForgeMerge(ref, to, opts.Key, lookup)
	var refused *porcelain.ForgeMergeRefused
	if errors.As(err, &refused) {
		res = refused.Result
	} else if err != nil {
		return err
	}
	if opts.JSON && err == nil {
		return f.PrintJSON(res)
	}
	sayLookedUp(f, res)
	for _, e := range res.Entries {
		f.Out("recorded entry #%d: %s %s..%s, signed by forge app %s, approved by %s\n", e.Entry, res.Ref, cmdutil.ShortHash(e.Old), cmdutil.ShortHash(e.New), res.App, strings.Join(e.Approvers, ", "))
	}
	if res.NoOp != "" {
		f.Out("nothing to record: %s\n", res.NoOp)
	}
	if refused != nil && refused.Step != nil {
		x := refused.Step
		f.Out("%s %s..%s is not allowed with the approvals recorded for it:\n", x.Ref, cmdutil.ShortHash(x.Old), cmdutil.ShortHash(x.New))
		for _, fl := range x.Failures {
			f.Out("  rule %s: %s\n", fl.Rule, fl.Detail)
			if fl.Next != "" {
				f.Out("    next: %s\n", fl.Next)
			}
		}
		if len(x.Approved) > 0 {
			f.Out("  approved by: %s\n", strings.Join(x.Approved, ", "))
		}
		for _, v := range x.ViaForge {
			f.Out("  through the forge: %s\n", v)
		}
		for _, n := range x.Notes {
			f.Out("  note: %s\n", n)
		}
	}
	if err != nil {
		if len(res.Entries) > 0 {
			f.Out("next: git push origin refs/secure/rsl (the recorded steps), then fix the rest\n")
		}
		return err
	}
	if len(res.Entries) > 0 {
		f.Out("next: git push origin refs/secure/attestations refs/secure/rsl\n")
	}
	return nil
}

// sayLookedUp says which reviews of merged pull requests the forge
// listed were recorded, and why some were not.
func sayLookedUp(f *factory.Factory, res *porcelain.ForgeMergeResult) {
	for _, rec := range res.Reviews {
		f.Out("recorded the reviews of %s pull request %s (%s..%s, forge app %s):\n", rec.Forge, rec.PullRequest, cmdutil.ShortHash(rec.From), cmdutil.ShortHash(rec.To), rec.App)
		for _, l := range rec.Records {
			f.Out("  review %s by %s (%s): %s\n", l.Review, l.Account, l.Person, l.State)
		}
		for _, s := range rec.Skipped {
			f.Out("  note: %s\n", s)
		}
	}
	for _, n := range res.Notes {
		f.Out("note: %s\n", n)
	}
}

// forgeLookup is the porcelain.ForgeLookup of opts.Forge: the merged
// pull requests (GitHub) or merge requests (GitLab) of a commit, with
// their reviews; nil without --forge.
func forgeLookup(ctx context.Context, opts *RecordMergeOptions, r *porcelain.Repo, ref string) (porcelain.ForgeLookup, error) {
	f := opts.F
	switch opts.Forge {
	case "":
		if opts.Repo != "" || opts.APIURL != "" {
			return nil, report.Usagef("--repo and --api-url go with --forge github|gitlab")
		}
		return nil, nil
	case "github":
		gc, err := githubClient(f, opts.Repo, opts.APIURL)
		if err != nil {
			return nil, err
		}
		return func(c gitrepo.Hash) ([]porcelain.ForgePullRequest, error) {
			prs, err := gc.PullRequestsOfCommit(ctx, c.String())
			if err != nil {
				return nil, envErr(err)
			}
			var out []porcelain.ForgePullRequest
			for i := range prs {
				if !prs[i].Merged {
					continue // an open pull request containing c made no step
				}
				in, err := githubPullRequest(ctx, gc, prs[i].Number, &prs[i])
				if err != nil {
					return nil, err
				}
				r.FetchForgeHead(forgeRemote(f), in)
				out = append(out, in)
			}
			return out, nil
		}, nil
	case "gitlab":
		return gitlabLookup(ctx, f, opts, r, ref)
	}
	return nil, report.Usagef("--forge is github or gitlab, not %q", opts.Forge)
}

// forgeRemote is the remote a merged pull request's head is fetched from
// ($GIT_SECURE_REMOTE, as git-secure-ci.sh, else origin).
func forgeRemote(f *factory.Factory) string {
	if r := f.Getenv("GIT_SECURE_REMOTE"); r != "" {
		return r
	}
	return "origin"
}
