package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// TestPreReceiveRefusesJunkLog: a push of refs/secure/rsl pointing at a
// long chain of cheap commits on top of the server's log (or of unrelated
// history) is refused for what its tip is, an unsigned commit that is no
// entry, without walking the chain first.
func TestPreReceiveRefusesJunkLog(t *testing.T) {
	s, dir, r := initedRepo(t)
	g := r.Git
	rslTip, _, _ := g.ResolveRef("refs/secure/rsl")
	junk := func(name string, on gitrepo.Hash) string {
		var fi strings.Builder
		for i := 1; i <= 2000; i++ {
			msg := fmt.Sprintf("junk %d\n", i)
			fmt.Fprintf(&fi, "commit refs/junk/%s\nmark :%d\ncommitter J <j@x> 1700000000 +0000\ndata %d\n%s", name, i, len(msg), msg)
			switch {
			case i > 1:
				fmt.Fprintf(&fi, "from :%d\n", i-1)
			case !on.IsZero():
				fmt.Fprintf(&fi, "from %s\n", on)
			default:
				fi.WriteString("deleteall\n")
			}
			fi.WriteString("\n")
		}
		if out, err := s.RunErr(dir, []byte(fi.String()), "git", "fast-import", "--quiet"); err != nil {
			t.Fatalf("fast-import: %v: %s", err, out)
		}
		return strings.TrimSpace(s.Git(dir, "rev-parse", "refs/junk/"+name))
	}
	for _, tc := range []struct{ name, tip string }{
		{"on the log", junk("on", rslTip)},
		{"unrelated", junk("unrelated", gitrepo.ZeroHash)},
	} {
		var stderr bytes.Buffer
		in := strings.NewReader(rslTip.String() + " " + tc.tip + " refs/secure/rsl\n")
		err := Run(&Context{Repo: r, Name: "pre-receive", Stdin: in, Stderr: &stderr, Getenv: func(string) string { return "" }})
		if !errors.Is(err, ErrRejected) || !strings.Contains(stderr.String(), "refs/secure/rsl "+tc.tip[:12]+": its tip is not a log entry") || !strings.Contains(stderr.String(), "unsigned") {
			t.Errorf("%s: err=%v, stderr=%q; want a rejection saying the tip is an unsigned commit, not a log entry", tc.name, err, stderr.String())
		}
	}
}
