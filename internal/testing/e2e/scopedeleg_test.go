package e2e

import (
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
)

// TestPathRuleScopeDelegatedRefs: a path rule without --ref (crypto:
// src/crypto/**, alice) covers the refs a rule names, also when that rule
// lives in a rule file (finding 06 of session 14). alice delegates
// refs/heads/release/* to a release file whose rule rel lets mallory cut
// release branches; mallory creates release/1.0 with a src/crypto change.
// explain names crypto; the enforcing server refuses her push through the
// helper and with an entry she signs herself; on a server without hooks
// that takes her entry, a verify of a clone fails naming crypto and the
// file. Before the fix only rel applied there: all three accepted it.
func TestPathRuleScopeDelegatedRefs(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	_, url := srv.newRepo("reldeleg.git", true)
	plainRepo, plainURL := srv.newRepo("reldeleg-plain.git", false)
	alice, bob, mallory := newUser(t, "alice"), newUser(t, "bob"), newUser(t, "mallory")

	aliceDir := alice.sb.InitRepo("alice", 1)
	alice.configure(aliceDir)
	writeFile(t, aliceDir, "src/crypto/aes.c", "v1\n")
	alice.git(aliceDir, "add", "--", "src")
	alice.git(aliceDir, "commit", "-q", "-m", "sources")
	alice.git(aliceDir, "remote", "add", "origin", url)
	alice.git(aliceDir, "remote", "add", "plain", plainURL)
	alice.secure(aliceDir, "init")
	for _, u := range []*user{alice, bob, mallory} {
		alice.secure(aliceDir, "policy", "add-person", u.name, "--key", u.key.Public)
	}
	alice.secure(aliceDir, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob")
	alice.secure(aliceDir, "policy", "add-rule", "crypto", "--path", "src/crypto/**", "--allow", "alice")
	alice.secure(aliceDir, "policy", "delegate", "release", "--ref", "refs/heads/release/*", "--key", "alice")
	alice.secure(aliceDir, "policy", "add-rule", "--file", "release", "rel", "--ref", "refs/heads/release/*", "--allow", "mallory", "--allow", "alice")
	alice.secure(aliceDir, "policy", "sign", "--file", "release", "--key", alice.key.Private)
	alice.secure(aliceDir, "policy", "apply")
	alice.git(aliceDir, "push", "-q", "-u", "origin", "main")
	alice.git(aliceDir, "push", "-q", "plain", "main")

	malDir := mallory.path("mallory")
	mallory.git(mallory.sb.Home, "secure", "clone", url, malDir)
	mallory.configure(malDir)
	mallory.git(malDir, "checkout", "-q", "-b", "release/1.0", "origin/main")
	mallory.commit(malDir, "src/crypto/aes.c", "backdoor()\n")
	ex := mallory.run(malDir, "git", "secure", "explain", "refs/heads/release/1.0")
	wantAll(t, "explain release/1.0", ex, "rule crypto", "release:rel")
	if !strings.Contains(ex.stdout+ex.stderr, "src/crypto/aes.c") {
		t.Errorf("explain does not name the protected file:\n%s", ex)
	}
	r := mallory.run(malDir, "git", "push", "origin", "release/1.0")
	if r.code == 0 {
		t.Fatalf("mallory's release/1.0 with a src/crypto change was accepted through the helper:\n%s", r)
	}
	wantAll(t, "mallory's push through the helper", r, "crypto", "src/crypto/aes.c")

	// Her own entry, straight at the enforcing server and at one without hooks.
	mallory.git(malDir, "fetch", "-q", url, "+refs/secure/*:refs/secure/*")
	tip := mallory.rev(malDir, rsl.Ref)
	h := forge(t, mallory, malDir, &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/release/1.0", Old: gitrepo.Hash{}, New: hash(t, mallory.rev(malDir, "release/1.0"))})
	mallory.git(malDir, "update-ref", rsl.Ref, h, tip)
	r = mallory.pushDirect(malDir, url, "--atomic", "--no-verify", url, "release/1.0:refs/heads/release/1.0", "refs/secure/rsl:refs/secure/rsl")
	if r.code == 0 {
		t.Fatalf("the enforcing server accepted mallory's own entry for release/1.0 with a src/crypto change:\n%s", r)
	}
	wantAll(t, "mallory's own entry", r, "rule crypto", "protected files changed: src/crypto/aes.c")
	mallory.pushDirect(malDir, plainURL, "--atomic", "--no-verify", plainURL, "release/1.0:refs/heads/release/1.0", "refs/secure/rsl:refs/secure/rsl")
	v := srv.admin.run(plainRepo, "git", "secure", "verify", "--full")
	if v.code == 0 {
		t.Fatalf("verify --full of a log with mallory's release/1.0 crypto change passed:\n%s", v)
	}
	wantAll(t, "verify --full", v, "refs/heads/release/1.0", "crypto", "src/crypto/aes.c")
}
