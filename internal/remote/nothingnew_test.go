package remote

import (
	"os"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// TestNothingNewReadsNoPolicy: a fetch that finds the remote as this
// clone last verified it answers from the remembered state alone. Here
// refs/secure/policy is a blob, which no policy reader accepts: the
// shortcut still answers, so it read no policy (it used to parse the whole
// policy to ask whether it names freshness keys). It does not answer once
// the policy it was verified under has expired, nor from a state that
// does not say until when it holds (a freshness policy, an older file).
func TestNothingNewReadsNoPolicy(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("clone", 2)
	commit := s.Git(dir, "rev-parse", "HEAD")
	blob := s.Git(dir, "rev-parse", "HEAD:file0.txt")
	s.Git(dir, "update-ref", rsl.Ref, commit)
	s.Git(dir, "update-ref", "refs/secure/policy", blob)
	g, err := gitrepo.OpenWithEnv(dir, s.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, _, err := (&porcelain.Repo{Git: g}).CurrentPolicy(); err == nil {
		t.Fatal("a blob read as a policy: the test proves nothing")
	}
	hash := func(s string) gitrepo.Hash {
		h, err := gitrepo.ParseHash(s)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	listing := map[string]gitrepo.Hash{"HEAD": hash(commit), "refs/heads/main": hash(commit), rsl.Ref: hash(commit), "refs/secure/policy": hash(blob)}
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		until time.Time
		want  bool
	}{
		{"policy valid for a day", now.Add(24 * time.Hour), true},
		{"expires this second", now, true},
		{"expired a second ago", now.Add(-time.Second), false},
		{"not remembered until when", time.Time{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &Helper{Repo: &porcelain.Repo{Git: g, Now: func() time.Time { return now }}, Remote: "origin", URL: "file:///srv/project.git"}
			// saveVerified remembers nothing with a zero until: write the
			// state as an older helper would have.
			key, ok := h.verifiedKey()
			if !ok {
				t.Fatal("no verified key")
			}
			os.Remove(h.verifiedStatePath())
			writeState(h.verifiedStatePath(), key, &remoteState{Head: "refs/heads/main", Refs: listing, Until: tc.until})
			remote, ok := h.nothingNew(listing, "refs/heads/main")
			if ok != tc.want {
				t.Fatalf("nothingNew = %v, want %v", ok, tc.want)
			}
			if ok && (len(remote) != 3 || remote["refs/heads/main"] != hash(commit) || !h.verifiedUntil.Equal(tc.until)) {
				t.Fatalf("remote %v, verifiedUntil %v", remote, h.verifiedUntil)
			}
		})
	}
}
