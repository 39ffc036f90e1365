package sign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// maxKeyFileSize bounds a key file read by LoadSigner.
const maxKeyFileSize = 256 << 10

// KeySpec says where the signing key comes from, in this precedence: File
// (from --key), then SigningKey (git config user.signingkey, given only when
// gpg.format=ssh), else LoadSigner fails with ErrNoKey.
//
// File is a path to a private or public key file. SigningKey is either such
// a path or a literal public key, "key::ssh-ed25519 AAAA..." or bare
// "ssh-ed25519 AAAA...", whose private half must be in ssh-agent.
// AgentSocket is $SSH_AUTH_SOCK ("" means no agent). A "~/" prefix of any
// path is expanded with Home.
type KeySpec struct{ File, SigningKey, AgentSocket, Home string }

// Signer is a loaded signing key. It is an ssh.Signer; the Signers returned
// by LoadSigner also implement ssh.AlgorithmSigner and refuse SHA-1
// ("ssh-rsa") signatures. Close releases the agent connection, if any.
type Signer interface {
	PublicKey() ssh.PublicKey
	Sign(rand io.Reader, data []byte) (*ssh.Signature, error)
	Close() error
}

// LoadSigner loads the signing key described by spec.
//
// A private key file must not be passphrase-protected (this package never
// asks for passphrases); for an encrypted key file whose public half is known
// (from the file itself or "<File>.pub") the private key is used from
// ssh-agent if it is loaded there, and otherwise the error (wrapping
// ErrKeyUnavailable) tells the user to add it to ssh-agent and pass the .pub
// file. For a public key file or literal, the private key is the ssh-agent
// key with the same fingerprint (never simply the first agent key); if it is
// not loaded the error names the fingerprint and wraps ErrKeyUnavailable.
func LoadSigner(spec KeySpec) (Signer, error) {
	if spec.File != "" {
		return loadPath(spec, spec.File)
	}
	if v := strings.TrimSpace(spec.SigningKey); v != "" {
		if lit, ok := literalKey(v); ok {
			pub, _, err := ParsePublicKey([]byte(lit))
			if err != nil {
				return nil, fmt.Errorf("sign: user.signingkey: %w", err)
			}
			return agentSignerFor(spec, pub, "user.signingkey")
		}
		return loadPath(spec, v)
	}
	return nil, fmt.Errorf("%w: pass --key <ssh key file> or set git config user.signingkey (with gpg.format=ssh)", ErrNoKey)
}

// literalKey reports whether a user.signingkey value is a public key rather
// than a path, as git decides it ("key::" prefix or a bare "ssh-..." key),
// extended to bare ECDSA keys.
func literalKey(v string) (string, bool) {
	if rest, ok := strings.CutPrefix(v, "key::"); ok {
		return rest, true
	}
	typ, _, ok := strings.Cut(v, " ")
	if ok && (strings.HasPrefix(typ, "ssh-") || strings.HasPrefix(typ, "ecdsa-sha2-") || strings.HasPrefix(typ, "sk-")) {
		return v, true
	}
	return "", false
}

func expandHome(p, home string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home == "" {
			return "", fmt.Errorf("sign: cannot expand %q: home directory unknown", p)
		}
		return filepath.Join(home, strings.TrimPrefix(strings.TrimPrefix(p, "~"), "/")), nil
	}
	return p, nil
}

func readKeyFile(path string) ([]byte, error) {
	// Stat first so that a FIFO or device is refused before open can block.
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxKeyFileSize {
		return nil, fmt.Errorf("file larger than %d bytes", maxKeyFileSize)
	}
	return b, nil
}

