package hostile

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/hooks"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/remote"
	"github.com/git-secure/git-secure/internal/rsl"
)

// server is a bare mirror of the fixture: what an enforcing server holds.
func (f *fixture) server() (*porcelain.Repo, string) {
	f.t.Helper()
	dir := filepath.Join(f.t.TempDir(), "srv.git")
	f.s.Git(f.s.Home, "clone", "-q", "--mirror", f.dir, dir)
	g, err := gitrepo.OpenWithEnv(dir, f.s.Environ())
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { g.Close() })
	return &porcelain.Repo{Git: g, Now: func() time.Time { return now }, Home: f.s.Home}, dir
}

// TestPreReceiveHostileInput: ref lines that try to escape, smuggle a
// second update, or are not lines at all are refused by hooks.ParseRefLines
// and make the server's pre-receive hook refuse the whole push, with a
// message, changing nothing.
func TestPreReceiveHostileInput(t *testing.T) {
	f := newFixture(t, 1)
	srv, dir := f.server()
	refsBefore := f.s.Git(dir, "for-each-ref")
	main := f.ref("refs/heads/main")
	z := gitrepo.ZeroHash.String()
	line := func(ref string) string { return z + " " + main.String() + " " + ref + "\n" }
	cases := map[string]string{}
	for name, ref := range escapingRefs {
		if strings.HasPrefix(ref, "refs/secure") || strings.HasPrefix(ref, "refs/remotes/") || ref == "refs/heads/a\nrefs/heads/b" {
			continue // valid git ref names (the hook's verification decides), or two lines
		}
		cases["ref: "+name] = line(ref)
	}
	cases["second line smuggled in the name"] = z + " " + main.String() + " refs/heads/a\nrefs/heads/b\n"
	cases["two spaces"] = z + "  " + main.String() + " refs/heads/x\n"
	cases["tab separated"] = z + "\t" + main.String() + "\trefs/heads/x\n"
	cases["four fields"] = line("refs/heads/x extra")
	cases["upper-case hex"] = z + " " + strings.ToUpper(main.String()) + " refs/heads/x\n"
	cases["short hash"] = z + " " + main.String()[:12] + " refs/heads/x\n"
	cases["SHA-256 length"] = z + " " + main.String() + strings.Repeat("0", 24) + " refs/heads/x\n"
	cases["NUL"] = z + " " + main.String() + " refs/heads/x\x00refs/heads/y\n"
	cases["line of 1 MiB"] = z + " " + main.String() + " refs/heads/" + strings.Repeat("a", mib) + "\n"
	cases["invalid UTF-8 and controls"] = "\xff\xfe\x01\x02\n"
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			err := bounded(t, 8*mib, func() error { _, err := hooks.ParseRefLines([]byte(in)); return err })
			if err == nil {
				t.Errorf("hooks.ParseRefLines accepted %q", clip(in))
			}
			var stderr bytes.Buffer
			err = bounded(t, 64*mib, func() error {
				return hooks.Run(&hooks.Context{Repo: srv, Name: "pre-receive", Stdin: strings.NewReader(in), Stderr: &stderr, Getenv: func(string) string { return "" }})
			})
			if !errors.Is(err, hooks.ErrRejected) {
				t.Errorf("the pre-receive hook returned %v, want a refusal", err)
			}
			if !strings.Contains(stderr.String(), "git-secure:") || len(stderr.String()) > 4*kib {
				t.Errorf("the refusal's message is missing or unbounded (%d bytes): %q", stderr.Len(), clip(stderr.String()))
			}
		})
	}
	// More than the hook reads at all.
	t.Run("stdin over 64 MiB", func(t *testing.T) {
		big := bytes.Repeat([]byte(line("refs/heads/x")), hooks.MaxStdin/len(line("refs/heads/x"))+2)
		var stderr bytes.Buffer
		err := bounded(t, 256*mib, func() error {
			return hooks.Run(&hooks.Context{Repo: srv, Name: "pre-receive", Stdin: bytes.NewReader(big), Stderr: &stderr, Getenv: func(string) string { return "" }})
		})
		if err == nil || errors.Is(err, hooks.ErrRejected) && stderr.Len() == 0 {
			t.Errorf("the hook took %d bytes of stdin: %v", len(big), err)
		}
	})
	if after := f.s.Git(dir, "for-each-ref"); after != refsBefore {
		t.Errorf("the server's refs changed:\nbefore:\n%s\nafter:\n%s", refsBefore, after)
	}
	// Sanity: a well-formed line for the current state parses.
	if _, err := hooks.ParseRefLines([]byte(main.String() + " " + main.String() + " refs/heads/main\n")); err != nil {
		t.Errorf("a plain line is refused: %v", err)
	}
}

