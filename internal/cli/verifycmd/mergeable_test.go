package verifycmd

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/testing/clitest"
)

// Names and details from the repository are hostile input to a page the
// forge renders: no cell break, no HTML, no link, no code-span escape.
func TestMergeableMarkdownEscapes(t *testing.T) {
	x := &porcelain.Explanation{Ref: "refs/heads/main", Approved: []string{"bob"},
		Rules: []porcelain.ExplainedRule{{RuleDoc: porcelain.RuleDoc{Name: "docs", Paths: []string{"doc/**"}, Allow: []string{"bob"}, Threshold: 2}, Applies: true, Signed: []string{"bob"}}},
		Failures: []porcelain.ExplainedFailure{
			{Rule: "docs", Detail: "needs 2; changed: a|b.txt <img src=x> [x](http://e)\nnext", Next: "git secure attest approve `rm -rf` | x"},
			{Rule: "", Detail: "global <b>", Next: ""},
		}}
	var b strings.Builder
	if err := writeMergeableMarkdown(&b, x); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	unescaped := strings.NewReplacer(`\<`, "", `\[`, "", `\|`, "").Replace(out)
	for _, bad := range []string{"<img", "[x](", "a|b", "`rm", "<b>"} {
		if strings.Contains(unescaped, bad) {
			t.Errorf("summary keeps %q:\n%s", bad, out)
		}
	}
	for _, want := range []string{"**not mergeable yet**", "| docs |", `a\|b.txt \<img src=x\>`, "`git secure attest approve 'rm -rf' ¦ x`", "| policy |", "Signer: nobody (merge button)"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "| ") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 6 {
			t.Errorf("line %d has a wrong number of cells: %s", i, line)
		}
	}
}

// TestRunMergeable: the flags that need --mergeable, its two arguments
// and the flags it excludes are usage errors; merging a new commit into a
// branch no rule protects is mergeable (exit 0) in text and Markdown, and
// merging what the log already records changes nothing.
func TestRunMergeable(t *testing.T) {
	r := clitest.New(t)
	r.Init()
	ctx := context.Background()
	for _, tc := range []struct {
		opts MergeableOptions
		want string
	}{
		{MergeableOptions{Markdown: true, Args: []string{"main", "HEAD"}}, "--markdown and --signer go with --mergeable BASE HEAD"},
		{MergeableOptions{Mergeable: true, Args: []string{"main"}}, `verify --mergeable takes BASE and HEAD (for example: git secure verify --mergeable main "$GITHUB_SHA")`},
		{MergeableOptions{Mergeable: true, Args: []string{"main", "HEAD"}, JSON: true, Markdown: true}, "--json and --markdown exclude each other"},
		{MergeableOptions{Mergeable: true, Args: []string{"main", "HEAD"}, Excluded: []string{"attest"}}, "--attest does not go with --mergeable"},
		{MergeableOptions{Mergeable: true, Args: []string{"main", "HEAD"}, Signer: "mallory"}, "--signer mallory is not a person of the policy in force (git secure policy list)"},
	} {
		opts := tc.opts
		opts.F = r.F()
		err := runMergeable(ctx, &opts)
		if e, ok := report.As(err); ok && e.Code == report.ExitUsage && e.Msg == tc.want {
			continue
		}
		// Mergeable's own usage errors are porcelain's, which Main prints
		// without the "usage: " prefix and exits 2 on.
		if !errors.Is(err, porcelain.ErrUsage) || !strings.HasSuffix(err.Error(), ": "+tc.want) {
			t.Errorf("%+v: %v, want usage error %q", tc.opts, err, tc.want)
		}
	}

	if err := runMergeable(ctx, &MergeableOptions{F: r.F(), Mergeable: true, Args: []string{"main", "main"}}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "mergeable main main", r.Stdout.String(), "already records", "merging changes nothing", "result: satisfied")

	r.Git("commit", "--allow-empty", "-q", "-m", "next")
	if err := runMergeable(ctx, &MergeableOptions{F: r.F(), Mergeable: true, Args: []string{"main", "HEAD"}, Markdown: true}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "mergeable --markdown", r.Stdout.String(), "### git-secure: refs/heads/main", "**mergeable**: the update satisfies the policy", "Signer: nobody (merge button)", "| (none) | no rule protects refs/heads/main |")
}
