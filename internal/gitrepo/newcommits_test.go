package gitrepo

import (
	"strings"
	"testing"
)

// TestNewCommits: the commits of tip not reachable from base, newest first,
// bounded, checked against git rev-list.
func TestNewCommits(t *testing.T) {
	s, dir, r := newRepo(t, 5)
	all := strings.Split(s.Git(dir, "rev-list", "HEAD"), "\n")
	head, base := mustParse(t, all[0]), mustParse(t, all[2])
	tests := []struct {
		name string
		base Hash
		max  int
		want []string
	}{
		{"since base", base, 10, all[:2]},
		{"whole history", ZeroHash, 10, all},
		{"bounded", ZeroHash, 3, all[:3]},
		{"nothing new", head, 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.NewCommits(head, tt.base, tt.max)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d commits %v, want %v", len(got), got, tt.want)
			}
			for i := range got {
				if got[i].String() != tt.want[i] {
					t.Errorf("commit %d = %s, want %s", i, got[i], tt.want[i])
				}
			}
		})
	}
}
