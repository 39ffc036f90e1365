package sign_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
	"golang.org/x/crypto/ssh"
)

var keyTypes = []string{"ed25519", "ecdsa", "rsa"}

// pubOf parses the .pub file of k.
func pubOf(t testing.TB, k testutil.Key) ssh.PublicKey {
	t.Helper()
	pub, _, err := sign.ParsePublicKey([]byte(k.PublicLine(t)))
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// trust returns a lookup that trusts exactly keys.
func trust(keys ...ssh.PublicKey) func(string) (ssh.PublicKey, bool) {
	m := map[string]ssh.PublicKey{}
	for _, k := range keys {
		m[sign.Fingerprint(k)] = k
	}
	return func(fp string) (ssh.PublicKey, bool) {
		k, ok := m[fp]
		return k, ok
	}
}

func loadFile(t testing.TB, path string) sign.Signer {
	t.Helper()
	s, err := sign.LoadSigner(sign.KeySpec{File: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func sameKey(a, b ssh.PublicKey) bool {
	return a != nil && b != nil && bytes.Equal(a.Marshal(), b.Marshal())
}

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
