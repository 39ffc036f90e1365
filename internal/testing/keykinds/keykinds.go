// Package keykinds gives tests the key kinds that need hardware or a
// keyring: FIDO security keys emulated in software (SoftSK, which signs in
// exactly OpenSSH's sk format), an ssh-agent that holds them (ServeAgent),
// and a throw-away gpg home with a generated key (NewGPG). It is for tests
// only: a SoftSK's private key lives in memory, and nothing here is safe
// outside a temporary directory. It has no global state.
package keykinds

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// Flags of an sk signature, as the authenticator sets them.
const (
	FlagUserPresent  = 0x01
	FlagUserVerified = 0x04
)

// SoftSK is a software security key: an ed25519 or P-256 key that signs
// like a FIDO authenticator behind OpenSSH. Flags and Counter are what the
// next signature reports (tests change them to play a device that was not
// touched, or that verified the user).
type SoftSK struct {
	Type        string // ssh.KeyAlgoSKED25519 or ssh.KeyAlgoSKECDSA256
	Application string // "ssh:" as ssh-keygen makes it
	Flags       byte
	Counter     uint32
	// SignApplication, when set, is hashed in place of Application (a
	// device answering for another relying party).
	SignApplication string

	mu  sync.Mutex
	ed  ed25519.PrivateKey
	ec  *ecdsa.PrivateKey
	pub ssh.PublicKey
}

// NewSoftSK makes a software security key of type typ ("ed25519-sk" or
// "ecdsa-sk", as ssh-keygen -t names them) for application "ssh:", that
// reports user presence.
func NewSoftSK(t testing.TB, typ string) *SoftSK {
	t.Helper()
	k := &SoftSK{Application: "ssh:", Flags: FlagUserPresent, Counter: 1}
	var wire []byte
	switch typ {
	case "ed25519-sk":
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		k.Type, k.ed = ssh.KeyAlgoSKED25519, priv
		wire = ssh.Marshal(struct {
			Type, Key, App string
		}{k.Type, string(pub), k.Application})
	case "ecdsa-sk":
		priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		pt, err := priv.PublicKey.ECDH()
		if err != nil {
			t.Fatal(err)
		}
		k.Type, k.ec = ssh.KeyAlgoSKECDSA256, priv
		wire = ssh.Marshal(struct {
			Type, Curve, Key, App string
		}{k.Type, "nistp256", string(pt.Bytes()), k.Application})
	default:
		t.Fatalf("unknown security key type %q", typ)
	}
	pub, err := ssh.ParsePublicKey(wire)
	if err != nil {
		t.Fatal(err)
	}
	k.pub = pub
	return k
}

// PublicKey returns the sk public key.
func (k *SoftSK) PublicKey() ssh.PublicKey { return k.pub }

// AuthorizedKey is the key's line for a .pub file or allowed_signers.
func (k *SoftSK) AuthorizedKey() string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k.pub)))
}

// Sign signs data as OpenSSH's sk code does: the device signs
// sha256(application) || flags || counter (big-endian) || sha256(data);
// the SSH signature carries flags and counter after the blob.
func (k *SoftSK) Sign(_ io.Reader, data []byte) (*ssh.Signature, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	app := k.Application
	if k.SignApplication != "" {
		app = k.SignApplication
	}
	ah, mh := sha256.Sum256([]byte(app)), sha256.Sum256(data)
	var signed []byte
	signed = append(signed, ah[:]...)
	signed = append(signed, k.Flags)
	signed = binary.BigEndian.AppendUint32(signed, k.Counter)
	signed = append(signed, mh[:]...)
	rest := binary.BigEndian.AppendUint32([]byte{k.Flags}, k.Counter)
	k.Counter++
	if k.ed != nil {
		return &ssh.Signature{Format: k.Type, Blob: ed25519.Sign(k.ed, signed), Rest: rest}, nil
	}
	h := sha256.Sum256(signed)
	r, s, err := ecdsa.Sign(rand.Reader, k.ec, h[:])
	if err != nil {
		return nil, err
	}
	return &ssh.Signature{Format: k.Type, Blob: ssh.Marshal(struct{ R, S *big.Int }{r, s}), Rest: rest}, nil
}

