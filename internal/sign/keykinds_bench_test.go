package sign

import (
	"crypto/ed25519"
	"crypto/rand"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/testing/keykinds"
)

// BenchmarkVerifyKinds measures one entry signature's verification
// (VerifyRaw, namespace git) per key kind: what each entry, approval or
// rule file signature costs a verifier.
func BenchmarkVerifyKinds(b *testing.B) {
	msg := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nRSL entry\n")
	type kind struct {
		name string
		pub  ssh.PublicKey
		sig  []byte
	}
	var kinds []kind
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	es, _ := ssh.NewSignerFromKey(ed)
	raw, err := SignRaw(es, msg, NamespaceGit)
	if err != nil {
		b.Fatal(err)
	}
	kinds = append(kinds, kind{"ssh-ed25519", es.PublicKey(), raw})
	for _, typ := range []string{"ed25519-sk", "ecdsa-sk"} {
		sk := keykinds.NewSoftSK(b, typ)
		raw, err := signSSHSig(sk, msg, NamespaceGit)
		if err != nil {
			b.Fatal(err)
		}
		pub, err := NewSKKey(sk.PublicKey(), false)
		if err != nil {
			b.Fatal(err)
		}
		kinds = append(kinds, kind{typ, pub, raw.Marshal()})
	}
	pgp, _, pgpSig := seedOpenPGPMsg(b, msg)
	kinds = append(kinds, kind{"openpgp-ed25519", pgp, pgpSig})
	for _, k := range kinds {
		fp := Fingerprint(k.pub)
		lookup := func(got string) (ssh.PublicKey, bool) { return k.pub, got == fp }
		if _, err := VerifyRaw(k.sig, msg, NamespaceGit, lookup); err != nil {
			b.Fatalf("%s: %v", k.name, err)
		}
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := VerifyRaw(k.sig, msg, NamespaceGit, lookup); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
