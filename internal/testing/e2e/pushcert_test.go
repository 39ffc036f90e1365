package e2e

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// signedPushProject sets up alice's repository with a rule on main that
// requires signed pushes, on a fresh enforcing server, and returns the
// server, the repository's path and URL, and alice's clone, pushed once
// (unsigned: the rule came after main's entry).
func signedPushProject(t *testing.T, tr transport) (*server, string, string, *user, string) {
	t.Helper()
	srv := startServer(t, tr)
	path, url := srv.newRepo("signed.git", true)
	alice := newUser(t, "alice")
	dir := alice.sb.InitRepo("alice", 2)
	alice.configure(dir)
	alice.git(dir, "remote", "add", "origin", url)
	alice.secure(dir, "init")
	alice.secure(dir, "policy", "add-person", "alice", "--key", alice.key.Public)
	alice.secure(dir, "policy", "add-rule", "main-signed", "--ref", "refs/heads/main", "--allow", "alice", "--require-signed-push")
	alice.secure(dir, "policy", "apply")
	// main's first entry was recorded under the policy before the rule:
	// it needs no certificate.
	alice.git(dir, "push", "-q", "-u", "origin", "main")
	return srv, path, url, alice, dir
}

// TestSignedPushRecorded: over each transport that carries push
// certificates, an unsigned push of main is refused by the rule that
// requires signed pushes, with the command to use; git push --signed
// (through git-remote-secure, SSH signing key) is accepted, the server
// stores the certificate with the entries, and a fresh clone (git secure
// clone, and a plain git clone with the metadata fetched by hand)
// verifies it.
func TestSignedPushRecorded(t *testing.T) {
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			t.Parallel()
			srv, path, url, alice, dir := signedPushProject(t, tr)
			if seed := srv.admin.run(path, "git", "config", "receive.certNonceSeed"); seed.code != 0 || len(seed.stdout) != 64 {
				t.Fatalf("server install did not set a nonce seed:\n%s", seed)
			}

			c1 := alice.commit(dir, "one.txt", "1\n")
			r := alice.run(dir, "git", "push", "origin", "main")
			if r.code == 0 {
				t.Fatalf("an unsigned push of main was accepted under a rule that requires signed pushes:\n%s", r)
			}
			if !containsAll(r.stderr, "refs/heads/main, rule main-signed: no valid push certificate", "holds no push certificate for this entry", "push with git push --signed", "git config gpg.format ssh") {
				t.Fatalf("the refusal does not name the ref, the rule and what to do:\n%s", r)
			}
			if got := srv.admin.rev(path, "refs/heads/main"); got == c1 {
				t.Fatalf("the refused push moved main on the server")
			}

			r = alice.run(dir, "git", "push", "--signed", "origin", "main")
			if r.code != 0 {
				t.Fatalf("git push --signed:\n%s", r)
			}
			if !containsAll(r.stderr, "stored the push certificate for") || strings.Contains(r.stderr, "allowedSignersFile") {
				t.Errorf("the server did not say it stored the certificate, or git complained about its own check:\n%s", r)
			}
			store := srv.admin.rev(path, "refs/secure/pushcerts")
			main := srv.admin.rev(path, "refs/heads/main")
			entries := srv.admin.rslLog(path)
			last := entriesFor(entries, "refs/heads/main")
			if len(last) == 0 || last[len(last)-1].New != main || main != c1 {
				t.Fatalf("no entry records main at %s: %+v", main, entries)
			}
			// The certificate is stored for the entry; it names alice's
			// key, the server's URL, the nonce and exactly main's update.
			id := last[len(last)-1].ID
			listing := srv.admin.git(path, "ls-tree", "-r", store, id[:2]+"/"+id[2:])
			f := strings.Fields(listing)
			if len(f) != 4 || f[1] != "blob" {
				t.Fatalf("the store has no certificate for entry %s:\n%s", id, listing)
			}
			cert := srv.admin.git(path, "cat-file", "blob", f[2])
			fp := alice.must(dir, "ssh-keygen", "-l", "-E", "sha256", "-f", alice.key.Public)
			if !containsAll(cert, "certificate version 0.1", "pusher "+strings.Fields(fp)[1], "pushee "+url, "nonce ", last[len(last)-1].Old+" "+c1+" refs/heads/main", "-----BEGIN SSH SIGNATURE-----") {
				t.Fatalf("stored certificate:\n%s", cert)
			}

			// The pusher's clone has the certificate of its push at once
			// and verifies.
			if got := alice.refValue(dir, "refs/secure/pushcerts"); got != store {
				t.Fatalf("after the signed push, alice's refs/secure/pushcerts = %q, want the server's %s", got, store)
			}
			alice.secure(dir, "verify", "--full")

			// A fresh clone through git-remote-secure takes the store and
			// verifies the certificate.
			bob := newUser(t, "bob")
			bdir := bob.path("bob")
			bob.git(bob.sb.Home, "secure", "clone", url, bdir)
			if got := bob.refValue(bdir, "refs/secure/pushcerts"); got != store {
				t.Fatalf("git secure clone: refs/secure/pushcerts = %q, want the server's %s", got, store)
			}
			bob.secure(bdir, "verify", "--full")

			// A plain clone with the metadata fetched by hand verifies the
			// same way.
			pdir := bob.path("plain")
			bob.git(bob.sb.Home, "clone", "-q", url, pdir)
			bob.git(pdir, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
			bob.secure(pdir, "verify", "--full")
		})
	}
}