// TestPreReceiveCRLF: git never sends a carriage return (no ref name can
// hold one), so a line ending in CR LF is not git's input; the strict
// parser must not quietly turn "refs/heads/x\r" into "refs/heads/x".
func TestPreReceiveCRLF(t *testing.T) {
	main := gitrepo.Hash{1}
	in := gitrepo.ZeroHash.String() + " " + main.String() + " refs/heads/x\r\n"
	lines, err := hooks.ParseRefLines([]byte(in))
	if err == nil {
		t.Errorf("hooks.ParseRefLines (documented as strict) accepts a line ending in CR LF and drops the CR (bufio.ScanLines), reading ref %q from %q; harmless with git as the only writer, but not strict", lines[0].Ref, in)
	}
}

// TestPreReceiveUnknownObjects: well-formed lines naming objects the server
// does not have, or moving git-secure's refs to them, are refused with a
// message.
func TestPreReceiveUnknownObjects(t *testing.T) {
	f := newFixture(t, 1)
	srv, _ := f.server()
	main := f.ref("refs/heads/main")
	tip := f.ref(rsl.Ref)
	ghost := "1234567890123456789012345678901234567890"
	for name, in := range map[string]string{
		"main to a missing commit": main.String() + " " + ghost + " refs/heads/main\n",
		"log to a missing commit":  tip.String() + " " + ghost + " refs/secure/rsl\n",
		"log deleted":              tip.String() + " " + gitrepo.ZeroHash.String() + " refs/secure/rsl\n",
		"log to a source commit":   tip.String() + " " + main.String() + " refs/secure/rsl\n",
		"stale old value":          ghost + " " + main.String() + " refs/heads/main\n",
	} {
		t.Run(name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := bounded(t, 64*mib, func() error {
				return hooks.Run(&hooks.Context{Repo: srv, Name: "pre-receive", Stdin: strings.NewReader(in), Stderr: &stderr, Getenv: func(string) string { return "" }})
			})
			if !errors.Is(err, hooks.ErrRejected) {
				t.Errorf("the hook returned %v, want a refusal", err)
			}
			if stderr.Len() == 0 {
				t.Errorf("refused without a message (the pusher sees only \"pre-receive hook declined\")")
			}
		})
	}
}

// TestHelperHostileCommands: git-remote-secure refuses push and fetch
// commands whose destination tries to escape, or whose source looks like
// an option, before running anything.
func TestHelperHostileCommands(t *testing.T) {
	f := newFixture(t, 1)
	_, url := f.server()
	main := f.ref("refs/heads/main")
	cases := map[string]string{
		"push to ../../config":       "push refs/heads/main:refs/heads/../../config\n\n",
		"push to a control char":     "push refs/heads/main:refs/heads/a\x01b\n\n",
		"push to outside refs/":      "push refs/heads/main:config\n\n",
		"push with an option source": "push --receive-pack=touch /tmp/pwned:refs/heads/x\n\n",
		"push without colon":         "push refs/heads/main\n\n",
		"push to an empty name":      "push refs/heads/main:\n\n",
		"fetch of a short hash":      "fetch " + main.String()[:7] + " refs/heads/main\n\n",
		"fetch with extra fields":    "fetch " + main.String() + " refs/heads/main extra\n\n",
		"unknown command":            "connect git-upload-pack\n\n",
		"command line of 1 MiB":      "push refs/heads/main:refs/heads/" + strings.Repeat("a", mib) + "\n\n",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			h := &remote.Helper{Repo: f.r, Remote: "origin", URL: url, In: strings.NewReader(in), Out: &out, Err: &errb}
			err := bounded(t, 64*mib, h.Run)
			if err == nil {
				t.Errorf("the helper accepted %q; it answered %q", clip(in), clip(out.String()))
			} else if len(err.Error()) > 4*kib {
				t.Errorf("unbounded error (%d bytes)", len(err.Error()))
			}
			if strings.HasPrefix(in, "push") && strings.Contains(out.String(), "ok ") {
				t.Errorf("the helper reported success: %q", out.String())
			}
		})
	}
	if got := f.s.Git(f.dir, "for-each-ref", "--format=%(refname)", "refs/secure-incoming/"); got != "" {
		t.Errorf("the helper left its private namespace behind: %s", got)
	}
	_ = fmt.Sprint()
}
