package e2e

import (
	"strings"
	"testing"
)

// Issue 15.1: a remote added after git secure init (GitHub's instructions
// for an existing repository: git remote add origin URL; git push -u
// origin main) goes through git-remote-secure from its first push, with no
// second command; git secure hooks install says exactly what it did.
func TestRemoteAddedAfterInit(t *testing.T) {
	for _, tr := range []transport{trFile, trHTTP} {
		t.Run(string(tr), func(t *testing.T) {
			srv := startServer(t, tr)
			repo, url := srv.newRepo("later.git", true)
			u := newUser(t, "alice")
			dir := benchRepo(t, u, "later", "", true) // init, main protected, no remote yet
			u.git(dir, "remote", "add", "origin", url)
			u.commit(dir, "a.txt", "after init\n")
			r := u.run(dir, "git", "push", "-u", "origin", "main")
			if r.code != 0 {
				t.Fatalf("git push -u origin main of a remote added after init:\n%s", r)
			}
			if !strings.Contains(r.stderr, "recorded refs/heads/main as entry #") {
				t.Errorf("the push does not say it recorded main:\n%s", r)
			}
			srvRefs := srv.admin.refs(repo)
			for _, ref := range []string{"refs/heads/main", "refs/secure/rsl", "refs/secure/policy"} {
				if want := u.rev(dir, ref); srvRefs[ref] != want {
					t.Errorf("server %s = %q, want %s\n%s", ref, srvRefs[ref], want, r)
				}
			}
			if got := u.git(dir, "rev-parse", "--abbrev-ref", "main@{upstream}"); got != "origin/main" {
				t.Errorf("main's upstream = %q, want origin/main", got)
			}
			srv.admin.secure(repo, "verify")

			if !strings.Contains(r.stderr, `remote "origin" is now routed through git-remote-secure for fetches too`) {
				t.Errorf("the first push does not say it routed origin's fetches:\n%s", r)
			}
			if v := u.git(dir, "config", "remote.origin.vcs"); v != "secure" {
				t.Errorf("remote.origin.vcs = %q after the first push said it routed origin", v)
			}
			u.git(dir, "fetch", "-q", "origin")

			// Installing again routes a remote added since by name and
			// says exactly that; it claims nothing it did not do.
			_, backup := srv.newRepo("backup.git", true)
			u.git(dir, "remote", "add", "backup", backup)
			out := u.secure(dir, "hooks", "install")
			for _, want := range []string{"refreshed", "now routed through git-remote-secure (remote.<name>.vcs = secure): backup",
				"already routed through git-remote-secure: origin", "url.secure::.pushInsteadOf"} {
				if !strings.Contains(out, want) {
					t.Errorf("hooks install in an installed repository with a new remote does not say %q:\n%s", want, out)
				}
			}
			if v := u.git(dir, "config", "remote.backup.vcs"); v != "secure" {
				t.Errorf("remote.backup.vcs = %q after hooks install said it routed backup", v)
			}
			out = u.secure(dir, "hooks", "install")
			if strings.Contains(out, "now routed") {
				t.Errorf("a second hooks install claims to route again:\n%s", out)
			}
			u.git(dir, "push", "-q", "backup", "main")

			// Uninstall restores the configuration: no rewrite is left.
			u.secure(dir, "hooks", "uninstall")
			for _, key := range []string{"url.secure::.pushInsteadOf", "remote.origin.vcs", "remote.backup.vcs"} {
				if r := u.run(dir, "git", "config", "--get-all", key); r.code == 0 {
					t.Errorf("hooks uninstall left %s = %q", key, r.stdout)
				}
			}
		})
	}
}

// Issue 15.2: a plain git push sends metadata that changed on its own (an
// applied policy, an approval, a staged policy) although no branch moved:
// git must not stop at "Everything up-to-date" with nothing sent.
func TestMetadataOnlyPush(t *testing.T) {
	srv := startServer(t, trFile)
	repo, url := srv.newRepo("meta.git", true)
	u := newUser(t, "alice")
	bob := newUser(t, "bob")
	carol := newUser(t, "carol")
	dir := benchRepo(t, u, "meta", url, true) // main pushed through the helper

	pushSends := func(what string, refs ...string) {
		t.Helper()
		before := srv.admin.refs(repo)
		r := u.run(dir, "git", "push")
		if r.code != 0 {
			t.Fatalf("git push after %s:\n%s", what, r)
		}
		t.Logf("git push after %s:\n%s", what, r.stderr)
		after := srv.admin.refs(repo)
		for _, ref := range refs {
			if want := u.rev(dir, ref); after[ref] != want {
				t.Errorf("after %s and git push, server %s = %q, want the local %s (before: %q)\n%s", what, ref, after[ref], want, before[ref], r)
			}
		}
		if !strings.Contains(r.stderr, "git-secure: sent ") {
			t.Errorf("git push after %s does not say what it sent:\n%s", what, r)
		}
		if after["refs/heads/main"] != before["refs/heads/main"] || strings.Contains(r.stderr, "main -> main") {
			t.Errorf("git push after %s reports or moves main:\n%s", what, r)
		}
		srv.admin.secure(repo, "verify")
	}

	u.secure(dir, "policy", "add-person", "bob", "--key", bob.key.Public)
	u.secure(dir, "policy", "apply")
	pushSends("policy apply", "refs/secure/policy", "refs/secure/rsl")

	u.git(dir, "checkout", "-q", "-b", "next")
	next := u.commit(dir, "next.txt", "to approve\n")
	u.git(dir, "checkout", "-q", "main")
	u.secure(dir, "attest", "approve", "main", "--to", next)
	pushSends("attest approve", "refs/secure/attestations")

	u.secure(dir, "policy", "add-person", "carol", "--key", carol.key.Public)
	u.secure(dir, "policy", "sign")
	pushSends("policy sign", "refs/secure/policy-staging")

	// Nothing left to send: git's own answer, no extra line.
	r := u.run(dir, "git", "push")
	if r.code != 0 || !strings.Contains(r.stderr, "Everything up-to-date") || strings.Contains(r.stderr, "git-secure: sent") {
		t.Errorf("git push with nothing to send:\n%s", r)
	}
}

