package hooks

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	hookscripts "github.com/git-secure/git-secure/hooks"
)

// Every rendered script is valid sh with no placeholder left, and only the
// hooks git-secure handles start the binary.
func TestScripts(t *testing.T) {
	placeholder := regexp.MustCompile(`@[A-Z]+@`)
	dir := t.TempDir()
	for _, tc := range []struct {
		name             string
		gitDir, chainDir string
		guard            bool
	}{
		{"repository", "/repo/.git", "/repo/.git/hooks", false},
		{"repository, quoted paths", "/it's here/.git", "/it's here/.husky", false},
		{"repository with guard", "/repo/.git", "/repo/.git/hooks", true},
		{"user", "", "", false},
		{"user with guard", "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, name := range Names {
				s := Script(name, "/usr/local/bin/git-secure", tc.gitDir, tc.chainDir, tc.guard)
				if m := placeholder.FindString(s); m != "" {
					t.Fatalf("%s: placeholder %s left:\n%s", name, m, s)
				}
				if !strings.HasPrefix(s, "#!/bin/sh\n"+marker) {
					t.Fatalf("%s: no marker line:\n%s", name, s)
				}
				runsBinary := strings.Contains(s, `"$b" hook `)
				wantBinary := Handled(name) || (tc.guard && name == hookscripts.Guard)
				if runsBinary != wantBinary {
					t.Errorf("%s: starts git-secure = %v, want %v", name, runsBinary, wantBinary)
				}
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command("sh", "-n", p).CombinedOutput(); err != nil {
					t.Errorf("%s: sh -n: %v\n%s\n%s", name, err, out, s)
				}
			}
		})
	}
	for _, name := range hookscripts.ServerHooks {
		server := hookscripts.Render(hookscripts.ServerTemplate(name), map[string]string{"BINARY": shellQuote("/x/git-secure")})
		if !strings.Contains(server, "hook "+name) || !strings.Contains(server, marker) || placeholder.MatchString(server) {
			t.Errorf("server hook %s:\n%s", name, server)
		}
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(server), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("sh", "-n", p).CombinedOutput(); err != nil {
			t.Errorf("server %s: sh -n: %v\n%s", name, err, out)
		}
	}
}

