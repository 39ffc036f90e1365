package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fingerprint is the SSH fingerprint of a user's key, as ssh-keygen prints it.
func (u *user) fingerprint() string {
	u.t.Helper()
	return strings.Fields(u.must(u.sb.Home, "ssh-keygen", "-lf", u.key.Public))[1]
}

// TestRootPinClone: the project's root key is rotated from K0 (alice) to K1
// (bob) and the rotation is pushed to a real server; then fresh clones made
// with git secure clone:
//   - pinned to the current key K1: the genuine rotated log is accepted
//     (before, the pin only looked at the first root and refused it);
//   - pinned to the rotated-out K0: accepted, and the pin reported stale
//     with the command that pins K1;
//   - unpinned: accepted, with one line saying it was trusted on first use
//     and the command that pins K1;
//   - pinned to K1, from a server serving a substituted log built with K0
//     alone, or one whose root lists K1 without K1's signature, or no log
//     at all: refused, and nothing is left checked out.
func TestRootPinClone(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trDaemon)
	_, url := srv.newRepo("project.git", true)
	alice, bob, carol := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "carol")
	k0, k1 := alice.fingerprint(), bob.fingerprint()

	dir := benchRepo(t, alice, "project", url, true) // root K0, main protected, pushed
	alice.secure(dir, "trust", "add-root-key", bob.key.Public)
	alice.secure(dir, "trust", "remove-root-key", alice.key.Public)
	alice.secure(dir, "policy", "sign")                            // the old root key
	alice.secure(dir, "policy", "apply", "--key", bob.key.Private) // the new one
	alice.commit(dir, "after-rotation.txt", "1\n")
	alice.git(dir, "push", "-q", "origin", "main")
	serverMain := srv.admin.rev(filepath.Join(srv.root, "project.git"), "refs/heads/main")

	t.Run("pinned to the current key", func(t *testing.T) {
		dest := carol.path("current")
		r := carol.run(carol.sb.Home, "git", "secure", "clone", url, dest, "--root-key", k1)
		if r.code != 0 || !strings.Contains(r.stdout, "verified under the pinned root keys ("+k1+")") {
			t.Fatalf("clone of the genuine rotated log pinned to the current root key:\n%s", r)
		}
		if strings.Contains(r.stderr, "stale") || strings.Contains(r.stderr, "first use") {
			t.Fatalf("a current pin must not be reported stale or as trust on first use:\n%s", r)
		}
		if got := carol.rev(dest, "HEAD"); got != serverMain {
			t.Fatalf("checked out %s, want the server's main %s", got, serverMain)
		}
		if got := carol.git(dest, "config", "secure.rootKeys"); got != k1 {
			t.Fatalf("the clone's secure.rootKeys = %q, want %q", got, k1)
		}
		if got := carol.git(dest, "config", "remote.origin.vcs"); got != "secure" {
			t.Fatalf("the clone's origin is not routed through git-remote-secure (vcs = %q)", got)
		}
		if got := carol.run(dest, "git", "config", "core.hooksPath"); got.code != 0 {
			t.Fatalf("no hooks installed in the new clone:\n%s", got)
		}
		carol.git(dest, "fetch", "-q") // later fetches verify under the same pin
		carol.secure(dest, "verify", "--root-key", k1)
	})

	t.Run("pinned to the rotated-out key", func(t *testing.T) {
		dest := carol.path("stale")
		r := carol.run(carol.sb.Home, "git", "secure", "clone", url, dest, "--root-key", k0)
		if r.code != 0 {
			t.Fatalf("clone pinned to the rotated-out key (the rotation is signed by it):\n%s", r)
		}
		if !strings.Contains(r.stderr, "stale root key pin") || !strings.Contains(r.stderr, "git config secure.rootKeys '"+k1+"'") {
			t.Fatalf("want the stale pin reported with the command that pins %s:\n%s", k1, r)
		}
		v := carol.run(dest, "git", "secure", "verify")
		if v.code != 0 || !strings.Contains(v.stderr, "stale root key pin") {
			t.Fatalf("verify under the stale pin: want success with the stale pin warning:\n%s", v)
		}
	})

	t.Run("unpinned: trust on first use said in one line", func(t *testing.T) {
		dest := carol.path("tofu")
		r := carol.run(carol.sb.Home, "git", "secure", "clone", url, dest)
		if r.code != 0 {
			t.Fatalf("unpinned clone:\n%s", r)
		}
		var lines []string
		for _, l := range strings.Split(r.stderr, "\n") {
			if strings.Contains(l, "trusted on first use") {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 || !strings.Contains(lines[0], "git config secure.rootKeys '"+k1+"'") {
			t.Fatalf("want exactly one trust-on-first-use line with the command that pins %s:\n%s", k1, r)
		}
		// Only the first fetch says it: later ones extend a log this clone holds.
		if f := carol.run(dest, "git", "fetch"); f.code != 0 || strings.Contains(f.stderr, "first use") {
			t.Fatalf("a later unpinned fetch must not repeat the trust-on-first-use line:\n%s", f)
		}
		// Pinning as the line says makes the next fetch a pinned one.
		carol.git(dest, "config", "secure.rootKeys", k1)
		if f := carol.run(dest, "git", "fetch"); f.code != 0 || strings.Contains(f.stderr, "first use") {
			t.Fatalf("fetch after pinning as told:\n%s", f)
		}
	})

	refused := func(t *testing.T, url, name string, want ...string) {
		t.Helper()
		dest := carol.path(name)
		r := carol.run(carol.sb.Home, "git", "secure", "clone", url, dest, "--root-key", k1)
		if r.code != 1 {
			t.Fatalf("clone pinned to %s: want exit 1 (refused):\n%s", k1, r)
		}
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				t.Fatalf("clone pinned to %s: want %q in the refusal:\n%s", k1, w, r)
			}
		}
		if !strings.Contains(r.stderr, "nothing unverified is checked out") {
			t.Fatalf("the refusal must say that nothing is left checked out:\n%s", r)
		}
		if _, err := os.Stat(dest); !os.IsNotExist(err) {
			t.Fatalf("a refused clone left %s behind (stat: %v)", dest, err)
		}
	}

	t.Run("substituted log built with the old key alone", func(t *testing.T) {
		_, subURL := srv.newRepo("substitute.git", true)
		benchRepo(t, alice, "substitute", subURL, true) // root K0 only: what K0's holder can build
		refused(t, subURL, "substitute", "root of trust is not the pinned one",
			"no root version of the log is signed by the pinned root keys ("+k1+"; 1 signature(s) needed): its root keys were "+k0)
	})

	t.Run("root lists the pinned key, signed by others", func(t *testing.T) {
		_, listURL := srv.newRepo("lister.git", true)
		d := benchRepo(t, alice, "lister", listURL, true)
		alice.secure(d, "trust", "add-root-key", bob.key.Public) // threshold stays 1: K0 alone signs
		alice.secure(d, "policy", "apply")
		alice.commit(d, "listed.txt", "1\n")
		alice.git(d, "push", "-q", "origin", "main")
		refused(t, listURL, "lister", "root of trust is not the pinned one",
			"lists the pinned key(s) "+k1+", but valid signatures by pinned keys on it are 0 of the 1 needed")
	})

	t.Run("no log at all", func(t *testing.T) {
		_, plainURL := srv.newRepo("plain.git", false)
		benchRepo(t, alice, "plain", plainURL, false)
		refused(t, plainURL, "plain", "the remote has no git-secure log", "pins its root of trust")
	})
}
