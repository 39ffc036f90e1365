package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	hookscripts "github.com/git-secure/git-secure/hooks"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/testing/testutil"
	"github.com/git-secure/git-secure/internal/verify"
)

// raceServer is a real git-secure repository (alice's rule protects main)
// with the server's reference-transaction script installed, its
// git-secure replaced by a stub that records being started: what the
// script decides without starting git-secure is what is tested.
type raceServer struct {
	t      testing.TB
	s      *testutil.Sandbox
	dir    string
	g      *gitrepo.Repo
	r      *porcelain.Repo
	key    testutil.Key
	pub    ssh.PublicKey
	calls  string // what the stub received
	rules  int    // rules protectFeature added
	script string // the server's reference-transaction script
}

func newRaceServer(t testing.TB) *raceServer {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 2)
	key := s.NewKey("alice", "ed25519")
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(key.PublicLine(t)))
	if err != nil {
		t.Fatal(err)
	}
	g, err := gitrepo.OpenWithEnv(dir, s.Environ())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	rs := &raceServer{t: t, s: s, dir: dir, g: g, r: &porcelain.Repo{Git: g, Now: time.Now, Home: s.Home}, key: key, pub: pub}
	if _, err := rs.r.Init(key.Private); err != nil {
		t.Fatal(err)
	}
	rs.apply(func(st, base *policy.Policy, now time.Time) error {
		if err := st.AddPerson(base, "alice", []ssh.PublicKey{pub}, now); err != nil {
			return err
		}
		return st.AddRule(base, policy.Rule{Name: "main", Refs: []string{"refs/heads/main"}, Allow: []string{"alice"}, Threshold: 1}, now)
	})
	rs.calls = filepath.Join(t.TempDir(), "calls")
	stub := filepath.Join(t.TempDir(), "stub")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\ncat >>"+shellQuote(rs.calls)+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	body := hookscripts.Render(hookscripts.ServerTemplate("reference-transaction"), map[string]string{"BINARY": shellQuote(stub)})
	// Beside hooks/, not in it: git runs it for what the test itself
	// changes; the script finds the repository as ${0%/*}/.. all the same.
	rs.script = filepath.Join(g.GitDir(), "test-hooks", "reference-transaction")
	if err := os.MkdirAll(filepath.Dir(rs.script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rs.script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return rs
}

// apply changes the policy as a push of a policy change does (the policy
// and its log entry), and verifies the result as the server does.
func (rs *raceServer) apply(edit porcelain.Edit) {
	rs.t.Helper()
	if _, err := rs.r.Stage("test", edit); err != nil {
		rs.t.Fatal(err)
	}
	if _, _, err := rs.r.Apply(rs.key.Private); err != nil {
		rs.t.Fatal(err)
	}
	if _, err := verify.WithCheckpoint(rs.g, verify.Options{Now: time.Now()}, false); err != nil {
		rs.t.Fatal(err)
	}
}

// protectFeature is the concurrent push: a rule (the first one is
// "features") now protects feature.
func (rs *raceServer) protectFeature() {
	name := "features"
	if rs.rules++; rs.rules > 1 {
		name = fmt.Sprintf("features%d", rs.rules)
	}
	rs.apply(func(st, base *policy.Policy, now time.Time) error {
		return st.AddRule(base, policy.Rule{Name: name, Refs: []string{"refs/heads/feature"}, Allow: []string{"alice"}, Threshold: 1}, now)
	})
}

// ownMarker renames a marker pre-receive left for its parent process to
// the name the script, run by this test, reads ($PPID: this process).
func (rs *raceServer) ownMarker(kind string) {
	rs.t.Helper()
	secure := filepath.Join(rs.g.GitDir(), "secure")
	from := filepath.Join(secure, fmt.Sprintf("%s.%d", kind, os.Getppid()))
	to := filepath.Join(secure, fmt.Sprintf("%s.%d", kind, os.Getpid()))
	if err := removeMarker(to); err != nil {
		rs.t.Fatal(err)
	}
	if err := os.Rename(markerLines(from), markerLines(to)); err != nil {
		rs.t.Fatalf("no %s marker's lines: %v", kind, err)
	}
	if err := os.Rename(from, to); err != nil {
		rs.t.Fatalf("no %s marker: %v", kind, err)
	}
}

// script runs the transaction script in the prepared state and reports
// whether it started git-secure (the full check).
func (rs *raceServer) runScript(input string) bool {
	rs.t.Helper()
	os.Remove(rs.calls)
	cmd := exec.Command(rs.script, "prepared")
	cmd.Stdin = strings.NewReader(input)
	err := cmd.Run()
	started := err != nil
	if ee := (*exec.ExitError)(nil); err != nil && !errors.As(err, &ee) {
		rs.t.Fatal(err)
	}
	got, _ := os.ReadFile(rs.calls)
	if started != (string(got) == input) {
		rs.t.Fatalf("script: exit %v, git-secure got %q", err, got)
	}
	return started
}

// packRefs packs every ref, as gc does, with packed-refs dated a minute
// back so that a marker written now is newer however coarse the clock.
func (rs *raceServer) packRefs() {
	rs.t.Helper()
	rs.s.Git(rs.dir, "pack-refs", "--all")
	back := time.Now().Add(-time.Minute)
	if err := os.Chtimes(filepath.Join(rs.g.GitDir(), "packed-refs"), back, back); err != nil {
		rs.t.Fatal(err)
	}
}

// TestUnprotectedPushRacingAPolicyChange: pre-receive judges a push of
// feature under a policy that does not protect it; before its
// transaction, another push adds a rule protecting feature. The
// transaction must be judged under the policy in force: the script starts
// git-secure (it accepted it unseen before the marker bound the policy),
// which refuses it naming the ref and the rule and telling to fetch. A
// transaction with no change in between still starts nothing, the log
// and the policy stored loose or packed.
func TestUnprotectedPushRacingAPolicyChange(t *testing.T) {
	for _, packed := range []bool{false, true} {
		t.Run(fmt.Sprintf("packed=%v", packed), func(t *testing.T) {
			rs := newRaceServer(t)
			main, _, _ := rs.g.ResolveRef("refs/heads/main")
			input := gitrepo.ZeroHash.String() + " " + main.String() + " refs/heads/feature\n"
			preReceive := func() {
				t.Helper()
				if packed {
					rs.packRefs()
				}
				var stderr bytes.Buffer
				c := &Context{Repo: rs.r, Name: "pre-receive", Stdin: strings.NewReader(input), Stderr: &stderr, Getenv: func(string) string { return "" }}
				if err := Run(c); err != nil {
					t.Fatalf("pre-receive: %v\n%s", err, stderr.String())
				}
				rs.ownMarker("unprotected-push")
			}
			preReceive()
			if rs.runScript(input) {
				t.Errorf("nothing changed since pre-receive, yet the script started git-secure")
			}
			preReceive()
			rs.protectFeature()
			if !rs.runScript(input) {
				t.Fatalf("the policy protects refs/heads/feature since pre-receive, yet the script accepted its transaction unseen")
			}
			var stderr bytes.Buffer
			c := &Context{Repo: rs.r, Name: "reference-transaction", Args: []string{"prepared"}, Stderr: &stderr, Getenv: func(string) string { return "" }}
			err := c.serverTransaction([]byte(input))
			for _, want := range []string{"refs/heads/feature is protected and would move", "(rule features of the policy in force)", "fetch"} {
				if !errors.Is(err, ErrRejected) || !strings.Contains(stderr.String(), want) {
					t.Errorf("the transaction under the new policy: err=%v, stderr=%q; want a rejection saying %q", err, stderr.String(), want)
				}
			}
		})
	}
}

// TestMarkerBindsLogAndPolicy: a marker (the unprotected one and the
// verified one, written by markJudged on a real repository) is used by
// the script only while the log and the policy are where pre-receive
// judged them, however git stores them: a policy change (which moves
// both), the log moved alone, a packed ref moved loose, refs packed
// again after a change, or a marker without tips (an older git-secure's)
// start git-secure.
func TestMarkerBindsLogAndPolicy(t *testing.T) {
	rs := newRaceServer(t)
	main, _, _ := rs.g.ResolveRef("refs/heads/main")
	feature := gitrepo.ZeroHash.String() + " " + main.String() + " refs/heads/feature\n"
	lines, err := ParseRefLines([]byte(feature))
	if err != nil {
		t.Fatal(err)
	}
	c := &Context{Repo: rs.r, Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }}
	secure := filepath.Join(rs.g.GitDir(), "secure")
	marker := func(kind string) string { return filepath.Join(secure, fmt.Sprintf("%s.%d", kind, os.Getpid())) }
	// Written as pre-receive does, from the tips it judged.
	mark := func(path string) string {
		t.Helper()
		for _, kind := range []string{"unprotected-push", "verified-push"} {
			if err := removeMarker(marker(kind)); err != nil {
				t.Fatal(err)
			}
		}
		tips := map[string]gitrepo.Hash{}
		for _, ref := range []string{rsl.Ref, policy.Ref} {
			tips[ref], _, _ = rs.g.ResolveRef(ref)
		}
		c.markJudged(path, []byte(feature), judgedTips(lines, tips))
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("no marker written: %v", err)
		}
		return string(b)
	}
	loose := rs.protectFeature // moves the log and the policy: loose refs
	pack := func() { rs.s.Git(rs.dir, "pack-refs", "--all") }
	var logWas gitrepo.Hash
	for _, kind := range []string{"unprotected-push", "verified-push"} {
		path := marker(kind)
		for _, tc := range []struct {
			name    string
			before  func() // before the marker is written
			how     string // how the marker says the tips are stored
			between func() // between pre-receive and the transaction
			start   bool
		}{
			{"loose, unchanged", loose, "loose", nil, false},
			{"packed, unchanged", rs.packRefs, "packed", nil, false},
			{"loose, policy changed", loose, "loose", rs.protectFeature, true},
			{"packed, policy changed", rs.packRefs, "packed", rs.protectFeature, true},
			{"packed, policy changed, packed again", rs.packRefs, "packed", func() { rs.protectFeature(); pack() }, true},
			{"loose, packed since", loose, "loose", pack, true},
			{"loose, the log moved alone", loose, "loose", func() {
				logWas, _, _ = rs.g.ResolveRef(rsl.Ref)
				other := strings.TrimSpace(rs.s.Git(rs.dir, "commit-tree", "-m", kind, "HEAD^{tree}"))
				rs.s.Git(rs.dir, "update-ref", rsl.Ref, other)
			}, true},
			{"no tips", loose, "loose", func() {
				if err := os.WriteFile(path, []byte(feature), 0o644); err != nil {
					t.Fatal(err)
				}
			}, true},
		} {
			tc.before()
			if got := mark(path); !strings.HasSuffix(got, " "+tc.how+"\nlines 1\n") || strings.Count(got, "tip ") != 2 {
				t.Fatalf("%s, %s: marker %q; want two tips stored %s, then the number of lines", kind, tc.name, got, tc.how)
			}
			if tc.between != nil {
				tc.between()
			}
			if got := rs.runScript(feature); got != tc.start {
				t.Errorf("%s, %s: script started git-secure = %v, want %v", kind, tc.name, got, tc.start)
			}
			if !logWas.IsZero() { // put the log back for the next cases
				rs.s.Git(rs.dir, "update-ref", rsl.Ref, logWas.String())
				logWas = gitrepo.ZeroHash
			}
		}
	}
}

