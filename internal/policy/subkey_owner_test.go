package policy

import (
	"encoding/hex"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/keykinds"
)

// TestOpenPGPSubkeyOwner: a signing subkey of a person's OpenPGP key
// names that key (for gpg-made push certificates, which name only the
// subkey); a primary key, an unknown fingerprint and a subkey after a
// re-parse of the policy behave the same.
func TestOpenPGPSubkeyOwner(t *testing.T) {
	f := newFixture(t)
	g := keykinds.NewGPG(t, t.TempDir(), "Gina <gina@example.com>", "ed25519")
	sub := g.AddSigningSubkey("ed25519", "never")
	pub, _, err := sign.ParsePublicKey(g.ExportPublic())
	must(t, err)
	p, err := f.p.Clone()
	must(t, err)
	must(t, p.AddPerson(f.p, "gina", []ssh.PublicKey{pub}, t0))
	root, targets := encode(t, p)
	again, err := Parse(root, targets)
	must(t, err)
	fpr := func(s string) []byte {
		b, err := hex.DecodeString(s)
		must(t, err)
		return b
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"signing subkey", fpr(sub), sign.Fingerprint(pub)},
		{"primary key is no subkey", fpr(g.Fingerprint), ""},
		{"unknown", make([]byte, 20), ""},
	} {
		got, ok := again.OpenPGPSubkeyOwner(tc.in)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: OpenPGPSubkeyOwner = %q, %v; want %q", tc.name, got, ok, tc.want)
		}
	}
}
