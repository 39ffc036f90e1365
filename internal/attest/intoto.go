package attest

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The in-toto Statement v1 layer, written and checked without in-toto's
// protobuf types: linking them (and protojson, structpb) costs every start
// of git-secure the protobuf runtime's initialisation. The encoding is byte
// for byte what protojson writes for in-toto's go/v1 Statement with a
// structpb predicate, compacted (its field order, map keys sorted, its
// number and string formats); the checks are in-toto's Statement.Validate
// and what protojson.Unmarshal refuses that the strict reader accepts.
// statement_intoto_test.go proves both against the in-toto library.

// inTotoHexLength is in-toto's HashAlgorithm.HexLength: the digest length
// in bytes of the algorithms with a fixed size, 0 for the others.
func inTotoHexLength(alg string) int {
	switch alg {
	case "md5":
		return 16
	case "sha1", "gitBlob", "gitCommit", "gitTag", "gitTree":
		return 20
	case "sha224", "sha512_224", "sha3_224":
		return 28
	case "sha256", "sha512_256", "sha3_256", "dirHash":
		return 32
	case "sha384", "sha3_384":
		return 48
	case "sha512", "sha3_512":
		return 64
	}
	return 0
}

// validateInToto is in-toto's Statement.Validate for the statements this
// package writes and reads: one subject with a name and one digest.
func validateInToto(name, alg, digest, predicateType string) error {
	// A subject needs a name, a URI or a digest; v1 needs the digest.
	if n := inTotoHexLength(alg); n > 0 {
		b, err := hex.DecodeString(digest)
		if err != nil {
			return fmt.Errorf("digest is not valid hex-encoded string (%s: %s)", alg, digest)
		}
		if len(b) != n {
			return fmt.Errorf("digest has incorrect length: got %d bytes, want %d bytes (%s: %s)", len(b), n, alg, digest)
		}
	}
	if predicateType == "" {
		return fmt.Errorf("predicate type required")
	}
	return nil
}

// appendStatement appends the compact protojson encoding of the Statement
// with one subject (name, {alg: digest}), predicateType and pred.
func appendStatement(b []byte, name, alg, digest, predicateType string, pred map[string]any) ([]byte, error) {
	var err error
	b = append(b, `{"_type":"`+StatementType+`","subject":[{`...)
	if name != "" { // proto3: an empty string is not written
		b = append(b, `"name":`...)
		if b, err = appendJSONString(b, name); err != nil {
			return nil, err
		}
		b = append(b, ',')
	}
	b = append(b, `"digest":{`...)
	if b, err = appendJSONString(b, alg); err != nil {
		return nil, err
	}
	b = append(b, ':')
	if b, err = appendJSONString(b, digest); err != nil {
		return nil, err
	}
	b = append(b, `}}],"predicateType":`...)
	if b, err = appendJSONString(b, predicateType); err != nil {
		return nil, err
	}
	b = append(b, `,"predicate":`...)
	if b, err = appendJSONValue(b, pred, 0); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendJSONValue appends v as protojson writes the google.protobuf.Value
// structpb.NewValue makes of it. Only the Go types the predicates use are
// accepted.
func appendJSONValue(b []byte, v any, depth int) ([]byte, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("predicate nests deeper than %d", maxJSONDepth)
	}
	var err error
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case int:
		return appendJSONNumber(b, float64(v)), nil
	case int64:
		return appendJSONNumber(b, float64(v)), nil
	case string:
		return appendJSONString(b, v)
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSONValue(b, e, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // protojson writes map entries in key order
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSONString(b, k); err != nil {
				return nil, err
			}
			b = append(b, ':')
			if b, err = appendJSONValue(b, v[k], depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("predicate value of type %T", v)
}

// appendJSONNumber appends n as protojson writes a double (encoding/json's
// format): exponent notation below 1e-6 and from 1e21 on.
func appendJSONNumber(b []byte, n float64) []byte {
	format := byte('f')
	if abs := math.Abs(n); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, n, format, -1, 64)
	if format == 'e' { // e-07 -> e-7
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendJSONString appends s quoted as protojson quotes it: only '"', '\'
// and control characters are escaped (\b \f \n \r \t, else \u00XX), all
// else is written as is; invalid UTF-8 is an error, as structpb's.
func appendJSONString(b []byte, s string) ([]byte, error) {
	b = append(b, '"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return nil, fmt.Errorf("invalid UTF-8 in string: %q", s)
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < ' ':
			b = append(b, '\\')
			switch r {
			case '\b':
				b = append(b, 'b')
			case '\f':
				b = append(b, 'f')
			case '\n':
				b = append(b, 'n')
			case '\r':
				b = append(b, 'r')
			case '\t':
				b = append(b, 't')
			default:
				b = append(b, 'u')
				b = append(b, "0000"[1+(bits.Len32(uint32(r))-1)/4:]...)
				b = strconv.AppendUint(b, uint64(r), 16)
			}
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"'), nil
}

// checkInTotoDecodable refuses what protojson.Unmarshal refuses in a
// statement the strict reader accepted: a \u escape of a UTF-16 surrogate
// that is not half of a valid pair (encoding/json reads it as U+FFFD), and
// a number of the predicate that is no float64 (out of range).
func checkInTotoDecodable(data []byte, pred object) error {
	if err := checkSurrogates(data); err != nil {
		return err
	}
	return checkNumbers(pred, 0)
}

// checkSurrogates scans the strings of data, valid JSON, for \u escapes.
func checkSurrogates(data []byte) error {
	in := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			in = !in
		case in && c == '\\':
			i++
			if i >= len(data) || data[i] != 'u' {
				continue // a one-character escape (the reader checked it)
			}
			r, ok := hex4(data, i+1)
			i += 4
			if !ok || !utf16.IsSurrogate(r) {
				continue
			}
			// protojson: the next 6 bytes must be \uXXXX and the pair a rune.
			if i+6 >= len(data) || data[i+1] != '\\' || data[i+2] != 'u' {
				return fmt.Errorf("invalid escape code %q in string", data[i-5:min(i+1, len(data))])
			}
			r2, ok := hex4(data, i+3)
			if !ok || utf16.DecodeRune(r, r2) == utf8.RuneError {
				return fmt.Errorf("invalid escape code %q in string", data[i-5:i+7])
			}
			i += 6
		}
	}
	return nil
}

// hex4 reads the four hex digits at data[i:].
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(data[i:i+4]), 16, 16)
	return rune(v), err == nil
}

// checkNumbers requires every number under v to be a float64, as
// google.protobuf.Value holds it.
func checkNumbers(v any, depth int) error {
	if depth > maxJSONDepth {
		return fmt.Errorf("predicate nests deeper than %d", maxJSONDepth)
	}
	switch v := v.(type) {
	case json.Number:
		if _, err := strconv.ParseFloat(string(v), 64); err != nil {
			return fmt.Errorf("invalid value for double: %s", v)
		}
	case []any:
		for _, e := range v {
			if err := checkNumbers(e, depth+1); err != nil {
				return err
			}
		}
	case object:
		for _, e := range v {
			if err := checkNumbers(e, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
