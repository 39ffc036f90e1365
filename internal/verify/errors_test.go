package verify

import (
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// A problem of the whole clone names no entry and no ref: its message
// starts with its kind, never with an empty subject (": git reads ...").
func TestProblemErrorSubject(t *testing.T) {
	id := gitrepo.Hash{1, 2, 3}
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{Kind: ErrReadRewritten, Detail: "this clone is shallow"}, "git reads rewritten objects: this clone is shallow"},
		{Problem{Ref: "refs/heads/main", Kind: ErrUnrecorded, Detail: "d"}, "refs/heads/main: " + ErrUnrecorded.Error() + ": d"},
		{Problem{Entry: 5, EntryID: id, Ref: "refs/heads/main", Rule: "r", Kind: ErrThreshold, Detail: "d"}, "entry #5 (" + id.String()[:12] + ") refs/heads/main, rule r: " + ErrThreshold.Error() + ": d"},
	} {
		if got := tc.p.Error(); got != tc.want || strings.HasPrefix(got, ":") {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}
