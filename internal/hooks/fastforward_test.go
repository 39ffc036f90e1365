package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// linearRepo is initedRepo with a no-force-push global rule for
// refs/heads/release/*, applied by alice.
func linearRepo(t *testing.T) (*testutil.Sandbox, string, *porcelain.Repo) {
	t.Helper()
	s, dir, r := initedRepo(t)
	key := filepath.Join(s.Home, ".keys", "alice") // initedRepo's
	if _, err := r.Stage("linear", func(st, base *policy.Policy, now time.Time) error {
		return st.AddGlobalRule(base, policy.GlobalRule{Name: "linear", Type: policy.GlobalNoForcePush, Refs: []string{"refs/heads/release/*"}}, now)
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Apply(key); err != nil {
		t.Fatal(err)
	}
	return s, dir, r
}

// chain writes n cheap commits on top of on (none: a new root) with git
// fast-import and returns its tip.
func chain(t *testing.T, s *testutil.Sandbox, dir, name, on string, n int) gitrepo.Hash {
	t.Helper()
	var fi strings.Builder
	for i := 1; i <= n; i++ {
		msg := fmt.Sprintf("%s %d\n", name, i)
		fmt.Fprintf(&fi, "commit refs/chain/%s\nmark :%d\ncommitter J <j@x> 1700000000 +0000\ndata %d\n%s", name, i, len(msg), msg)
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
	h, err := gitrepo.ParseHash(strings.TrimSpace(s.Git(dir, "rev-parse", "refs/chain/"+name)))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestFastForwardsOnlyBounded: the check that a push only fast-forwards
// the refs a no-force-push global rule covers walks at most
// secure.maxPushFastForwardCommits commits of history a push, over all its refs:
// one chain of cheap commits pushed to many such refs was walked once a
// ref. Beyond the bound the push is refused (fail closed), saying what
// to do; within it, fast-forwards pass and force-pushes are refused as
// before. GIT_SECURE_FF_COMMITS and GIT_SECURE_FF_REFS set the chain's
// length and the refs (a measurement: the test then logs time and memory
// with the default bound).
func TestFastForwardsOnlyBounded(t *testing.T) {
	s, dir, r := linearRepo(t)
	g := r.Git
	polTip, _, _ := g.ResolveRef("refs/secure/policy")
	main, _, _ := g.ResolveRef("refs/heads/main")
	run := func(lines []RefLine) (string, error) {
		t.Helper()
		var stderr bytes.Buffer
		c := &Context{Repo: r, Name: "pre-receive", Stderr: &stderr, Getenv: func(string) string { return "" }}
		_, err := c.fastForwardsOnly(lines, polTip)
		return stderr.String(), err
	}
	lines := func(refs int, old, tip gitrepo.Hash) []RefLine {
		var out []RefLine
		for i := range refs {
			out = append(out, RefLine{Old: old, New: tip, Ref: fmt.Sprintf("refs/heads/release/%d", i)})
		}
		return out
	}
	if v := os.Getenv("GIT_SECURE_FF_COMMITS"); v != "" {
		n, err := strconv.Atoi(v)
		refs, err2 := strconv.Atoi(os.Getenv("GIT_SECURE_FF_REFS"))
		if err != nil || err2 != nil {
			t.Fatalf("GIT_SECURE_FF_COMMITS=%q GIT_SECURE_FF_REFS=%q", v, os.Getenv("GIT_SECURE_FF_REFS"))
		}
		tip := chain(t, s, dir, "measure", main.String(), n)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		out, err := run(lines(refs, main, tip))
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		t.Logf("%d commits to %d refs: %.3f s, %.1f MB allocated in-process; err=%v %s", n, refs, took.Seconds(), float64(after.TotalAlloc-before.TotalAlloc)/1e6, err, out)
		return
	}

	if err := g.SetConfig("secure.maxPushFastForwardCommits", "100"); err != nil {
		t.Fatal(err)
	}
	near := chain(t, s, dir, "near", main.String(), 40)
	far := chain(t, s, dir, "far", main.String(), 150)
	unrelated := chain(t, s, dir, "unrelated", "", 30)
	const bound = "rejected: checking that this push only fast-forwards refs/heads/release/"
	for _, tc := range []struct {
		name  string
		lines []RefLine
		want  string
	}{
		{"a fast-forward within the bound", lines(1, main, near), ""},
		{"two fast-forwards within the bound together", lines(2, main, near), ""},
		{"a fast-forward beyond the bound", lines(1, main, far), bound + "0 (" + main.String()[:12] + " -> " + far.String()[:12] + "), as global rule linear requires, reads more than the 100 commits of history the server reads in one push (git config secure.maxPushFastForwardCommits)"},
		{"three within the bound alone, beyond it together", lines(3, main, near), bound + "2 (" + main.String()[:12] + " -> " + near.String()[:12] + "), as global rule linear requires, reads more than the 100 commits of history the server reads in one push (git config secure.maxPushFastForwardCommits)"},
		{"a force-push within the bound", lines(1, main, unrelated), "rejected: this push force-pushes refs/heads/release/0"},
	} {
		out, err := run(tc.lines)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v\n%s", tc.name, err, out)
			}
			continue
		}
		if !errors.Is(err, ErrRejected) || !strings.Contains(out, tc.want) {
			t.Errorf("%s: err=%v, stderr=%q; want a rejection saying %q", tc.name, err, out, tc.want)
		}
		if strings.HasPrefix(tc.want, bound) && !strings.Contains(out, "hint: push it in smaller steps (fewer commits, or fewer refs at a time), or ask the administrator to raise git config secure.maxPushFastForwardCommits; global rule linear refuses a force-push in any case") {
			t.Errorf("%s: the refusal must say what to do:\n%s", tc.name, out)
		}

	}
}
