package cli

import (
	"github.com/git-secure/git-secure/internal/cli/hookscmd"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/hooks"
)

func (a *app) initCommand() *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "set this repository up: your key becomes the root and rules key, every branch and tag is recorded",
		Description: `Writes the first policy (refs/secure/policy), with your key as the only root key
and rules key (threshold 1), and starts the log (refs/secure/rsl) with one entry
for the policy and one for every existing branch and tag. History before init is
the accepted starting point. Nothing is protected until you add rules.`,
		Flags: []cli.Flag{keyFlag, jsonFlag, &cli.BoolFlag{Name: "no-hooks", Usage: "do not install the hooks and remote helper (git secure hooks install)"}},
		Action: func(c *cli.Context) error {
			r, err := a.open()
			if err != nil {
				return err
			}
			res, err := r.Init(c.String("key"))
			if err != nil {
				return err
			}
			var in *hooks.Installer
			if !c.Bool("no-hooks") {
				in = hookscmd.InstallAfterInit(a.f)
			}
			if c.Bool("json") {
				return a.printJSON(res)
			}
			a.out("Initialized git-secure with root and rules key %s.\n", res.Fingerprint)
			a.out("Recorded %d entries: the policy and %d refs.\n", res.Entries, res.Entries-1)
			if in != nil {
				hookscmd.ReportInstall(a.f, in)
			}
			a.out("\nNext:\n")
			a.out("  git secure policy add-person NAME --key NAME.pub      # everyone who will sign\n")
			a.out("  git secure policy add-rule protect-main --ref refs/heads/main --allow NAME [--threshold N]\n")
			a.out("  git secure policy apply                               # sign and put the rules in force\n")
			a.out("  git secure verify                                     # anyone can check, from any clone\n")
			return nil
		},
	}
}

func (a *app) attestCommand() *cli.Command {
	return &cli.Command{
		Name:  "attest",
		Usage: "signed statements that count toward thresholds (approvals, passing test runs)",
		Subcommands: []*cli.Command{
			{
				Name:      "run",
				Usage:     "run the tests on HEAD's committed tree and, if they pass, attest it",
				ArgsUsage: "-- CMD [ARGS...]",
				Description: `Refuses a work tree with changes, runs CMD in it, and when CMD exits 0 (and left
the tree unchanged) records a signed in-toto statement: this tree, this command,
exit 0, how long, which tools. Rules with --require-tests-by accept an update only
when its tree has such a statement from their group ("tests passed on this exact
tree", from a developer's machine or CI). Example:
   git secure attest run -- make test`,
				Flags: []cli.Flag{keyFlag, jsonFlag},
				Action: func(c *cli.Context) error {
					argv := c.Args().Slice()
					if len(argv) > 0 && argv[0] == "--" {
						argv = argv[1:]
					}
					r, err := a.open()
					if err != nil {
						return err
					}
					res, err := r.AttestRun(argv, c.String("key"), Version, a.env.Stderr, a.env.Stderr)
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return a.printJSON(res)
					}
					a.out("tests passed in %.1fs; %s attested tree %s (commit %s)\n", float64(res.DurationMs)/1000, res.Person, res.Tree.String()[:12], res.Commit.String()[:12])
					return nil
				},
			},
			{
				Name:      "approve",
				Usage:     "approve exactly one update of REF: from OLD (default: its recorded value) to NEW",
				ArgsUsage: "REF",
				Description: `Stores an in-toto statement in a DSSE envelope signed with your key on
refs/secure/attestations. It counts, with the entry's signer, toward the
threshold of the rules that protect REF, for that exact update only.

It fetches from REF's remote first (git fetch), so that it approves the
update from the value the remote's log records now, and warns when the
update it approves can no longer happen. To approve a commit someone
published for review, fetch it first (git fetch).`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "to", Usage: "the new value: a commit or a ref name", Required: true},
					&cli.StringFlag{Name: "from", Usage: "the old value (default: REF's latest recorded value)"},
					&cli.BoolFlag{Name: "tree", Usage: "bind the approval to NEW's tree instead of the commit (counts where the rule has --tree-approvals)"},
					&cli.BoolFlag{Name: "no-fetch", Usage: "approve against the local log without fetching from the remote first"},
					keyFlag, jsonFlag,
				},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErr("approve takes exactly one REF")
					}
					r, err := a.open()
					if err != nil {
						return err
					}
					ref, err := r.FullRefName(c.Args().First())
					if err != nil {
						return err
					}
					remote, err := approveRemote(r, ref)
					if err != nil {
						return err
					}
					if remote != "" && !c.Bool("no-fetch") {
						if err := a.refreshForApprove(r, remote); err != nil {
							return err
						}
					}
					approve := r.Approve
					if c.Bool("tree") {
						approve = r.ApproveTree
					}
					res, err := approve(ref, c.String("to"), c.String("from"), c.String("key"))
					if err != nil {
						return err
					}
					a.warnUnreachable(r, remote, res)
					if c.Bool("json") {
						return a.printJSON(res)
					}
					a.out("%s approves %s %s -> %s\n", res.Person, res.Ref, shortHash(res.From), shortHash(res.To))
					a.shareApproval(r, remote)
					return nil
				},
			},
		},
	}
}
