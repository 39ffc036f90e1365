// Package verifycmd is "git secure verify": replay the log and check every
// change against the policy of its time (internal/verify does it), print
// what was judged, answer "was COMMIT ever a verified state of REF"
// (--at), sign a verification summary (--attest) and answer a pull
// request's question, "would merging HEAD into BASE satisfy the policy,
// and who must still approve?" (--mergeable).
package verifycmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/freshness"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/verify"
)

// Options are verify's arguments and flags.
type Options struct {
	F    *factory.Factory
	Refs []string // as given: short names are resolved
	JSON bool
	Full bool
	// At, with one ref: was this commit ever a verified state of it?
	At     string
	Attest bool
	Out    string // where --attest writes its summary
	Key    string
	Pin    cmdutil.Pin
	Remote string
	// AllowShallow accepts a shallow clone.
	AllowShallow bool
	// Now, when not empty, is the RFC 3339 time freshness and expiry are
	// judged at.
	Now         string
	NoFreshness bool
	// Org, when set, is a file listing repositories to verify, each
	// with its organisation policy, in one table.
	Org string
	// Verbose lists every ref judged, one line each; without it the refs
	// no rule protects that are as the log says are counted per kind.
	Verbose bool
}

// freshnessFlags are verify's flags about freshness.
var freshnessFlags = []cli.Flag{
	&cli.StringFlag{Name: "now", Usage: "judge freshness and expiry as of `TIME` (RFC 3339): an audit of a past state"},
	&cli.BoolFlag{Name: "no-freshness", Usage: "do not judge the freshness statement the policy may require (an audit of history, not of what a server serves now)"},
}

// NewCmdVerify is "git secure verify [REF...]".
func NewCmdVerify(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "replay the log from its first entry and check every change against the policy of its time",
		ArgsUsage: "[REF...]",
		Description: `Checks each entry's signature, that each policy change was signed by the required
thresholds and only moves forward, that each change of a protected ref or file
was signed or approved by enough distinct persons, and that the repository's
refs are exactly what the log records. With REF arguments only those refs are
checked (policy changes always are).

Which refs are judged: in a bare repository, its own refs. In a clone with a
work tree, what the remote served: the remote-tracking refs, mapped back
through the remote's fetch refspecs (refs/remotes/origin/main is the remote's
refs/heads/main), and the tags the log records (fetched tags land in
refs/tags/, so a recorded tag is judged at its local value). Your own branches
and tags (ahead, behind, new) are listed as local state and never fail; a tag
the log never recorded is yours unless named as a REF argument. Without a
remote, the repository's own refs are judged (a branch ahead of its entry is
unpushed work). --json says which state was judged.

With --org LIST, every repository the file LIST names (an organisation's
repositories: one URL or path per line, optionally followed by the SHA256
fingerprints of its root keys to pin) is fetched into a fresh mirror and
verified as its server's state, with the organisation policy it inherits; one
table (or --json) says which verify, which organisation policy version each
names, and each one's first problem.

Exit 0 when everything verifies, 1 when a check fails, 2 on usage errors.`,
		Flags: []cli.Flag{cmdutil.JSONFlag, &cli.BoolFlag{Name: "full", Usage: "ignore the saved checkpoint and check every entry again"},
			&cli.StringFlag{Name: "at", Usage: "with one REF: was `COMMIT` ever a verified state of REF? (exit 0 yes, 1 no)"},
			&cli.BoolFlag{Name: "attest", Usage: "with one REF: after success, write a signed SLSA verification summary (in-toto, DSSE) of REF"},
			&cli.StringFlag{Name: "out", Usage: "write the --attest summary to `FILE` (default stdout)"},
			cmdutil.RootKeyFlag("git config secure.rootKeys, else trust on first use"), cmdutil.RootThresholdFlag("git config secure.rootThreshold, else all of them"),
			&cli.StringFlag{Name: "remote", Usage: "in a clone with a work tree, judge what remote `NAME` served (default: the checked-out branch's upstream remote, else origin, else the only remote)"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "list every ref judged, one line each (default: protected refs and refs with a note one by one, the others counted per kind; --json always lists each)"},
			&cli.BoolFlag{Name: "allow-shallow", Usage: "accept a shallow clone: the checks that need history beyond its boundary are skipped, each named in a warning"},
			&cli.StringFlag{Name: "org", Usage: "verify every repository `LIST` names (a file: one URL or path per line, optionally followed by root key fingerprints to pin; # comments) in a fresh mirror each, with its organisation policy, and print one table"},
			cmdutil.KeyFlag, freshnessFlags[0], freshnessFlags[1], mergeableFlags[0], mergeableFlags[1], mergeableFlags[2]},
		Action: func(c *cli.Context) error {
			if mo, ok := wantsMergeable(f, c); ok {
				return runMergeable(c.Context, mo)
			}
			if c.IsSet("org") {
				if c.Args().Len() > 0 || c.IsSet("at") || c.IsSet("attest") || c.IsSet("remote") {
					return report.Usagef("--org verifies the repositories of its list: no REF, --at, --attest or --remote")
				}
				return runOrgVerify(c.Context, &Options{F: f, JSON: c.Bool("json"), Org: c.String("org")})
			}
			return runVerify(c.Context, &Options{F: f, Refs: c.Args().Slice(), JSON: c.Bool("json"), Full: c.Bool("full"),
				At: c.String("at"), Attest: c.Bool("attest"), Out: c.String("out"), Key: c.String("key"), Pin: cmdutil.PinOf(c),
				Remote: c.String("remote"), AllowShallow: c.Bool("allow-shallow"), Now: c.String("now"), NoFreshness: c.Bool("no-freshness"), Verbose: c.Bool("verbose")})
		},
	}
}

