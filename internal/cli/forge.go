package cli

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/forge/github"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/sign"
)

// forgeAccountFlags extend policy add-person with the person's forge
// accounts, whose reviews a trusted forge app records for them.
var forgeAccountFlags = []cli.Flag{
	&cli.StringFlag{Name: "github", Usage: "the person's GitHub `LOGIN`: their approving reviews count, when a forge app records them"},
	&cli.StringFlag{Name: "gitlab", Usage: "the person's GitLab `USERNAME`"},
}

// setForgeAccounts stages the --github/--gitlab accounts of person after
// add-person staged the person.
func (a *app) setForgeAccounts(c *cli.Context, person string) error {
	for _, forge := range []string{"github", "gitlab"} {
		login := c.String(forge)
		if login == "" {
			continue
		}
		if err := a.stage(fmt.Sprintf("%s account of %s: %s", forge, person, login), func(p, base *policy.Policy, now time.Time) error {
			return p.SetForgeAccount(base, person, forge, login, now)
		}); err != nil {
			return err
		}
	}
	return nil
}

// forgeTrustCommands are the root changes that trust or drop a forge app.
func (a *app) forgeTrustCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:      "add-forge-app",
			Usage:     "trust a forge bridge (a key held by CI) to record forge reviews as approvals of the persons the policy maps their accounts to",
			ArgsUsage: "NAME",
			Description: `A root change. The bridge's records count only for persons whose forge account the
policy names (policy add-person --github LOGIN), never twice for one person, and
explain and verify --mergeable say which approvals came through the forge. The
key must be of its own (no root, rules, freshness or person key). Remove it with
trust remove-forge-app; revoke it with trust revoke-key.`,
			Flags: []cli.Flag{&cli.StringFlag{Name: "key", Usage: "the bridge's public key `FILE`", Required: true}},
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return usageErr("add-forge-app takes exactly one NAME")
				}
				pub, err := readPublicKey(c.String("key"))
				if err != nil {
					return err
				}
				name := c.Args().First()
				return a.stage(fmt.Sprintf("add forge app %s %s", name, sign.Fingerprint(pub)), func(p, base *policy.Policy, now time.Time) error {
					return p.AddForgeApp(base, name, pub, now)
				})
			},
		},
		{
			Name:      "remove-forge-app",
			Usage:     "stop trusting a forge bridge (a root change)",
			ArgsUsage: "NAME",
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return usageErr("remove-forge-app takes exactly one NAME")
				}
				name := c.Args().First()
				return a.stage("remove forge app "+name, func(p, base *policy.Policy, now time.Time) error {
					return p.RemoveForgeApp(base, name, now)
				})
			},
		},
	}
}

func (a *app) forgeCommand() *cli.Command {
	return &cli.Command{
		Name:  "forge",
		Usage: "hosted forges: record pull-request reviews as approvals (run by CI with a forge app key)",
		Subcommands: []*cli.Command{{
			Name:  "record-approvals",
			Usage: "record each review of a pull request as an approval (or withdrawal) of exactly the update merging it makes",
			Description: `Reads the pull request and its reviews from the forge's API and signs, with the
forge app key (--key; the policy must trust it: trust add-forge-app), one record
per review: an approving review made on the current head as approved; a review
dismissed, made stale by a push or followed by a request for changes as
withdrawn. The update is the base branch from the value the log records to the
head when it contains it, else to the forge's merge commit. Push the store
afterwards: git push origin refs/secure/attestations.
The token is read from $GITHUB_TOKEN.`,
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "pr", Usage: "pull request `NUMBER`", Required: true},
				&cli.StringFlag{Name: "repo", Usage: "`OWNER/NAME` on the forge (default $GITHUB_REPOSITORY)"},
				&cli.StringFlag{Name: "api-url", Usage: "the REST API `URL` (default $GITHUB_API_URL, else api.github.com; GitHub Enterprise: https://HOST/api/v3)"},
				keyFlag, jsonFlag,
			},
			Action: func(c *cli.Context) error {
				repo := c.String("repo")
				if repo == "" {
					repo = a.env.Getenv("GITHUB_REPOSITORY")
				}
				api := c.String("api-url")
				if api == "" {
					api = a.env.Getenv("GITHUB_API_URL")
				}
				if c.Int("pr") <= 0 {
					return usageErr("--pr must be a pull request number")
				}
				gc, err := github.New(api, a.env.Getenv("GITHUB_TOKEN"), repo, nil)
				if err != nil {
					return usageErr("%v (pass --repo OWNER/NAME)", err)
				}
				r, err := a.open()
				if err != nil {
					return err
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				pr, err := gc.PullRequest(ctx, c.Int("pr"))
				if err != nil {
					return envErr(err)
				}
				reviews, err := gc.Reviews(ctx, c.Int("pr"))
				if err != nil {
					return envErr(err)
				}
				in := porcelain.ForgePullRequest{Forge: "github", Number: strconv.Itoa(pr.Number), BaseRef: pr.BaseRef, HeadSHA: pr.HeadSHA, MergeSHA: pr.MergeSHA}
				for _, rv := range reviews {
					in.Reviews = append(in.Reviews, porcelain.ForgeReviewEvent{ID: github.ReviewID(rv.ID), Account: rv.Login, State: rv.State, CommitID: rv.CommitID})
				}
				res, err := r.RecordForgeReviews(in, c.String("key"))
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return a.printJSON(res)
				}
				a.out("%s %s..%s (forge app %s):\n", res.Ref, shortHash(res.From), shortHash(res.To), res.App)
				for _, l := range res.Records {
					a.out("  %s review %s by %s (%s): %s\n", in.Forge, l.Review, l.Account, l.Person, l.State)
				}
				for _, s := range res.Skipped {
					a.out("  note: %s\n", s)
				}
				if len(res.Records) == 0 {
					a.out("  no review to record\n")
				}
				a.out("next: git push origin refs/secure/attestations\n")
				return nil
			},
		}},
	}
}

// envErr makes a forge API failure an environment error (exit 2): the
// check could not be made, which is not a check that failed.
func envErr(err error) error { return usageErr("%v", err) }

// printForgePolicy lists the forge apps the root trusts and the persons'
// forge accounts (policy list).
func (a *app) printForgePolicy(p *policy.Policy) {
	if apps := p.ForgeApps(); len(apps) > 0 {
		a.out("\nforge apps (record forge reviews as approvals):\n")
		for _, app := range apps {
			a.out("  %-16s %s\n", app.Name, app.Fingerprint)
		}
	}
	header := false
	for _, person := range p.Persons() {
		for _, forge := range []string{"github", "gitlab"} {
			if login := p.ForgeAccount(person.Name, forge); login != "" {
				if !header {
					a.out("\nforge accounts:\n")
					header = true
				}
				a.out("  %-16s %s %s\n", person.Name, forge, login)
			}
		}
	}
}
