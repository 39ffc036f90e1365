package gitrepo

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMergeTree holds MergeTree to what git merge commits: the tree of a
// clean merge (a head that contains the base: the head's tree), and
// clean false for a merge that conflicts. A commit that merges the same
// parents with other content (an evil merge) has another tree.
func TestMergeTree(t *testing.T) {
	s, dir, r := newRepo(t, 1)
	write := func(file, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		s.Git(dir, "add", "--", file)
	}
	base := s.Git(dir, "rev-parse", "HEAD")
	s.Git(dir, "checkout", "-q", "-b", "topic")
	write("topic.txt", "topic\n")
	s.Git(dir, "commit", "-q", "-m", "topic")
	topic := s.Git(dir, "rev-parse", "HEAD")
	s.Git(dir, "checkout", "-q", "-b", "main2", base)
	write("main.txt", "main\n")
	s.Git(dir, "commit", "-q", "-m", "main")
	main := s.Git(dir, "rev-parse", "HEAD")
	s.Git(dir, "merge", "-q", "--no-ff", "-m", "merge", "topic")
	merged := s.Git(dir, "rev-parse", "HEAD^{tree}")
	s.Git(dir, "checkout", "-q", "-b", "evil", main)
	s.Git(dir, "merge", "-q", "--no-ff", "--no-commit", "topic")
	write("backdoor.txt", "evil\n")
	s.Git(dir, "commit", "-q", "-m", "evil merge")
	evil := s.Git(dir, "rev-parse", "HEAD^{tree}")
	s.Git(dir, "checkout", "-q", "-b", "conflict", base)
	write("topic.txt", "other\n")
	s.Git(dir, "commit", "-q", "-m", "conflict")
	conflict := s.Git(dir, "rev-parse", "HEAD")

	for _, tc := range []struct {
		name         string
		ours, theirs string
		want         string // "" when the merge conflicts
	}{
		{"clean merge", main, topic, merged},
		{"head contains the base", base, topic, s.Git(dir, "rev-parse", topic+"^{tree}")},
		{"conflict", conflict, topic, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree, clean, err := r.MergeTree(mustParse(t, tc.ours), mustParse(t, tc.theirs))
			if err != nil {
				t.Fatal(err)
			}
			if clean != (tc.want != "") || (clean && tree != mustParse(t, tc.want)) {
				t.Fatalf("MergeTree = %s, clean %v; want %q", tree, clean, tc.want)
			}
			if clean && tree == mustParse(t, evil) {
				t.Fatal("the evil merge's tree is the merge's")
			}
		})
	}
	if _, _, err := r.MergeTree(mustParse(t, main), mustParse(t, "1111111111111111111111111111111111111111")); err == nil {
		t.Fatal("MergeTree of a missing commit: no error")
	}
}
