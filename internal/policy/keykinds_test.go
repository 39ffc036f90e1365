package policy

import (
	"strings"
	"testing"

	"github.com/theupdateframework/go-tuf/v2/metadata"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/keykinds"
)

// TestKeyKindsInPolicy: security keys (with and without verify-required)
// and OpenPGP keys are person keys that survive encoding (canonical bytes,
// same fingerprints and options) and are found by fingerprint; none of
// them may be a root or rules key, whether added by an edit or written
// into root.json by hand.
func TestKeyKindsInPolicy(t *testing.T) {
	f := newFixture(t)
	sk := keykinds.NewSoftSK(t, "ecdsa-sk")
	skPub, _, err := sign.ParsePublicKey([]byte("verify-required " + sk.AuthorizedKey()))
	must(t, err)
	g := keykinds.NewGPG(t, t.TempDir(), "Gina <gina@example.com>", "ed25519")
	pgpPub, _, err := sign.ParsePublicKey(g.ExportPublic())
	must(t, err)
	p, err := f.p.Clone()
	must(t, err)
	must(t, p.AddPerson(f.p, "erin", []ssh.PublicKey{skPub}, t0))
	must(t, p.AddPerson(f.p, "gina", []ssh.PublicKey{pgpPub}, t0))
	root, targets := encode(t, p)
	again, err := Parse(root, targets)
	must(t, err)
	r2, t2 := encode(t, again)
	if string(r2) != string(root) || string(t2) != string(targets) {
		t.Fatal("policy with sk and OpenPGP keys does not re-encode to the same bytes")
	}
	for name, pub := range map[string]ssh.PublicKey{"erin": skPub, "gina": pgpPub} {
		fp := sign.Fingerprint(pub)
		person, ok := again.PersonByFingerprint(fp)
		if !ok || person.Name != name {
			t.Fatalf("%s's key %s not found", name, fp)
		}
		k, _ := again.LookupPersonKey(fp)
		if sign.DescribeKey(k) != sign.DescribeKey(pub) {
			t.Errorf("%s's key decodes as %q, was %q", name, sign.DescribeKey(k), sign.DescribeKey(pub))
		}
	}
	if !strings.Contains(string(targets), `"keytype":"openpgp"`) || !strings.Contains(string(targets), `"scheme":"sshsig-sk-verify-required"`) {
		t.Errorf("targets.json lacks the key kinds:\n%s", targets)
	}

	for _, pub := range []ssh.PublicKey{skPub, pgpPub} {
		err := p.AddRoleKey(f.p, metadata.TARGETS, pub, t0)
		if err == nil || !strings.Contains(err.Error(), "root, rules and timestamp keys must be ed25519 or ecdsa-sha2-nistp256 SSH keys") {
			t.Errorf("%s as a rules key: %v", pub.Type(), err)
		}
		if _, err := New(pub, t0); err == nil {
			t.Errorf("%s as the first root key accepted", pub.Type())
		}
	}
	// Written into root.json by hand: malformed.
	hand, err := f.p.Clone()
	must(t, err)
	tk, id, err := sign.TUFKey(skPub)
	must(t, err)
	hand.Root.Signed.Keys[id] = tk
	hand.Root.Signed.Roles[metadata.TARGETS].KeyIDs = append(hand.Root.Signed.Roles[metadata.TARGETS].KeyIDs, id)
	hr, ht := encode(t, hand)
	if _, err := Parse(hr, ht); err == nil || !strings.Contains(err.Error(), "root key "+id) {
		t.Errorf("root.json with a security key: %v", err)
	}
}
