package report

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/verify"
)

// long is a message longer than display.Width, to see where each layout
// wraps it.
var long = strings.Repeat("word ", 25) + "end"

func TestSay(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p       Printer
		label   string
		msg     string
		want    string
		wrapped bool
	}{
		{name: "plain", label: "error", msg: "no key", want: "git-secure: error: no key\n"},
		{name: "no label", label: "", msg: "note", want: "git-secure: note\n"},
		{name: "escaped", label: "warning", msg: "refs/heads/\x1b[8m", want: "git-secure: warning: refs/heads/\\x1b[8m\n"},
		{name: "long, not a terminal: one line", label: "error", msg: long, want: "git-secure: error: " + long + "\n"},
		{name: "long, hanging under the label", p: Printer{Wrap: true, HangLabel: true}, label: "error", msg: long,
			want: "git-secure: error: " + strings.Repeat("word ", 15) + "word\ngit-secure: error:   " + strings.Repeat("word ", 9) + "end\n"},
		{name: "long, hanging under the program", p: Printer{Wrap: true}, label: "error", msg: long,
			want: "git-secure: error: " + strings.Repeat("word ", 15) + "word\ngit-secure:   " + strings.Repeat("word ", 9) + "end\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			tc.p.W = &b
			tc.p.Say(tc.label, "%s", tc.msg)
			if b.String() != tc.want {
				t.Errorf("Say(%q, %q):\n got %q\nwant %q", tc.label, tc.msg, b.String(), tc.want)
			}
		})
	}
}

func TestFailedPrintsEveryProblemWithItsHint(t *testing.T) {
	f := &verify.Failed{Problems: []*verify.Problem{
		{Kind: verify.ErrUnrecorded, Ref: "refs/heads/main", Detail: "not recorded", Hint: "run git secure rsl record main"},
		{Kind: verify.ErrThreshold, Entry: 3, Ref: "refs/heads/dev", Rule: "protect-dev", Detail: "1 of 2"},
	}}
	var b bytes.Buffer
	Printer{W: &b}.Failed(f)
	want := fmt.Sprintf("git-secure: error: %s\ngit-secure: hint: run git secure rsl record main\ngit-secure: error: %s\ngit-secure: verification FAILED (2 problem(s))\n",
		f.Problems[0].Error(), f.Problems[1].Error())
	if b.String() != want {
		t.Errorf("Failed:\n got %q\nwant %q", b.String(), want)
	}

	b.Reset()
	Printer{W: &b}.Problems("rejected", f, func(p *verify.Problem) string { return "fix " + p.Ref })
	if got := b.String(); !strings.Contains(got, "git-secure: rejected: "+f.Problems[1].Error()+"\ngit-secure: hint: fix refs/heads/dev\n") {
		t.Errorf("Problems with a hint function:\n%s", got)
	}
}

func TestError(t *testing.T) {
	cause := errors.New("cause")
	e := &Error{Code: ExitFailed, Msg: "refused", Hint: "ask bob", Err: cause}
	if !errors.Is(e, cause) {
		t.Error("an Error does not unwrap to its cause")
	}
	if got, ok := As(fmt.Errorf("context: %w", e)); !ok || got != e {
		t.Error("As does not find a wrapped Error")
	}
	var b bytes.Buffer
	Printer{W: &b}.Error(e)
	if want := "git-secure: error: refused\ngit-secure: hint: ask bob\n"; b.String() != want {
		t.Errorf("Error printed %q, want %q", b.String(), want)
	}
	b.Reset()
	Printer{W: &b}.Error(Exit(ExitFailed))
	if b.Len() != 0 {
		t.Errorf("Exit printed %q", b.String())
	}
	if u := Usagef("bad %s", "flag"); u.Code != ExitUsage || u.Error() != "bad flag" {
		t.Errorf("Usagef = %+v", u)
	}
}