// existingProject is a repository with history, branches and tags that
// alice protects with git-secure (main, release tags) before adding its
// first remote: the shape of a real project's first day.
func existingProject(t *testing.T, u *user) string {
	t.Helper()
	dir := u.sb.InitRepo("project", 5)
	u.configure(dir)
	u.git(dir, "branch", "dev")
	u.git(dir, "branch", "release/1")
	u.git(dir, "tag", "-a", "-m", "v1.0", "v1.0", "main~2")
	u.git(dir, "tag", "v1.1", "main~1")
	u.secure(dir, "init")
	u.secure(dir, "policy", "add-person", "alice", "--key", u.key.Public)
	u.secure(dir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice")
	u.secure(dir, "policy", "add-rule", "releases", "--ref", "refs/tags/v*", "--allow", "alice")
	u.secure(dir, "policy", "apply")
	return dir
}

// Issue 15.3: the first push of an existing repository to an enforcing
// server sends every ref the log records, whichever of git push --all or
// git push --tags comes first; a push that leaves a recorded ref out is
// refused with a message that says so (not "deleted"), and a ref the
// server had is still refused when deleted without an entry.
func TestFirstPushOfExistingRepository(t *testing.T) {
	srv := startServer(t, trFile)
	u := newUser(t, "alice")
	dir := existingProject(t, u)
	recorded := []string{"refs/heads/main", "refs/heads/dev", "refs/heads/release/1", "refs/tags/v1.0", "refs/tags/v1.1", "refs/secure/rsl", "refs/secure/policy"}
	hasAll := func(repo string, r result) {
		t.Helper()
		got := srv.admin.refs(repo)
		for _, ref := range recorded {
			if want := u.rev(dir, ref); got[ref] != want {
				t.Errorf("server %s = %q, want %s\n%s", ref, got[ref], want, r)
			}
		}
		srv.admin.secure(repo, "verify")
	}

	for _, first := range [][]string{{"push", "-u", "origin", "--all"}, {"push", "origin", "--tags"}} {
		t.Run(strings.Join(first, " "), func(t *testing.T) {
			repo, url := srv.newRepo(strings.ReplaceAll(first[len(first)-1], "-", "")+".git", true)
			u.run(dir, "git", "remote", "remove", "origin")
			u.git(dir, "remote", "add", "origin", url)
			r := u.run(dir, "git", first...)
			if r.code != 0 {
				t.Fatalf("first push of an existing repository:\n%s", r)
			}
			t.Logf("first push:\n%s", r.stderr)
			if !strings.Contains(r.stderr, "also pushed ") || !strings.Contains(r.stderr, "did not have") {
				t.Errorf("the first push does not say which recorded refs it added:\n%s", r)
			}
			hasAll(repo, r)
			for _, next := range [][]string{{"push", "origin", "--tags"}, {"push", "origin", "--all"}} {
				if r := u.run(dir, "git", next...); r.code != 0 || strings.Contains(r.stderr, "also pushed") {
					t.Errorf("git %s after the first push:\n%s", strings.Join(next, " "), r)
				}
			}
		})
	}

	// Past git-remote-secure, a first push that leaves the tags out is
	// refused, naming each one and what to do, not calling it a deletion.
	repo, url := srv.newRepo("direct.git", true)
	r := u.pushDirect(dir, url, "--no-verify", "--atomic", url, "main", "dev", "release/1", "refs/secure/rsl:refs/secure/rsl", "refs/secure/policy:refs/secure/policy")
	if r.code == 0 {
		t.Fatalf("a first push without the recorded tags was accepted:\n%s", r)
	}
	for _, want := range []string{
		"refs/tags/v1.0: the log this push brings records it, but the push does not send it and this server never had it",
		"hint: send it in the same push as the log (git push origin refs/tags/v1.1)",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, r)
		}
	}
	if strings.Contains(r.stderr, "deleted without an entry") {
		t.Errorf("the refusal calls refs the server never had deleted:\n%s", r)
	}
	if got := srv.admin.refs(repo); len(got) != 0 {
		t.Fatalf("the refused push left refs on the server: %v", got)
	}

	// A ref the server had, deleted without an entry, is refused as before.
	r = u.pushDirect(dir, url, "--no-verify", "--atomic", url, "main", "dev", "release/1", "--tags", "refs/secure/rsl:refs/secure/rsl", "refs/secure/policy:refs/secure/policy")
	if r.code != 0 {
		t.Fatalf("a complete direct first push:\n%s", r)
	}
	r = u.pushDirect(dir, url, "--no-verify", url, ":refs/tags/v1.0")
	if r.code == 0 || !strings.Contains(r.stderr, "deleted without an entry") || strings.Contains(r.stderr, "never had it") {
		t.Errorf("deleting a recorded tag the server had: want the deletion refused as such:\n%s", r)
	}
	srv.admin.git(repo, "-c", "core.hooksPath=/dev/null", "update-ref", "-d", "refs/tags/v1.0")
	u.commit(dir, "more.txt", "more\n")
	u.secure(dir, "rsl", "record", "refs/heads/main")
	r = u.pushDirect(dir, url, "--no-verify", "--atomic", url, "main", "refs/secure/rsl:refs/secure/rsl")
	if strings.Contains(r.stderr, "never had it") || !strings.Contains(r.stderr, "refs/tags/v1.0") || !strings.Contains(r.stderr, "deleted without an entry") {
		t.Errorf("a push past a tag the server had and lost: want it named as deleted without an entry:\n%s", r)
	}
	if v := srv.admin.run(repo, "git", "secure", "verify"); v.code != 1 || !strings.Contains(v.stderr, "refs/tags/v1.0") || !strings.Contains(v.stderr, "deleted without an entry") {
		t.Errorf("verify on a server that lost a recorded tag: want exit 1 naming the deletion:\n%s", v)
	}
}

