package strictjson

import "encoding/json"

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
}

// readFast returns data's value as read returns it, or false when data
// is not a document read accepts.
func readFast(data []byte, maxDepth, maxItems int, build bool) (any, bool) {
	if !json.Valid(data) {
		return nil, false
	}
	r := fastReader{data: data, maxDepth: maxDepth, maxItems: maxItems, build: build}
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
	r.pos++
	escaped := false
	for r.data[r.pos] != '"' {
		if r.data[r.pos] == '\\' {
			escaped = true
			r.pos++ // the escaped character cannot end the string
		}
		r.pos++
	}
	r.pos++
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
