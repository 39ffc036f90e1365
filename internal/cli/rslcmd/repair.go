package rslcmd

import (
	"context"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
)

// newCmdRepair is "git secure rsl repair": a remote left with a ref
// out of step with its log (a server killed between moving a branch and
// moving the log) is repaired by anyone allowed to, in one of two safe
// ways, each only for the refs named.
func newCmdRepair(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "repair",
		Usage:     "show or repair refs a remote serves at a value its log does not record",
		ArgsUsage: "[REMOTE] [REF...]",
		Description: `Fetches REMOTE (default origin), verifies its log, and lists each ref whose value
differs from what the log records: the recorded value, the server's value, and who
signed the log's last entries. Nothing changes without --record or --restore, which
act only on the REFs named:

  --record   sign an entry for the move recorded -> server value and push the log
             (only when the policy in force lets you make that move, its approvals
             included; otherwise nothing is signed and the missing part is named)
  --restore  push the ref back to the value the log records; the server's commit
             stays in this clone (its hash is printed)`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "record", Usage: "record the server's value of each REF (you sign the entry)"},
			&cli.BoolFlag{Name: "restore", Usage: "put each REF on the remote back to its recorded value"},
			cmdutil.KeyFlag, cmdutil.JSONFlag,
		},
		Action: func(c *cli.Context) error {
			return runRepair(c.Context, &RepairOptions{F: f, Args: c.Args().Slice(), Record: c.Bool("record"), Restore: c.Bool("restore"), Key: c.String("key"), JSON: c.Bool("json")})
		},
	}
}

// RepairOptions are the arguments and flags of rsl repair.
type RepairOptions struct {
	F               *factory.Factory
	Args            []string // [REMOTE] [REF...]
	Record, Restore bool
	Key             string
	JSON            bool
}

func runRepair(_ context.Context, opts *RepairOptions) error {
	f := opts.F
	record, restore := opts.Record, opts.Restore
	if record && restore {
		return report.Usagef("rsl repair: --record and --restore exclude each other")
	}
	r, err := f.Repo()
	if err != nil {
		return err
	}
	remote, refs := "origin", opts.Args
	if len(refs) > 0 {
		if _, err := r.RemoteURL(refs[0]); err == nil {
			remote, refs = refs[0], refs[1:]
		}
	}
	if (record || restore) && len(refs) == 0 {
		return report.Usagef("rsl repair: --record and --restore act only on the REFs you name, e.g. git secure rsl repair %s --restore refs/heads/main", remote)
	}
	scan, err := r.ScanRemote(remote, nil)
	if err != nil {
		return err
	}
	defer scan.Close()
	full := make([]string, len(refs))
	for i, ref := range refs {
		full[i] = repairRefName(scan, ref)
	}
	switch {
	case record:
		return repairEach(f, full, opts.JSON, func(ref string) (*porcelain.RepairResult, error) {
			return scan.RecordServerValue(ref, opts.Key)
		})
	case restore:
		return repairEach(f, full, opts.JSON, scan.RestoreRecorded)
	}
	return showRepair(f, scan, full, opts.JSON)
}

// repairRefName turns a short name into the scanned ref it names (main ->
// refs/heads/main), preferring branches, then tags.
func repairRefName(scan *porcelain.RepairScan, name string) string {
	if strings.HasPrefix(name, "refs/") {
		return name
	}
	for _, prefix := range []string{"refs/heads/", "refs/tags/"} {
		for _, o := range scan.Refs {
			if o.Ref == prefix+name {
				return o.Ref
			}
		}
	}
	return "refs/heads/" + name
}

func repairEach(f *factory.Factory, refs []string, asJSON bool, do func(string) (*porcelain.RepairResult, error)) error {
	var done []*porcelain.RepairResult
	for _, ref := range refs {
		res, err := do(ref)
		if err != nil {
			if asJSON && len(done) > 0 {
				_ = f.PrintJSON(done)
			}
			return err
		}
		done = append(done, res)
		if !asJSON {
			printRepaired(f, res)
		}
	}
	if asJSON {
		return f.PrintJSON(done)
	}
	return nil
}

func printRepaired(f *factory.Factory, res *porcelain.RepairResult) {
	if res.Action == "recorded" {
		f.Out("recorded entry #%d (%s): %s %s -> %s, signed with your key; pushed the log alone (refs/secure/rsl); the ref was not moved\n",
			res.Entry, res.EntryID.String()[:12], res.Ref, cmdutil.ShortHash(res.Recorded), cmdutil.ShortHash(res.Server))
		f.Out("next: git fetch, to bring the repaired log into this clone\n")
		return
	}
	if res.Recorded.IsZero() {
		f.Out("deleted %s on the remote: its log records no value for it\n", res.Ref)
	} else {
		f.Out("put %s on the remote back to %s, the value its log records; no entry was signed\n", res.Ref, res.Recorded)
	}
	if !res.Server.IsZero() {
		f.Out("the server's commit %s is not lost: it is in this clone until git gc prunes it; keep it with: git branch rescued %s\n", res.Server, res.Server)
		f.Out("to publish it, push it again with git-secure (it records an entry): git push origin rescued:%s\n", strings.TrimPrefix(res.Ref, "refs/heads/"))
	}
}

func showRepair(f *factory.Factory, scan *porcelain.RepairScan, only []string, asJSON bool) error {
	if len(only) > 0 {
		var keep []porcelain.OutOfStep
		for _, o := range scan.Refs {
			for _, ref := range only {
				if o.Ref == ref {
					keep = append(keep, o)
				}
			}
		}
		scan.Refs = keep
	}
	if asJSON {
		return f.PrintJSON(scan)
	}
	if len(scan.Refs) == 0 {
		f.Out("every ref %s serves is what its log records: nothing to repair\n", scan.Remote)
		return nil
	}
	f.Out("%s serves %d ref(s) out of step with its log:\n", scan.Remote, len(scan.Refs))
	for _, o := range scan.Refs {
		f.Out("  %s\n", o.Ref)
		if o.Entry != 0 {
			f.Out("    recorded: %s (entry #%d, signed by %s)\n", cmdutil.ShortHash(o.Recorded), o.Entry, o.EntryBy)
		} else {
			f.Out("    recorded: (none)\n")
		}
		f.Out("    server:   %s\n", cmdutil.ShortHash(o.Server))
		f.Out("    problem:  %s\n", o.Problem)
	}
	f.Out("the log's last entries (whoever pushed last may know what happened):\n")
	for _, e := range scan.Last {
		f.Out("    #%d %s signed by %s\n", e.Number, e.Ref, e.By)
	}
	f.Out("repair one ref either way:\n")
	f.Out("  record the server's value (you sign the move; only if the policy lets you): %s %s --record REF\n", porcelain.RepairCommand, scan.Remote)
	f.Out("  put it back to the recorded value (the server's commit stays in your clone): %s %s --restore REF\n", porcelain.RepairCommand, scan.Remote)
	return nil
}