func loadPath(spec KeySpec, p string) (Signer, error) {
	path, err := expandHome(p, spec.Home)
	if err != nil {
		return nil, err
	}
	b, err := readKeyFile(path)
	if err != nil {
		return nil, fmt.Errorf("sign: load key %s: %w", path, err)
	}
	if bytes.Contains(b, []byte("-----BEGIN ")) && bytes.Contains(b, []byte("PRIVATE KEY-----")) {
		s, err := ssh.ParsePrivateKey(b)
		var pme *ssh.PassphraseMissingError
		if errors.As(err, &pme) {
			return encryptedKey(spec, path, pme.PublicKey)
		}
		if err != nil && isSKType(privateKeyType(b)) {
			return securityKeyFile(spec, path, b)
		}
		if err != nil {
			if privateKeyType(b) == ssh.InsecureKeyAlgoDSA {
				err = errDSA // the ssh package only says "unhandled key type"
			}
			return nil, fmt.Errorf("sign: load key %s: %w", path, err)
		}
		pub := s.PublicKey()
		if err := checkKey(pub); err != nil {
			return nil, fmt.Errorf("sign: load key %s: %w", path, err)
		}
		as, ok := s.(ssh.AlgorithmSigner)
		if !ok {
			return nil, fmt.Errorf("sign: load key %s: %w: signer cannot choose a signature algorithm", path, ErrUnsupportedKey)
		}
		return &keySigner{s: as, pub: pub, ed: rawEd25519(b, pub)}, nil
	}
	pub, _, err := ParsePublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("sign: load key %s: %w", path, err)
	}
	s, err := agentSignerFor(spec, pub, path)
	if err == nil || !errors.Is(err, ErrKeyUnavailable) {
		return s, err
	}
	// As ssh-keygen -Y sign (and so git commit -S) does: a public key
	// file whose key the agent does not hold is signed with the private
	// key file beside it, the same path without ".pub".
	if priv, ok := strings.CutSuffix(path, ".pub"); ok {
		if s, perr := besideKey(spec, priv, pub); s != nil || perr != nil {
			return s, perr
		}
	}
	return nil, fmt.Errorf("%w; or set user.signingkey (or --key) to the private key file", err)
}

// besideKey loads the private key file priv when it holds pub's private
// half. It returns nil and no error when there is no such file or it holds
// another key, so that the caller reports the missing agent key.
func besideKey(spec KeySpec, priv string, pub ssh.PublicKey) (Signer, error) {
	b, err := readKeyFile(priv)
	if err != nil || !bytes.Contains(b, []byte("PRIVATE KEY-----")) {
		return nil, nil
	}
	s, err := ssh.ParsePrivateKey(b)
	var pme *ssh.PassphraseMissingError
	if errors.As(err, &pme) {
		if pme.PublicKey != nil && !bytes.Equal(pme.PublicKey.Marshal(), pub.Marshal()) {
			return nil, nil
		}
		return encryptedKey(spec, priv, pub)
	}
	if err != nil || !bytes.Equal(s.PublicKey().Marshal(), pub.Marshal()) {
		return nil, nil
	}
	as, ok := s.(ssh.AlgorithmSigner)
	if !ok {
		return nil, fmt.Errorf("sign: load key %s: %w: signer cannot choose a signature algorithm", priv, ErrUnsupportedKey)
	}
	return &keySigner{s: as, pub: pub, ed: rawEd25519(b, pub)}, nil
}

// encryptedKey handles a passphrase-protected private key file at path whose
// public key, if known, is pub.
func encryptedKey(spec KeySpec, path string, pub ssh.PublicKey) (Signer, error) {
	if pub == nil {
		if b, err := readKeyFile(path + ".pub"); err == nil {
			pub, _, _ = ParsePublicKey(b)
		}
	}
	if pub != nil && spec.AgentSocket != "" {
		if s, err := agentSignerFor(spec, pub, path); err == nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("%w: key %s is passphrase-protected and git-secure does not ask for passphrases; add it to ssh-agent (ssh-add %s) and pass the public key file (%s.pub) instead", ErrKeyUnavailable, path, path, path)
}

// agentSignerFor connects to ssh-agent and returns a Signer for the agent
// key equal to pub. source names where pub came from, for errors.
func agentSignerFor(spec KeySpec, pub ssh.PublicKey, source string) (Signer, error) {
	fp := Fingerprint(pub)
	if err := checkKey(pub); err != nil {
		return nil, fmt.Errorf("sign: key %s (%s): %w", fp, source, err)
	}
	if spec.AgentSocket == "" {
		return nil, fmt.Errorf("%w: the private key of %s (%s) must be in ssh-agent, but there is no agent (SSH_AUTH_SOCK is not set): start one and add the key (eval \"$(ssh-agent)\" && ssh-add)", ErrKeyUnavailable, fp, source)
	}
	sock, err := expandHome(spec.AgentSocket, spec.Home)
	if err != nil {
		return nil, err
	}
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("%w: key %s (%s): cannot connect to ssh-agent at %s: %w", ErrKeyUnavailable, fp, source, sock, err)
	}
	client := agent.NewClient(conn)
	keys, err := client.List()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("sign: key %s (%s): list ssh-agent keys: %w", fp, source, err)
	}
	want := pub.Marshal()
	for _, k := range keys {
		if bytes.Equal(k.Blob, want) {
			return &agentSigner{client: client, conn: conn, pub: pub}, nil
		}
	}
	conn.Close()
	return nil, fmt.Errorf("%w: key %s (%s) is not loaded in ssh-agent; add its private key with ssh-add", ErrKeyUnavailable, fp, source)
}

