package keylesstest

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"
)

// Files of a saved Sigstore: keys and certificates (PEM) and the log's
// leaf hashes (hex, one a line).
const (
	fileState = "sigstore.pem"
	fileLog   = "log"
)

// Save writes s to dir, for a program (cmd/fakegitsign) to sign with.
func (s *Sigstore) Save(t testing.TB, dir string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.save(dir); err != nil {
		t.Fatal(err)
	}
}

func (s *Sigstore) save(dir string) error {
	var b bytes.Buffer
	for _, k := range []*ecdsa.PrivateKey{s.rootKey, s.interKey, s.rekorKey} {
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return err
		}
		pem.Encode(&b, &pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	}
	b.Write(pemCert(s.root))
	b.Write(pemCert(s.inter))
	if err := os.WriteFile(filepath.Join(dir, fileState), b.Bytes(), 0o600); err != nil {
		return err
	}
	var l bytes.Buffer
	for i := range s.tree.Size() {
		fmt.Fprintf(&l, "%x\n", s.tree.LeafHash(i))
	}
	return os.WriteFile(filepath.Join(dir, fileLog), l.Bytes(), 0o600)
}

// Load reads a Sigstore that Save wrote.
func Load(dir string) (*Sigstore, error) {
	b, err := os.ReadFile(filepath.Join(dir, fileState))
	if err != nil {
		return nil, err
	}
	var blocks []*pem.Block
	for {
		var blk *pem.Block
		if blk, b = pem.Decode(b); blk == nil {
			break
		}
		blocks = append(blocks, blk)
	}
	if len(blocks) != 5 {
		return nil, fmt.Errorf("keylesstest: %s: want 5 PEM blocks", fileState)
	}
	s := &Sigstore{Name: "keylesstest.rekor - 1", tree: testonly.New(rfc6962.DefaultHasher)}
	keys := []**ecdsa.PrivateKey{&s.rootKey, &s.interKey, &s.rekorKey}
	for i, k := range keys {
		if *k, err = x509.ParseECPrivateKey(blocks[i].Bytes); err != nil {
			return nil, err
		}
	}
	if s.root, err = x509.ParseCertificate(blocks[3].Bytes); err != nil {
		return nil, err
	}
	if s.inter, err = x509.ParseCertificate(blocks[4].Bytes); err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(&s.rekorKey.PublicKey)
	if err != nil {
		return nil, err
	}
	id := sha256.Sum256(der)
	s.logID = id[:]
	f, err := os.Open(filepath.Join(dir, fileLog))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		h, err := hex.DecodeString(sc.Text())
		if err != nil {
			return nil, err
		}
		s.tree.Append(h)
	}
	return s, nil
}

// SignFile is what cmd/fakegitsign does: sign content (what git or
// internal/gitsign hands gitsign) in the Sigstore saved in dir, as c's
// identity, and save the grown log.
func SignFile(dir string, c Cert, content []byte) ([]byte, error) {
	s, err := Load(dir)
	if err != nil {
		return nil, err
	}
	sig, err := s.sign(Request{Cert: c, Namespace: "git", Data: content})
	if err != nil {
		return nil, err
	}
	der, err := sig.DER()
	if err != nil {
		return nil, err
	}
	if err := s.save(dir); err != nil {
		return nil, err
	}
	return der, nil
}

// BuildFakeGitsign builds cmd fakegitsign into dir and returns its path.
func BuildFakeGitsign(t testing.TB, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "gitsign")
	cmd := exec.Command("go", "build", "-o", out, "github.com/git-secure/git-secure/internal/testing/keylesstest/fakegitsign")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build fakegitsign: %v\n%s", err, b)
	}
	return out
}
