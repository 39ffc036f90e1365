// Package rslcmd is "git secure rsl": record a ref's value in the
// Reference State Log, mark mistaken entries as skipped, show the log, and
// repair refs a remote serves out of step with its log. The work is done
// by internal/porcelain.
package rslcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/report"
)

// NewCmdRSL is "git secure rsl record|skip|log|repair".
func NewCmdRSL(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:        "rsl",
		Usage:       "record ref changes in the Reference State Log and show it",
		Subcommands: []*cli.Command{newCmdRecord(f), newCmdSkip(f), newCmdLog(f), newCmdRepair(f)},
	}
}

// RecordOptions are the arguments and flags of rsl record.
type RecordOptions struct {
	F    *factory.Factory
	Ref  string
	Key  string
	JSON bool
}

func newCmdRecord(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "record",
		Usage:     "append a signed entry for REF's current value (or its deletion)",
		ArgsUsage: "REF",
		Description: `Records "REF now points at X", signed with your key. Refused (exit 1, nothing
written) when no rule lets you move REF; when you may but the rule needs more
persons, the entry is written and the command says who must still approve.
REMOTE/BRANCH (e.g. origin/release), for a branch this clone has only as a
remote-tracking ref, records refs/heads/BRANCH at the value last fetched from
REMOTE, without checking it out.`,
		Flags: []cli.Flag{cmdutil.KeyFlag, cmdutil.JSONFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return report.Usagef("rsl record takes exactly one REF, e.g. git secure rsl record main")
			}
			return runRecord(c.Context, &RecordOptions{F: f, Ref: c.Args().First(), Key: c.String("key"), JSON: c.Bool("json")})
		},
	}
}

func runRecord(_ context.Context, opts *RecordOptions) error {
	f := opts.F
	r, err := f.SetUp()
	if err != nil {
		return err
	}
	// GIT_SECURE_TRACE: the record's phases on stderr.
	if r.Trace = f.Tracer("record"); r.Trace != nil {
		r.Trace.Mark("record: set up")
	}
	res, err := r.Record(opts.Ref, opts.Key)
	if err != nil {
		return err
	}
	if opts.JSON {
		return f.PrintJSON(res)
	}
	if res.NoOp {
		f.Out("%s is already recorded at %s (entry #%d)\n", res.Ref, res.New.String()[:12], res.Entry)
		return nil
	}
	f.Out("recorded entry #%d: %s %s -> %s\n", res.Entry, res.Ref, cmdutil.ShortHash(res.Old), cmdutil.ShortHash(res.New))
	for _, p := range res.Pending {
		f.Info("git-secure: note: %s\n", p)
	}
	return nil
}

// SkipOptions are the arguments and flags of rsl skip.
type SkipOptions struct {
	F       *factory.Factory
	Entries []string // entry numbers, "#" in front allowed
	Reason  string
	Key     string
	JSON    bool
}

func newCmdSkip(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "skip",
		Usage:     "mark the newest entries of refs as mistaken (a revoked push): they stop counting",
		ArgsUsage: "ENTRY...",
		Description: `Appends a signed annotation. Each skipped ref goes back to its latest entry
before the skipped ones; you must be allowed to move it back: verification checks
it like any update, path rules on the files the move changes back included, and so
does this command before it signs. Then move the ref itself back, as the command says.`,
		Flags: []cli.Flag{cmdutil.KeyFlag, cmdutil.JSONFlag, &cli.StringFlag{Name: "reason", Usage: "why (recorded in the log)", Required: true}},
		Action: func(c *cli.Context) error {
			return runSkip(c.Context, &SkipOptions{F: f, Entries: c.Args().Slice(), Reason: c.String("reason"), Key: c.String("key"), JSON: c.Bool("json")})
		},
	}
}

func runSkip(_ context.Context, opts *SkipOptions) error {
	f := opts.F
	var nums []uint64
	for _, a := range opts.Entries {
		var n uint64
		if _, err := fmt.Sscanf(strings.TrimPrefix(a, "#"), "%d", &n); err != nil || n == 0 {
			return report.Usagef("%q is not an entry number", a)
		}
		nums = append(nums, n)
	}
	r, err := f.Repo()
	if err != nil {
		return err
	}
	if len(nums) > 0 { // naming none is a usage error first (porcelain.Skip)
		if r, err = f.SetUp(); err != nil {
			return err
		}
	}
	res, err := r.Skip(nums, opts.Reason, opts.Key)
	if err != nil {
		return err
	}
	if opts.JSON {
		return f.PrintJSON(res)
	}
	f.Out("recorded annotation #%d\n", res.Entry)
	for _, p := range res.Pending {
		f.Info("git-secure: note: %s\n", p)
	}
	for ref, back := range res.Refs {
		if back == "deleted" {
			f.Out("  %s is now recorded as absent: git update-ref -d %s\n", ref, ref)
		} else {
			f.Out("  %s is now recorded at %s: move it back with git update-ref %s %s\n", ref, back[:12], ref, back)
		}
	}
	return nil
}

// LogOptions are the flags of rsl log.
type LogOptions struct {
	F        *factory.Factory
	JSON     bool
	MaxCount int
}

func newCmdLog(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:  "log",
		Usage: "show the log, newest first",
		Flags: []cli.Flag{cmdutil.JSONFlag, &cli.IntFlag{Name: "max-count", Aliases: []string{"n"}, Usage: "show at most `N` entries"}},
		Action: func(c *cli.Context) error {
			return runLog(c.Context, &LogOptions{F: f, JSON: c.Bool("json"), MaxCount: c.Int("max-count")})
		},
	}
}