func runVerify(_ context.Context, opts *Options) error {
	f := opts.F
	r, err := f.Repo()
	if err != nil {
		return err
	}
	var refs []string
	for _, name := range opts.Refs {
		full, err := r.FullRefName(name)
		if err != nil {
			return err
		}
		refs = append(refs, full)
	}
	if (opts.At != "" || opts.Attest) && len(refs) != 1 {
		return report.Usagef("--at and --attest need exactly one REF")
	}
	vo, err := options(opts, r)
	if err != nil {
		return err
	}
	vo.Refs = refs
	prog := newProgress(f, !opts.JSON)
	vo.Progress = prog.update
	start := time.Now()
	res, err := verify.WithCheckpoint(r.Git, vo, opts.Full)
	prog.finish()
	failed, ok := cmdutil.Failed(err)
	if !ok {
		return err
	}
	switch {
	case failed == nil && opts.At != "":
		return printAt(opts, r, res, refs[0])
	case failed == nil && opts.Attest:
		return writeSummary(f, r, res, refs[0], opts.Key, opts.Out)
	case opts.JSON:
		out := cmdutil.NewVerifyJSON(res, failed)
		out.Seconds = time.Since(start).Seconds()
		return cmdutil.PrintVerifyJSON(f, out)
	}
	if res != nil {
		printWarnings(f, res)
	}
	if failed != nil {
		return err
	}
	printResult(f, res, time.Since(start), opts.Verbose || len(opts.Refs) > 0)
	return nil
}

// options are the verification options of opts: the state judged, the
// freshness flags, the root pin and the trace.
func options(opts *Options, r *porcelain.Repo) (verify.Options, error) {
	vo, err := cmdutil.JudgedOptions(r.Git, opts.Remote)
	if err != nil {
		return vo, err
	}
	vo.Now, vo.AllowShallow = opts.F.Now(), opts.AllowShallow
	if opts.Now != "" {
		if vo.Now, err = cmdutil.ParseTimeFlag("now", opts.Now); err != nil {
			return vo, err
		}
	}
	// --at judges history, not freshness.
	vo.SkipFreshness = opts.NoFreshness || opts.At != ""
	vo.RequireFreshness = freshness.Required(r.Git)
	vo.Org = r.OrgCache()
	if vo.RootKeys, vo.RootThreshold, err = cmdutil.RootPin(opts.Pin, r); err != nil {
		return vo, err
	}
	if opts.F.Getenv("GIT_SECURE_TRACE") != "" {
		vo.Trace = func(phase string, d time.Duration) {
			opts.F.Info("git-secure: trace: %-13s %v\n", phase, d.Round(time.Millisecond))
		}
	}
	return vo, nil
}

// printAt answers --at: exit 0 when the commit was a verified state of
// ref, 1 when it never was.
func printAt(opts *Options, r *porcelain.Repo, res *verify.Result, ref string) error {
	f := opts.F
	n, err := verifiedAt(r, res, ref, opts.At)
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := f.PrintJSON(map[string]any{"ok": n != 0, "ref": ref, "commit": opts.At, "entry": n}); err != nil {
			return err
		}
		if n == 0 {
			return report.Exit(report.ExitFailed)
		}
		return nil
	}
	if n == 0 {
		f.Info("git-secure: %s was never a verified state of %s\n", opts.At, ref)
		return report.Exit(report.ExitFailed)
	}
	f.Out("%s was a verified state of %s: entry #%d\n", opts.At, ref, n)
	return nil
}

// freeRefsShown is how many warnings about free refs without an entry
// are printed one by one; more are summed up in one line.
const freeRefsShown = 3

// printWarnings prints res's warnings. Refs no rule protects that have no
// entry (branches anyone may push with plain git: a project's feature and
// bot branches) would print one warning each on every verify; past a few,
// they are named in one line.
func printWarnings(f *factory.Factory, res *verify.Result) {
	free := map[string]bool{}
	for _, s := range res.Refs {
		if !s.Protected && s.Entry == 0 {
			free[s.Ref] = true
		}
	}
	shown := 0
	for _, w := range res.Warnings {
		if ref, _, _ := strings.Cut(w, ": "); free[ref] {
			if shown++; shown > freeRefsShown {
				continue
			}
		}
		f.Info("git-secure: warning: %s\n", w)
	}
	if n := shown - freeRefsShown; n > 0 {
		f.Info("git-secure: warning: and %d more refs that no rule protects have no entry in the log (pushed without git-secure, as anyone may): git secure verify --json names each\n", n)
	}
}