// TestServerTransactionScriptMarker: the server's reference-transaction
// script accepts a prepared transaction without starting git-secure only
// when every line of it is a line pre-receive marked as an unprotected
// push for the same receive-pack; anything else reaches git-secure with the
// whole input, and the marker goes when the transaction ends.
func TestServerTransactionScriptMarker(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"hooks", "secure"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	calls := filepath.Join(dir, "calls")
	stub := filepath.Join(dir, "stub")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\ncat >>"+shellQuote(calls)+"\necho \"$*\" >>"+shellQuote(calls)+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "hooks", "reference-transaction")
	body := hookscripts.Render(hookscripts.ServerTemplate("reference-transaction"), map[string]string{"BINARY": shellQuote(stub)})
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	// The script's parent is this test process, as receive-pack is a
	// real hook's.
	marker := filepath.Join(dir, "secure", fmt.Sprintf("unprotected-push.%d", os.Getpid()))
	// The log and the policy the push was judged under, as loose refs.
	tips := looseTips(t, dir)
	feature := strings.Repeat("0", 40) + " " + strings.Repeat("a", 40) + " refs/heads/feature\n"
	main := strings.Repeat("b", 40) + " " + strings.Repeat("c", 40) + " refs/heads/main\n"
	run := func(phase, input string) (int, string) {
		t.Helper()
		os.Remove(calls)
		cmd := exec.Command(script, phase)
		cmd.Stdin = strings.NewReader(input)
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(calls)
		return code, string(got)
	}
	if code, got := run("prepared", feature); code != 1 || got != feature+"hook reference-transaction prepared\n" {
		t.Errorf("no marker: exit %d, git-secure got %q; want it started with the input", code, got)
	}
	writeMarker(t, marker, tips, feature)
	if code, got := run("prepared", feature); code != 0 || got != "" {
		t.Errorf("marked line only: exit %d, git-secure got %q; want exit 0 without starting it", code, got)
	}
	writeMarker(t, marker, tips, feature)
	if code, got := run("prepared", feature+main); code != 1 || got != feature+main+"hook reference-transaction prepared\n" {
		t.Errorf("a line pre-receive did not mark: exit %d, git-secure got %q; want it started with the whole input", code, got)
	}
	writeMarker(t, marker, tips, feature)
	if code, got := run("prepared", strings.TrimSuffix(feature, "ure\n")+"\n"); code != 1 || got == "" {
		t.Errorf("a line that is part of a marked one: exit %d, git-secure got %q; want it started", code, got)
	}
	// A marker an older git-secure wrote (format 2: the lines in the
	// marker itself, no folder) is used by no newer script.
	writeMarker(t, marker, tips, feature)
	if err := os.WriteFile(marker, []byte(tips+feature), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, got := run("prepared", feature); code != 1 || got != feature+"hook reference-transaction prepared\n" {
		t.Errorf("a format 2 marker: exit %d, git-secure got %q; want it started with the input", code, got)
	}
	// A marked line serves one transaction.
	writeMarker(t, marker, tips, feature)
	if code, got := run("prepared", feature); code != 0 || got != "" {
		t.Errorf("marked line only: exit %d, git-secure got %q; want exit 0 without starting it", code, got)
	}
	if code, _ := run("committed", feature); code != 0 {
		t.Errorf("committed: exit %d", code)
	}
	if code, got := run("prepared", feature); code != 1 || got != feature+"hook reference-transaction prepared\n" {
		t.Errorf("a line used once already: exit %d, git-secure got %q; want it started with the input", code, got)
	}
	// An emptied marker (what post-receive leaves) is none.
	writeMarker(t, marker, tips, feature)
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, got := run("prepared", ""); code != 1 || got != "hook reference-transaction prepared\n" {
		t.Errorf("an emptied marker, an empty transaction: exit %d, git-secure got %q; want it started", code, got)
	}
	if code, got := run("prepared", feature); code != 1 || got != feature+"hook reference-transaction prepared\n" {
		t.Errorf("an emptied marker: exit %d, git-secure got %q; want it started with the input", code, got)
	}

	// Found adopting git-secure: a push without --atomic (a user without
	// git-secure pushing several branches, a mirror's refs/pull/*) is one
	// transaction per ref. The first one's end removed the marker, so
	// every later ref started git-secure: 57 branches took 26 s instead
	// of 6. Each transaction's end unmarks only its own lines.
	other := strings.Repeat("0", 40) + " " + strings.Repeat("d", 40) + " refs/heads/other\n"
	writeMarker(t, marker, tips, feature+other)
	for i, line := range []string{feature, other} {
		if code, got := run("prepared", line); code != 0 || got != "" {
			t.Errorf("ref %d of a push without --atomic: exit %d, git-secure got %q; want exit 0 without starting it", i+1, code, got)
		}
		if code, _ := run("committed", line); code != 0 {
			t.Errorf("committed: exit %d", code)
		}
	}
	for i, line := range []string{feature, other} {
		if code, got := run("prepared", line); code != 1 || got != line+"hook reference-transaction prepared\n" {
			t.Errorf("ref %d again after the push: exit %d, git-secure got %q; want it started", i+1, code, got)
		}
	}

	// A ref deleted and one inside it created in the same push (refs/a
	// and refs/a/b: a file and a folder of the same name, were the lines
	// files in folders) are each marked; a line whose ref is spelled so
	// as to leave the folder is not.
	gone := strings.Repeat("a", 40) + " " + strings.Repeat("0", 40) + " refs/heads/a\n"
	inside := strings.Repeat("0", 40) + " " + strings.Repeat("a", 40) + " refs/heads/a/b\n"
	writeMarker(t, marker, tips, gone+inside)
	if code, got := run("prepared", gone+inside); code != 0 || got != "" {
		t.Errorf("refs/heads/a deleted, refs/heads/a/b made: exit %d, git-secure got %q; want exit 0 without starting it", code, got)
	}
	for _, bad := range []string{"refs/heads/../../x", "refs/heads^a/b", "refs/heads~a", "HEAD"} {
		writeMarker(t, marker, tips, gone+inside)
		line := strings.Repeat("0", 40) + " " + strings.Repeat("a", 40) + " " + bad + "\n"
		if code, got := run("prepared", line); code != 1 || got != line+"hook reference-transaction prepared\n" {
			t.Errorf("%s: exit %d, git-secure got %q; want it started with the input", bad, code, got)
		}
	}

	// post-receive empties the marker once the push is done.
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	// A push pre-receive verified whole (secure/verified-push.PID): one
	// transaction of exactly its lines, with or without the HEAD line git
	// adds, starts nothing; a part of them (a push without --atomic), or
	// more, starts git-secure with the whole input.
	verified := filepath.Join(dir, "secure", fmt.Sprintf("verified-push.%d", os.Getpid()))
	log := strings.Repeat("e", 40) + " " + strings.Repeat("f", 40) + " refs/secure/rsl\n"
	head := strings.Repeat("b", 40) + " " + strings.Repeat("c", 40) + " HEAD\n"
	for _, tc := range []struct {
		name, input string
		start       bool
	}{
		{"exactly the push", main + log, false},
		{"the push and HEAD", main + log + head, false},
		{"the log alone", log, true},
		{"the branch alone", main, true},
		{"the branch and HEAD", main + head, true},
		{"another line too", main + log + feature, true},
		{"the lines in another order", log + main, false}, // one set: the check reads no order
		{"a line twice", main + main, true},
	} {
		writeMarker(t, verified, tips, main+log)
		code, got := run("prepared", tc.input)
		if tc.start && (code != 1 || got != tc.input+"hook reference-transaction prepared\n") {
			t.Errorf("%s: exit %d, git-secure got %q; want it started with the input", tc.name, code, got)
		}
		if !tc.start && (code != 0 || got != "") {
			t.Errorf("%s: exit %d, git-secure got %q; want exit 0 without starting it", tc.name, code, got)
		}
		if code, _ := run("committed", tc.input); code != 0 {
			t.Errorf("%s: committed: exit %d", tc.name, code)
		}
		if used(verified) {
			t.Errorf("%s: the marker stays usable after the transaction", tc.name)
		}
		// Emptied, it is none: the same transaction again starts git-secure.
		if code, got := run("prepared", main+log); code != 1 || got != main+log+"hook reference-transaction prepared\n" {
			t.Errorf("%s: after the transaction: exit %d, git-secure got %q; want it started", tc.name, code, got)
		}
	}
	if code, got := run("prepared", head); code != 1 || got != head+"hook reference-transaction prepared\n" {
		t.Errorf("an emptied marker, HEAD's line alone: exit %d, git-secure got %q; want it started", code, got)
	}
}

