package e2e

import (
	"strings"
	"testing"
)

// Found timing a clone of a mirror of spf13/cobra: GIT_SECURE_TRACE=1
// git secure clone printed "helper clean up 997 ms", which was the whole
// private fetch and verification (the clean-up mark closed every phase
// since the last mark). The trace names the fetch, the verification and
// the answers to git, so that "clean up" is the clean-up alone.
func TestTraceNamesFetchPhases(t *testing.T) {
	srv := startServer(t, trFile)
	_, url := srv.newRepo("trace.git", true)
	alice, bob := newUser(t, "alice"), newUser(t, "bob")
	adir := alice.sb.InitRepo("project", 2)
	alice.configure(adir)
	alice.secure(adir, "init")
	alice.git(adir, "remote", "add", "origin", url)
	alice.git(adir, "push", "-q", "-u", "origin", "main")
	r := bob.run(bob.sb.Home, "env", "GIT_SECURE_TRACE=1", "git", "secure", "clone", url, bob.path("project"), "--root-key", alice.fingerprint())
	if r.code != 0 {
		t.Fatalf("clone:\n%s", r)
	}
	phases := []string{"helper fetch: git fetch", "helper fetch: verify and adopt", "helper answer git's commands", "helper clean up"}
	at := 0
	for _, p := range phases {
		i := strings.Index(r.stderr[at:], "trace: "+p)
		if i < 0 {
			t.Fatalf("the trace does not show %q after the phases before it:\n%s", p, r)
		}
		at += i
	}
}
