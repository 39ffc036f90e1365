package testutil

import (
	"crypto/dsa" //nolint:staticcheck // DSA keys are made only to test that they are refused
	"crypto/rand"
	"encoding/asn1"
	"encoding/base64"
	"encoding/binary"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/ssh"
)

// DSAKey is a DSA key pair on disk, in the formats ssh-keygen has written
// them: Private in OpenSSH's own format (ssh-keygen -t dsa since OpenSSH
// 7.8), PEM in the older "DSA PRIVATE KEY" format, Public as an
// authorized_keys line.
type DSAKey struct {
	Private, PEM, Public string
	Key                  *dsa.PrivateKey
}

// NewDSAKey makes a 1024-bit DSA key named name with Go's crypto/dsa:
// ssh-keygen may be built without DSA (OpenSSH 9.8 and later) and
// golang.org/x/crypto/ssh no longer writes DSA keys, so the files are
// encoded here, field by field, as OpenSSH does.
func (s *Sandbox) NewDSAKey(name string) DSAKey {
	s.T.Helper()
	var k dsa.PrivateKey
	if err := dsa.GenerateParameters(&k.Parameters, rand.Reader, dsa.L1024N160); err != nil {
		s.T.Fatal(err)
	}
	if err := dsa.GenerateKey(&k, rand.Reader); err != nil {
		s.T.Fatal(err)
	}
	pubBlob := ssh.Marshal(struct {
		Name       string
		P, Q, G, Y *big.Int
	}{ssh.InsecureKeyAlgoDSA, k.P, k.Q, k.G, k.Y})
	comment := name + "@example.com"

	var check [4]byte
	if _, err := rand.Read(check[:]); err != nil {
		s.T.Fatal(err)
	}
	c := binary.BigEndian.Uint32(check[:])
	priv := ssh.Marshal(struct {
		Check1, Check2 uint32
		Name           string
		P, Q, G, Y, X  *big.Int
		Comment        string
	}{c, c, ssh.InsecureKeyAlgoDSA, k.P, k.Q, k.G, k.Y, k.X, comment})
	for i := byte(1); len(priv)%8 != 0; i++ {
		priv = append(priv, i)
	}
	body := append([]byte("openssh-key-v1\x00"), ssh.Marshal(struct {
		Cipher, KDF, KDFOptions string
		N                       uint32
		Public, Private         string
	}{"none", "none", "", 1, string(pubBlob), string(priv)})...)

	der, err := asn1.Marshal(struct {
		Version       int
		P, Q, G, Y, X *big.Int
	}{0, k.P, k.Q, k.G, k.Y, k.X})
	if err != nil {
		s.T.Fatal(err)
	}

	dir := filepath.Join(s.Home, ".keys")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.T.Fatal(err)
	}
	key := DSAKey{Private: filepath.Join(dir, name), PEM: filepath.Join(dir, name+".pem"), Public: filepath.Join(dir, name+".pub"), Key: &k}
	write(s.T, key.Private, pem.EncodeToMemory(&pem.Block{Type: "OPENSSH PRIVATE KEY", Bytes: body}))
	write(s.T, key.PEM, pem.EncodeToMemory(&pem.Block{Type: "DSA PRIVATE KEY", Bytes: der}))
	write(s.T, key.Public, []byte(ssh.InsecureKeyAlgoDSA+" "+base64.StdEncoding.EncodeToString(pubBlob)+" "+comment+"\n"))
	return key
}

func write(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
