package gitrepo

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo/fastpath"
)

// Hash is a SHA-1 object id.
type Hash [20]byte

// ZeroHash is the all-zero object id. It never names an object.
var ZeroHash Hash

// EmptyTreeHash is the id of the empty tree in a SHA-1 repository.
const EmptyTreeHash = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

var emptyTree = mustHash(EmptyTreeHash)

var (
	// ErrNotFound reports that an object or ref does not exist. It is
	// always wrapped in the package's context ("gitrepo: read object X:
	// not found"), so its own text has no "gitrepo: ", nor have the
	// other sentinels'.
	ErrNotFound = errors.New("not found")
	// ErrRefChanged reports a lost compare-and-swap: a ref was not at the
	// expected old value (or was locked by a concurrent update).
	ErrRefChanged = errors.New("ref changed concurrently")
	// ErrLocked means a ref's lock file exists: another git process holds
	// it, or a crashed one left it behind. The error names the file.
	ErrLocked = errors.New("ref is locked")
	// ErrTooLarge reports an object larger than the caller's limit.
	ErrTooLarge = errors.New("object too large")

	// errObjectNotFound is ErrNotFound for an object the caller names
	// ("gitrepo: peel X: object not found").
	errObjectNotFound = fmt.Errorf("object %w", ErrNotFound)
)

// wrapped is an error of this package around another of its errors: the
// new context, then the inner text without its own "gitrepo: ", so a
// chain of calls reads "gitrepo: read "a/b" in tree T: read tree X:
// object not found", not "gitrepo: ...: gitrepo: ...: gitrepo: not
// found". errors.Is and errors.As see the inner error.
type wrapped struct {
	ctx string
	err error
}

func (e *wrapped) Error() string {
	return e.ctx + ": " + strings.TrimPrefix(e.err.Error(), "gitrepo: ")
}
func (e *wrapped) Unwrap() error { return e.err }

// wrapf is fmt.Errorf("gitrepo: "+format+": %w", args..., err) for an err
// that may carry the package's prefix already.
func wrapf(err error, format string, args ...any) error {
	return &wrapped{ctx: "gitrepo: " + fmt.Sprintf(format, args...), err: err}
}

func mustHash(s string) Hash {
	h, err := ParseHash(s)
	if err != nil {
		panic(err)
	}
	return h
}

// ParseHash parses exactly 40 lowercase hexadecimal digits.
func ParseHash(s string) (Hash, error) {
	if h, ok := decodeHash(s); ok {
		return h, nil
	}
	if len(s) != 40 {
		return Hash{}, fmt.Errorf("gitrepo: invalid hash %s: want 40 hex digits, got %d characters", strconv.QuoteToASCII(truncate(s, 64)), len(s))
	}
	return Hash{}, fmt.Errorf("gitrepo: invalid hash %s: not lowercase hex", strconv.QuoteToASCII(s))
}

// parseHashBytes is ParseHash of b; it copies b into a string only to
// report an error (it runs once per object read in bulk).
func parseHashBytes(b []byte) (Hash, error) {
	if h, ok := decodeHash(b); ok {
		return h, nil
	}
	return ParseHash(string(b))
}

// decodeHash decodes exactly 40 lowercase hexadecimal digits.
func decodeHash[T string | []byte](s T) (Hash, bool) {
	var h Hash
	if len(s) != 40 {
		return h, false
	}
	for i := range h {
		hi, ok1 := lowerHex(s[2*i])
		lo, ok2 := lowerHex(s[2*i+1])
		if !ok1 || !ok2 {
			return Hash{}, false
		}
		h[i] = hi<<4 | lo
	}
	return h, true
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// String returns the hash as 40 lowercase hex digits.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// AppendHex appends the 40 hexadecimal digits of h to b.
func (h Hash) AppendHex(b []byte) []byte { return hex.AppendEncode(b, h[:]) }

// IsEmptyTree reports whether h is the empty tree of a SHA-1 repository
// (EmptyTreeHash).
func (h Hash) IsEmptyTree() bool { return h == emptyTree }

// IsZero reports whether h is ZeroHash.
func (h Hash) IsZero() bool { return h == ZeroHash }

// MarshalText implements encoding.TextMarshaler.
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseHash rules.
func (h *Hash) UnmarshalText(b []byte) error {
	v, err := parseHashBytes(b)
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// hashObject computes the git object id of data with the given type.
func hashObject(typ string, data []byte) Hash { return Hash(fastpath.ObjectID(typ, data)) }

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
