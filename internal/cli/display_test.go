package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/git-secure/git-secure/internal/cli/rslcmd"
	"github.com/git-secure/git-secure/internal/display"
)

// rawControls returns a description of the first character in s a
// terminal would interpret or that hides text (a control other than
// newline, DEL, a C1 control, a format character, invalid UTF-8), or "".
func rawControls(s string) string {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return "invalid UTF-8 at byte " + itoa(i)
		case r < 0x20 && r != '\n':
			return "control " + itoa(int(r)) + " at byte " + itoa(i)
		case r == 0x7f, r >= 0x80 && !display.Safe(r):
			return "unsafe character " + string(r) + " at byte " + itoa(i)
		}
	}
	return ""
}

func itoa(n int) string { return jsonNum(n) }

func jsonNum(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestCLIRepositoryTextIsEscaped reproduces issue 14 item 5: ref names with
// a C1 control (U+009B, the one-byte CSI) and a right-to-left override, and
// a log entry whose committer email ends with ESC[8m (conceal: what follows,
// the real signer's fingerprint, would be invisible). Neither rsl log nor
// verify (its errors and hints included) may write them raw, and rsl log
// names the person the policy names for the verified key, not the
// committer the signer wrote.
func TestCLIRepositoryTextIsEscaped(t *testing.T) {
	h := NewCLIHarness(t)
	h.Setup()
	h.Want(0, "policy", "add-rule", "heads", "--ref", "refs/heads/*", "--allow", "alice", "--allow", "bob")
	h.Want(0, "policy", "apply", "--key", h.Priv("alice"))
	c1 := "refs/heads/x\xc2\x9b2J"
	rlo := "refs/heads/\u202eniam"
	for _, ref := range []string{c1, rlo} {
		h.Git("update-ref", ref, "HEAD")
		h.Want(0, "rsl", "record", ref, "--key", h.Priv("alice"))
	}
	// bob records, with a committer field that claims to be alice and hides
	// the rest of the line.
	t.Setenv("GIT_COMMITTER_NAME", "alice")
	t.Setenv("GIT_COMMITTER_EMAIL", "alice@example.com\x1b[8m")
	h.Git("checkout", "-q", "-b", "feature")
	h.S.Commit(h.Dir, "b.txt", "b\n", "bob's work")
	h.Want(0, "rsl", "record", "refs/heads/feature", "--key", h.Priv("bob"))

	log := h.Want(0, "rsl", "log")
	if bad := rawControls(log.Stdout + log.Stderr); bad != "" {
		t.Fatalf("rsl log writes %s:\n%q", bad, log.Stdout)
	}
	first, _, _ := strings.Cut(log.Stdout, "\n#")
	if !strings.Contains(first, "by bob ("+h.FP("bob")+")") || strings.Contains(first, "alice") {
		t.Errorf("rsl log must name the verified signer bob, not the committer field:\n%s", first)
	}
	for _, want := range []string{`refs/heads/x\u009b2J`, `refs/heads/\u202eniam`} {
		if !strings.Contains(log.Stdout, want) {
			t.Errorf("rsl log lacks the escaped ref %s:\n%s", want, log.Stdout)
		}
	}

	// --json stays JSON, with the exact strings.
	js := h.Want(0, "rsl", "log", "--json")
	var entries []rslcmd.EntryJSON
	if err := json.Unmarshal([]byte(js.Stdout), &entries); err != nil {
		t.Fatalf("rsl log --json: %v\n%s", err, js.Stdout)
	}
	if e := entries[0]; e.Person != "bob" || e.SignerStatus != rslcmd.SignerPerson || e.Committer != "alice <alice@example.com\x1b[8m>" {
		t.Errorf("rsl log --json newest entry: %+v", e)
	}
	if entries[1].Ref != rlo || entries[2].Ref != c1 {
		t.Errorf("rsl log --json refs: %q, %q", entries[1].Ref, entries[2].Ref)
	}

	// verify, succeeding and failing (the right-to-left ref moved without
	// an entry): the refs it names, in errors and hints too, are escaped.
	ok := h.Want(0, "verify")
	if bad := rawControls(ok.Stdout + ok.Stderr); bad != "" {
		t.Fatalf("verify writes %s:\n%q", bad, ok.Stdout)
	}
	h.Git("update-ref", rlo, h.Git("commit-tree", "HEAD^{tree}", "-m", "rewritten"))
	failed := h.Want(1, "verify")
	if bad := rawControls(failed.Stdout + failed.Stderr); bad != "" {
		t.Fatalf("failing verify writes %s:\n%q", bad, failed.Stderr)
	}
	if !strings.Contains(failed.Stderr, `git-secure: error: refs/heads/\u202eniam`) && !strings.Contains(failed.Stderr, `refs/heads/\u202eniam`) {
		t.Errorf("verify names the ref escaped:\n%s", failed.Stderr)
	}
	v := ParseVerifyJSON(t, h.Want(1, "verify", "--json"))
	if len(v.Problems) == 0 || v.Problems[0].Ref != rlo {
		t.Errorf("verify --json problems: %+v", v.Problems)
	}
}
