package sign_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
	"github.com/theupdateframework/go-tuf/v2/metadata"
	"golang.org/x/crypto/ssh"
)

func TestFingerprintMatchesSSHKeygen(t *testing.T) {
	s := testutil.NewSandbox(t)
	for _, typ := range keyTypes {
		k := s.NewKey("fp-"+typ, typ)
		out := s.Run(s.Home, "ssh-keygen", "-l", "-E", "sha256", "-f", k.Public)
		// "256 SHA256:xxxx comment (ED25519)"
		f := strings.Fields(out)
		if len(f) < 2 || f[1] != sign.Fingerprint(pubOf(t, k)) {
			t.Fatalf("%s: ssh-keygen says %q, we say %s", typ, out, sign.Fingerprint(pubOf(t, k)))
		}
	}
}

func TestParsePublicKey(t *testing.T) {
	s := testutil.NewSandbox(t)
	for _, typ := range keyTypes {
		k := s.NewKey("pp-"+typ, typ)
		line := k.PublicLine(t)
		pub, comment, err := sign.ParsePublicKey([]byte(line + "\n"))
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if comment != "pp-"+typ+"@example.com" {
			t.Errorf("%s: comment %q", typ, comment)
		}
		if !strings.HasPrefix(line, pub.Type()+" ") {
			t.Errorf("%s: type %s", typ, pub.Type())
		}
		// Without comment, with CRLF.
		f := strings.Fields(line)
		if _, c, err := sign.ParsePublicKey([]byte(f[0] + " " + f[1] + "\r\n")); err != nil || c != "" {
			t.Errorf("%s without comment: %q %v", typ, c, err)
		}
	}

	ed := s.NewKey("pp-x", "ed25519").PublicLine(t)
	edBlob := strings.Fields(ed)[1]
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	smallPub, _ := ssh.NewPublicKey(&small.PublicKey)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p384Pub, _ := ssh.NewPublicKey(&p384.PublicKey)
	if _, _, err := sign.ParsePublicKey(ssh.MarshalAuthorizedKey(p384Pub)); err != nil {
		t.Errorf("P-384: %v", err)
	}
	// An sk-ssh-ed25519 key: the ed25519 key plus an application string.
	edPub, _, _ := sign.ParsePublicKey([]byte(ed))
	skBlob := ssh.Marshal(struct {
		Name, Key, App string
	}{ssh.KeyAlgoSKED25519, string(edPub.(ssh.CryptoPublicKey).CryptoPublicKey().(ed25519.PublicKey)), "ssh:"})
	sk := ssh.KeyAlgoSKED25519 + " " + base64.StdEncoding.EncodeToString(skBlob) + " sk"
	if _, err := ssh.ParsePublicKey(skBlob); err != nil {
		t.Fatalf("test sk key is invalid: %v", err)
	}
	// Security keys are person keys since issue 19 (item 3).
	if pub, _, err := sign.ParsePublicKey([]byte(sk)); err != nil || pub.Type() != ssh.KeyAlgoSKED25519 {
		t.Errorf("sk ed25519: %v", err)
	}
	// ... but only for an "ssh:" application, as OpenSSH requires.
	webBlob := ssh.Marshal(struct {
		Name, Key, App string
	}{ssh.KeyAlgoSKED25519, string(edPub.(ssh.CryptoPublicKey).CryptoPublicKey().(ed25519.PublicKey)), "https://example.com"})
	webSK := ssh.KeyAlgoSKED25519 + " " + base64.StdEncoding.EncodeToString(webBlob) + " web"
	// A certificate.
	_, certKeyPriv, _ := ed25519.GenerateKey(rand.Reader)
	certKeyPub, _ := ssh.NewPublicKey(certKeyPriv.Public())
	_, caKey, _ := ed25519.GenerateKey(rand.Reader)
	caSigner, _ := ssh.NewSignerFromKey(caKey)
	cert := &ssh.Certificate{Key: certKeyPub, CertType: ssh.UserCert, ValidPrincipals: []string{"u"}, ValidBefore: ssh.CertTimeInfinity}
	if err := cert.SignCert(rand.Reader, caSigner); err != nil {
		t.Fatal(err)
	}

	unsupported := map[string]string{
		"rsa 1024":    string(ssh.MarshalAuthorizedKey(smallPub)),
		"sk web app":  webSK,
		"sk options":  "no-touch-required " + sk,
		"certificate": string(ssh.MarshalAuthorizedKey(cert)),
		"dsa":         "ssh-dss " + edBlob,
		"unknown":     "foo " + edBlob,
		"options":     `restrict,command="x" ` + ed,
	}
	for name, line := range unsupported {
		if _, _, err := sign.ParsePublicKey([]byte(line)); !errors.Is(err, sign.ErrUnsupportedKey) {
			t.Errorf("%s: err = %v, want ErrUnsupportedKey", name, err)
		}
	}
	bad := map[string]string{
		"empty":           "",
		"blank":           " \n",
		"comment line":    "# " + ed,
		"two lines":       ed + "\n" + ed,
		"comment first":   "# hi\n" + ed,
		"bad base64":      "ssh-ed25519 !!!!",
		"type mismatch":   "ssh-rsa " + edBlob,
		"sk ecdsa":        "sk-ecdsa-sha2-nistp256@openssh.com " + edBlob,
		"uv on plain key": "verify-required " + ed,
		"truncated":       "ssh-ed25519 " + edBlob[:20],
		"nul":             ed + "\x00",
		"no key":          "ssh-ed25519",
		"oversized":       ed + " " + strings.Repeat("c", sign.MaxPublicKeyLineSize),
		"authorized opts": "from=\"*\" " + ed,
	}
	for name, line := range bad {
		if _, _, err := sign.ParsePublicKey([]byte(line)); err == nil {
			t.Errorf("%s: accepted %q", name, line)
		}
	}
}

