// Package attest implements git-secure's attestations: in-toto Statement v1
// documents (approvals of ref updates and test runs) wrapped in DSSE
// envelopes signed with SSH keys (SSHSIG over the DSSE pre-authentication
// encoding), and the store of such envelopes on the ref
// refs/secure/attestations.
//
// The wire format is specified in docs/format.md, section 3. Everything
// that is parsed is parsed strictly: exact field names, no unknown fields,
// no duplicate JSON keys, canonical base64, 40-hex lowercase hashes and size
// limits. Every parse failure wraps [ErrMalformed].
//
// # What it trusts
//
// Nothing read from the store is trusted. [Store.Approvals] and
// [Store.TestRuns] return raw envelope bytes; a caller must parse them with
// [ParseEnvelope], verify them with [Envelope.Verify] against its own trusted
// keys, parse the payload with [ParseApproval] or [ParseTestRun] and check
// that the result is for the update it is deciding about ([Approval.Matches]
// returns [ErrMismatch] otherwise). The file name a signer's envelope is
// stored under is only an index; [CheckSignerFile] ties it to the envelope.
//
// # Concurrency
//
// Pure functions are safe for concurrent use. A [Store] is safe for
// concurrent use; its Add calls are serialized, and Adds from different
// Stores or processes are reconciled by compare-and-swap on the ref.
package attest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

const (
	// PayloadType is the DSSE payloadType of every envelope.
	PayloadType = "application/vnd.in-toto+json"
	// PredicateApproval is the predicateType of an approval statement.
	PredicateApproval = "https://git-secure.dev/attestation/approval/v1"
	// PredicateTestRun is the predicateType of a test-run statement.
	PredicateTestRun = "https://git-secure.dev/attestation/test-run/v1"
	// Ref is the git ref holding the attestation store.
	Ref = "refs/secure/attestations"
	// MaxEnvelopeSize is the largest envelope (JSON bytes) accepted or stored.
	MaxEnvelopeSize = 64 << 10
	// MaxStatementSize is the largest statement (decoded payload) accepted.
	MaxStatementSize = 32 << 10
	// StatementType is the in-toto Statement _type.
	StatementType = "https://in-toto.io/Statement/v1"
	// FormatVersion is the predicate formatVersion written and accepted.
	FormatVersion = 1
	// MaxRefLength bounds the length of a ref name in an approval.
	MaxRefLength = 1024
)

var (
	// ErrMalformed is wrapped by every error about a statement, envelope or
	// store entry that does not follow the format.
	ErrMalformed = errors.New("attest: malformed attestation")
	// ErrMismatch is returned when a well-formed attestation is for a
	// different update (ref, from, to or tree) than the one being checked.
	ErrMismatch = errors.New("attest: attestation is for another update")
)

// approvalDomain separates approval directory hashes from any other use of
// SHA-256 over similar strings.
const approvalDomain = "git-secure-approval-v1"

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// ApprovalDir returns the store directory holding approvals of moving ref
// from from to to: "approvals/" + hex(SHA-256("git-secure-approval-v1" NUL
// ref NUL from-hex NUL to-hex)), where the hashes are 40 lowercase hex
// digits (all zeros for a creation or deletion).
func ApprovalDir(ref string, from, to gitrepo.Hash) string {
	h := sha256.New()
	h.Write([]byte(approvalDomain))
	h.Write([]byte{0})
	h.Write([]byte(ref))
	h.Write([]byte{0})
	h.Write([]byte(hex.EncodeToString(from[:])))
	h.Write([]byte{0})
	h.Write([]byte(hex.EncodeToString(to[:])))
	return "approvals/" + hex.EncodeToString(h.Sum(nil))
}

// approvalTreeDomain separates tree-bound approval directories.
const approvalTreeDomain = "git-secure-approval-tree-v1"