// TestNonAtomicPushMarkerKeepsItsDate: a push without --atomic is one
// transaction per ref, and the end of each rewrites the marker with the
// lines still to come. Found reviewing the tips: the rewritten marker was
// dated then, so a policy changed and packed again after pre-receive (a
// gc after the concurrent push) looked older than the marker, and the
// next ref's transaction was accepted unseen. It keeps pre-receive's date.
// (The dates are set, not waited for: no timing.)
func TestNonAtomicPushMarkerKeepsItsDate(t *testing.T) {
	rs := newRaceServer(t)
	main, _, _ := rs.g.ResolveRef("refs/heads/main")
	one := gitrepo.ZeroHash.String() + " " + main.String() + " refs/heads/one\n"
	feature := gitrepo.ZeroHash.String() + " " + main.String() + " refs/heads/feature\n"
	lines, err := ParseRefLines([]byte(one + feature))
	if err != nil {
		t.Fatal(err)
	}
	rs.packRefs()
	tips := map[string]gitrepo.Hash{}
	for _, ref := range []string{rsl.Ref, policy.Ref} {
		tips[ref], _, _ = rs.g.ResolveRef(ref)
	}
	path := filepath.Join(rs.g.GitDir(), "secure", fmt.Sprintf("unprotected-push.%d", os.Getpid()))
	c := &Context{Repo: rs.r, Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }}
	c.markJudged(path, []byte(one+feature), judgedTips(lines, tips))
	setDate := func(p string, ago time.Duration) {
		t.Helper()
		at := time.Now().Add(-ago)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	setDate(path, 50*time.Second)
	if rs.runScript(one) {
		t.Fatalf("the first ref of the push, nothing changed: git-secure started")
	}
	// The concurrent push protects feature, and gc packs its refs again.
	rs.protectFeature()
	rs.s.Git(rs.dir, "pack-refs", "--all")
	setDate(filepath.Join(rs.g.GitDir(), "packed-refs"), 40*time.Second)
	cmd := exec.Command(rs.script, "committed")
	cmd.Stdin = strings.NewReader(one)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("committed: %v\n%s", err, out)
	}
	if !used(path) {
		t.Fatalf("the marker of the ref still to come is gone")
	}
	if !rs.runScript(feature) {
		t.Errorf("the policy protects refs/heads/feature since pre-receive, yet the script accepted its transaction unseen")
	}
}

