package e2e

import (
	"strings"
	"testing"
)

// Found as a stranger on a mirror of spf13/cobra: git push --tags with a
// release tag bob may not make and an unprotected tag refused both with
// the release rule's reason, so bob-note-1 read as refused by a rule
// about v1.1. The unprotected one now says it was not pushed because the
// other was refused, that the push is all or nothing, and how to push it
// alone; doing so lands it.
func TestAtomicRefusalNamesTheRefusedRef(t *testing.T) {
	srv, repo, _, bob, _, bdir := tagDay(t, "refs/tags/v*")
	bob.git(bdir, "tag", "v1.1")
	bob.git(bdir, "tag", "bob-note-1")
	r := bob.run(bdir, "git", "push", "origin", "--tags")
	if r.code == 0 {
		t.Fatalf("bob's push of a release tag landed:\n%s", r)
	}
	var note, rel string
	for _, line := range strings.Split(r.stderr, "\n") {
		switch {
		case strings.Contains(line, "bob-note-1 -> bob-note-1"):
			note = line
		case strings.Contains(line, "v1.1 -> v1.1"):
			rel = line
		}
	}
	if !strings.Contains(rel, "rule releases") {
		t.Errorf("v1.1's line does not give the rule:\n%s", r.stderr)
	}
	want := "not pushed: refs/tags/v1.1 in the same push was refused, and a push through git-secure is all or nothing; to push this one alone: git push origin refs/tags/bob-note-1"
	if !strings.Contains(note, want) || strings.Contains(note, "rule releases") {
		t.Errorf("bob-note-1's line: %q, want it to contain %q and not the other tag's rule\n%s", note, want, r.stderr)
	}
	bob.git(bdir, "push", "origin", "refs/tags/bob-note-1")
	if got := srv.admin.rev(repo, "refs/tags/bob-note-1"); got == "" {
		t.Errorf("bob-note-1 pushed alone did not land")
	}
}
