package verify

import (
	"slices"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// One fetch through the CI script's two refspecs stores each branch twice:
// it is judged once per value, at the tracking ref git's own mapping
// names; a second, different value (a stale copy) is judged as well.
func TestSameValueOnce(t *testing.T) {
	var fetch gitrepo.Refspecs
	for _, s := range []string{"+refs/heads/*:refs/remotes/origin/*", "+refs/*:refs/remote-refs/origin/*"} {
		spec, err := gitrepo.ParseFetchRefspec(s)
		if err != nil {
			t.Fatal(err)
		}
		fetch = append(fetch, spec)
	}
	a, b := gitrepo.Hash{1}, gitrepo.Hash{2}
	catchAll := TrackedRef{Ref: "refs/heads/main", Tracking: "refs/remote-refs/origin/heads/main", Hash: a}
	primary := TrackedRef{Ref: "refs/heads/main", Tracking: "refs/remotes/origin/main", Hash: a}
	stale := TrackedRef{Ref: "refs/heads/main", Tracking: "refs/remotes/origin/main", Hash: b}
	notes := TrackedRef{Ref: "refs/notes/commits", Tracking: "refs/remote-refs/origin/notes/commits", Hash: a}
	for _, tc := range []struct {
		name string
		obs  []TrackedRef
		want []TrackedRef
	}{
		{"one", []TrackedRef{notes}, []TrackedRef{notes}},
		{"same value, git's mapping kept", []TrackedRef{catchAll, primary}, []TrackedRef{primary}},
		{"same value, git's mapping first", []TrackedRef{primary, catchAll}, []TrackedRef{primary}},
		{"two values both judged", []TrackedRef{catchAll, stale}, []TrackedRef{catchAll, stale}},
	} {
		if got := sameValueOnce(tc.obs, fetch); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
