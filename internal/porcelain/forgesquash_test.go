package porcelain

import (
	"errors"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// A merged pull request's squash commit (one parent, the recorded tip)
// binds its reviews only when its tree is the merge of the reviewed head
// into that tip, which the bridge computes itself: a squash that adds
// anything, or one made on another parent, is refused as content nobody
// reviewed; an open pull request's one-parent "merge" never binds.
func TestCheckForgeMergeSquash(t *testing.T) {
	sb := testutil.NewSandbox(t)
	dir := sb.InitRepo("repo", 1)
	git := func(args ...string) string { return strings.TrimSpace(sb.Git(dir, args...)) }
	base := git("rev-parse", "HEAD")
	git("checkout", "-q", "-b", "pr")
	head := strings.TrimSpace(sb.Commit(dir, "reviewed.txt", "reviewed\n", "the pull request"))
	git("checkout", "-q", "main")
	tip := strings.TrimSpace(sb.Commit(dir, "other.txt", "another merge\n", "merged first"))
	good := git("commit-tree", git("merge-tree", "--write-tree", tip, head), "-p", tip, "-m", "squash")
	sb.Commit(dir, "evil.txt", "nobody reviewed this\n", "more")
	evil := git("commit-tree", git("merge-tree", "--write-tree", "HEAD", head), "-p", tip, "-m", "squash and more")
	onBase := git("commit-tree", git("rev-parse", head+"^{tree}"), "-p", base, "-m", "squash on the old base")

	g, err := gitrepo.OpenWithEnv(dir, sb.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	r := &Repo{Git: g}
	h := func(s string) gitrepo.Hash {
		x, err := gitrepo.ParseHash(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	merged := ForgePullRequest{Forge: "github", Number: "7", Merged: true}
	if err := r.checkForgeMerge(merged, "refs/heads/main", h(tip), h(head), h(good)); err != nil {
		t.Fatalf("the squash of the reviewed head: %v", err)
	}
	for _, tc := range []struct {
		name   string
		pr     ForgePullRequest
		commit string
		want   string
	}{
		{"squash with more", merged, evil, "not the tree of merging the reviewed head " + head[:12] + " into refs/heads/main's recorded tip " + tip[:12]},
		{"squash on another parent", merged, onBase, "has parents [" + base[:12] + "], not refs/heads/main's recorded tip " + tip[:12]},
		{"open pull request", ForgePullRequest{Forge: "github", Number: "7"}, good, "has parents [" + tip[:12] + "], not refs/heads/main's recorded tip"},
	} {
		err := r.checkForgeMerge(tc.pr, "refs/heads/main", h(tip), h(head), h(tc.commit))
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrRefused saying %q", tc.name, err, tc.want)
		}
	}
}