// printResult prints a successful verification for people.
func printResult(f *factory.Factory, res *verify.Result, took time.Duration, verbose bool) {
	checked := ""
	if res.Checked < res.Entries {
		checked = fmt.Sprintf(" (%d new since the last verification; --full checks all)", res.Checked)
	}
	f.Out("verified %d entries%s in %.2fs: policy root v%d, rules v%d (expires %s)\n", res.Entries, checked, took.Seconds(), res.RootVersion, res.RulesVersion, res.PolicyExpires.Format("2006-01-02"))
	f.Out("judged: %s\n", res.Judged)
	refs, counted := distinctRefs(res.Refs), ""
	if !verbose {
		refs, counted = summariseRefs(res.Refs)
	}
	for _, s := range refs {
		mark := " "
		if s.Protected {
			mark = "*"
		}
		line := fmt.Sprintf("%s %-40s %s", mark, s.Ref, s.Target.String()[:12])
		if s.Entry != 0 {
			line += fmt.Sprintf("  entry #%d", s.Entry)
		}
		if s.Note != "" {
			line += "  (" + s.Note + ")"
		}
		f.Out("%s\n", line)
	}
	if counted != "" {
		f.Out("  %s\n", counted)
	}
	f.Out("(* protected by a rule)\n")
	printLocal(f, res)
}

// distinctRefs leaves out a ref judged again with the same value, entry
// and verdict: in a clone that keeps the remote's tags as remote-tracking
// refs too (refs/remote-refs/origin/*: README, "Verify in CI"), every tag
// is judged as refs/tags/X and as
// origin's, and a CI log listed each twice. --json keeps them all.
func distinctRefs(all []verify.RefStatus) []verify.RefStatus {
	type key struct {
		ref, note string
		target    gitrepo.Hash
		entry     uint64
		protected bool
	}
	seen := make(map[key]bool, len(all))
	out := make([]verify.RefStatus, 0, len(all))
	for _, s := range all {
		k := key{s.Ref, s.Note, s.Target, s.Entry, s.Protected}
		if !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	return out
}

// refsListed is how many routine refs (no rule protects them, no note)
// are still listed one by one; more are counted per kind.
const refsListed = 3

// summariseRefs splits the refs judged into those listed one by one
// (protected ones, ones with a note) and a line counting the routine rest
// per kind: a project with 29 release tags and a few branches printed a
// line for each on every verify. Problems are never among the counted:
// they fail or warn in full.
func summariseRefs(all []verify.RefStatus) ([]verify.RefStatus, string) {
	var listed, routine []verify.RefStatus
	for _, s := range all {
		if s.Protected || (s.Note != "" && !strings.HasPrefix(s.Note, "review branch")) {
			listed = append(listed, s)
		} else {
			routine = append(routine, s)
		}
	}
	if len(routine) <= refsListed {
		return all, ""
	}
	var tags, branches, reviews, other int
	for _, s := range routine {
		switch {
		case s.Note != "":
			reviews++
		case strings.HasPrefix(s.Ref, "refs/tags/"):
			tags++
		case strings.HasPrefix(s.Ref, "refs/heads/"):
			branches++
		default:
			other++
		}
	}
	var parts []string
	for _, c := range []struct {
		n    int
		kind string
	}{{tags, "tag"}, {branches, "branch"}, {reviews, "review branch"}, {other, "other ref"}} {
		switch {
		case c.n == 1:
			parts = append(parts, "1 "+c.kind)
		case c.n > 1 && strings.HasSuffix(c.kind, "ch"):
			parts = append(parts, fmt.Sprintf("%d %ses", c.n, c.kind))
		case c.n > 1:
			parts = append(parts, fmt.Sprintf("%d %ss", c.n, c.kind))
		}
	}
	return listed, fmt.Sprintf("and %s that no rule protects (--verbose lists each)", strings.Join(parts, ", "))
}

// printLocal lists a working clone's own refs that differ from the log:
// information, never a failure.
func printLocal(f *factory.Factory, res *verify.Result) {
	if len(res.Local) == 0 {
		return
	}
	f.Out("local state (yours, not judged):\n")
	for _, l := range res.Local {
		line := fmt.Sprintf("  %-40s %s  %s", l.Ref, l.Target.String()[:12], l.State)
		switch {
		case l.State == "stale":
			line += " (no fetch refspec maps it)"
		case l.Recorded != nil && l.Recorded.IsZero():
			line += fmt.Sprintf(" (the log records it deleted, entry #%d)", l.Entry)
		case l.Recorded != nil:
			line += fmt.Sprintf(" (the log records %s, entry #%d)", l.Recorded.String()[:12], l.Entry)
		default:
			line += " (the log has no entry for it)"
		}
		f.Out("%s\n", line)
	}
}
