package sign

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"unicode/utf8"

	"github.com/theupdateframework/go-tuf/v2/metadata"
)

// KeyID returns the TUF key ID of k, the same as go-tuf's k.ID(): the hex
// SHA-256 of the key's OLPC canonical JSON. go-tuf makes that JSON by
// encoding the key with encoding/json, decoding it into maps and encoding
// the maps again (a third of the cost of decoding a policy with many
// persons); a key without unknown fields is three strings, so KeyID writes
// {"keytype":…,"keyval":{"public":…},"scheme":…} directly. A key with
// unknown fields (which the policy refuses anyway) goes through go-tuf.
// TestKeyID and FuzzKeyID compare the two.
func KeyID(k *metadata.Key) (string, error) {
	if k == nil {
		return "", errors.New("sign: key id: nil key")
	}
	if len(k.UnrecognizedFields) != 0 || len(k.Value.UnrecognizedFields) != 0 {
		return k.ID()
	}
	var buf [256]byte
	b := append(buf[:0], `{"keytype":`...)
	b = appendCanonicalString(b, k.Type)
	b = append(b, `,"keyval":{"public":`...)
	b = appendCanonicalString(b, k.Value.PublicKey)
	b = append(b, `},"scheme":`...)
	b = appendCanonicalString(b, k.Scheme)
	b = append(b, '}')
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// appendCanonicalString appends s as a canonical JSON string: quoted, with
// only '\' and '"' escaped (OLPC canonical JSON writes every other byte as
// it is). Each byte that is not part of valid UTF-8 becomes U+FFFD, as
// encoding/json's round trip in go-tuf's ID makes it.
func appendCanonicalString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == '\\' || c == '"' {
				b = append(b, '\\')
			}
			b = append(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