// signatureAlgorithm picks the SSH signature algorithm for pub: RSA keys
// default to rsa-sha2-512 and may use rsa-sha2-256, never SHA-1 ssh-rsa;
// other keys use their only algorithm.
func signatureAlgorithm(pub ssh.PublicKey, algo string) (string, error) {
	if pub.Type() == ssh.KeyAlgoRSA {
		switch algo {
		case "", ssh.KeyAlgoRSASHA512:
			return ssh.KeyAlgoRSASHA512, nil
		case ssh.KeyAlgoRSASHA256:
			return ssh.KeyAlgoRSASHA256, nil
		}
		return "", fmt.Errorf("sign: %w: signature algorithm %q for an RSA key (want rsa-sha2-512)", ErrUnsupportedKey, algo)
	}
	if algo == "" || algo == pub.Type() {
		return pub.Type(), nil
	}
	return "", fmt.Errorf("sign: %w: signature algorithm %q for a %s key", ErrUnsupportedKey, algo, pub.Type())
}

// keySigner signs with a private key loaded from a file.
type keySigner struct {
	s   ssh.AlgorithmSigner
	pub ssh.PublicKey
	// ed is the private key of an Ed25519 key file, signed with by
	// signEd25519 (the ssh package's signature, without crypto/ed25519's
	// start-up cost); nil for other keys.
	ed ed25519.PrivateKey
}

func (k *keySigner) PublicKey() ssh.PublicKey { return k.pub }

func (k *keySigner) Sign(r io.Reader, data []byte) (*ssh.Signature, error) {
	return k.SignWithAlgorithm(r, data, "")
}

func (k *keySigner) SignWithAlgorithm(r io.Reader, data []byte, algo string) (*ssh.Signature, error) {
	algo, err := signatureAlgorithm(k.pub, algo)
	if err != nil {
		return nil, err
	}
	if k.ed != nil && algo == ssh.KeyAlgoED25519 {
		return &ssh.Signature{Format: ssh.KeyAlgoED25519, Blob: signEd25519(k.ed, data)}, nil
	}
	if r == nil {
		r = rand.Reader
	}
	sig, err := k.s.SignWithAlgorithm(r, data, algo)
	if err != nil {
		return nil, fmt.Errorf("sign: sign with %s: %w", Fingerprint(k.pub), err)
	}
	return sig, nil
}

func (k *keySigner) Close() error { return nil }

// agentSigner signs with a key held by ssh-agent.
type agentSigner struct {
	client agent.ExtendedAgent
	conn   net.Conn
	pub    ssh.PublicKey

	once     sync.Once
	closeErr error
}

func (a *agentSigner) PublicKey() ssh.PublicKey { return a.pub }

func (a *agentSigner) Sign(r io.Reader, data []byte) (*ssh.Signature, error) {
	return a.SignWithAlgorithm(r, data, "")
}

// SignWithAlgorithm asks the agent for a signature and checks it against the
// public key before returning it. The agent chooses its own randomness, so
// r is unused.
func (a *agentSigner) SignWithAlgorithm(_ io.Reader, data []byte, algo string) (*ssh.Signature, error) {
	algo, err := signatureAlgorithm(a.pub, algo)
	if err != nil {
		return nil, err
	}
	var flags agent.SignatureFlags
	switch algo {
	case ssh.KeyAlgoRSASHA512:
		flags = agent.SignatureFlagRsaSha512
	case ssh.KeyAlgoRSASHA256:
		flags = agent.SignatureFlagRsaSha256
	}
	fp := Fingerprint(a.pub)
	sig, err := a.client.SignWithFlags(a.pub, data, flags)
	if err != nil {
		return nil, fmt.Errorf("sign: ssh-agent sign with %s: %w", fp, err)
	}
	if sig.Format != algo {
		return nil, fmt.Errorf("sign: ssh-agent sign with %s: got a %q signature, want %q", fp, sig.Format, algo)
	}
	if err := verifySSHSignature(a.pub, data, sig); err != nil {
		return nil, fmt.Errorf("sign: ssh-agent sign with %s: %w", fp, err)
	}
	return sig, nil
}

func (a *agentSigner) Close() error {
	a.once.Do(func() { a.closeErr = a.conn.Close() })
	return a.closeErr
}

var (
	_ ssh.AlgorithmSigner = (*keySigner)(nil)
	_ ssh.AlgorithmSigner = (*agentSigner)(nil)
	_ Signer              = (*keySigner)(nil)
	_ Signer              = (*agentSigner)(nil)
)
