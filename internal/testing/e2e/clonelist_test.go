package e2e

import (
	"os"
	"strings"
	"testing"
)

// TestCloneListsRemoteOnce: a plain `git clone secure::URL` talks to the
// remote twice (one listing, one fetch of everything it verifies), not
// three times: the listing made to learn that the remote uses git-secure
// is the one the fetch judges. Counted from GIT_TRACE, over a real
// transport.
func TestCloneListsRemoteOnce(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trDaemon)
	_, url := srv.newRepo("project.git", true)
	alice, carol := newUser(t, "alice"), newUser(t, "carol")
	benchRepo(t, alice, "project", url, true)

	trace := carol.path("trace.txt")
	dest := carol.path("clone")
	r := carol.run(carol.sb.Home, "env", "GIT_TRACE="+trace, "git", "clone", "-q", "secure::"+url, dest)
	if r.code != 0 {
		t.Fatalf("clone:\n%s", r)
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var lists, fetches int
	for _, line := range strings.Split(string(data), "\n") {
		_, cmd, ok := strings.Cut(line, "built-in: ")
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(cmd, "git ls-remote"):
			lists++
		case strings.HasPrefix(cmd, "git fetch"):
			fetches++
		}
	}
	if lists != 1 || fetches != 1 {
		t.Fatalf("the clone listed the remote %d times and fetched %d times, want 1 and 1:\n%s", lists, fetches, data)
	}
	carol.secure(dest, "verify")
}