// A pushInsteadOf of the user's own is a longer prefix than git-secure's
// empty one and wins: the pre-push hook refuses the protected branch with
// the command that routes the remote by name, and after it plain git push
// works.
func TestOwnPushInsteadOf(t *testing.T) {
	srv := startServer(t, trFile)
	repo, _ := srv.newRepo("own.git", true)
	u := newUser(t, "alice")
	dir := benchRepo(t, u, "own", "", true)
	u.git(dir, "config", "url."+srv.base+"/.pushInsteadOf", "mirror:")
	u.git(dir, "remote", "add", "origin", "mirror:own.git")
	u.commit(dir, "a.txt", "1\n")
	r := u.run(dir, "git", "push", "-u", "origin", "main")
	if r.code == 0 || !strings.Contains(r.stderr, `remote "origin" does not carry its log entries`) || !strings.Contains(r.stderr, "git secure hooks install") {
		t.Fatalf("a push rewritten by the user's pushInsteadOf: want the pre-push refusal naming hooks install:\n%s", r)
	}
	u.secure(dir, "hooks", "install")
	if r := u.run(dir, "git", "push", "-u", "origin", "main"); r.code != 0 {
		t.Fatalf("git push after hooks install routed origin by name:\n%s", r)
	}
	if got, want := srv.admin.rev(repo, "refs/heads/main"), u.rev(dir, "main"); got != want {
		t.Fatalf("server main = %s, want %s", got, want)
	}
	srv.admin.secure(repo, "verify")
}

// TestPushOfOtherSecureRefRefused: a push through the helper of a name
// under refs/secure/ that is none of git-secure's refs (a typo, or a ref
// someone meant to keep there) was dropped, since the helper sends the
// metadata itself, and yet reported pushed: "* [new reference]", exit 0,
// while the server never got it (attack review, session 14). It is now an
// error for that ref, saying what refs/secure/ holds.
func TestPushOfOtherSecureRefRefused(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	path, url := srv.newRepo("project.git", true)
	alice := newUser(t, "alice")
	dir := benchRepo(t, alice, "project", url, true)
	for _, ref := range []string{"refs/secure/foo", "refs/secure/RSL"} {
		r := alice.run(dir, "git", "push", "origin", "HEAD:"+ref)
		if r.code == 0 || !strings.Contains(r.stderr, "not a git-secure ref: refs/secure/ holds only refs/secure/rsl") || strings.Contains(r.stderr, "[new reference]") {
			t.Errorf("git push origin HEAD:%s: want a refusal naming what refs/secure/ holds:\n%s", ref, r)
		}
		if v := srv.admin.refValue(path, ref); v != "" {
			t.Errorf("the server has %s = %s", ref, v)
		}
	}
	// The metadata itself still goes.
	if r := alice.run(dir, "git", "push", "origin", "refs/secure/rsl"); r.code != 0 {
		t.Errorf("git push origin refs/secure/rsl:\n%s", r)
	}
}