// ApprovalTreeDir returns the store directory of approvals bound to a tree:
// "approvals-tree/" + hex(SHA-256(domain, ref, from, tree)). Such an
// approval counts for any update of ref from from to a commit with that
// tree, where the rule allows tree-bound approvals (a rebase or an amended
// message that keeps the tree).
func ApprovalTreeDir(ref string, from, tree gitrepo.Hash) string {
	h := sha256.New()
	h.Write([]byte(approvalTreeDomain))
	h.Write([]byte{0})
	h.Write([]byte(ref))
	h.Write([]byte{0})
	h.Write([]byte(hex.EncodeToString(from[:])))
	h.Write([]byte{0})
	h.Write([]byte(hex.EncodeToString(tree[:])))
	return "approvals-tree/" + hex.EncodeToString(h.Sum(nil))
}

// TestRunDir returns the store directory holding test-run attestations for
// tree: "tests/" + 40 lowercase hex digits of the tree hash.
func TestRunDir(tree gitrepo.Hash) string {
	return "tests/" + hex.EncodeToString(tree[:])
}

// SignerFile returns the file name of pub's envelope inside a store
// directory: hex(SHA-256(pub.Marshal())) + ".json".
func SignerFile(pub ssh.PublicKey) string {
	sum := sha256.Sum256(pub.Marshal())
	return hex.EncodeToString(sum[:]) + ".json"
}

// signerFileForKeyID derives the signer file name from an envelope keyid
// ("SHA256:" + unpadded standard base64 of SHA-256 of the key's wire
// format); it is the same digest SignerFile hex-encodes.
func signerFileForKeyID(keyID string) (string, error) {
	sum, err := decodeKeyID(keyID)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(sum) + ".json", nil
}

// CheckSignerFile reports whether name (a bare file name, as returned by
// Store.Approvals or Store.TestRuns) is the file name belonging to the key
// that signed e. It returns an error wrapping ErrMismatch if not.
func CheckSignerFile(name string, e *Envelope) error {
	want, err := signerFileForKeyID(e.KeyID)
	if err != nil {
		return err
	}
	if name != want {
		return fmt.Errorf("%w: envelope signed by %s stored as %q", ErrMismatch, e.KeyID, name)
	}
	return nil
}

// parseHex parses exactly 40 lowercase hexadecimal digits.
func parseHex(s, what string) (gitrepo.Hash, error) {
	var h gitrepo.Hash
	if len(s) != 2*len(h) {
		return h, malformed("%s: not 40 hex digits: %q", what, s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return h, malformed("%s: not lowercase hex: %q", what, s)
		}
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, malformed("%s: %v", what, err)
	}
	return h, nil
}

func hexOf(h gitrepo.Hash) string { return hex.EncodeToString(h[:]) }

// isHexName reports whether s is exactly n lowercase hex digits.
func isHexName(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// ValidRef reports whether name is acceptable as the ref of an approval: it
// starts with "refs/", is at most MaxRefLength bytes, and follows git's
// check-ref-format rules (no empty, "."-leading or ".lock"-ending
// components, no "..", "@{", control characters, space, ~ ^ : ? * [ or
// backslash, and no trailing "/" or ".").
func ValidRef(name string) error {
	if !strings.HasPrefix(name, "refs/") {
		return malformed("ref %q does not start with refs/", name)
	}
	if len(name) > MaxRefLength {
		return malformed("ref longer than %d bytes", MaxRefLength)
	}
	if strings.Contains(name, "..") || strings.Contains(name, "@{") {
		return malformed("ref %q contains \"..\" or \"@{\"", name)
	}
	if strings.HasSuffix(name, ".") {
		return malformed("ref %q ends with \".\"", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return malformed("ref %q contains forbidden character %q", name, c)
		}
	}
	for _, comp := range strings.Split(name, "/")[1:] {
		if comp == "" {
			return malformed("ref %q has an empty component", name)
		}
		if comp[0] == '.' || strings.HasSuffix(comp, ".lock") {
			return malformed("ref %q has a component starting with \".\" or ending with \".lock\"", name)
		}
	}
	return nil
}