// BenchmarkMarkedTransactionScript: the server script on the path the
// markers exist for (one transaction of exactly the marked lines, nothing
// changed since pre-receive; tips loose, then packed): it starts no
// process, as before the tips.
func BenchmarkMarkedTransactionScript(b *testing.B) {
	rs := newRaceServer(b)
	main, _, _ := rs.g.ResolveRef("refs/heads/main")
	feature := gitrepo.ZeroHash.String() + " " + main.String() + " refs/heads/feature\n"
	lines, err := ParseRefLines([]byte(feature))
	if err != nil {
		b.Fatal(err)
	}
	c := &Context{Repo: rs.r, Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }}
	for _, packed := range []bool{false, true} {
		if packed {
			rs.packRefs()
		}
		for _, kind := range []string{"unprotected-push", "verified-push"} {
			b.Run(fmt.Sprintf("%s/packed=%v", kind, packed), func(b *testing.B) {
				tips := map[string]gitrepo.Hash{}
				for _, ref := range []string{rsl.Ref, policy.Ref} {
					tips[ref], _, _ = rs.g.ResolveRef(ref)
				}
				path := filepath.Join(rs.g.GitDir(), "secure", fmt.Sprintf("%s.%d", kind, os.Getpid()))
				defer removeMarker(path)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					// A marked line serves one transaction.
					b.StopTimer()
					if err := removeMarker(path); err != nil {
						b.Fatal(err)
					}
					c.markJudged(path, []byte(feature), judgedTips(lines, tips))
					b.StartTimer()
					if rs.runScript(feature) {
						b.Fatal("git-secure started")
					}
				}
			})
		}
	}
}