func TestTUFKeyRoundTrip(t *testing.T) {
	s := testutil.NewSandbox(t)
	for _, typ := range keyTypes {
		t.Run(typ, func(t *testing.T) {
			pub := pubOf(t, s.NewKey("tk-"+typ, typ))
			k, id, err := sign.TUFKey(pub)
			if err != nil {
				t.Fatal(err)
			}
			if len(id) != 64 {
				t.Fatalf("key id %q", id)
			}
			want := map[string]string{"ed25519": metadata.KeyTypeEd25519, "ecdsa": metadata.KeyTypeECDSA_SHA2_P256, "rsa": metadata.KeyTypeRSASSA_PSS_SHA256}[typ]
			if k.Type != want {
				t.Fatalf("tuf key type %s, want %s", k.Type, want)
			}
			back, err := sign.PublicKeyFromTUF(k)
			if err != nil {
				t.Fatal(err)
			}
			if sign.Fingerprint(back) != sign.Fingerprint(pub) || !sameKey(back, pub) {
				t.Fatal("round trip changed the key")
			}
			// Same ID from go-tuf's own conversion of the crypto key.
			k2, err := metadata.KeyFromPublicKey(pub.(ssh.CryptoPublicKey).CryptoPublicKey())
			if err != nil {
				t.Fatal(err)
			}
			if id2, _ := k2.ID(); id2 != id {
				t.Fatalf("id %s != %s", id2, id)
			}
		})
	}
	// The python-tuf "ecdsa" key type is accepted.
	pub := pubOf(t, s.NewKey("tk-compat", "ecdsa"))
	k, _, _ := sign.TUFKey(pub)
	k.Type = metadata.KeyTypeECDSA_SHA2_P256_COMPAT
	if back, err := sign.PublicKeyFromTUF(k); err != nil || !sameKey(back, pub) {
		t.Fatalf("compat ecdsa: %v", err)
	}
	// P-384 is refused: go-tuf would label it with the P-256 scheme.
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p384Pub, _ := ssh.NewPublicKey(&p384.PublicKey)
	if _, _, err := sign.TUFKey(p384Pub); !errors.Is(err, sign.ErrUnsupportedKey) {
		t.Fatalf("P-384: %v", err)
	}
	mislabeled, _ := metadata.KeyFromPublicKey(&p384.PublicKey)
	if _, err := sign.PublicKeyFromTUF(mislabeled); !errors.Is(err, sign.ErrUnsupportedKey) {
		t.Fatalf("P-384 labeled P-256: %v", err)
	}
	if _, err := sign.PublicKeyFromTUF(&metadata.Key{Type: "ed25519", Scheme: "ed25519", Value: metadata.KeyVal{PublicKey: "zz"}}); err == nil {
		t.Fatal("bad hex accepted")
	}
	if _, err := sign.PublicKeyFromTUF(&metadata.Key{Type: "ed25519", Scheme: "ed25519", Value: metadata.KeyVal{PublicKey: "abcd"}}); err == nil {
		t.Fatal("short ed25519 key accepted")
	}
	if _, err := sign.PublicKeyFromTUF(&metadata.Key{Type: "sm2"}); !errors.Is(err, sign.ErrUnsupportedKey) {
		t.Fatalf("unknown type: %v", err)
	}
	if _, err := sign.PublicKeyFromTUF(nil); err == nil {
		t.Fatal("nil accepted")
	}
}

