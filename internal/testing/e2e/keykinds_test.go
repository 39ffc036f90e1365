package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/keykinds"
)

// TestKeyKindsWithPlainGit: gina's key is a security key (in her
// ssh-agent, as after ssh-add of an sk key file) or an OpenPGP key (in
// her gpg home, git config gpg.format=openpgp as for git commit -S).
// Alice adds her with `policy add-person --key FILE`; gina's plain git
// push is recorded with her key and accepted by the enforcing server; a
// fresh mirror verifies. Alice revokes the key from the next entry on:
// gina's next push is refused, naming the key.
func TestKeyKindsWithPlainGit(t *testing.T) {
	kinds := []struct {
		name  string
		setup func(t *testing.T, g *user) (keyFile string)
	}{
		{"sk-ssh-ed25519", func(t *testing.T, g *user) string {
			k := keykinds.NewSoftSK(t, "ed25519-sk")
			sock := keykinds.ServeAgent(t, t.TempDir(), k)
			g.sb.Extra = append(g.sb.Extra, "SSH_AUTH_SOCK="+sock)
			pub := g.path("id_ed25519_sk.pub")
			writeFile(t, g.sb.Home, "id_ed25519_sk.pub", k.AuthorizedKey()+" gina\n")
			return pub
		}},
		{"openpgp", func(t *testing.T, g *user) string {
			k := keykinds.NewGPG(t, t.TempDir(), "gina <gina@example.com>", "ed25519")
			g.sb.Extra = append(g.sb.Extra, "GNUPGHOME="+k.Home)
			asc := g.path("gina.asc")
			if err := os.WriteFile(asc, k.ExportPublic(), 0o600); err != nil {
				t.Fatal(err)
			}
			return "openpgp:" + k.Fingerprint + "\n" + asc
		}},
	}
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, trFile)
			repo, url := srv.newRepo("kinds.git", true)
			alice, gina := newUser(t, "alice"), newUser(t, "gina")
			spec := kind.setup(t, gina)
			signingKey, pubFile := spec, spec
			if a, b, ok := strings.Cut(spec, "\n"); ok {
				signingKey, pubFile = a, b
			}

			dir := alice.sb.InitRepo("alice", 1)
			alice.configure(dir)
			alice.git(dir, "remote", "add", "origin", url)
			alice.secure(dir, "init")
			alice.secure(dir, "policy", "add-person", "alice", "--key", alice.key.Public)
			alice.secure(dir, "policy", "add-person", "gina", "--key", pubFile)
			alice.secure(dir, "policy", "add-rule", "main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "gina", "--threshold", "1")
			alice.secure(dir, "policy", "apply")
			if r := alice.run(dir, "git", "push", "-u", "origin", "main"); r.code != 0 {
				t.Fatalf("alice's first push:\n%s", r)
			}

			gdir := gina.path("gina")
			gina.git(gina.sb.Home, "clone", "-q", url, gdir)
			gina.git(gdir, "config", "user.name", "gina")
			gina.git(gdir, "config", "user.email", "gina@example.com")
			if fpr, ok := strings.CutPrefix(signingKey, "openpgp:"); ok {
				gina.git(gdir, "config", "gpg.format", "openpgp")
				gina.git(gdir, "config", "user.signingkey", fpr)
			} else {
				gina.git(gdir, "config", "gpg.format", "ssh")
				gina.git(gdir, "config", "user.signingkey", signingKey)
			}
			gina.secure(gdir, "hooks", "install")
			if r := gina.run(gdir, "git", "fetch"); r.code != 0 {
				t.Fatalf("gina's fetch:\n%s", r)
			}
			data, err := os.ReadFile(strings.TrimSpace(pubFile))
			if err != nil {
				t.Fatal(err)
			}
			pub, _, err := sign.ParsePublicKey(data)
			if err != nil {
				t.Fatal(err)
			}
			fp := sign.Fingerprint(pub)

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
			alice.secure(dir, "trust", "revoke-key", pubFile, "--from-entry", strconv.Itoa(from))
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
		})
	}
}
