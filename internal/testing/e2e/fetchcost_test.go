package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCloneListsRemoteOnce: a plain `git clone secure::URL` talks to the
// remote twice (one listing, one fetch of everything it verifies), not
// three times: the listing made to learn that the remote uses git-secure
// is the one the fetch judges. Counted from GIT_TRACE, over a real
// transport. The fetch asks for each ref by the object id listed, so the
// remote lists its refs once in all (one ls-refs request in
// GIT_TRACE_PACKET: over HTTP each is a request of its own), it writes no
// ref (one git update-ref: the adoption), and the clone still verifies
// and has every listed branch.
func TestCloneListsRemoteOnce(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trDaemon)
	repo, url := srv.newRepo("project.git", true)
	alice, carol := newUser(t, "alice"), newUser(t, "carol")
	benchRepo(t, alice, "project", url, true)

	trace, packets := carol.path("trace.txt"), carol.path("packets.txt")
	dest := carol.path("clone")
	r := carol.run(carol.sb.Home, "env", "GIT_TRACE="+trace, "GIT_TRACE_PACKET="+packets, "git", "clone", "-q", "secure::"+url, dest)
	if r.code != 0 {
		t.Fatalf("clone:\n%s", r)
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var lists, fetches, refWrites int
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
		case strings.HasPrefix(cmd, "git update-ref"):
			refWrites++
		}
	}
	if lists != 1 || fetches != 1 {
		t.Fatalf("the clone listed the remote %d times and fetched %d times, want 1 and 1:\n%s", lists, fetches, data)
	}
	// The adoption of refs/secure/* only: the fetch writes no ref (no
	// private namespace to delete afterwards).
	if refWrites != 1 {
		t.Errorf("the clone ran git update-ref %d times, want 1 (the adoption; nothing to clean up):\n%s", refWrites, data)
	}
	pkt, err := os.ReadFile(packets)
	if err != nil {
		t.Fatal(err)
	}
	// The client's requests ("git> command=..."); over git daemon the
	// server's upload-pack is not a process of the clone.
	if n := strings.Count(string(pkt), "> command=ls-refs"); n != 1 {
		t.Errorf("the clone asked for the remote's refs %d times, want 1 (the fetch asks for the listed object ids)", n)
	}
	if n := strings.Count(string(pkt), "> command=fetch"); n != 1 {
		t.Errorf("the clone sent %d fetch requests, want 1", n)
	}
	carol.secure(dest, "verify")
	if got, want := carol.refValue(dest, "refs/remotes/origin/main"), srv.admin.refs(repo)["refs/heads/main"]; got != want {
		t.Fatalf("origin/main = %q, the server's main = %q", got, want)
	}

	// A fetch that cannot answer from the remembered verified state (here:
	// forgotten) verifies the remote again; every listed object is here
	// already, so it lists the remote and sends no fetch request at all.
	verified, err := filepath.Glob(filepath.Join(dest, ".git", "secure", "remotes-verified", "*"))
	if err != nil || len(verified) == 0 {
		t.Fatalf("no remembered verified state after the clone (%v)", err)
	}
	for _, f := range verified {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	packets = carol.path("packets-fetch.txt")
	r = carol.run(dest, "env", "GIT_TRACE_PACKET="+packets, "GIT_SECURE_TRACE=1", "git", "fetch", "-q")
	if r.code != 0 || !strings.Contains(r.stderr, "verify and adopt") {
		t.Fatalf("fetch (want a full verification):\n%s", r)
	}
	pkt, err = os.ReadFile(packets)
	if err != nil {
		t.Fatal(err)
	}
	if n, m := strings.Count(string(pkt), "> command=ls-refs"), strings.Count(string(pkt), "> command=fetch"); n != 1 || m != 0 {
		t.Errorf("a fetch with nothing to download asked for the refs %d times and sent %d fetch requests, want 1 and 0", n, m)
	}
}

// countTraced counts, in a GIT_TRACE file, the git commands that start
// with each prefix.
func countTraced(t *testing.T, path string, prefixes ...string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	counts := make([]int, len(prefixes))
	for _, line := range strings.Split(string(data), "\n") {
		_, cmd, ok := strings.Cut(line, "built-in: ")
		if !ok {
			continue
		}
		for i, p := range prefixes {
			if strings.HasPrefix(cmd, p) {
				counts[i]++
			}
		}
	}
	return counts
}

