package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// git secure hooks install --global: every repository with a git-secure
// policy gets the behaviour with plain git (clone verifies, push records),
// repositories without one are untouched, and uninstall restores the
// user's configuration.
func TestGlobalInstall(t *testing.T) {
	for _, tr := range []transport{trFile, trHTTP} {
		t.Run(string(tr), func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, tr)
			secured, securedURL := srv.newRepo("secured.git", true)
			plain, plainURL := srv.newRepo("plain.git", false)
			u := newUser(t, "alice")
			benchRepo(t, u, "seed", securedURL, true) // main protected, alice allowed

			globalCfg := filepath.Join(u.sb.Home, ".gitconfig")
			u.git(u.sb.Home, "config", "--global", "user.name", u.name)
			u.git(u.sb.Home, "config", "--global", "user.email", u.name+"@example.com")
			u.git(u.sb.Home, "config", "--global", "gpg.format", "ssh")
			u.git(u.sb.Home, "config", "--global", "user.signingkey", u.key.Private)
			before := readFile(t, globalCfg)
			u.secure(u.sb.Home, "hooks", "install", "--global")

			// A protected repository: plain clone, commit, push.
			dir := u.path("clone")
			u.git(u.sb.Home, "clone", "-q", securedURL, dir)
			if got := u.refValue(dir, "refs/secure/rsl"); got != srv.admin.rev(secured, "refs/secure/rsl") {
				t.Fatalf("the clone's log is %q, want the server's (the clone did not go through git-remote-secure)", got)
			}
			u.secure(dir, "verify")
			c := u.commit(dir, "f.txt", "1\n")
			r := u.run(dir, "git", "push", "origin", "main")
			if r.code != 0 {
				t.Fatalf("plain git push of protected main:\n%s", r)
			}
			entries := srv.admin.rslLog(secured)
			if last := entries[len(entries)-1]; last.Ref != "refs/heads/main" || last.New != c {
				t.Fatalf("the push was not recorded: last entry %+v", last)
			}
			u.git(dir, "pull", "-q")

			// A repository without git-secure: plain git as ever, no
			// metadata created anywhere, no git-secure messages.
			pdir := u.path("plain")
			r = u.run(u.sb.Home, "git", "clone", plainURL, pdir)
			if r.code != 0 || strings.Contains(r.stderr, "git-secure:") {
				t.Fatalf("clone of a repository without git-secure:\n%s", r)
			}
			u.git(pdir, "commit", "-q", "--allow-empty", "-m", "first")
			r = u.run(pdir, "git", "push", "origin", "HEAD:refs/heads/main")
			if r.code != 0 || strings.Contains(r.stderr, "git-secure:") {
				t.Fatalf("push to a repository without git-secure:\n%s", r)
			}
			for ref := range srv.admin.refs(plain) {
				if strings.HasPrefix(ref, "refs/secure") {
					t.Errorf("the plain server got %s", ref)
				}
			}
			for _, name := range []string{"secure", "git-secure-push"} {
				if _, err := os.Stat(filepath.Join(pdir, ".git", name)); !os.IsNotExist(err) {
					t.Errorf("git-secure left .git/%s in a repository that does not use it (stat: %v)", name, err)
				}
			}
			for ref := range u.refs(filepath.Join(pdir, ".git")) {
				if strings.HasPrefix(ref, "refs/secure") {
					t.Errorf("the plain clone got %s", ref)
				}
			}

			u.secure(u.sb.Home, "hooks", "uninstall", "--global")
			if got := readFile(t, globalCfg); got != before {
				t.Errorf("global config after uninstall:\n%s\nwant:\n%s", got, before)
			}
			if _, err := os.Stat(filepath.Join(u.sb.Home, ".config", "git-secure", "hooks")); !os.IsNotExist(err) {
				t.Errorf("the user's hook directory is still there (stat: %v)", err)
			}
		})
	}
}
