// Package strictjson reads JSON documents from untrusted repositories
// strictly: one top-level value, bounded size and depth, valid UTF-8, and no
// duplicate object keys (encoding/json silently keeps the last one, which
// lets two readers see two different documents). Check validates a document
// that encoding/json will then decode into a struct; Decode returns the
// value itself, for readers that match keys exactly. Safe for concurrent use.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// ErrInvalid is wrapped by every error Check and Decode return.
var ErrInvalid = errors.New("invalid JSON")

// MaxDepth bounds the nesting of objects and arrays for Check.
const MaxDepth = 32

// Object is a decoded JSON object. Its keys are matched byte for byte,
// case-sensitively, unlike encoding/json's struct decoding.
type Object map[string]any

// Check returns an error unless data is a single JSON value of at most
// maxSize bytes, nested at most MaxDepth deep, with no duplicate keys in any
// object.
func Check(data []byte, maxSize int) error {
	_, err := read(data, maxSize, MaxDepth, 0, false)
	return err
}

// CheckItems is Check with at most maxItems members in any one object and
// elements in any one array. A decoder that builds maps and slices spends
// far more per member than the member's bytes: bounding the members of
// the largest collection a caller accepts refuses, before that decoder
// runs, a document of small members that fits the size bound only.
func CheckItems(data []byte, maxSize, maxItems int) error {
	_, err := read(data, maxSize, MaxDepth, maxItems, false)
	return err
}

// Decode reads data as Check does, with nesting bounded by maxDepth, and
// returns its value as a tree of Object, []any, string, json.Number, bool
// and nil.
func Decode(data []byte, maxSize, maxDepth int) (any, error) {
	return read(data, maxSize, maxDepth, 0, true)
}

// read checks (or decodes, build) data; maxItems 0 leaves collections
// unbounded but for the size.
func read(data []byte, maxSize, maxDepth, maxItems int, build bool) (any, error) {
	if len(data) > maxSize {
		return nil, fmt.Errorf("%w: %d bytes is over the limit of %d", ErrInvalid, len(data), maxSize)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: not valid UTF-8", ErrInvalid)
	}
	// Nearly every document is valid: walked without the token API, it
	// costs a tenth of the allocations. Any other is read again token by
	// token, which says what is wrong.
	if v, ok := readFast(data, maxDepth, maxItems, build); ok {
		return v, nil
	}
	return readTokens(data, maxDepth, maxItems, build)
}

// readTokens reads a document of at most maxSize bytes of valid UTF-8
// token by token.
func readTokens(data []byte, maxDepth, maxItems int, build bool) (any, error) {
	r := reader{dec: json.NewDecoder(bytes.NewReader(data)), maxDepth: maxDepth, maxItems: maxItems, build: build}
	r.dec.UseNumber()
	v, err := r.value(0)
	if err != nil {
		return nil, err
	}
	if _, err := r.dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: trailing data after the value", ErrInvalid)
	}
	return v, nil
}

// reader walks one document token by token; build says whether to keep
// the values (Decode) or only check them (Check).
type reader struct {
	dec      *json.Decoder
	maxDepth int
	maxItems int // 0: unbounded
	build    bool
}

// tooMany reports whether a collection holding n members is over the bound.
func tooMany(n, maxItems int) bool { return maxItems > 0 && n > maxItems }

func (r *reader) token() (json.Token, error) {
	tok, err := r.dec.Token()
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return tok, nil
}

func (r *reader) value(depth int) (any, error) {
	tok, err := r.token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	if depth >= r.maxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", ErrInvalid, r.maxDepth)
	}
	var out any
	switch d {
	case '{':
		obj := Object{}
		for r.dec.More() {
			k, err := r.token()
			if err != nil {
				return nil, err
			}
			key, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("%w: object key is not a string", ErrInvalid)
			}
			if _, dup := obj[key]; dup {
				return nil, fmt.Errorf("%w: duplicate key %q", ErrInvalid, key)
			}
			if tooMany(len(obj)+1, r.maxItems) {
				return nil, fmt.Errorf("%w: an object has more than %d members", ErrInvalid, r.maxItems)
			}
			v, err := r.value(depth + 1)
			if err != nil {
				return nil, err
			}
			if !r.build {
				v = nil // only the key is needed, to find duplicates
			}
			obj[key] = v
		}
		out = obj
	case '[':
		arr := []any{}
		for n := 1; r.dec.More(); n++ {
			if tooMany(n, r.maxItems) {
				return nil, fmt.Errorf("%w: an array has more than %d elements", ErrInvalid, r.maxItems)
			}
			v, err := r.value(depth + 1)
			if err != nil {
				return nil, err
			}
			if r.build {
				arr = append(arr, v)
			}
		}
		out = arr
	default:
		return nil, fmt.Errorf("%w: unexpected %q", ErrInvalid, rune(d))
	}
	if _, err := r.token(); err != nil { // the closing delimiter
		return nil, err
	}
	return out, nil
}