// PrivateKeyFile writes the key's private key file in dir as ssh-keygen
// -t ed25519-sk / ecdsa-sk writes it (unencrypted OpenSSH format): the
// public key, and a private section holding only the application, flags
// and the device's key handle, since the private key stays on the device.
// A .pub file is written beside it. It returns the private file's path.
func (k *SoftSK) PrivateKeyFile(t testing.TB, dir string) string {
	t.Helper()
	pubBlob := k.pub.Marshal()
	var fields []any
	switch k.Type {
	case ssh.KeyAlgoSKED25519:
		var w struct{ Type, Key, App string }
		if err := ssh.Unmarshal(pubBlob, &w); err != nil {
			t.Fatal(err)
		}
		fields = []any{w.Key}
	default:
		var w struct{ Type, Curve, Key, App string }
		if err := ssh.Unmarshal(pubBlob, &w); err != nil {
			t.Fatal(err)
		}
		fields = []any{w.Curve, w.Key}
	}
	var priv []byte
	priv = binary.BigEndian.AppendUint32(priv, 7)
	priv = binary.BigEndian.AppendUint32(priv, 7)
	priv = append(priv, ssh.Marshal(struct{ S string }{k.Type})...)
	for _, f := range fields {
		priv = append(priv, ssh.Marshal(struct{ S string }{f.(string)})...)
	}
	priv = append(priv, ssh.Marshal(struct {
		App      string
		Flags    uint8
		Handle   string
		Reserved string
		Comment  string
	}{k.Application, FlagUserPresent, "handle", "", "soft sk"})...)
	for i := byte(1); len(priv)%8 != 0; i++ {
		priv = append(priv, i)
	}
	body := append([]byte("openssh-key-v1\x00"), ssh.Marshal(struct {
		Cipher, KDF, KDFOpts string
		N                    uint32
		Pub, Priv            []byte
	}{"none", "none", "", 1, pubBlob, priv})...)
	path := filepath.Join(dir, "id_"+strings.TrimPrefix(strings.SplitN(k.Type, "@", 2)[0], "sk-")+"_sk")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "OPENSSH PRIVATE KEY", Bytes: body}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".pub", []byte(k.AuthorizedKey()+" soft sk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// softAgent is an ssh-agent holding SoftSKs (what ssh-agent does with an
// sk key file: it asks the device, which waits for a touch).
type softAgent struct{ keys []*SoftSK }

func (a *softAgent) List() ([]*agent.Key, error) {
	out := make([]*agent.Key, 0, len(a.keys))
	for _, k := range a.keys {
		out = append(out, &agent.Key{Format: k.Type, Blob: k.pub.Marshal(), Comment: "soft sk"})
	}
	return out, nil
}

func (a *softAgent) Sign(key ssh.PublicKey, data []byte) (*ssh.Signature, error) {
	return a.SignWithFlags(key, data, 0)
}

func (a *softAgent) SignWithFlags(key ssh.PublicKey, data []byte, _ agent.SignatureFlags) (*ssh.Signature, error) {
	for _, k := range a.keys {
		if bytes.Equal(k.pub.Marshal(), key.Marshal()) {
			return k.Sign(rand.Reader, data)
		}
	}
	return nil, errors.New("key not found")
}

func (a *softAgent) Add(agent.AddedKey) error       { return errors.New("read-only agent") }
func (a *softAgent) Remove(ssh.PublicKey) error     { return errors.New("read-only agent") }
func (a *softAgent) RemoveAll() error               { return errors.New("read-only agent") }
func (a *softAgent) Lock([]byte) error              { return errors.New("read-only agent") }
func (a *softAgent) Unlock([]byte) error            { return errors.New("read-only agent") }
func (a *softAgent) Signers() ([]ssh.Signer, error) { return nil, errors.New("no signers") }
func (a *softAgent) Extension(string, []byte) ([]byte, error) {
	return nil, agent.ErrExtensionUnsupported
}

// ServeAgent serves an ssh-agent holding keys on a unix socket in dir
// until the test ends, and returns the socket path (SSH_AUTH_SOCK).
func ServeAgent(t testing.TB, dir string, keys ...*SoftSK) string {
	t.Helper()
	sock := filepath.Join(dir, "sk-agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ag := &softAgent{keys: keys}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = agent.ServeAgent(ag, c)
			}()
		}
	}()
	t.Cleanup(func() { l.Close(); wg.Wait() })
	return sock
}

// GPG is a throw-away gpg home (GNUPGHOME) with one generated key.
type GPG struct {
	Home        string // GNUPGHOME
	Fingerprint string // primary key, upper-case hex
	t           testing.TB
}

// NewGPG makes a gpg home in dir and generates a key for uid with
// algorithm algo (as gpg --quick-generate-key takes it: "ed25519",
// "rsa3072", "nistp256", ...), no passphrase, no expiry, able to sign.
func NewGPG(t testing.TB, dir, uid, algo string) *GPG {
	t.Helper()
	return NewGPGAt(t, dir, uid, algo, "")
}

