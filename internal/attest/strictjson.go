package attest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// maxJSONDepth bounds nesting of every JSON document this package decodes.
// The deepest legitimate document (a statement) nests four levels.
const maxJSONDepth = 16

// object is a decoded JSON object whose keys are matched exactly (byte for
// byte, case-sensitively), unlike encoding/json struct decoding.
type object map[string]any

// decodeStrict decodes one JSON value from data with a token-level scan and
// returns it as a tree of object, []any, string, json.Number, bool and nil.
// It rejects invalid UTF-8, duplicate object keys (compared after unescaping),
// nesting deeper than maxJSONDepth and anything but whitespace after the
// value. Errors are not wrapped; callers wrap them with ErrMalformed.
func decodeStrict(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("invalid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return nil, errors.New("trailing data after JSON value")
		}
		return nil, err
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxJSONDepth {
			return nil, errors.New("JSON nested too deeply")
		}
		switch t {
		case '{':
			obj := object{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				if _, dup := obj[k]; dup {
					return nil, fmt.Errorf("duplicate key %q", k)
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				obj[k] = v
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, err
			}
			return obj, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, err
			}
			return arr, nil
		default:
			return nil, fmt.Errorf("unexpected %q", rune(t))
		}
	default:
		return tok, nil // string, json.Number, bool or nil
	}
}

// checkKeys requires obj to have every key in required, optionally the keys
// in optional, and nothing else.
func checkKeys(obj object, what string, required []string, optional ...string) error {
	for _, k := range required {
		if _, ok := obj[k]; !ok {
			return fmt.Errorf("%s: missing %q", what, k)
		}
	}
	if len(obj) == len(required) {
		return nil
	}
	for k := range obj {
		known := false
		for _, r := range required {
			known = known || k == r
		}
		for _, o := range optional {
			known = known || k == o
		}
		if !known {
			return fmt.Errorf("%s: unknown field %q", what, k)
		}
	}
	return nil
}

func asObject(v any, what string) (object, error) {
	o, ok := v.(object)
	if !ok {
		return nil, fmt.Errorf("%s: not an object", what)
	}
	return o, nil
}

func asString(v any, what string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: not a string", what)
	}
	return s, nil
}

// canonicalInt matches the only integer spelling accepted: no sign on zero,
// no leading zeros, no fraction or exponent.
var canonicalInt = regexp.MustCompile(`^(0|-?[1-9][0-9]*)$`)

// asInt decodes an integer written in canonical decimal form within
// [min, max].
func asInt(v any, what string, min, max int64) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s: not a number", what)
	}
	s := string(n)
	if len(s) > 20 || !canonicalInt.MatchString(s) {
		return 0, fmt.Errorf("%s: not a canonical integer: %q", what, s)
	}
	i, err := strconv.ParseInt(s, 10, 64)
	if err != nil || i < min || i > max {
		return 0, fmt.Errorf("%s: integer %s out of range [%d, %d]", what, s, min, max)
	}
	return i, nil
}