// TestOldScriptGetsNoMarker: a server whose binary was upgraded but whose
// hooks were not reinstalled runs a reference-transaction script that
// does not read a marker's tip lines, and would accept marked lines
// whatever policy change happened in between: pre-receive leaves it no
// marker (the script then starts git-secure: the full check). The current
// script, and a hook that is not git-secure's, get one.
func TestOldScriptGetsNoMarker(t *testing.T) {
	rs := newRaceServer(t)
	main, _, _ := rs.g.ResolveRef("refs/heads/main")
	feature := gitrepo.ZeroHash.String() + " " + main.String() + " refs/heads/feature\n"
	lines, err := ParseRefLines([]byte(feature))
	if err != nil {
		t.Fatal(err)
	}
	tips := map[string]gitrepo.Hash{}
	for _, ref := range []string{rsl.Ref, policy.Ref} {
		tips[ref], _, _ = rs.g.ResolveRef(ref)
	}
	c := &Context{Repo: rs.r, Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }}
	current, err := os.ReadFile(rs.script)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(current), hookscripts.MarkerFormat, "", 1)
	if old == string(current) {
		t.Fatal("the server script does not carry hookscripts.MarkerFormat")
	}
	installed := filepath.Join(rs.g.GitDir(), "hooks", "reference-transaction")
	path := filepath.Join(rs.g.GitDir(), "secure", fmt.Sprintf("unprotected-push.%d", os.Getpid()))
	for _, tc := range []struct {
		name   string
		script string // "": none installed
		marked bool
	}{
		{"the current script", string(current), true},
		{"an older git-secure script", old, false},
		{"another tool's hook", "#!/bin/sh\nexit 0\n", true},
		{"no hook", "", true},
	} {
		os.Remove(installed)
		if err := removeMarker(path); err != nil {
			t.Fatal(err)
		}
		if tc.script != "" {
			if err := os.WriteFile(installed, []byte(tc.script), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		c.markJudged(path, []byte(feature), judgedTips(lines, tips))
		_, err := os.Stat(path)
		if marked := err == nil; marked != tc.marked {
			t.Errorf("%s: marker written %v, want %v", tc.name, marked, tc.marked)
		}
	}
	os.Remove(installed)
}

// TestForgedMarkerIsNotUsed: a marker pre-receive did not write for this
// push (planted under the pid of the receive-pack, or left by an earlier
// one) marking a protected ref's line: pre-receive removes it before it
// judges, so the transaction of that line starts git-secure, whether the
// push is unprotected (pre-receive writes its own marker, of its own
// lines) or not (no marker at all).
func TestForgedMarkerIsNotUsed(t *testing.T) {
	rs := newRaceServer(t)
	main, _, _ := rs.g.ResolveRef("refs/heads/main")
	other := strings.TrimSpace(rs.s.Git(rs.dir, "commit-tree", "-m", "other", "-p", main.String(), main.String()+"^{tree}"))
	mainLine := main.String() + " " + other + " refs/heads/main\n"
	feature := gitrepo.ZeroHash.String() + " " + main.String() + " refs/heads/feature\n"
	tips := map[string]gitrepo.Hash{}
	for _, ref := range []string{rsl.Ref, policy.Ref} {
		tips[ref], _, _ = rs.g.ResolveRef(ref)
	}
	planted := unprotectedMarker(rs.g.GitDir())
	c := &Context{Repo: rs.r, Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }}
	for _, tc := range []struct {
		push    string
		refused string // what pre-receive says, "" when it accepts
	}{
		{feature, ""},
		{mainLine, "refs/heads/main"},
	} {
		if err := removeMarker(planted); err != nil {
			t.Fatal(err)
		}
		c.markJudged(planted, []byte(mainLine+feature), tips) // valid tips, every line
		if !used(planted) {
			t.Fatal("no planted marker")
		}
		var stderr bytes.Buffer
		pr := &Context{Repo: rs.r, Name: "pre-receive", Stdin: strings.NewReader(tc.push), Stderr: &stderr, Getenv: func(string) string { return "" }}
		err := Run(pr)
		if tc.refused == "" && err != nil {
			t.Fatalf("pre-receive of %q: %v\n%s", tc.push, err, stderr.String())
		}
		if tc.refused != "" && (err == nil || !strings.Contains(stderr.String(), tc.refused)) {
			t.Fatalf("pre-receive of %q: err %v, said %q; want it refused naming %s", tc.push, err, stderr.String(), tc.refused)
		}
		if _, err := os.Stat(filepath.Join(markerLines(planted), "refs^heads^main~"+main.String()+"~"+other)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("push %q: the planted line of main stays (%v)", tc.push, err)
		}
		if tc.refused != "" {
			if _, err := os.Stat(planted); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused push left a marker (%v)", err)
			}
			continue
		}
		rs.ownMarker("unprotected-push")
		if !rs.runScript(mainLine) {
			t.Errorf("a planted marker let main's transaction through unseen")
		}
		if rs.runScript(feature) {
			t.Errorf("the push's own marker: its line started git-secure")
		}
	}
}