// writeMarker writes a marker as markJudged does (format 3): the tip
// lines and the number of lines, and one file per line in its folder.
func writeMarker(t *testing.T, path, tips, lines string) {
	t.Helper()
	if err := os.RemoveAll(markerLines(path)); err != nil {
		t.Fatal(err)
	}
	n, err := writeMarkerLines(markerLines(path), []byte(lines))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, fmt.Appendf([]byte(tips), "lines %d\n", n), 0o644); err != nil {
		t.Fatal(err)
	}
}

// looseTips stores the log and the policy as loose refs in dir and
// returns the tip lines pre-receive would write for them.
func looseTips(t *testing.T, dir string) string {
	t.Helper()
	tips := ""
	for ref, hash := range map[string]string{"refs/secure/rsl": strings.Repeat("1", 40), "refs/secure/policy": strings.Repeat("2", 40)} {
		p := filepath.Join(dir, filepath.FromSlash(ref))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(hash+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		tips += "tip " + hash + " " + ref + " loose\n"
	}
	return tips
}

// used reports whether a marker file would still be used: it exists and
// is not empty (the end of a transaction empties it; pre-receive sweeps
// it away).
func used(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Size() > 0
}

// TestSweepMarkers: pre-receive removes emptied markers and ones older
// than an hour, and keeps a marker another push is about to use.
func TestSweepMarkers(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"unprotected-push.1": "",            // emptied
		"verified-push.2":    "",            // emptied
		"verified-push.3":    "lines\n",     // a concurrent push's
		"unprotected-push.4": "lines\n",     // an hour old
		"post-receive-skip":  "5\n",         // not a marker
		"verified-push.6":    "old lines\n", // an hour old
	}
	// Each marker has its lines (format 3); lines without a marker are
	// a pre-receive's still writing them, or one killed an hour ago.
	for _, name := range []string{"unprotected-push.1", "verified-push.3", "unprotected-push.4", "unprotected-push.7", "unprotected-push.8"} {
		files[name+".d/refs/heads/x"] = "line\n"
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hourAgo := time.Now().Add(-61 * time.Minute)
	for _, name := range []string{"unprotected-push.4", "verified-push.6", "unprotected-push.8.d"} {
		if err := os.Chtimes(filepath.Join(dir, name), hourAgo, hourAgo); err != nil {
			t.Fatal(err)
		}
	}
	sweepMarkers(dir)
	for name := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		want := name == "verified-push.3" || name == "verified-push.3.d/refs/heads/x" || name == "post-receive-skip" || name == "unprotected-push.7.d/refs/heads/x"
		if got := err == nil; got != want {
			t.Errorf("%s: kept %v, want %v", name, got, want)
		}
	}
}

