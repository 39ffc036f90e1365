// Package sshkeygen signs with a key file through ssh-keygen -Y sign, as
// git does with gpg.format=ssh. git-secure uses it for a security key
// (FIDO, sk-*) whose private key file holds only a handle and whose key is
// not in ssh-agent: ssh-keygen asks the device, which waits for a touch.
// It is the one place in git-secure that runs ssh-keygen.
//
// # What it trusts
//
// The program named by the caller (git config gpg.ssh.program, else
// "ssh-keygen" from PATH). Arguments are an argument vector, never a
// shell line; the namespace must be a plain name. Its output is not
// trusted: internal/sign parses the signature strictly and checks it
// against the key's public half before it is used.
//
// # Concurrency
//
// A Signer has no mutable state and is safe for concurrent use; each
// signature runs one ssh-keygen process.
package sshkeygen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/sign"
)

// Timeout bounds one signature (the device waits for a touch).
const Timeout = 2 * time.Minute

// Signer signs with one key file through ssh-keygen. It implements
// sign.Signer and sign.MessageSigner.
type Signer struct {
	program string
	keyFile string
	pub     ssh.PublicKey
	prompt  io.Writer
}

// New returns a Signer for keyFile, whose public key is pub, run through
// program ("" means "ssh-keygen"). ssh-keygen's prompts ("Confirm user
// presence for key ...") go to prompt (nil: discarded).
func New(program, keyFile string, pub ssh.PublicKey, prompt io.Writer) (*Signer, error) {
	if pub == nil {
		return nil, errors.New("sshkeygen: no public key")
	}
	if keyFile == "" || strings.HasPrefix(keyFile, "-") {
		return nil, fmt.Errorf("sshkeygen: bad key file %.80q", keyFile)
	}
	if program == "" {
		program = "ssh-keygen"
	}
	if prompt == nil {
		prompt = io.Discard
	}
	return &Signer{program: program, keyFile: keyFile, pub: pub, prompt: prompt}, nil
}

// PublicKey returns the key's public half.
func (s *Signer) PublicKey() ssh.PublicKey { return s.pub }

// Sign fails: ssh-keygen signs whole messages (SignMessage).
func (s *Signer) Sign(io.Reader, []byte) (*ssh.Signature, error) {
	return nil, fmt.Errorf("sshkeygen: %w: ssh-keygen signs messages, not raw SSH signatures", sign.ErrUnsupportedKey)
}

// Close does nothing.
func (s *Signer) Close() error { return nil }

// SignMessage runs ssh-keygen -Y sign -f KEYFILE -n NAMESPACE on data and
// returns the binary SSHSIG structure of its armored output.
func (s *Signer) SignMessage(data []byte, namespace string) ([]byte, error) {
	if !validNamespace(namespace) {
		return nil, fmt.Errorf("sshkeygen: bad namespace %.64q", namespace)
	}
	fmt.Fprintf(s.prompt, "git-secure: signing with %s (%s): touch the security key when it blinks\n", sign.Fingerprint(s.pub), s.keyFile)
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.program, "-Y", "sign", "-f", s.keyFile, "-n", namespace)
	cmd.Stdin = bytes.NewReader(data)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &limited{w: &stdout, n: 2 * sign.MaxSignatureSize}
	cmd.Stderr = io.MultiWriter(s.prompt, &limited{w: &stderr, n: 4096})
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("sshkeygen: %s -Y sign with %s: %w: %s", s.program, s.keyFile, err, strings.TrimSpace(stderr.String()))
	}
	raw, err := sign.UnarmorSSHSig(stdout.Bytes())
	if err != nil {
		return nil, fmt.Errorf("sshkeygen: output of %s -Y sign: %w", s.program, err)
	}
	return raw, nil
}

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

// limited writes at most n bytes to w and drops the rest.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if len(p) <= l.n {
		l.n -= len(p)
		return l.w.Write(p)
	}
	if l.n > 0 {
		_, _ = l.w.Write(p[:l.n])
		l.n = 0
	}
	return len(p), nil
}

var (
	_ sign.Signer        = (*Signer)(nil)
	_ sign.MessageSigner = (*Signer)(nil)
)
