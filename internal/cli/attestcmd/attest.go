// Package attestcmd is "git secure attest": signed statements that count
// toward a rule's thresholds, an approval of one update of a ref (approve)
// or a passing test run on a tree (run). The work is done by
// internal/porcelain.
package attestcmd

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/report"
)

// NewCmdAttest is "git secure attest run|approve".
func NewCmdAttest(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:        "attest",
		Usage:       "signed statements that count toward thresholds (approvals, passing test runs)",
		Subcommands: []*cli.Command{newCmdRun(f), newCmdApprove(f)},
	}
}

// RunOptions are the command and flags of attest run.
type RunOptions struct {
	F    *factory.Factory
	Argv []string // the test command, a leading "--" allowed
	Key  string
	JSON bool
}

func newCmdRun(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run the tests on HEAD's committed tree and, if they pass, attest it",
		ArgsUsage: "-- CMD [ARGS...]",
		Description: `Refuses a work tree with changes, runs CMD in it, and when CMD exits 0 (and left
the tree unchanged) records a signed in-toto statement: this tree, this command,
exit 0, how long, which tools. Rules with --require-tests-by accept an update only
when its tree has such a statement from their group ("tests passed on this exact
tree", from a developer's machine or CI). Example:
   git secure attest run -- make test`,
		Flags: []cli.Flag{cmdutil.KeyFlag, cmdutil.JSONFlag},
		Action: func(c *cli.Context) error {
			return runRun(c.Context, &RunOptions{F: f, Argv: c.Args().Slice(), Key: c.String("key"), JSON: c.Bool("json")})
		},
	}
}

func runRun(_ context.Context, opts *RunOptions) error {
	f := opts.F
	argv := opts.Argv
	if len(argv) > 0 && argv[0] == "--" {
		argv = argv[1:]
	}
	r, err := f.Repo()
	if err != nil {
		return err
	}
	res, err := r.AttestRun(argv, opts.Key, f.Version, f.Stderr, f.Stderr)
	if err != nil {
		return err
	}
	if opts.JSON {
		return f.PrintJSON(res)
	}
	f.Out("tests passed in %.1fs; %s attested tree %s (commit %s)\n", float64(res.DurationMs)/1000, res.Person, res.Tree.String()[:12], res.Commit.String()[:12])
	return nil
}

// ApproveOptions are the arguments and flags of attest approve.
type ApproveOptions struct {
	F       *factory.Factory
	Ref     string
	To      string
	From    string
	Tree    bool // bind the approval to the new tree
	NoFetch bool
	Key     string
	JSON    bool
}

func newCmdApprove(f *factory.Factory) *cli.Command {
	return &cli.Command{
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
			cmdutil.KeyFlag, cmdutil.JSONFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return report.Usagef("approve takes exactly one REF")
			}
			return runApprove(c.Context, &ApproveOptions{F: f, Ref: c.Args().First(), To: c.String("to"), From: c.String("from"),
				Tree: c.Bool("tree"), NoFetch: c.Bool("no-fetch"), Key: c.String("key"), JSON: c.Bool("json")})
		},
	}
}

func runApprove(_ context.Context, opts *ApproveOptions) error {
	f := opts.F
	r, ref, err := f.RepoRef(opts.Ref)
	if err != nil {
		return err
	}
	remote, err := approveRemote(r, ref)
	if err != nil {
		return err
	}
	if remote != "" && !opts.NoFetch {
		if err := refreshForApprove(f, r, remote); err != nil {
			return err
		}
	}
	// After the fetch: it may be what brings the log.
	if _, err := f.SetUp(); err != nil {
		return err
	}
	approve := r.Approve
	if opts.Tree {
		approve = r.ApproveTree
	}
	res, err := approve(ref, opts.To, opts.From, opts.Key)
	if err != nil {
		return err
	}
	warnReplaced(f, res)
	warnUnreachable(f, r, remote, res)
	if opts.JSON {
		return f.PrintJSON(res)
	}
	f.Out("%s approves %s %s -> %s\n", res.Person, res.Ref, cmdutil.ShortHash(res.From), cmdutil.ShortHash(res.To))
	shareApproval(f, r, remote)
	return nil
}
