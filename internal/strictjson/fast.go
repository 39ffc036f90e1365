package strictjson

import (
	"bytes"
	"encoding/json"
	"slices"
)

// fastReader walks a document that json.Valid accepted, without
// encoding/json's token API (which allocates an error value for nearly
// every token). It decides only acceptance: on anything it would refuse
// (a duplicate key, nesting too deep) it reports false and the document
// is read again by reader, which words the error. Strings with escapes
// are decoded by encoding/json itself, so values are exactly reader's.
type fastReader struct {
	data     []byte
	pos      int
	maxDepth int
	maxItems int // 0: unbounded
	build    bool
	// keys holds, by depth, the keys of the object being checked there:
	// reused from one object to the next, so that checking a document
	// allocates next to nothing however many collections it holds.
	keys [][][]byte
}

// readFast returns data's value as read returns it, or false when data
// is not a document read accepts.
func readFast(data []byte, maxDepth, maxItems int, build bool) (any, bool) {
	if !json.Valid(data) {
		return nil, false
	}
	r := fastReader{data: data, maxDepth: maxDepth, maxItems: maxItems, build: build}
	if !build {
		return nil, r.check(0)
	}
	return r.value(0)
}

func (r *fastReader) space() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

// value reads the value at r.pos; the document is valid JSON, so only
// what distinguishes one kind of value from another is looked at.
func (r *fastReader) value(depth int) (any, bool) {
	r.space()
	switch c := r.data[r.pos]; c {
	case '{', '[':
		if depth >= r.maxDepth {
			return nil, false
		}
		r.pos++
		if c == '{' {
			return r.object(depth)
		}
		return r.array(depth)
	case '"':
		return r.str()
	case 't':
		r.pos += len("true")
		return true, true
	case 'f':
		r.pos += len("false")
		return false, true
	case 'n':
		r.pos += len("null")
		return nil, true
	}
	start := r.pos
	for r.pos < len(r.data) && isNumberByte(r.data[r.pos]) {
		r.pos++
	}
	return json.Number(r.data[start:r.pos]), true
}

func (r *fastReader) object(depth int) (any, bool) {
	obj := Object{}
	for {
		r.space()
		if r.data[r.pos] == '}' {
			r.pos++
			return obj, true
		}
		if r.data[r.pos] == ',' {
			r.pos++
			r.space()
		}
		key, ok := r.str()
		if !ok {
			return nil, false
		}
		k := key.(string)
		if _, dup := obj[k]; dup || tooMany(len(obj)+1, r.maxItems) {
			return nil, false
		}
		r.space()
		r.pos++ // the colon
		v, ok := r.value(depth + 1)
		if !ok {
			return nil, false
		}
		if !r.build {
			v = nil
		}
		obj[k] = v
	}
}

func (r *fastReader) array(depth int) (any, bool) {
	arr := []any{}
	for n := 1; ; n++ {
		r.space()
		if r.data[r.pos] == ']' {
			r.pos++
			return arr, true
		}
		if r.data[r.pos] == ',' {
			r.pos++
		}
		if tooMany(n, r.maxItems) {
			return nil, false
		}
		v, ok := r.value(depth + 1)
		if !ok {
			return nil, false
		}
		if r.build {
			arr = append(arr, v)
		}
	}
}

// str reads the string at r.pos.
func (r *fastReader) str() (any, bool) {
	start := r.pos
	var escaped bool
	r.pos, escaped = stringEnd(r.data, r.pos)
	if !escaped {
		return string(r.data[start+1 : r.pos-1]), true
	}
	var s string
	if err := json.Unmarshal(r.data[start:r.pos], &s); err != nil {
		return nil, false
	}
	return s, true
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// check walks the value at r.pos as value does, building nothing: a
// document of many small values costs no allocation per value (Check
// runs on every policy file before anything else reads it).
func (r *fastReader) check(depth int) bool {
	r.space()
	switch c := r.data[r.pos]; c {
	case '{', '[':
		if depth >= r.maxDepth {
			return false
		}
		r.pos++
		if c == '{' {
			return r.checkObject(depth)
		}
		return r.checkArray(depth)
	case '"':
		r.strEnd()
		return true
	case 't':
		r.pos += len("true")
	case 'f':
		r.pos += len("false")
	case 'n':
		r.pos += len("null")
	default:
		for r.pos < len(r.data) && isNumberByte(r.data[r.pos]) {
			r.pos++
		}
	}
	return true
}

func (r *fastReader) checkObject(depth int) bool {
	for len(r.keys) <= depth {
		r.keys = append(r.keys, nil)
	}
	keys := r.keys[depth][:0]
	for {
		r.space()
		if r.data[r.pos] == '}' {
			r.pos++
			r.keys[depth] = keys
			return noDuplicate(keys)
		}
		if r.data[r.pos] == ',' {
			r.pos++
			r.space()
		}
		key, ok := r.keyBytes()
		if !ok || tooMany(len(keys)+1, r.maxItems) {
			return false
		}
		keys = append(keys, key)
		r.space()
		r.pos++ // the colon
		if !r.check(depth + 1) {
			return false
		}
	}
}

func (r *fastReader) checkArray(depth int) bool {
	for n := 1; ; n++ {
		r.space()
		if r.data[r.pos] == ']' {
			r.pos++
			return true
		}
		if r.data[r.pos] == ',' {
			r.pos++
		}
		if tooMany(n, r.maxItems) || !r.check(depth+1) {
			return false
		}
	}
}

// noDuplicate reports whether keys are all different; it sorts them.
func noDuplicate(keys [][]byte) bool {
	if len(keys) < 2 {
		return true
	}
	slices.SortFunc(keys, bytes.Compare)
	for i := 1; i < len(keys); i++ {
		if bytes.Equal(keys[i-1], keys[i]) {
			return false
		}
	}
	return true
}

// strEnd moves past the string at r.pos and reports whether it holds an
// escape.
func (r *fastReader) strEnd() bool {
	var escaped bool
	r.pos, escaped = stringEnd(r.data, r.pos)
	return escaped
}

// stringEnd returns the position just past the string that starts (its
// opening quote) at pos in data, which a validity check has accepted, and
// whether the string holds an escape.
func stringEnd(data []byte, pos int) (int, bool) {
	pos++
	escaped := false
	for data[pos] != '"' {
		if data[pos] == '\\' {
			escaped = true
			pos++ // the escaped character cannot end the string
		}
		pos++
	}
	return pos + 1, escaped
}

// keyBytes returns the value of the string at r.pos: the bytes between
// its quotes, or, when it holds an escape, what encoding/json decodes.
func (r *fastReader) keyBytes() ([]byte, bool) {
	start := r.pos
	if !r.strEnd() {
		return r.data[start+1 : r.pos-1], true
	}
	var s string
	if err := json.Unmarshal(r.data[start:r.pos], &s); err != nil {
		return nil, false
	}
	return []byte(s), true
}
