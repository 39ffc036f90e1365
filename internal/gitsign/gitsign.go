// Package gitsign signs with a keyless Sigstore identity through gitsign,
// the program git runs as gpg.x509.program. It is the one place in
// git-secure that runs gitsign.
//
// # What it trusts
//
// The program named by the caller (git config gpg.x509.program, else
// "gitsign" from PATH) and the environment it inherits, to which it adds
// GITSIGN_REKOR_MODE=offline: gitsign then embeds the Rekor entry in the
// signature, so that it verifies offline (internal/keyless). Arguments
// are an argument vector, never a shell; the identity was checked by
// internal/sign and may not start with '-'. gitsign's output is not
// trusted: the signature must parse strictly and name the identity asked
// for, and every verifier checks it in full against the policy's pinned
// Sigstore instance.
//
// # Concurrency
//
// A Signer has no mutable state and is safe for concurrent use; each
// signature runs one gitsign process (which may open a browser to log in).
package gitsign

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/keyless"
	"github.com/git-secure/git-secure/internal/sign"
)

// Timeout bounds one gitsign run (it may wait for an OIDC login).
const Timeout = 5 * time.Minute

// Signer signs as one keyless identity through gitsign. It implements
// sign.Signer and sign.MessageSigner.
type Signer struct {
	program string
	key     *sign.SigstoreKey
}

// New returns a Signer for identity ("sigstore-oidc ISSUER SUBJECT") run
// through program ("" means "gitsign").
func New(program, identity string) (*Signer, error) {
	pub, _, err := sign.ParsePublicKey([]byte(identity))
	if err != nil {
		return nil, err
	}
	key, ok := pub.(*sign.SigstoreKey)
	if !ok {
		return nil, fmt.Errorf("gitsign: %.80q is not a keyless identity (sigstore-oidc ISSUER SUBJECT)", identity)
	}
	if strings.HasPrefix(key.Subject, "-") {
		return nil, fmt.Errorf("gitsign: subject %.64q starts with '-'", key.Subject)
	}
	if program == "" {
		program = "gitsign"
	}
	return &Signer{program: program, key: key}, nil
}

// PublicKey returns the identity (a *sign.SigstoreKey without a pinned
// Sigstore instance).
func (s *Signer) PublicKey() ssh.PublicKey { return s.key }

// Sign fails: gitsign signs whole messages (SignMessage).
func (s *Signer) Sign(io.Reader, []byte) (*ssh.Signature, error) {
	return nil, fmt.Errorf("gitsign: %w: %s signs messages, not SSH signatures", sign.ErrUnsupportedKey, s.key)
}

// Close does nothing (each signature is one gitsign run).
func (s *Signer) Close() error { return nil }

// SignMessage has gitsign sign keyless.Content(namespace, data) as git
// has it sign a commit (--status-fd=2 -bsau SUBJECT) and returns the DER
// of the signature.
func (s *Signer) SignMessage(data []byte, namespace string) ([]byte, error) {
	if namespace == "" {
		return nil, fmt.Errorf("gitsign: empty namespace")
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.program, "--status-fd=2", "-bsau", s.key.Subject)
	cmd.Env = append(os.Environ(), "GITSIGN_REKOR_MODE=offline")
	cmd.Stdin = bytes.NewReader(keyless.Content(namespace, data))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limited{&stdout, keyless.MaxSignatureSize + 1}, &limited{&stderr, 4096}
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("gitsign: sign as %s with %s: %w: %s", s.key.Identity, s.program, err, lastLine(stderr.String()))
	}
	der, err := keyless.Unarmor(stdout.Bytes())
	if err != nil {
		return nil, fmt.Errorf("gitsign: %s wrote no usable signature: %w", s.program, err)
	}
	return der, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// limited keeps at most n bytes (more means a signature too large, which
// Unarmor then refuses).
type limited struct {
	w *bytes.Buffer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

var (
	_ sign.Signer        = (*Signer)(nil)
	_ sign.MessageSigner = (*Signer)(nil)
)
