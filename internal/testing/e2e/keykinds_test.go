package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/keykinds"
	"github.com/git-secure/git-secure/internal/testing/keylesstest"
)

// plainGitKey is gina's key of one kind as the test uses it: Add is what
// policy add-person --key and trust revoke-key get (a public key file, or
// the key's text), Public the public key's text, Config gina's git config
// for signing with it (as for git commit -S), and Pin, when set, what
// alice must first put in the policy (a root change).
type plainGitKey struct {
	Add, Public string
	Config      [][2]string
	Pin         func(t *testing.T, alice *user, dir string)
}

// TestKeyKindsWithPlainGit: gina's key is a security key (ed25519-sk or
// ecdsa-sk, in her
// ssh-agent, as after ssh-add of an sk key file), an OpenPGP key (in her
// gpg home, git config gpg.format=openpgp as for git commit -S) or a
// keyless Sigstore identity (gitsign as gpg.x509.program, gpg.format=x509,
// the Sigstore instance pinned by alice with trust set-sigstore). Alice
// adds her with `policy add-person --key`; gina's plain git push is
// recorded with her key and accepted by the enforcing server. Alice
// delegates refs/heads/team/* to a rule file gina signs (the staged change
// goes back and forth through the server); gina then changes her rule
// file alone, and a fresh mirror verifies. Alice revokes the key from the
// next entry on: gina's next push and her next change of her rule file
// are refused, naming the key.
func TestKeyKindsWithPlainGit(t *testing.T) {
	kinds := []struct {
		name  string
		setup func(t *testing.T, g *user) plainGitKey
	}{
		{"sk-ssh-ed25519", func(t *testing.T, g *user) plainGitKey {
			k := keykinds.NewSoftSK(t, "ed25519-sk")
			sock := keykinds.ServeAgent(t, t.TempDir(), k)
			g.sb.Extra = append(g.sb.Extra, "SSH_AUTH_SOCK="+sock)
			writeFile(t, g.sb.Home, "id_ed25519_sk.pub", k.AuthorizedKey()+" gina\n")
			pub := g.path("id_ed25519_sk.pub")
			return plainGitKey{Add: pub, Public: k.AuthorizedKey(), Config: [][2]string{{"gpg.format", "ssh"}, {"user.signingkey", pub}}}
		}},
		{"sk-ecdsa", func(t *testing.T, g *user) plainGitKey {
			k := keykinds.NewSoftSK(t, "ecdsa-sk")
			sock := keykinds.ServeAgent(t, t.TempDir(), k)
			g.sb.Extra = append(g.sb.Extra, "SSH_AUTH_SOCK="+sock)
			writeFile(t, g.sb.Home, "id_ecdsa_sk.pub", k.AuthorizedKey()+" gina\n")
			pub := g.path("id_ecdsa_sk.pub")
			return plainGitKey{Add: pub, Public: k.AuthorizedKey(), Config: [][2]string{{"gpg.format", "ssh"}, {"user.signingkey", pub}}}
		}},
		{"openpgp", func(t *testing.T, g *user) plainGitKey {
			k := keykinds.NewGPG(t, t.TempDir(), "gina <gina@example.com>", "ed25519")
			g.sb.Extra = append(g.sb.Extra, "GNUPGHOME="+k.Home)
			asc := g.path("gina.asc")
			if err := os.WriteFile(asc, k.ExportPublic(), 0o600); err != nil {
				t.Fatal(err)
			}
			return plainGitKey{Add: asc, Public: string(k.ExportPublic()), Config: [][2]string{{"gpg.format", "openpgp"}, {"user.signingkey", k.Fingerprint}}}
		}},
		{"sigstore-oidc", func(t *testing.T, g *user) plainGitKey {
			s := keylesstest.New(t)
			state := t.TempDir()
			s.Save(t, state)
			g.sb.Extra = append(g.sb.Extra, "KEYLESSTEST_DIR="+state, "KEYLESSTEST_ISSUER=https://accounts.google.com", "KEYLESSTEST_SUBJECT=gina@example.com")
			id := "sigstore-oidc https://accounts.google.com gina@example.com"
			gitsign := keylesstest.BuildFakeGitsign(t, t.TempDir())
			return plainGitKey{Add: id, Public: id,
				Config: [][2]string{{"gpg.format", "x509"}, {"gpg.x509.program", gitsign}, {"user.signingkey", id}},
				Pin: func(t *testing.T, alice *user, dir string) {
					writeFile(t, alice.sb.Home, "fulcio.pem", string(s.FulcioPEM()))
					writeFile(t, alice.sb.Home, "rekor.pub", string(s.RekorPEM()))
					alice.secure(dir, "trust", "set-sigstore", "--fulcio-root", alice.path("fulcio.pem"), "--rekor-key", alice.path("rekor.pub"))
				}}
		}},
	}
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, trFile)
			repo, url := srv.newRepo("kinds.git", true)
			alice, gina := newUser(t, "alice"), newUser(t, "gina")
			key := kind.setup(t, gina)
			pub, _, err := sign.ParsePublicKey([]byte(key.Public))
			if err != nil {
				t.Fatal(err)
			}
			fp := sign.Fingerprint(pub)

			dir := alice.sb.InitRepo("alice", 1)
			alice.configure(dir)
			alice.git(dir, "remote", "add", "origin", url)
			alice.secure(dir, "init")
			if key.Pin != nil {
				key.Pin(t, alice, dir)
			}
			alice.secure(dir, "policy", "add-person", "alice", "--key", alice.key.Public)
			alice.secure(dir, "policy", "add-person", "gina", "--key", key.Add)
			alice.secure(dir, "policy", "add-rule", "main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "gina", "--threshold", "1")
			alice.secure(dir, "policy", "apply")
			if r := alice.run(dir, "git", "push", "-u", "origin", "main"); r.code != 0 {
				t.Fatalf("alice's first push:\n%s", r)
			}

			gdir := gina.path("gina")
			gina.git(gina.sb.Home, "clone", "-q", url, gdir)
			gina.git(gdir, "config", "user.name", "gina")
			gina.git(gdir, "config", "user.email", "gina@example.com")
			for _, kv := range key.Config {
				gina.git(gdir, "config", kv[0], kv[1])
			}
			gina.secure(gdir, "hooks", "install")
			if r := gina.run(gdir, "git", "fetch"); r.code != 0 {
				t.Fatalf("gina's fetch:\n%s", r)
			}

			c1 := gina.commit(gdir, "g1.txt", "from gina\n")
			if r := gina.run(gdir, "git", "push"); r.code != 0 || !strings.Contains(r.stderr, "recorded refs/heads/main as entry") {
				t.Fatalf("gina's push:\n%s", r)
			}
			if got := srv.admin.refs(repo)["refs/heads/main"]; got != c1 {
				t.Fatalf("server main = %s, want gina's %s", got, c1)
			}
			log := gina.must(gdir, "git", "secure", "rsl", "log")
			if !strings.Contains(log, fp) {
				t.Errorf("log does not name gina's key %s:\n%s", fp, log)
			}
			ginaChangesHerRuleFile(t, alice, dir, gina, gdir)
			mirror := filepath.Join(t.TempDir(), "mirror.git")
			alice.git(alice.sb.Home, "clone", "-q", "--mirror", url, mirror)
			if r := alice.run(mirror, "git", "secure", "verify"); r.code != 0 {
				t.Fatalf("verify in a fresh mirror:\n%s", r)
			}

			// Revocation, from the entry after the one that applies it.
			if r := alice.run(dir, "git", "pull", "--ff-only"); r.code != 0 {
				t.Fatalf("alice's pull:\n%s", r)
			}
			entries := alice.rslLog(dir)
			from := len(entries) + 2
			alice.secure(dir, "trust", "revoke-key", key.Add, "--from-entry", strconv.Itoa(from))
			alice.secure(dir, "policy", "apply")
			if r := alice.run(dir, "git", "push"); r.code != 0 {
				t.Fatalf("alice pushes the revocation:\n%s", r)
			}
			if r := gina.run(gdir, "git", "pull", "--ff-only"); r.code != 0 {
				t.Fatalf("gina's pull:\n%s", r)
			}
			gina.commit(gdir, "g2.txt", "gina again\n")
			r := gina.run(gdir, "git", "push")
			if r.code == 0 || !strings.Contains(r.stderr, fp) || !strings.Contains(r.stderr, "revoked") {
				t.Fatalf("push with the revoked key: want a refusal naming %s:\n%s", fp, r)
			}
			gina.git(gdir, "reset", "-q", "--hard", "HEAD~1")
			gina.secure(gdir, "policy", "add-rule", "team-late", "--file", "team", "--ref", "refs/heads/team/*", "--allow", "gina")
			r = gina.run(gdir, "git", "secure", "policy", "apply")
			if r.code == 0 || !strings.Contains(r.stdout, "rule file team: 0 of 1 signatures (threshold 1); not yet signed by: gina (key "+fp+" revoked)") {
				t.Fatalf("change of her rule file with the revoked key: want a refusal naming %s:\n%s", fp, r)
			}
		})
	}
}

