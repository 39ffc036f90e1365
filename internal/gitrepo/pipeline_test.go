package gitrepo

import (
	"bufio"
	"strings"
	"testing"
)

func TestFirstParents(t *testing.T) {
	s, dir, r := newRepo(t, 5)
	s.Git(dir, "checkout", "-q", "-b", "side", "HEAD~2")
	s.Commit(dir, "side.txt", "s", "side")
	s.Git(dir, "checkout", "-q", "main")
	s.Git(dir, "merge", "-q", "--no-ff", "-m", "merge", "side")
	tip := mustParse(t, s.Git(dir, "rev-parse", "HEAD"))
	want := strings.Fields(s.Git(dir, "rev-list", "--first-parent", "HEAD"))
	for _, max := range []int{1, 3, len(want), len(want) + 1} {
		got, err := r.FirstParents(tip, max)
		if err != nil {
			t.Fatalf("max %d: %v", max, err)
		}
		w := want[:min(max, len(want))]
		if len(got) != len(w) {
			t.Fatalf("max %d: %d hashes, want %d", max, len(got), len(w))
		}
		for i := range got {
			if got[i].String() != w[i] {
				t.Errorf("max %d: hash %d is %s, want %s", max, i, got[i], w[i])
			}
		}
	}
	missing := mustParse(t, strings.Repeat("ab", 20))
	if _, err := r.FirstParents(missing, 10); err == nil || !strings.Contains(err.Error(), "gitrepo: list "+missing.String()) {
		t.Errorf("missing tip: err = %v, want the listing's error naming it", err)
	}
}

func TestReadHashLines(t *testing.T) {
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	tests := []struct {
		name, in string
		max      int
		n        int
		err      string
	}{
		{"two", a + "\n" + b + "\n", 5, 2, ""},
		{"no final newline", a + "\n" + b, 5, 2, ""},
		{"exactly max", a + "\n" + b + "\n", 2, 2, ""},
		{"over max", a + "\n" + b + "\n", 1, 0, "more than 1 commits listed"},
		{"empty", "", 5, 0, "want 40 hex digits, got 0"},
		{"blank line", a + "\n\n", 5, 0, "want 40 hex digits, got 0"},
		{"carriage return", a + "\r\n", 5, 0, "want 40 hex digits, got 41"},
		{"upper case", strings.ToUpper(a) + "\n", 5, 0, "not lowercase hex"},
		{"long line", strings.Repeat("a", 70000) + "\n", 5, 0, "buffer full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readHashLines(bufio.NewReaderSize(strings.NewReader(tt.in), 64<<10), tt.max)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || len(got) != tt.n {
				t.Fatalf("got %d hashes, err %v; want %d", len(got), err, tt.n)
			}
		})
	}
}
