package cli

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/porcelain"
)

// rslRepairCommand is "git secure rsl repair": a remote left with a ref
// out of step with its log (a server killed between moving a branch and
// moving the log) is repaired by anyone allowed to, in one of two safe
// ways, each only for the refs named.
func (a *app) rslRepairCommand() *cli.Command {
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
			keyFlag, jsonFlag,
		},
		Action: func(c *cli.Context) error {
			record, restore := c.Bool("record"), c.Bool("restore")
			if record && restore {
				return usageErr("rsl repair: --record and --restore exclude each other")
			}
			r, err := a.open()
			if err != nil {
				return err
			}
			remote, refs := "origin", c.Args().Slice()
			if len(refs) > 0 {
				if _, err := r.RemoteURL(refs[0]); err == nil {
					remote, refs = refs[0], refs[1:]
				}
			}
			if (record || restore) && len(refs) == 0 {
				return usageErr("rsl repair: --record and --restore act only on the REFs you name, e.g. git secure rsl repair %s --restore refs/heads/main", remote)
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
				return a.repairEach(full, c.Bool("json"), func(ref string) (*porcelain.RepairResult, error) {
					return scan.RecordServerValue(ref, c.String("key"))
				})
			case restore:
				return a.repairEach(full, c.Bool("json"), scan.RestoreRecorded)
			}
			return a.showRepair(scan, full, c.Bool("json"))
		},
	}
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

func (a *app) repairEach(refs []string, asJSON bool, do func(string) (*porcelain.RepairResult, error)) error {
	var done []*porcelain.RepairResult
	for _, ref := range refs {
		res, err := do(ref)
		if err != nil {
			if asJSON && len(done) > 0 {
				_ = a.printJSON(done)
			}
			return err
		}
		done = append(done, res)
		if !asJSON {
			a.printRepaired(res)
		}
	}
	if asJSON {
		return a.printJSON(done)
	}
	return nil
}

func (a *app) printRepaired(res *porcelain.RepairResult) {
	if res.Action == "recorded" {
		a.out("recorded entry #%d (%s): %s %s -> %s, signed with your key; pushed the log alone (refs/secure/rsl); the ref was not moved\n",
			res.Entry, res.EntryID.String()[:12], res.Ref, shortHash(res.Recorded), shortHash(res.Server))
		a.out("next: git fetch, to bring the repaired log into this clone\n")
		return
	}
	if res.Recorded.IsZero() {
		a.out("deleted %s on the remote: its log records no value for it\n", res.Ref)
	} else {
		a.out("put %s on the remote back to %s, the value its log records; no entry was signed\n", res.Ref, res.Recorded)
	}
	if !res.Server.IsZero() {
		a.out("the server's commit %s is not lost: it is in this clone until git gc prunes it; keep it with: git branch rescued %s\n", res.Server, res.Server)
		a.out("to publish it, push it again with git-secure (it records an entry): git push origin rescued:%s\n", strings.TrimPrefix(res.Ref, "refs/heads/"))
	}
}

func (a *app) showRepair(scan *porcelain.RepairScan, only []string, asJSON bool) error {
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
		return a.printJSON(scan)
	}
	if len(scan.Refs) == 0 {
		a.out("every ref %s serves is what its log records: nothing to repair\n", scan.Remote)
		return nil
	}
	a.out("%s serves %d ref(s) out of step with its log:\n", scan.Remote, len(scan.Refs))
	for _, o := range scan.Refs {
		a.out("  %s\n", o.Ref)
		if o.Entry != 0 {
			a.out("    recorded: %s (entry #%d, signed by %s)\n", shortHash(o.Recorded), o.Entry, o.EntryBy)
		} else {
			a.out("    recorded: (none)\n")
		}
		a.out("    server:   %s\n", shortHash(o.Server))
		a.out("    problem:  %s\n", o.Problem)
	}
	a.out("the log's last entries (whoever pushed last may know what happened):\n")
	for _, e := range scan.Last {
		a.out("    #%d %s signed by %s\n", e.Number, e.Ref, e.By)
	}
	a.out("repair one ref either way:\n")
	a.out("  record the server's value (you sign the move; only if the policy lets you): %s %s --record REF\n", porcelain.RepairCommand, scan.Remote)
	a.out("  put it back to the recorded value (the server's commit stays in your clone): %s %s --restore REF\n", porcelain.RepairCommand, scan.Remote)
	return nil
}
