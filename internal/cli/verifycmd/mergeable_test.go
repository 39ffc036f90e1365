package verifycmd

import (
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/porcelain"
)

// Names and details from the repository are hostile input to a page the
// forge renders: no cell break, no HTML, no link, no code-span escape.
func TestMergeableMarkdownEscapes(t *testing.T) {
	x := &porcelain.Explanation{Ref: "refs/heads/main", Approved: []string{"bob"},
		Rules: []porcelain.ExplainedRule{{Name: "docs", Paths: []string{"doc/**"}, Allow: []string{"bob"}, Threshold: 2, Applies: true, Signed: []string{"bob"}}},
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