// TestSignedPushAttacks: what must not count as a signed push. On the
// server: a push signed by a key that is no person's of the policy, a
// certificate whose nonce git found bad, a certificate of an earlier push
// handed in for another update. In a clone: a store in which the
// certificate of one push is filed under the entry of another.
func TestSignedPushAttacks(t *testing.T) {
	t.Parallel()
	srv, path, url, alice, dir := signedPushProject(t, trFile)
	c0 := alice.rev(dir, "main")
	c1 := alice.commit(dir, "one.txt", "1\n")
	alice.git(dir, "push", "-q", "--signed", "origin", "main")
	firstStore := srv.admin.rev(path, "refs/secure/pushcerts")
	firstCert := strings.Fields(srv.admin.git(path, "ls-tree", "-r", firstStore))[2]

	// A push signed with mallory's key (not in the policy): alice's
	// entries, pushed past git-remote-secure with a certificate signed by
	// another key.
	c2 := alice.commit(dir, "two.txt", "2\n")
	oldLog := srv.admin.rev(path, "refs/secure/rsl")
	alice.secure(dir, "rsl", "record", "refs/heads/main")
	rslTip := alice.rev(dir, "refs/secure/rsl")
	if rslTip == oldLog {
		t.Fatal("git secure rsl record wrote no entry")
	}
	mallory := newUser(t, "mallory")
	r := alice.run(dir, "git", append(direct(url), "-c", "user.signingkey="+mallory.key.Private, "push", "--no-verify", "--atomic", "--signed", url, "main", "refs/secure/rsl")...)
	if r.code == 0 || !containsAll(r.stderr, "rejected: the push certificate (git push --signed) is signed by SHA256:", "which is no key of a person of the policy") {
		t.Fatalf("a push certificate by a key not in the policy:\n%s", r)
	}

	// The hook as git runs it, with a real certificate (the first push's)
	// and the update alice has pending.
	oldMain := srv.admin.rev(path, "refs/heads/main")
	alice.must(dir, "git", append(direct(url), "push", "-q", "--no-verify", url, "main:refs/heads/stage", rslTip+":refs/heads/stage-log")...)
	stdin := oldMain + " " + c2 + " refs/heads/main\n" + oldLog + " " + rslTip + " refs/secure/rsl\n"
	for _, tc := range []struct {
		status string
		want   []string
	}{
		{"BAD", []string{`nonce status "BAD"`, "not issued by this server for this push (a replayed or forged certificate)", "push again with git push --signed"}},
		{"SLOP", []string{`nonce status "SLOP"`, "older than receive.certNonceSlop allows"}},
		{"OK", []string{"it does not state the push's update of refs/heads/main"}},
	} {
		out, code := runHook(t, srv, path, stdin, "GIT_PUSH_CERT="+firstCert, "GIT_PUSH_CERT_NONCE_STATUS="+tc.status)
		if code == 0 || !containsAll(out, tc.want...) {
			t.Errorf("pre-receive with the first push's certificate, nonce status %s: exit %d\n%s", tc.status, code, out)
		}
	}
	if got := srv.admin.rev(path, "refs/secure/pushcerts"); got != firstStore {
		t.Fatalf("a refused push changed the store: %s, was %s", got, firstStore)
	}

	// The genuine signed push goes through (signed because the clone's
	// configuration says so: git hands git-remote-secure "if-asked").
	alice.git(dir, "config", "push.gpgSign", "if-asked")
	alice.git(dir, "push", "-q", "origin", "main")
	entries := entriesFor(srv.admin.rslLog(path), "refs/heads/main")
	second := entries[len(entries)-1]
	if second.New != c2 {
		t.Fatalf("last main entry %+v, want %s", second, c2)
	}

	// A clone whose store files the first certificate under the second
	// entry (the second push's certificate gone): verification refuses it,
	// naming the entry, the rule and what the certificate states.
	bob := newUser(t, "bob")
	bdir := bob.path("plain")
	bob.git(bob.sb.Home, "clone", "-q", url, bdir)
	bob.git(bdir, "fetch", "-q", "origin", "+refs/secure/*:refs/secure/*")
	bob.secure(bdir, "verify", "--full")
	idx := filepath.Join(bob.sb.Home, "forged-index")
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
	gitEnv("", "read-tree", firstStore)
	gitEnv("", "update-index", "--add", "--cacheinfo", "100644,"+firstCert+","+second.ID[:2]+"/"+second.ID[2:]+"/"+firstCert)
	tree := gitEnv("", "write-tree")
	forged := gitEnv("forged\n", "commit-tree", tree, "-p", firstStore)
	gitEnv("", "-c", "core.hooksPath=/dev/null", "update-ref", "refs/secure/pushcerts", forged)
	r = bob.run(bdir, "git", "secure", "verify", "--full")
	if r.code != 1 || !containsAll(r.stdout+r.stderr, "refs/heads/main, rule main-signed: no valid push certificate",
		"certificate by alice: push certificate does not match the entry: it states refs/heads/main "+c0[:12]+".."+c1[:12],
		"the entry "+second.Old[:12]+".."+second.New[:12]) {
		t.Fatalf("verify with a certificate replayed for another entry:\n%s", r)
	}

	// A store that lost every certificate for the entry fails the same
	// rule, saying none is stored.
	gitEnv("", "-c", "core.hooksPath=/dev/null", "update-ref", "refs/secure/pushcerts", firstStore)
	r = bob.run(bdir, "git", "secure", "verify", "--full")
	if r.code != 1 || !containsAll(r.stdout+r.stderr, "rule main-signed: no valid push certificate", "holds no push certificate for this entry") {
		t.Fatalf("verify without the second certificate:\n%s", r)
	}
}

// runHook runs the server's pre-receive hook as git does (in the bare
// repository, GIT_DIR=., the ref lines on stdin) with the extra
// environment, and returns its output and exit code.
func runHook(t *testing.T, srv *server, path, stdin string, env ...string) (string, int) {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), filepath.Join(path, "hooks", "pre-receive"))
	cmd.Dir = path
	cmd.Env = append(append(srv.admin.sb.Environ(), "GIT_DIR=."), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), 0
}
