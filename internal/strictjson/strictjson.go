// Package strictjson checks JSON documents from untrusted repositories before
// they are decoded: one top-level value, bounded size and depth, valid UTF-8,
// and no duplicate object keys (encoding/json silently keeps the last one,
// which lets two readers see two different documents). Safe for concurrent use.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// ErrInvalid is wrapped by every error Check returns.
var ErrInvalid = errors.New("invalid JSON")

// MaxDepth bounds the nesting of objects and arrays.
const MaxDepth = 32

// Check returns an error unless data is a single JSON value of at most
// maxSize bytes, nested at most MaxDepth deep, with no duplicate keys in any
// object.
func Check(data []byte, maxSize int) error {
	if len(data) > maxSize {
		return fmt.Errorf("%w: %d bytes is over the limit of %d", ErrInvalid, len(data), maxSize)
	}
	if !utf8.Valid(data) {
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalid)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := checkValue(dec, 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: trailing data after the value", ErrInvalid)
	}
	return nil
}

func checkValue(dec *json.Decoder, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if depth >= MaxDepth {
		return fmt.Errorf("%w: nested deeper than %d", ErrInvalid, MaxDepth)
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return fmt.Errorf("%w: %v", ErrInvalid, err)
			}
			key, _ := k.(string)
			if seen[key] {
				return fmt.Errorf("%w: duplicate key %q", ErrInvalid, key)
			}
			seen[key] = true
			if err := checkValue(dec, depth+1); err != nil {
				return err
			}
		}
	case '[':
		for dec.More() {
			if err := checkValue(dec, depth+1); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // closing delimiter
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}
