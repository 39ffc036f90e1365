package remote

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// A refetch (a push caught halfway?) that lists exactly the refs of the
// state that failed judges that failure again without fetching or
// verifying (the helper here has no repository: any of that would
// panic); the hints name the value the verifier found recorded, and at
// most maxPrinted problems are printed (attack session 15, 04: 800 moved
// tags, verified twice and each hint a walk of the log).
func TestRefetchOfTheSameListingJudgedAsBefore(t *testing.T) {
	h1 := gitrepo.Hash{1}
	recorded := gitrepo.Hash{2}
	listing := map[string]gitrepo.Hash{rsl.Ref: gitrepo.Hash{3}}
	failed := &verify.Failed{}
	const n = maxPrinted + 7
	for i := 0; i < n; i++ {
		ref := fmt.Sprintf("refs/tags/a%d", i)
		listing[ref] = h1
		failed.Problems = append(failed.Problems, &verify.Problem{Ref: ref, Kind: verify.ErrUnrecorded, Recorded: recorded,
			Detail: "ref does not match the log: points at " + h1.String()[:12] + ", behind the recorded " + recorded.String()[:12]})
	}
	var stderr bytes.Buffer
	h := &Helper{Err: &stderr, Remote: "origin", prelisted: maps.Clone(listing), prelistedHead: "refs/heads/main"}
	h.doubted = &doubtedState{listing: listing, head: "refs/heads/main", err: failed, remoteTip: listing[rsl.Ref]}
	h.refetched = true
	_, _, err := h.fetchAndVerifyOnce(false)
	out := stderr.String()
	if !errors.Is(err, ErrVerifyFailed) || !strings.Contains(out, fmt.Sprintf("does not verify (%d problem(s))", n)) {
		t.Fatalf("refetch of the same listing: %v\n%s", err, out)
	}
	if want := "git secure rsl repair origin refs/tags/a0 (then --record to sign the server's value once you reviewed it, or --restore to put it back to " + recorded.String()[:12] + ")"; !strings.Contains(out, want) {
		t.Errorf("no hint %q:\n%s", want, out)
	}
	if want := fmt.Sprintf("and %d more problem(s), not shown", n-maxPrinted); !strings.Contains(out, want) || strings.Contains(out, fmt.Sprintf("refs/tags/a%d:", maxPrinted)) {
		t.Errorf("want the first %d problems, then %q:\n%s", maxPrinted, want, out)
	}
}
