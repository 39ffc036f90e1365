// Package freshness holds git-secure's freshness statements, TUF's
// timestamp role for a repository: "the log tip (refs/secure/rsl) was
// <hash> at <time>, expires <time>", signed by an online key that the
// policy's timestamp role names (a server's or a bot's). A client that
// finds only old statements knows the server (or a mirror) is frozen or
// was rolled back to an old snapshot, within the policy's max age.
//
// The package parses strictly and canonically, signs, reads and writes
// the statement ref, and judges a statement against a policy, a log and
// a reference time given by the caller. Everything it reads is hostile
// until its signature is checked. It is safe for concurrent use.
package freshness

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/sign"
)

const (
	// Ref holds the newest freshness statement.
	Ref = "refs/secure/timestamp"
	// Format is the statement's first line's value.
	Format = "git-secure-timestamp/1"
	// MaxSize bounds a statement file with its signatures.
	MaxSize = 64 << 10
	// MaxSignatures bounds how many signatures one statement carries.
	MaxSignatures = 16
	// File is the statement's file name in the statement commit's tree.
	File = "timestamp"

	sigBegin = "-----BEGIN SSH SIGNATURE-----\n"
	sigEnd   = "-----END SSH SIGNATURE-----\n"
)

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("freshness: malformed statement")

// Statement says the log tip was Tip at Time, and that nobody should
// believe it after Expires.
type Statement struct {
	Tip     gitrepo.Hash
	Time    time.Time
	Expires time.Time
}

// Encode returns the statement's canonical bytes: what is signed.
func (s Statement) Encode() []byte {
	return []byte(fmt.Sprintf("format: %s\nrsl: %s\ntime: %s\nexpires: %s\n",
		Format, s.Tip, s.Time.UTC().Format(time.RFC3339), s.Expires.UTC().Format(time.RFC3339)))
}

// Signed is a decoded statement file: the statement, the exact bytes
// signed, and each armored signature.
type Signed struct {
	Statement
	Payload    []byte
	Signatures [][]byte
}

// Encode returns the statement file: the statement then its signatures.
func (sd *Signed) Encode() []byte {
	out := append([]byte{}, sd.Payload...)
	for _, s := range sd.Signatures {
		out = append(out, s...)
	}
	return out
}

// Parse decodes a statement file strictly: bounded size, the four lines in
// order with canonical values, then 1 to MaxSignatures armored SSH
// signatures and nothing else. It checks no signature (Verify does).
func Parse(data []byte) (*Signed, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrMalformed, MaxSize)
	}
	cut := bytes.Index(data, []byte(sigBegin))
	if cut < 0 {
		return nil, fmt.Errorf("%w: no signature", ErrMalformed)
	}
	st, err := parseStatement(data[:cut])
	if err != nil {
		return nil, err
	}
	sd := &Signed{Statement: st, Payload: data[:cut]}
	rest := data[cut:]
	for len(rest) > 0 {
		if !bytes.HasPrefix(rest, []byte(sigBegin)) {
			return nil, fmt.Errorf("%w: text after a signature", ErrMalformed)
		}
		end := bytes.Index(rest, []byte(sigEnd))
		if end < 0 {
			return nil, fmt.Errorf("%w: unterminated signature", ErrMalformed)
		}
		block := rest[:end+len(sigEnd)]
		// Base64 has no '-': a body with one hides another block.
		if body := block[len(sigBegin) : len(block)-len(sigEnd)]; len(body) == 0 || bytes.Contains(body, []byte("-")) {
			return nil, fmt.Errorf("%w: bad signature block", ErrMalformed)
		}
		if len(sd.Signatures) == MaxSignatures {
			return nil, fmt.Errorf("%w: more than %d signatures", ErrMalformed, MaxSignatures)
		}
		sd.Signatures = append(sd.Signatures, block)
		rest = rest[len(block):]
	}
	return sd, nil
}

func parseStatement(b []byte) (Statement, error) {
	var st Statement
	fail := func(format string, args ...any) (Statement, error) {
		return Statement{}, fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
	if !bytes.HasSuffix(b, []byte("\n")) {
		return fail("the statement must end with a newline")
	}
	lines := strings.Split(string(b[:len(b)-1]), "\n")
	keys := []string{"format", "rsl", "time", "expires"}
	if len(lines) != len(keys) {
		return fail("want %d lines (%s), got %d", len(keys), strings.Join(keys, ", "), len(lines))
	}
	vals := make([]string, len(keys))
	for i, l := range lines {
		k, v, ok := strings.Cut(l, ": ")
		if !ok || k != keys[i] {
			return fail("line %d must be %q", i+1, keys[i]+": …")
		}
		vals[i] = v
	}
	if vals[0] != Format {
		return fail("format %.40q, want %q", vals[0], Format)
	}
	var err error
	if st.Tip, err = gitrepo.ParseHash(vals[1]); err != nil || st.Tip.IsZero() {
		return fail("rsl: want a 40-hex log entry")
	}
	if st.Time, err = parseTime(vals[2]); err != nil {
		return fail("time: %v", err)
	}
	if st.Expires, err = parseTime(vals[3]); err != nil {
		return fail("expires: %v", err)
	}
	if !st.Expires.After(st.Time) {
		return fail("expires %s is not after time %s", vals[3], vals[2])
	}
	if !bytes.Equal(st.Encode(), b) {
		return fail("not in canonical form")
	}
	return st, nil
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || t.UTC().Format(time.RFC3339) != s {
		return time.Time{}, fmt.Errorf("want an RFC 3339 time in UTC to the second (2026-01-02T03:04:05Z), not %.40q", s)
	}
	return t.UTC(), nil
}

// Sign returns the statement file for st signed by each of signers.
func Sign(st Statement, signers ...ssh.Signer) ([]byte, error) {
	st.Time, st.Expires = st.Time.UTC().Truncate(time.Second), st.Expires.UTC().Truncate(time.Second)
	sd := &Signed{Statement: st, Payload: st.Encode()}
	for _, s := range signers {
		sig, err := sign.SignSSHSig(s, sd.Payload, sign.NamespaceTimestamp)
		if err != nil {
			return nil, fmt.Errorf("freshness: sign: %w", err)
		}
		sd.Signatures = append(sd.Signatures, sig)
	}
	data := sd.Encode()
	if _, err := Parse(data); err != nil {
		return nil, err // a statement readers would refuse is never written
	}
	return data, nil
}