// TestServerPostReceiveSkipNote: the post-receive script starts
// git-secure unless pre-receive's note names the script's parent (the
// receive-pack both run under) as a push without a timestamp key: no
// note, a note of another receive-pack (a concurrent push, a stale pid)
// or an unreadable one start it, and the hook that was there before
// runs either way with the push's lines. The script is run as git runs
// it, its parent being this test; the end-to-end count of starts with
// and without a key is e2e's TestServerPostReceiveStartsOnlyWithKey.
func TestServerPostReceiveSkipNote(t *testing.T) {
	tmp := t.TempDir()
	srv := filepath.Join(tmp, "srv.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", srv).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	calls, chainedIn := filepath.Join(tmp, "calls"), filepath.Join(tmp, "chained")
	write := func(path, body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(srv, "hooks", "post-receive"), "cat >>"+shellQuote(chainedIn)+"\n")
	stub := filepath.Join(tmp, "stub")
	write(stub, "cat >/dev/null\necho \"$*\" >>"+shellQuote(calls)+"\n")
	if err := InstallServer(srv, stub); err != nil {
		t.Fatal(err)
	}
	note := postReceiveSkip(srv)
	if err := os.MkdirAll(filepath.Dir(note), 0o755); err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("0", 40) + " " + strings.Repeat("1", 40) + " refs/heads/main\n"
	for _, tc := range []struct {
		name, note string // note "" : no file
		started    bool
	}{
		{"this receive-pack without a key", strconv.Itoa(os.Getpid()) + "\n", false},
		{"no note", "", true},
		{"another receive-pack", strconv.Itoa(os.Getpid()+1) + "\n", true},
		{"a pid and more", strconv.Itoa(os.Getpid()) + "0\n", true},
		{"empty", "\n", true},
	} {
		os.Remove(calls)
		os.Remove(chainedIn)
		os.Remove(note)
		if tc.note != "" {
			if err := os.WriteFile(note, []byte(tc.note), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(filepath.Join(srv, "hooks", "post-receive"))
		cmd.Dir = srv
		cmd.Stdin = strings.NewReader(line)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: post-receive: %v\n%s", tc.name, err, out)
		}
		started, _ := os.ReadFile(calls)
		if got := strings.Contains(string(started), "hook post-receive"); got != tc.started {
			t.Errorf("%s: git-secure started: %v (%q), want %v", tc.name, got, started, tc.started)
		}
		if chained, _ := os.ReadFile(chainedIn); !tc.started && string(chained) != line {
			t.Errorf("%s: the earlier post-receive got %q, want %q", tc.name, chained, line)
		}
	}
}
