// Package gpgsign signs with an OpenPGP key that gpg holds (its private
// half in gpg-agent, as git's gpg.program signing does). It is the one
// place in git-secure that runs gpg.
//
// # What it trusts
//
// The gpg program named by the caller (git config gpg.program, else
// "gpg" from PATH) and the environment it inherits (GNUPGHOME,
// GPG_TTY). Arguments are passed as an argument vector, never through a
// shell; the fingerprint must be 40 or 64 hex digits and the namespace a
// plain name, so that nothing the user or a repository writes becomes an
// option. gpg's output is not trusted: the public key it exports must
// have the fingerprint asked for, and every signature it makes is checked
// with internal/sign before it is used.
//
// # Concurrency
//
// A Signer has no mutable state and is safe for concurrent use; each
// signature runs one gpg process.
package gpgsign

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/sign"
)

// Prefix marks a --key value that names an OpenPGP key in gpg:
// "openpgp:FINGERPRINT".
const Prefix = "openpgp:"

// Timeout bounds one gpg run (gpg-agent may ask for a passphrase or a
// smartcard touch).
const Timeout = 2 * time.Minute

// maxOutput bounds what is read from gpg.
const maxOutput = sign.MaxOpenPGPKeySize

// ErrBadFingerprint is returned for a key name that is not a full
// OpenPGP fingerprint.
var ErrBadFingerprint = errors.New("gpgsign: not an OpenPGP fingerprint")

// Signer signs with one OpenPGP key through gpg. It implements
// sign.Signer and sign.MessageSigner.
type Signer struct {
	program string
	fpr     string
	pub     *sign.OpenPGPKey
}

// ParseFingerprint checks that s is a full OpenPGP fingerprint (40 or 64
// hex digits; spaces, as gpg prints them in groups, are removed) and
// returns it in upper case.
func ParseFingerprint(s string) (string, error) {
	f := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	if _, err := hex.DecodeString(f); err != nil || (len(f) != 40 && len(f) != 64) {
		return "", fmt.Errorf("%w: %.80q: give the full fingerprint (gpg --list-keys --with-colons shows it)", ErrBadFingerprint, s)
	}
	return f, nil
}

// New returns a Signer for the key with primary fingerprint fingerprint,
// run through program ("" means "gpg"). It exports the public key from
// gpg, which must have exactly that fingerprint and be acceptable to
// sign.ParseOpenPGPKey. Errors wrap sign.ErrKeyUnavailable when gpg does
// not have the key.
func New(program, fingerprint string) (*Signer, error) {
	fpr, err := ParseFingerprint(fingerprint)
	if err != nil {
		return nil, err
	}
	if program == "" {
		program = "gpg"
	}
	s := &Signer{program: program, fpr: fpr}
	out, err := s.run(nil, "--export", "--armor", "--export-options", "export-minimal", "--", fpr)
	if err != nil {
		return nil, fmt.Errorf("%w: OpenPGP key %s: %v", sign.ErrKeyUnavailable, fpr, err)
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return nil, fmt.Errorf("%w: gpg has no key %s (gpg --list-keys %s; import it or set GNUPGHOME)", sign.ErrKeyUnavailable, fpr, fpr)
	}
	pub, err := sign.ParseOpenPGPKey(out)
	if err != nil {
		return nil, fmt.Errorf("gpgsign: key %s exported by gpg: %w", fpr, err)
	}
	if pub.OpenPGPFingerprint() != fpr {
		return nil, fmt.Errorf("gpgsign: gpg exported key %s, not %s", pub.OpenPGPFingerprint(), fpr)
	}
	s.pub = pub
	return s, nil
}

// PublicKey returns the OpenPGP public key (a *sign.OpenPGPKey).
func (s *Signer) PublicKey() ssh.PublicKey { return s.pub }

// Sign fails: OpenPGP keys sign whole messages (SignMessage).
func (s *Signer) Sign(io.Reader, []byte) (*ssh.Signature, error) {
	return nil, fmt.Errorf("gpgsign: %w: OpenPGP key %s signs messages, not SSH signatures", sign.ErrUnsupportedKey, s.fpr)
}

// Close does nothing (each signature is one gpg run).
func (s *Signer) Close() error { return nil }

// validNamespace accepts the namespaces git-secure uses: lower-case
// letters, digits, '-' and '.'.
func validNamespace(ns string) bool {
	if ns == "" || len(ns) > 64 {
		return false
	}
	for _, c := range ns {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// SignMessage makes a detached binary signature of data with the key (gpg
// picks its signing subkey, if it has one), SHA-512, carrying the
// namespace and key notations internal/sign requires. gpg-agent may ask
// for a passphrase or a touch of a smartcard.
func (s *Signer) SignMessage(data []byte, namespace string) ([]byte, error) {
	if !validNamespace(namespace) {
		return nil, fmt.Errorf("gpgsign: bad namespace %.64q", namespace)
	}
	out, err := s.run(data, "--detach-sign", "--digest-algo", "SHA512",
		"--local-user", s.fpr,
		"--sig-notation", sign.NotationNamespace+"="+namespace,
		"--sig-notation", sign.NotationKey+"="+s.fpr,
		"--output", "-")
	if err != nil {
		return nil, fmt.Errorf("gpgsign: sign with OpenPGP key %s: %v", s.fpr, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("gpgsign: sign with OpenPGP key %s: gpg wrote no signature", s.fpr)
	}
	return out, nil
}

// run runs gpg in batch mode with args and stdin, returning stdout.
func (s *Signer) run(stdin []byte, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	all := append([]string{"--batch", "--no-tty", "--yes"}, args...)
	cmd := exec.CommandContext(ctx, s.program, all...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr limitedBuffer
	stdout.max, stderr.max = maxOutput, 4096
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", s.program, args[0], err, strings.TrimSpace(stderr.String()))
	}
	if stdout.over {
		return nil, fmt.Errorf("%s %s: output larger than %d bytes", s.program, args[0], maxOutput)
	}
	return stdout.Bytes(), nil
}

// limitedBuffer keeps the first max bytes written and notes overflow.
type limitedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

var (
	_ sign.Signer        = (*Signer)(nil)
	_ sign.MessageSigner = (*Signer)(nil)
)