// signRoot makes a root that trusts pub for "root", signs it through
// TUFSigner(s) and verifies it with go-tuf.
func signRoot(t *testing.T, s ssh.Signer, trusted ssh.PublicKey) error {
	t.Helper()
	ts, err := sign.TUFSigner(s)
	if err != nil {
		t.Fatal(err)
	}
	k, id, err := sign.TUFKey(trusted)
	if err != nil {
		t.Fatal(err)
	}
	root := metadata.Root(time.Now().Add(time.Hour))
	if err := root.Signed.AddKey(k, metadata.ROOT); err != nil {
		t.Fatal(err)
	}
	sig, err := root.Sign(ts)
	if err != nil {
		t.Fatal(err)
	}
	if sameKey(s.PublicKey(), trusted) && sig.KeyID != id {
		t.Fatalf("signature key id %s, TUFKey id %s", sig.KeyID, id)
	}
	// Round-trip through JSON as a real policy would.
	b, err := root.ToBytes(true)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := metadata.Root().FromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	return loaded.VerifyDelegate(metadata.ROOT, loaded)
}

func TestTUFSigner(t *testing.T) {
	s := testutil.NewSandbox(t)
	sock := s.StartAgent()
	for _, typ := range []string{"ed25519", "ecdsa"} {
		k := s.NewKey("tuf-"+typ, typ)
		other := pubOf(t, s.NewKey("tuf-other-"+typ, typ))
		pub := pubOf(t, k)
		t.Run(typ+"-file", func(t *testing.T) {
			sg := loadFile(t, k.Private)
			if err := signRoot(t, sg, pub); err != nil {
				t.Fatalf("VerifyDelegate: %v", err)
			}
			if err := signRoot(t, sg, other); err == nil {
				t.Fatal("root signed by an untrusted key verified")
			}
		})
		t.Run(typ+"-agent", func(t *testing.T) {
			s.AddToAgent(k)
			sg, err := sign.LoadSigner(sign.KeySpec{File: k.Public, AgentSocket: sock})
			if err != nil {
				t.Fatal(err)
			}
			defer sg.Close()
			if err := signRoot(t, sg, pub); err != nil {
				t.Fatalf("VerifyDelegate: %v", err)
			}
		})
	}
	t.Run("rsa", func(t *testing.T) {
		sg := loadFile(t, s.NewKey("tuf-rsa", "rsa").Private)
		_, err := sign.TUFSigner(sg)
		if !errors.Is(err, sign.ErrUnsupportedKey) || !strings.Contains(err.Error(), "ed25519 or ecdsa-p256") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("p384", func(t *testing.T) {
		priv, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		sg, _ := ssh.NewSignerFromKey(priv)
		if _, err := sign.TUFSigner(sg); !errors.Is(err, sign.ErrUnsupportedKey) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("public key", func(t *testing.T) {
		sg := loadFile(t, s.NewKey("tuf-pk", "ed25519").Private)
		ts, _ := sign.TUFSigner(sg)
		ck, err := ts.PublicKey()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ck.(ed25519.PublicKey); !ok {
			t.Fatalf("PublicKey() is %T", ck)
		}
	})
}