// NewGPGAt is NewGPG with gpg's clock set to faked ("20190101T000000"),
// for a key that existed in the past.
func NewGPGAt(t testing.TB, dir, uid, algo, faked string) *GPG {
	t.Helper()
	return newGPG(t, dir, uid, algo, "sign,cert", faked)
}

// NewGPGUsage is NewGPG with the primary key's usage ("cert", "sign,cert").
func NewGPGUsage(t testing.TB, dir, uid, algo, usage string) *GPG {
	t.Helper()
	return newGPG(t, dir, uid, algo, usage, "")
}

func newGPG(t testing.TB, dir, uid, algo, usage, faked string) *GPG {
	t.Helper()
	if _, err := exec.LookPath("gpg"); err != nil {
		t.Skip("gpg not installed")
	}
	home := filepath.Join(dir, "gnupg")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	g := &GPG{Home: home, t: t}
	t.Cleanup(func() {
		// Stop the agent this home started (by its socket, not by name).
		_ = exec.Command("gpgconf", "--homedir", home, "--kill", "gpg-agent").Run()
	})
	args := []string{"--quick-generate-key", "--passphrase", "", uid, algo, usage, "never"}
	if faked != "" {
		args = append([]string{"--faked-system-time", faked + "!", "--ignore-time-conflict"}, args...)
	}
	g.Run(nil, args...)
	out := g.Run(nil, "--list-keys", "--with-colons", uid)
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Split(line, ":"); len(f) > 9 && f[0] == "fpr" {
			g.Fingerprint = f[9]
			break
		}
	}
	if g.Fingerprint == "" {
		t.Fatalf("gpg made no key:\n%s", out)
	}
	return g
}

// Env is the environment gpg needs (GNUPGHOME), to add to a command's.
func (g *GPG) Env() []string { return []string{"GNUPGHOME=" + g.Home} }

// Run runs gpg in batch mode in this home and returns stdout.
func (g *GPG) Run(stdin []byte, args ...string) string {
	g.t.Helper()
	out, err := g.RunErr(stdin, args...)
	if err != nil {
		g.t.Fatal(err)
	}
	return out
}

// RunErr is Run that returns the error (with stderr).
func (g *GPG) RunErr(stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("gpg", append([]string{"--homedir", g.Home, "--batch", "--no-tty", "--pinentry-mode", "loopback"}, args...)...)
	cmd.Env = append(os.Environ(), g.Env()...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("gpg %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// AddSigningSubkey adds a signing subkey of algorithm algo expiring after
// expire ("never", "1d", or an ISO date such as "2030-01-01") and returns
// its fingerprint.
func (g *GPG) AddSigningSubkey(algo, expire string) string {
	g.t.Helper()
	return g.AddSigningSubkeyAt("", algo, expire)
}

// AddSigningSubkeyAt is AddSigningSubkey with gpg's clock set to faked
// (gpg --faked-system-time, e.g. "20200101T000000"; "" for now), to make
// a subkey that has expired by now.
func (g *GPG) AddSigningSubkeyAt(faked, algo, expire string) string {
	g.t.Helper()
	before := g.Subkeys()
	args := []string{"--passphrase", "", "--quick-add-key", g.Fingerprint, algo, "sign", expire}
	if faked != "" {
		args = append([]string{"--faked-system-time", faked + "!", "--ignore-time-conflict"}, args...)
	}
	g.Run(nil, args...)
	for _, fpr := range g.Subkeys() {
		if !strings.Contains(strings.Join(before, " "), fpr) {
			return fpr
		}
	}
	g.t.Fatal("gpg added no subkey")
	return ""
}

// RevokeSubkey revokes subkey n (1 is the first) in gpg's keyring
// (gpg --edit-key, key n, revkey), as a user whose subkey leaked does.
func (g *GPG) RevokeSubkey(n int) {
	g.t.Helper()
	script := fmt.Sprintf("key %d\nrevkey\ny\n1\n\ny\nsave\n", n)
	g.Run([]byte(script), "--command-fd", "0", "--passphrase", "", "--edit-key", g.Fingerprint)
}

// Subkeys returns the fingerprints of the key's subkeys, in order.
func (g *GPG) Subkeys() []string {
	out := g.Run(nil, "--list-keys", "--with-colons", g.Fingerprint)
	var fprs []string
	sub := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, ":")
		switch {
		case f[0] == "sub":
			sub = true
		case f[0] == "pub":
			sub = false
		case f[0] == "fpr" && sub && len(f) > 9:
			fprs = append(fprs, f[9])
		}
	}
	return fprs
}

// ExportPublic returns the armored public key (gpg --export --armor).
func (g *GPG) ExportPublic() []byte {
	g.t.Helper()
	return []byte(g.Run(nil, "--export", "--armor", g.Fingerprint))
}
