package verifycmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/explaincmd"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
)

// mergeableFlags extend verify with the pull-request question: would
// merging HEAD into BASE satisfy the policy, and who must still approve?
var mergeableFlags = []cli.Flag{
	&cli.BoolFlag{Name: "mergeable", Usage: "with BASE HEAD: would moving BASE from its recorded tip to HEAD (the commit that would land) satisfy the policy, and who must still approve? Records nothing"},
	&cli.BoolFlag{Name: "markdown", Usage: "with --mergeable: write the answer as a Markdown table (for a CI job summary)"},
	&cli.StringFlag{Name: "signer", Usage: "with --mergeable: the `PERSON` who would sign the entry (default: nobody, as for a forge's merge button)"},
}

// MergeableOptions are the arguments and flags of verify --mergeable
// BASE HEAD.
type MergeableOptions struct {
	F *factory.Factory
	// Mergeable is --mergeable: --markdown and --signer go only with it.
	Mergeable bool
	Args      []string // BASE HEAD
	JSON      bool
	Markdown  bool
	Signer    string
	// Excluded are the verify flags given that do not go with
	// --mergeable (--at, --attest, --out, --full).
	Excluded []string
}

// wantsMergeable tells whether c asks the --mergeable question (or gives
// one of its own flags), and returns its options.
func wantsMergeable(f *factory.Factory, c *cli.Context) (*MergeableOptions, bool) {
	if !c.Bool("mergeable") && !c.IsSet("markdown") && !c.IsSet("signer") {
		return nil, false
	}
	opts := &MergeableOptions{F: f, Mergeable: c.Bool("mergeable"), Args: c.Args().Slice(), JSON: c.Bool("json"),
		Markdown: c.Bool("markdown"), Signer: c.String("signer")}
	for _, name := range []string{"at", "attest", "out", "full"} {
		if c.IsSet(name) {
			opts.Excluded = append(opts.Excluded, name)
		}
	}
	return opts, true
}

// runMergeable answers verify --mergeable BASE HEAD. Exit 0 when the
// update would satisfy the policy, 1 when not, 2 on usage errors.
func runMergeable(_ context.Context, opts *MergeableOptions) error {
	f := opts.F
	if !opts.Mergeable {
		return report.Usagef("--markdown and --signer go with --mergeable BASE HEAD")
	}
	if len(opts.Args) != 2 {
		return report.Usagef("verify --mergeable takes BASE and HEAD (for example: git secure verify --mergeable main \"$GITHUB_SHA\")")
	}
	if opts.JSON && opts.Markdown {
		return report.Usagef("--json and --markdown exclude each other")
	}
	if len(opts.Excluded) > 0 {
		return report.Usagef("--%s does not go with --mergeable", opts.Excluded[0])
	}
	r, err := f.Repo()
	if err != nil {
		return err
	}
	x, err := r.Mergeable(opts.Args[0], opts.Args[1], opts.Signer)
	if err != nil {
		return err
	}
	switch {
	case opts.JSON:
		if err := f.PrintJSON(x); err != nil {
			return err
		}
	case opts.Markdown:
		if err := writeMergeableMarkdown(f.Stdout, x); err != nil {
			return err
		}
	default:
		explaincmd.PrintExplanation(f, x)
	}
	if !x.Satisfied {
		return report.Exit(report.ExitFailed)
	}
	return nil
}

// writeMergeableMarkdown writes x as a GitHub/GitLab job summary: a
// verdict line, one table row per rule (what it needs, who counted, what
// is missing, the command that fixes it) and the notes. Every value from
// the repository is escaped: names, file names and details are hostile
// input to a page the forge renders.
func writeMergeableMarkdown(w io.Writer, x *porcelain.Explanation) error {
	var b strings.Builder
	verdict := "**mergeable**: the update satisfies the policy"
	if !x.Satisfied {
		verdict = "**not mergeable yet**: the update does not satisfy the policy"
	}
	fmt.Fprintf(&b, "### git-secure: %s `%s` → `%s`\n\n%s.\n\n", mdText(x.Ref), cmdutil.ShortHash(x.Old), cmdutil.ShortHash(x.New), verdict)
	signer := x.Signer
	if signer == "" {
		signer = "nobody (merge button)"
	}
	fmt.Fprintf(&b, "Signer: %s. Approved by: %s.\n\n", mdText(signer), mdText(cmdutil.OrNone(x.Approved)))
	for _, v := range x.ViaForge {
		fmt.Fprintf(&b, "- through the forge: %s\n", mdText(v.String()))
	}
	if len(x.ViaForge) > 0 {
		b.WriteString("\n")
	}
	failures := map[string][]porcelain.ExplainedFailure{}
	for _, f := range x.Failures {
		failures[f.Rule] = append(failures[f.Rule], f)
	}
	b.WriteString("| rule | needs | signed or approved | missing | to fix |\n| --- | --- | --- | --- | --- |\n")
	if len(x.Rules) == 0 {
		fmt.Fprintf(&b, "| (none) | no rule protects %s | | | |\n", mdText(x.Ref))
	}
	for _, r := range x.Rules {
		needs := cmdutil.RuleSummary(r.RuleDoc)
		counted, missing, fix := "", "", ""
		switch {
		case !r.Applies:
			missing = "does not apply (no protected file changes)"
		default:
			counted = cmdutil.OrNone(r.Signed)
			missing, fix = failureCells(failures[r.Name])
			if missing == "" {
				missing = "nothing ✔"
			}
		}
		delete(failures, r.Name)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdText(r.Name), mdText(needs), mdText(counted), mdText(missing), fix)
	}
	// Global rules and policy-wide failures have no rule row of their own.
	for name, fs := range failures {
		missing, fix := failureCells(fs)
		fmt.Fprintf(&b, "| %s | | | %s | %s |\n", mdText(cmdutil.OrWord(name, "policy")), mdText(missing), fix)
	}
	if len(x.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range x.Notes {
			fmt.Fprintf(&b, "- note: %s\n", mdText(n))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// failureCells joins failures into the "missing" text and the "to fix"
// cell (commands as code spans).
func failureCells(fs []porcelain.ExplainedFailure) (missing, fix string) {
	var ms, cmds []string
	for _, f := range fs {
		ms = append(ms, f.Detail)
		if f.Next != "" {
			cmds = append(cmds, mdCode(f.Next))
		}
	}
	return strings.Join(ms, "; "), strings.Join(cmds, "<br>")
}

// mdText escapes s for a Markdown table cell: no line breaks, no cell
// separator, no HTML, no emphasis or link syntax.
func mdText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f:
		case strings.ContainsRune("\\`*_{}[]<>|~&", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCode writes s as a code span in a table cell. A backtick in s would
// end the span, and a | the cell: both are replaced.
func mdCode(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '`':
			return '\''
		case r == '|':
			return '¦'
		case r < 0x20 || r == 0x7f:
			return ' '
		}
		return r
	}, s)
	return "`" + s + "`"
}
