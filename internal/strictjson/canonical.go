package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Members returns the raw bytes of each member of data's top-level
// object, as they are written in data (blank space around them left
// out). data must be a document Check accepted: Members finds its
// members without building the values, so reading a document costs
// about its size whatever it holds.
func Members(data []byte) (map[string][]byte, error) {
	if !json.Valid(data) {
		return nil, fmt.Errorf("%w: not a JSON document", ErrInvalid)
	}
	s := scanner{data: data}
	s.space()
	if s.pos >= len(data) || data[s.pos] != '{' {
		return nil, fmt.Errorf("%w: not an object", ErrInvalid)
	}
	s.pos++
	out := map[string][]byte{}
	for {
		s.space()
		if s.data[s.pos] == '}' {
			return out, nil
		}
		if s.data[s.pos] == ',' {
			s.pos++
			s.space()
		}
		key, err := s.str()
		if err != nil {
			return nil, err
		}
		s.space()
		s.pos++ // the colon
		s.space()
		start := s.pos
		if err := s.skip(); err != nil {
			return nil, err
		}
		out[key] = data[start:s.pos]
	}
}

// Canonical returns the OLPC canonical JSON encoding of data (what
// go-securesystemslib's cjson.EncodeCanonical makes of the same value,
// and what TUF signatures cover): no blank space, strings escaping only
// '\' and '"', integers only. data must be a document Check accepted,
// and its object keys must already be in ascending order, as
// encoding/json writes a map: a document in any other order is refused,
// not sorted, so that it is read once, in one pass, with no tree built.
func Canonical(data []byte) ([]byte, error) {
	if !json.Valid(data) {
		return nil, fmt.Errorf("%w: not a JSON document", ErrInvalid)
	}
	s := scanner{data: data, out: make([]byte, 0, len(data))}
	if err := s.canon(); err != nil {
		return nil, err
	}
	return s.out, nil
}

// scanner walks a document that json.Valid accepted.
type scanner struct {
	data []byte
	pos  int
	out  []byte
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// skip moves past the value at s.pos.
func (s *scanner) skip() error {
	save := s.out
	s.out = nil
	defer func() { s.out = save }()
	return s.value(false)
}

func (s *scanner) canon() error {
	if err := s.value(true); err != nil {
		return err
	}
	s.space()
	if s.pos != len(s.data) {
		return fmt.Errorf("%w: trailing data after the value", ErrInvalid)
	}
	return nil
}

// value reads (and, when emit, writes canonically) the value at s.pos.
func (s *scanner) value(emit bool) error {
	s.space()
	if s.pos >= len(s.data) {
		return fmt.Errorf("%w: unexpected end", ErrInvalid)
	}
	switch c := s.data[s.pos]; c {
	case '{':
		return s.object(emit)
	case '[':
		return s.array(emit)
	case '"':
		if !emit {
			s.strEnd()
			return nil
		}
		v, err := s.str()
		if err == nil {
			s.out = appendCanonicalString(s.out, v)
		}
		return err
	case 't', 'f', 'n':
		return s.literal(emit)
	}
	start := s.pos
	for s.pos < len(s.data) && isNumberByte(s.data[s.pos]) {
		s.pos++
	}
	num := s.data[start:s.pos]
	if emit {
		// cjson accepts a number that json.Number.Int64 reads: an
		// integer within int64, written as it is.
		if _, err := strconv.ParseInt(string(num), 10, 64); err != nil {
			return fmt.Errorf("%w: %s is not an integer within 64 bits", ErrInvalid, num)
		}
		s.out = append(s.out, num...)
	}
	return nil
}

func (s *scanner) literal(emit bool) error {
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(s.data[s.pos:], []byte(lit)) {
			s.pos += len(lit)
			if emit {
				s.out = append(s.out, lit...)
			}
			return nil
		}
	}
	return fmt.Errorf("%w: unexpected %q", ErrInvalid, s.data[s.pos])
}

func (s *scanner) object(emit bool) error {
	s.pos++
	if emit {
		s.out = append(s.out, '{')
	}
	prev, first := "", true
	for {
		s.space()
		if s.data[s.pos] == '}' {
			s.pos++
			if emit {
				s.out = append(s.out, '}')
			}
			return nil
		}
		if s.data[s.pos] == ',' {
			s.pos++
			s.space()
		}
		if !emit {
			s.strEnd()
		} else {
			key, err := s.str()
			if err != nil {
				return err
			}
			if !first && key <= prev {
				return fmt.Errorf("%w: key %q follows %q: keys are not in canonical order", ErrInvalid, key, prev)
			}
			if !first {
				s.out = append(s.out, ',')
			}
			s.out = appendCanonicalString(s.out, key)
			s.out = append(s.out, ':')
			prev, first = key, false
		}
		s.space()
		s.pos++ // the colon
		if err := s.value(emit); err != nil {
			return err
		}
	}
}

func (s *scanner) array(emit bool) error {
	s.pos++
	if emit {
		s.out = append(s.out, '[')
	}
	for n := 0; ; n++ {
		s.space()
		if s.data[s.pos] == ']' {
			s.pos++
			if emit {
				s.out = append(s.out, ']')
			}
			return nil
		}
		if s.data[s.pos] == ',' {
			s.pos++
		}
		if emit && n > 0 {
			s.out = append(s.out, ',')
		}
		if err := s.value(emit); err != nil {
			return err
		}
	}
}

// strEnd moves past the string at s.pos; it reports whether the string
// holds an escape.
func (s *scanner) strEnd() bool {
	var escaped bool
	s.pos, escaped = stringEnd(s.data, s.pos)
	return escaped
}

// str reads the string at s.pos: escapes are decoded by encoding/json,
// so the value is what the decoder of the signed metadata reads.
func (s *scanner) str() (string, error) {
	if s.data[s.pos] != '"' {
		return "", fmt.Errorf("%w: expected a string", ErrInvalid)
	}
	start := s.pos
	if !s.strEnd() {
		return string(s.data[start+1 : s.pos-1]), nil
	}
	var v string
	if err := json.Unmarshal(s.data[start:s.pos], &v); err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return v, nil
}

// appendCanonicalString writes v as cjson does: between double quotes,
// with only '\' and '"' escaped.
func appendCanonicalString(out []byte, v string) []byte {
	out = append(out, '"')
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' || v[i] == '"' {
			out = append(out, '\\')
		}
		out = append(out, v[i])
	}
	return append(out, '"')
}