// TestFetchNothingNew: a fetch that finds the remote exactly as this
// clone last verified it lists the remote and stops (no private fetch, no
// verification), and every other state is judged in full:
//   - a root key pin set since: judged, and refused;
//   - something new: fetched and verified;
//   - the server moves main back without an entry, to a commit the clone
//     has: refused, naming main (the remembered state no longer matches);
//   - the same forgiven once with secure.verifyOnFetch=warn: the next
//     plain fetch refuses it again (a forgiven state is never remembered
//     as verified);
//   - a pusher whose last push remembered the rolled-back listing (a push
//     remembers what ls-remote said, unverified): its fetch refuses it.
func TestFetchNothingNew(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trDaemon)
	path, url := srv.newRepo("project.git", true)
	alice, carol := newUser(t, "alice"), newUser(t, "carol")
	dir := benchRepo(t, alice, "project", url, true)
	alice.git(dir, "fetch", "-q", "origin") // alice remembers a verified state too
	dest := carol.path("clone")
	carol.git(carol.sb.Home, "clone", "-q", "secure::"+url, dest)
	trace := carol.path("trace.txt")
	const private = "git fetch --no-tags" // the helper's fetch into its namespace

	if r := carol.run(dest, "env", "GIT_TRACE="+trace, "git", "fetch"); r.code != 0 || r.stderr != "" {
		t.Fatalf("fetch with nothing new:\n%s", r)
	}
	if c := countTraced(t, trace, "git ls-remote", private); c[0] != 1 || c[1] != 0 {
		t.Fatalf("fetch with nothing new: %d listings and %d private fetches, want 1 and 0", c[0], c[1])
	}

	// A setting that changes the verdict, set since: judged in full.
	carol.git(dest, "config", "secure.rootKeys", carol.fingerprint())
	if r := carol.run(dest, "git", "fetch"); r.code == 0 || !strings.Contains(r.stderr, "secure.rootKeys") {
		t.Fatalf("fetch with nothing new after pinning a key that is no root key: want a refusal naming secure.rootKeys:\n%s", r)
	}
	carol.git(dest, "config", "--unset", "secure.rootKeys")

	old := alice.rev(dir, "main")
	alice.commit(dir, "new.txt", "new\n")
	alice.git(dir, "push", "-q", "origin", "main")
	if r := carol.run(dest, "env", "GIT_TRACE="+trace, "git", "fetch", "-q"); r.code != 0 {
		t.Fatalf("fetch of a new commit:\n%s", r)
	}
	if c := countTraced(t, trace, "git ls-remote", private); c[1] != 1 {
		t.Fatalf("fetch of a new commit: %d private fetches, want 1", c[1])
	}
	if got, want := carol.rev(dest, "refs/remotes/origin/main"), alice.rev(dir, "main"); got != want {
		t.Fatalf("origin/main = %s, want %s", got, want)
	}
	carol.secure(dest, "verify")

	// Back to a commit both clones have, without an entry.
	srv.admin.git(path, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/heads/main", old)
	refused := func(u *user, dir string, args ...string) {
		t.Helper()
		r := u.run(dir, "git", append([]string{"fetch"}, args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, "refs/heads/main") || !strings.Contains(r.stderr, "does not verify") {
			t.Fatalf("fetch after main was moved back without an entry: want a refusal naming refs/heads/main:\n%s", r)
		}
	}
	refused(carol, dest)
	if r := carol.run(dest, "git", "-c", "secure.verifyOnFetch=warn", "fetch", "-q"); r.code != 0 || !strings.Contains(r.stderr, "does NOT verify") {
		t.Fatalf("fetch with secure.verifyOnFetch=warn:\n%s", r)
	}
	refused(carol, dest)

	// alice pushes another branch: her push remembers the listing with
	// main moved back, which nobody verified.
	alice.git(dir, "checkout", "-q", "-b", "topic")
	alice.commit(dir, "topic.txt", "t\n")
	alice.run(dir, "git", "push", "-q", "origin", "topic")
	refused(alice, dir)
}
