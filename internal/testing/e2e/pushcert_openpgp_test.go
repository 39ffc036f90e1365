package e2e

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/keykinds"
)

// TestSignedPushOpenPGP: a person whose key in the policy is an OpenPGP
// key meets a rule that requires signed pushes with git's default
// signed push (gpg.format openpgp, gpg signing the certificate): the
// server verifies the certificate in-process, stores it with the entry,
// and clones verify it. A certificate signed by another gpg key of the
// pusher's keyring (not in the policy) is refused at the server, one
// signed by a signing subkey of her key counts, a stored certificate
// altered by one byte fails verification in a clone, and once her key is
// revoked a certificate she signs no longer counts.
func TestSignedPushOpenPGP(t *testing.T) {
	t.Parallel()
	srv := startServer(t, trFile)
	path, url := srv.newRepo("signed-pgp.git", true)
	alice, gina := newUser(t, "alice"), newUser(t, "gina")
	g := keykinds.NewGPG(t, t.TempDir(), "gina <gina@example.com>", "ed25519")
	subkey := g.AddSigningSubkey("ed25519", "never")
	gina.sb.Extra = append(gina.sb.Extra, "GNUPGHOME="+g.Home)
	asc := gina.path("gina.asc")
	if err := os.WriteFile(asc, g.ExportPublic(), 0o600); err != nil {
		t.Fatal(err)
	}

	dir := alice.sb.InitRepo("alice", 1)
	alice.configure(dir)
	alice.git(dir, "remote", "add", "origin", url)
	alice.secure(dir, "init")
	alice.secure(dir, "policy", "add-person", "alice", "--key", alice.key.Public)
	alice.secure(dir, "policy", "add-person", "gina", "--key", asc)
	alice.secure(dir, "policy", "add-rule", "main-signed", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "gina", "--require-signed-push")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "-u", "origin", "main")

	gdir := gina.path("gina")
	gina.git(gina.sb.Home, "clone", "-q", url, gdir)
	for _, kv := range [][2]string{{"user.name", "gina"}, {"user.email", "gina@example.com"}, {"gpg.format", "openpgp"}, {"user.signingkey", g.Fingerprint}} {
		gina.git(gdir, "config", kv[0], kv[1])
	}
	gina.secure(gdir, "hooks", "install")
	gina.git(gdir, "fetch", "-q")

	c1 := gina.commit(gdir, "g1.txt", "from gina\n")
	r := gina.run(gdir, "git", "push", "origin", "main")
	if r.code == 0 || !containsAll(r.stderr, "refs/heads/main, rule main-signed: no valid push certificate", "push with git push --signed") {
		t.Fatalf("gina's unsigned push under the rule:\n%s", r)
	}
	r = gina.run(gdir, "git", "push", "--signed", "origin", "main")
	if r.code != 0 || !containsAll(r.stderr, "stored the push certificate for") {
		t.Fatalf("gina's git push --signed with gpg.format openpgp:\n%s", r)
	}
	store := srv.admin.rev(path, "refs/secure/pushcerts")
	last := entriesFor(srv.admin.rslLog(path), "refs/heads/main")
	if len(last) == 0 || last[len(last)-1].New != c1 || srv.admin.rev(path, "refs/heads/main") != c1 {
		t.Fatalf("no entry records main at gina's %s: %+v", c1, last)
	}
	entry := last[len(last)-1]
	f := strings.Fields(srv.admin.git(path, "ls-tree", "-r", store, entry.ID[:2]+"/"+entry.ID[2:]))
	if len(f) != 4 || f[1] != "blob" {
		t.Fatalf("the store has no certificate for entry %s: %q", entry.ID, f)
	}
	certID := f[2]
	cert := srv.admin.git(path, "cat-file", "blob", certID)
	if !containsAll(cert, "certificate version 0.1", "pusher "+g.Fingerprint+" ", "pushee "+url, "nonce ", entry.Old+" "+c1+" refs/heads/main", "-----BEGIN PGP SIGNATURE-----") {
		t.Fatalf("stored certificate:\n%s", cert)
	}
	gina.secure(gdir, "verify", "--full")

	// A certificate signed by mallory's gpg key, in gina's keyring but not
	// in the policy, for gina's entries pushed past git-remote-secure.
	g.Run(nil, "--quick-generate-key", "--passphrase", "", "mallory <mallory@example.com>", "ed25519", "sign,cert", "never")
	var mallory string
	for _, line := range strings.Split(g.Run(nil, "--list-keys", "--with-colons", "mallory@example.com"), "\n") {
		if fl := strings.Split(line, ":"); len(fl) > 9 && fl[0] == "fpr" {
			mallory = fl[9]
			break
		}
	}
	if mallory == "" {
		t.Fatal("gpg made no key for mallory")
	}
	gina.commit(gdir, "g2.txt", "gina again\n")
	gina.secure(gdir, "rsl", "record", "refs/heads/main")
	r = gina.run(gdir, "git", append(direct(url), "-c", "user.signingkey="+mallory, "push", "--no-verify", "--atomic", "--signed", url, "main", "refs/secure/rsl")...)
	if r.code == 0 || !containsAll(r.stderr, "rejected: the push certificate (git push --signed) is signed by SHA256:", "which is no key of a person of the policy") {
		t.Fatalf("a push certificate by a gpg key not in the policy:\n%s", r)
	}
	if got := srv.admin.rev(path, "refs/secure/pushcerts"); got != store {
		t.Fatalf("a refused push changed the store: %s, was %s", got, store)
	}

	// The same push signed by gina's signing subkey (gpg's "!": that
	// subkey, not the primary key) is accepted and stored.
	r = gina.run(gdir, "git", append(direct(url), "-c", "user.signingkey="+subkey+"!", "push", "--no-verify", "--atomic", "--signed", url, "main", "refs/secure/rsl")...)
	if r.code != 0 || !containsAll(r.stderr, "stored the push certificate for") {
		t.Fatalf("a push certificate by gina's signing subkey:\n%s", r)
	}
	store = srv.admin.rev(path, "refs/secure/pushcerts")
	bob := newUser(t, "bob")
	bdir := bob.path("plain")
	bob.git(bob.sb.Home, "clone", "-q", url, bdir)
	bob.git(bdir, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
	bob.secure(bdir, "verify", "--full")

	// The stored certificate with its pushee altered, filed under the
	// entry in place of the genuine one: verification in the clone
	// refuses it, naming the rule and the signature.
	idx := bob.path("forged-index")
	env := append(bob.sb.Environ(), "GIT_INDEX_FILE="+idx)
	gitEnv := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(context.Background(), "git", args...)
		cmd.Dir, cmd.Env, cmd.Stdin = bdir, env, strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	tampered := gitEnv(strings.Replace(cert, "pushee "+url, "pushee "+url+"x", 1)+"\n", "hash-object", "-w", "--stdin")
	dirName := entry.ID[:2] + "/" + entry.ID[2:] + "/"
	gitEnv("", "read-tree", store)
	gitEnv("", "update-index", "--force-remove", dirName+certID)
	gitEnv("", "update-index", "--add", "--cacheinfo", "100644,"+tampered+","+dirName+tampered)
	forged := gitEnv("forged\n", "commit-tree", gitEnv("", "write-tree"), "-p", store)
	gitEnv("", "-c", "core.hooksPath=/dev/null", "update-ref", "refs/secure/pushcerts", forged)
	r = bob.run(bdir, "git", "secure", "verify", "--full")
	if r.code != 1 || !containsAll(r.stdout+r.stderr, "refs/heads/main, rule main-signed: no valid push certificate", "signature does not verify", g.Fingerprint) {
		t.Fatalf("verify with an altered OpenPGP certificate:\n%s", r)
	}

	// gina's key revoked: a certificate she signs for alice's entry
	// after the revocation does not count, naming the revoked key.
	gina.git(gdir, "push", "-q", "--signed", "origin", "main")
	if r := alice.run(dir, "git", "pull", "-q", "--ff-only"); r.code != 0 {
		t.Fatalf("alice's pull:\n%s", r)
	}
	from := len(alice.rslLog(dir)) + 2
	alice.secure(dir, "trust", "revoke-key", asc, "--from-entry", strconv.Itoa(from))
	alice.secure(dir, "policy", "apply")
	if r := alice.run(dir, "git", "push", "--signed", "origin", "main"); r.code != 0 {
		t.Fatalf("alice pushes the revocation:\n%s", r)
	}
	alice.commit(dir, "a3.txt", "after the revocation\n")
	alice.secure(dir, "rsl", "record", "refs/heads/main")
	alice.sb.Extra = append(alice.sb.Extra, "GNUPGHOME="+g.Home)
	r = alice.run(dir, "git", append(direct(url), "-c", "gpg.format=openpgp", "-c", "user.signingkey="+g.Fingerprint, "push", "--no-verify", "--atomic", "--signed", url, "main", "refs/secure/rsl")...)
	if r.code == 0 || !containsAll(r.stderr, "rule main-signed: no valid push certificate", "a key revoked at this entry") {
		t.Fatalf("a push certificate by gina's revoked key:\n%s", r)
	}
}
