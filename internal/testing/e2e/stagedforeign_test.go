package e2e

import (
	"strings"
	"testing"
)

// TestForeignStagedPolicy: a pusher without any key in the policy stages a
// change (adds herself, allows herself on main) and pushes
// refs/secure/policy-staging with plain git; the server keeps it (it only
// guards the staged change against deletion and replacement) and every
// fetch brings it into the clones. Before the fix, alice's next
// "policy add-rule" built on it and "policy apply" signed and put mallory's
// rule in force, saying only "staged: add rule docs". Now editing,
// signing or applying a staged change the clone did not make is refused,
// naming what it changes; a discarded one does not come back with the next
// fetch; and a genuine proposal fetched from the server is signed and
// applied once its commit is named (--staged COMMIT).
func TestForeignStagedPolicy(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("staged.git", true)
	alice := newUser(t, "alice")
	dir := benchRepo(t, alice, "one", url, true) // main: 1 of alice

	mallory := newUser(t, "mallory")
	mdir := mallory.path("m")
	mallory.git(mallory.sb.Home, "clone", "-q", url, mdir)
	mallory.configure(mdir)
	mallory.git(mdir, "fetch", "-q", "origin", "refs/secure/*:refs/secure/*")
	mallory.secure(mdir, "policy", "add-person", "mallory", "--key", mallory.key.Public)
	mallory.secure(mdir, "policy", "remove-rule", "protect-main")
	mallory.secure(mdir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "mallory")
	if r := mallory.run(mdir, "git", "push", url, "refs/secure/policy-staging:refs/secure/policy-staging"); r.code != 0 {
		t.Fatalf("mallory's push of a staged change (the server takes it):\n%s", r)
	}
	planted := srv.admin.rev(repo, "refs/secure/policy-staging")

	alice.git(dir, "fetch", "-q")
	if got := alice.rev(dir, "refs/secure/policy-staging"); got != planted {
		t.Fatalf("the fetch did not bring the server's staged change (%s, want %s): the attack below tests nothing", got, planted)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"an edit on top of it", []string{"policy", "add-rule", "docs", "--path", "docs/**", "--allow", "alice"},
			[]string{"was not made in this clone", "adds person mallory", "changes rule protect-main", "1 of alice or mallory", "git secure policy discard"}},
		{"apply", []string{"policy", "apply"},
			[]string{"was not made in this clone", "adds person mallory", "apply it with --staged " + planted[:12]}},
		{"sign", []string{"policy", "sign"},
			[]string{"was not made in this clone", "adds person mallory", "sign it with --staged " + planted[:12]}},
		{"apply naming another commit", []string{"policy", "apply", "--staged", "0123456789ab"},
			[]string{"--staged 0123456789ab does not name the staged policy change, which is " + planted[:12]}},
	} {
		r := alice.run(dir, "git", append([]string{"secure"}, tc.args...)...)
		if r.code != 1 || !containsAll(r.stderr, tc.want...) {
			t.Errorf("%s of mallory's staged change: want exit 1 saying %q:\n%s", tc.name, tc.want, r)
		}
	}
	if out := alice.secure(dir, "policy", "list", "--staged"); !containsAll(out, "staged change "+planted[:12]+" (not made in this clone", "adds person mallory") {
		t.Errorf("policy list --staged does not show where the change came from and what it does:\n%s", out)
	}

	// Discarded, it stays gone across fetches (the server keeps it for
	// ever), and alice's own change goes through without mallory's.
	alice.secure(dir, "policy", "discard")
	alice.git(dir, "fetch", "-q")
	if r := alice.run(dir, "git", "rev-parse", "-q", "--verify", "refs/secure/policy-staging"); r.code == 0 {
		t.Fatalf("a fetch brought back the discarded staged change %s", r.stdout)
	}
	alice.secure(dir, "policy", "add-rule", "docs", "--path", "docs/**", "--allow", "alice")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q")
	srv.admin.secure(repo, "verify")
	if out := srv.admin.git(repo, "show", "refs/secure/policy:targets.json"); strings.Contains(out, "mallory") || !strings.Contains(out, `"docs"`) {
		t.Fatalf("the server's policy after alice's change:\n%s", out)
	}

	// A genuine proposal from another clone: signed and applied once named.
	repo2, url2 := srv.newRepo("proposal.git", true)
	dir2 := benchRepo(t, alice, "two", url2, true)
	bob := newUser(t, "bob")
	alice.secure(dir2, "policy", "add-person", "bob", "--key", bob.key.Public)
	alice.git(dir2, "push", "-q")
	proposal := srv.admin.rev(repo2, "refs/secure/policy-staging")
	other := alice.path("other")
	alice.secure(alice.sb.Home, "clone", url2, other)
	alice.configure(other)
	if r := alice.run(other, "git", "secure", "policy", "apply"); r.code != 1 || !containsAll(r.stderr, "was not made in this clone", "adds person bob") {
		t.Fatalf("apply of a proposal fetched from the server, not named: want a refusal naming what it does:\n%s", r)
	}
	alice.secure(other, "policy", "apply", "--staged", proposal[:12])
	alice.git(other, "push", "-q")
	if out := srv.admin.git(repo2, "show", "refs/secure/policy:targets.json"); !strings.Contains(out, `"bob"`) {
		t.Fatalf("the reviewed proposal was not applied on the server:\n%s", out)
	}
}
