package gitrepo

import (
	"strings"
	"testing"
)

// TestObjectTypes checks ObjectTypes against git cat-file -t for every
// kind of object, and "" for an object the repository does not hold.
func TestObjectTypes(t *testing.T) {
	s, dir, r := newRepo(t, 2)
	s.Git(dir, "tag", "-a", "-m", "annotated", "v1")
	names := []string{"HEAD", "HEAD^{tree}", "HEAD:file0.txt", "v1"}
	var hashes []Hash
	var want []string
	for _, n := range names {
		hashes = append(hashes, mustParse(t, s.Git(dir, "rev-parse", n)))
	}
	for _, h := range hashes {
		want = append(want, strings.TrimSpace(s.Git(dir, "cat-file", "-t", h.String())))
	}
	absent := mustParse(t, strings.Repeat("ab", 20))
	hashes = append(hashes, absent, hashes[0])
	want = append(want, "", want[0])
	got, err := r.ObjectTypes(hashes)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("ObjectTypes = %q, git says %q", got, want)
	}
	if got, err := r.ObjectTypes(nil); err != nil || got != nil {
		t.Fatalf("ObjectTypes(nil) = %q, %v", got, err)
	}
}
