package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPreReceiveRefusesJunkStaging: a push of refs/secure/policy-staging
// pointing at a long chain of cheap commits on top of the server's staged
// change (or of unrelated history) is refused for what its tip is, no
// staged change of the policy in force, without walking the chain first
// (git merge-base over it was the first thing the slot's check did); one
// of refs/secure/attestations is refused as more commits than a push may
// bring, after walking no more than that bound.
// GIT_SECURE_JUNK_COMMITS sets the chain's length (2 000 by default) and
// the test then logs the time and memory the check took.
func TestPreReceiveRefusesJunkStaging(t *testing.T) {
	n := 2000
	if v := os.Getenv("GIT_SECURE_JUNK_COMMITS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("GIT_SECURE_JUNK_COMMITS=%q", v)
		}
	}
	s, dir, r := initedRepo(t)
	g := r.Git
	polTip, _, _ := g.ResolveRef("refs/secure/policy")
	// A staged change of the policy in force (its files unchanged) in the
	// slot, as a proposal waiting for signatures would be.
	staged := strings.TrimSpace(s.Git(dir, "commit-tree", polTip.String()+"^{tree}", "-p", polTip.String(), "-m", "staged"))
	s.Git(dir, "update-ref", "refs/secure/policy-staging", staged)
	junk := func(name, on string) string {
		var fi strings.Builder
		for i := 1; i <= n; i++ {
			msg := fmt.Sprintf("junk %d\n", i)
			fmt.Fprintf(&fi, "commit refs/junk/%s\nmark :%d\ncommitter J <j@x> 1700000000 +0000\ndata %d\n%s", name, i, len(msg), msg)
			switch {
			case i > 1:
				fmt.Fprintf(&fi, "from :%d\n", i-1)
			case on != "":
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
	// An attestations store of one commit.
	store := strings.TrimSpace(s.Git(dir, "commit-tree", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "-m", "attestations"))
	s.Git(dir, "update-ref", "refs/secure/attestations", store)
	stagedWant := func(tip string) string {
		return "the new one (" + tip[:12] + ") is not a staged change of the policy in force (" + polTip.String()[:12] + ")"
	}
	const tooMany = "rejected: this push adds more than 1000 commits (or parents of merges) to refs/secure/attestations"
	for _, tc := range []struct{ name, ref, old, tip, want string }{
		{"staging: on the staged change", "refs/secure/policy-staging", staged, junk("on", staged), ""},
		{"staging: unrelated", "refs/secure/policy-staging", staged, junk("unrelated", ""), ""},
		{"attestations: on the store", "refs/secure/attestations", store, junk("att", store), tooMany},
		{"attestations: unrelated", "refs/secure/attestations", store, junk("unrelated", ""), tooMany},
	} {
		if tc.want == "" {
			tc.want = stagedWant(tc.tip)
		}
		if n <= 1000 && tc.want == tooMany {
			tc.want = "refs/secure/attestations can only grow"
			if tc.name == "attestations: on the store" {
				continue // within the bound: a store's own check
			}
		}
		var stderr bytes.Buffer
		in := strings.NewReader(tc.old + " " + tc.tip + " " + tc.ref + "\n")
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		err := Run(&Context{Repo: r, Name: "pre-receive", Stdin: in, Stderr: &stderr, Getenv: func(string) string { return "" }})
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		t.Logf("%s, %d commits: refused in %.3f s, %.1f MB allocated", tc.name, n, took.Seconds(), float64(after.TotalAlloc-before.TotalAlloc)/1e6)
		if !errors.Is(err, ErrRejected) || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%s: err=%v, stderr=%q; want a rejection saying %q", tc.name, err, stderr.String(), tc.want)
		}
	}
}