// ginaChangesHerRuleFile: alice delegates refs/heads/team/* to a rule file
// that gina signs. The staged change goes to the server (alice's signature),
// to gina (hers on the new file), back to alice, who applies it; gina then
// adds a rule to her file, applies it alone and pushes it with plain git;
// her branch under team/ is accepted by the server.
func ginaChangesHerRuleFile(t *testing.T, alice *user, dir string, gina *user, gdir string) {
	t.Helper()
	if r := alice.run(dir, "git", "pull", "-q", "--ff-only"); r.code != 0 {
		t.Fatalf("alice's pull:\n%s", r)
	}
	alice.secure(dir, "policy", "delegate", "team", "--ref", "refs/heads/team/*", "--key", "gina")
	alice.secure(dir, "policy", "sign")
	if r := alice.run(dir, "git", "push"); r.code != 0 || !strings.Contains(r.stderr, "sent the staged policy") {
		t.Fatalf("alice sends the staged delegation:\n%s", r)
	}
	gina.git(gdir, "fetch", "-q")
	// (She reviews a change a fetch brought and signs it by its id.)
	gina.secure(gdir, "policy", "sign", "--file", "team", "--staged", gina.rev(gdir, "refs/secure/policy-staging")[:12])
	if r := gina.run(gdir, "git", "push", "origin", "+refs/secure/policy-staging:refs/secure/policy-staging"); r.code != 0 {
		t.Fatalf("gina sends her signature:\n%s", r)
	}
	alice.git(dir, "fetch", "-q")
	alice.secure(dir, "policy", "apply")
	if r := alice.run(dir, "git", "push"); r.code != 0 {
		t.Fatalf("alice pushes the delegation:\n%s", r)
	}

	gina.git(gdir, "pull", "-q", "--ff-only")
	gina.secure(gdir, "policy", "add-rule", "team-main", "--file", "team", "--ref", "refs/heads/team/*", "--allow", "gina")
	if r := gina.run(gdir, "git", "secure", "policy", "apply"); r.code != 0 {
		t.Fatalf("gina applies a change of her rule file alone:\n%s", r)
	}
	gina.git(gdir, "checkout", "-q", "-b", "team/x")
	gina.commit(gdir, "t.txt", "team\n")
	if r := gina.run(gdir, "git", "push", "-u", "origin", "team/x"); r.code != 0 {
		t.Fatalf("gina pushes her rule file change and team/x:\n%s", r)
	}
	gina.git(gdir, "checkout", "-q", "main")
	list := gina.secure(gdir, "policy", "list", "--file", "team")
	if !strings.Contains(list, "team-main") || !strings.Contains(list, "signed by gina") {
		t.Errorf("policy list --file team:\n%s", list)
	}
}
