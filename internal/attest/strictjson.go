package attest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"github.com/git-secure/git-secure/internal/strictjson"
)

// maxJSONDepth bounds nesting of every JSON document this package decodes.
// The deepest legitimate document (a statement) nests four levels.
const maxJSONDepth = 16

// object is a decoded JSON object whose keys are matched exactly.
type object = strictjson.Object

// decodeStrict decodes one JSON value from data with the project's strict
// reader (strictjson.Decode): valid UTF-8, no duplicate keys, nesting at
// most maxJSONDepth, nothing after the value. The callers bound the size
// before; callers wrap errors with ErrMalformed.
func decodeStrict(data []byte) (any, error) {
	return strictjson.Decode(data, len(data), maxJSONDepth)
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

// The patterns are compiled on first use (sync.OnceValue), not when the
// binary starts: every hook and helper start paid for them (a bounded
// repetition such as {0,254} compiles to hundreds of instructions).
// canonicalInt matches the only integer spelling accepted: no sign on zero,
// no leading zeros, no fraction or exponent.
var canonicalInt = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(0|-?[1-9][0-9]*)$`) })

// asInt decodes an integer written in canonical decimal form within
// [min, max].
func asInt(v any, what string, min, max int64) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s: not a number", what)
	}
	s := string(n)
	if len(s) > 20 || !canonicalInt().MatchString(s) {
		return 0, fmt.Errorf("%s: not a canonical integer: %q", what, s)
	}
	i, err := strconv.ParseInt(s, 10, 64)
	if err != nil || i < min || i > max {
		return 0, fmt.Errorf("%s: integer %s out of range [%d, %d]", what, s, min, max)
	}
	return i, nil
}
