// Package tufjson decodes go-tuf targets metadata (targets.json and rule
// files, Targets) and root metadata (root.json, Root) in one pass over the
// bytes, when they are exactly what go-tuf
// itself writes (Metadata.ToBytes(false): encoding/json's compact output,
// object keys in ascending order, strings escaped as encoding/json escapes
// them).
//
// go-tuf's own decoder reads every object twice or more (each type's
// UnmarshalJSON decodes into its fields and again into a map, to keep
// unknown fields, and Metadata decodes the whole file once more), and a
// reader that requires canonical bytes must encode the value again to
// compare: a targets.json of 10 000 persons cost some 0.4 s and 140 MB to
// read that way. Targets reads it once and builds the same go-tuf values
// directly; it only decides acceptance, so its caller falls back to
// go-tuf's decoder (which then refuses the document, with its own words)
// whenever Targets reports false.
package tufjson

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/theupdateframework/go-tuf/v2/metadata"
)

// maxDepth bounds the nesting of the values Targets keeps as unknown
// fields (a caller's own bound, strictjson's, is lower).
const maxDepth = 64

// Targets decodes data as metadata.Metadata[metadata.TargetsType]. When it
// returns true, the value is the one go-tuf's FromBytes returns for data,
// and go-tuf's ToBytes(false) of that value is data, byte for byte: data
// holds no blank space, its object keys are in ascending order, each
// string and number is written as encoding/json writes its value, and
// every field go-tuf writes is present. It reports false for anything
// else, including metadata go-tuf would accept but git-secure refuses
// anyway (targets, succinct roles, path hash prefixes, unknown fields of
// the envelope, signatures, delegations and keys, JSON null): the caller
// then decodes data with go-tuf. data should be a document
// strictjson.Check accepted; Targets reads any input without panicking.
func Targets(data []byte) (*metadata.Metadata[metadata.TargetsType], bool) {
	return envelope(data, (*decoder).targets)
}

// envelope reads the document's envelope, exactly "signatures" and
// "signed" and nothing after it, with signed reading the role's part.
func envelope[T metadata.Roles](data []byte, signed func(*decoder, *T) bool) (*metadata.Metadata[T], bool) {
	d := decoder{data: data}
	m := &metadata.Metadata[T]{UnrecognizedFields: map[string]any{}}
	var haveSigned, haveSigs bool
	ok := d.object(func(key string) bool {
		switch key {
		case "signatures":
			haveSigs = true
			return d.signatures(&m.Signatures)
		case "signed":
			haveSigned = true
			return signed(&d, &m.Signed)
		}
		return false
	})
	if !ok || !haveSigned || !haveSigs || d.pos != len(data) {
		return nil, false
	}
	return m, true
}

// decoder reads one document; every method reports whether what it read
// is in go-tuf's encoding, and leaves pos after it.
type decoder struct {
	data  []byte
	pos   int
	depth int
}

// peek returns the byte at pos, or 0 at the end.
func (d *decoder) peek() byte {
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

// expect moves past c, which must be the byte at pos.
func (d *decoder) expect(c byte) bool {
	if d.peek() != c {
		return false
	}
	d.pos++
	return true
}

// object reads an object, calling member for each key with pos at its
// value; keys must be strictly ascending (as encoding/json writes a map,
// which go-tuf encodes every type as), so none is repeated.
func (d *decoder) object(member func(key string) bool) bool {
	if !d.expect('{') {
		return false
	}
	if d.expect('}') {
		return true
	}
	prev := ""
	for first := true; ; first = false {
		key, ok := d.str()
		if !ok || (!first && key <= prev) || !d.expect(':') || !member(key) {
			return false
		}
		prev = key
		if !d.expect(',') {
			return d.expect('}')
		}
	}
}

// array reads an array, calling elem with pos at each element.
func (d *decoder) array(elem func() bool) bool {
	if !d.expect('[') {
		return false
	}
	if d.expect(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if !d.expect(',') {
			return d.expect(']')
		}
	}
}

// str reads a string that encoding/json writes as it is written here.
func (d *decoder) str() (string, bool) {
	if !d.expect('"') {
		return "", false
	}
	start := d.pos
	plain := true
	for {
		if d.pos >= len(d.data) {
			return "", false
		}
		c := d.data[d.pos]
		if c == '"' {
			break
		}
		switch {
		case c == '\\':
			plain = false
			d.pos++ // the escaped byte cannot end the string
		case c < 0x20 || c >= 0x80 || c == '<' || c == '>' || c == '&':
			// encoding/json escapes these (control and HTML bytes,
			// U+2028 and U+2029) or replaces them (invalid UTF-8).
			plain = false
		}
		d.pos++
	}
	raw := d.data[start:d.pos]
	d.pos++ // the closing quote
	if plain {
		return string(raw), true
	}
	return canonicalString(d.data[start-1 : d.pos])
}

// canonicalString decodes quoted, a JSON string holding an escape or a
// byte encoding/json may escape, and reports whether encoding/json
// writes the value back as quoted.
func canonicalString(quoted []byte) (string, bool) {
	if !utf8.Valid(quoted) {
		return "", false
	}
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return "", false
	}
	again, err := json.Marshal(s)
	if err != nil || !bytes.Equal(again, quoted) {
		return "", false
	}
	return s, true
}

// number returns the bytes of the number at pos.
func (d *decoder) number() []byte {
	start := d.pos
	for d.pos < len(d.data) {
		switch c := d.data[d.pos]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			d.pos++
			continue
		}
		break
	}
	return d.data[start:d.pos]
}

// integer reads a number into an integer field of bits bits, written as
// strconv writes it (encoding/json's decoding and encoding of an integer).
func (d *decoder) integer(bits int) (int64, bool) {
	num := d.number()
	n, err := strconv.ParseInt(string(num), 10, bits)
	if err != nil {
		return 0, false
	}
	var buf [24]byte
	return n, bytes.Equal(strconv.AppendInt(buf[:0], n, 10), num)
}

// boolean reads true or false.
func (d *decoder) boolean() (bool, bool) {
	switch {
	case bytes.HasPrefix(d.data[d.pos:], []byte("true")):
		d.pos += 4
		return true, true
	case bytes.HasPrefix(d.data[d.pos:], []byte("false")):
		d.pos += 5
		return false, true
	}
	return false, false
}

// strings reads an array of strings (never nil, as encoding/json decodes
// an empty array).
func (d *decoder) strings(out *[]string) bool {
	list := []string{}
	ok := d.array(func() bool {
		s, ok := d.str()
		list = append(list, s)
		return ok
	})
	*out = list
	return ok
}

// value reads any value as encoding/json decodes it into an any (which
// is how go-tuf keeps unknown fields): map[string]any, []any, string,
// float64, bool or nil.
func (d *decoder) value() (any, bool) {
	switch c := d.peek(); {
	case c == '{' || c == '[':
		if d.depth >= maxDepth {
			return nil, false
		}
		d.depth++
		defer func() { d.depth-- }()
		if c == '[' {
			list := []any{}
			ok := d.array(func() bool {
				v, ok := d.value()
				list = append(list, v)
				return ok
			})
			return list, ok
		}
		obj := map[string]any{}
		ok := d.object(func(key string) bool {
			v, ok := d.value()
			obj[key] = v
			return ok
		})
		return obj, ok
	case c == '"':
		return d.str()
	case c == 't' || c == 'f':
		return d.boolean()
	case c == 'n':
		if !bytes.HasPrefix(d.data[d.pos:], []byte("null")) {
			return nil, false
		}
		d.pos += 4
		return nil, true
	case c == '-' || (c >= '0' && c <= '9'):
		num := d.number()
		f, err := strconv.ParseFloat(string(num), 64)
		if err != nil {
			return nil, false
		}
		again, err := json.Marshal(f)
		return f, err == nil && bytes.Equal(again, num)
	}
	return nil, false
}

// unknown reads the value of key, a field go-tuf does not know, into
// fields. A key that only differs in case from a field go-tuf knows
// there is refused: encoding/json would decode it into that field.
func (d *decoder) unknown(key string, known []string, fields map[string]any) bool {
	for _, k := range known {
		if bytes.EqualFold([]byte(key), []byte(k)) {
			return false
		}
	}
	v, ok := d.value()
	fields[key] = v
	return ok
}

// signatures reads the signatures: key IDs unique (go-tuf refuses
// repeated ones), signatures in lower-case hex.
func (d *decoder) signatures(out *[]metadata.Signature) bool {
	sigs := []metadata.Signature{}
	seen := map[string]bool{}
	ok := d.array(func() bool {
		s := metadata.Signature{UnrecognizedFields: map[string]any{}}
		var haveID, haveSig bool
		ok := d.object(func(key string) bool {
			switch key {
			case "keyid":
				id, ok := d.str()
				s.KeyID, haveID = id, true
				return ok
			case "sig":
				h, ok := d.str()
				if !ok || len(h)%2 != 0 || h != lowerHex(h) {
					return false
				}
				b, err := hex.DecodeString(h)
				s.Signature, haveSig = b, true
				return err == nil
			}
			return false
		})
		if !ok || !haveID || !haveSig || seen[s.KeyID] {
			return false
		}
		seen[s.KeyID] = true
		sigs = append(sigs, s)
		return true
	})
	*out = sigs
	return ok
}

// lowerHex returns h with its upper-case letters made lower-case, h itself
// when it has none.
func lowerHex(h string) string {
	for i := 0; i < len(h); i++ {
		if c := h[i]; c >= 'A' && c <= 'Z' {
			return string(bytes.ToLower([]byte(h)))
		}
	}
	return h
}

// targetsFields are the fields of TargetsType go-tuf reads itself.
var targetsFields = []string{"_type", "delegations", "expires", "spec_version", "targets", "version"}

// targets reads the signed part; every field go-tuf writes (all but
// delegations, written when there are some) must be present.
func (d *decoder) targets(t *metadata.TargetsType) bool {
	t.UnrecognizedFields = map[string]any{}
	have := 0
	ok := d.object(func(key string) bool {
		switch key {
		case "_type":
			s, ok := d.str()
			t.Type, have = s, have+1
			return ok && s == metadata.TARGETS
		case "spec_version":
			s, ok := d.str()
			t.SpecVersion, have = s, have+1
			return ok
		case "version":
			n, ok := d.integer(64)
			t.Version, have = n, have+1
			return ok
		case "expires":
			have++
			return d.time(&t.Expires)
		case "targets":
			// git-secure's metadata names no target files.
			t.Targets, have = map[string]*metadata.TargetFiles{}, have+1
			return d.expect('{') && d.expect('}')
		case "delegations":
			t.Delegations = &metadata.Delegations{}
			return d.delegations(t.Delegations)
		}
		return d.unknown(key, targetsFields, t.UnrecognizedFields)
	})
	return ok && have == 5
}

// time reads a time as encoding/json reads and writes a time.Time.
func (d *decoder) time(t *time.Time) bool {
	start := d.pos
	if _, ok := d.str(); !ok {
		return false
	}
	raw := d.data[start:d.pos]
	if err := t.UnmarshalJSON(raw); err != nil {
		return false
	}
	again, err := t.MarshalJSON()
	return err == nil && bytes.Equal(again, raw)
}

// delegations reads keys and roles, both present; no other field.
func (d *decoder) delegations(del *metadata.Delegations) bool {
	del.UnrecognizedFields = map[string]any{}
	var haveKeys, haveRoles bool
	ok := d.object(func(key string) bool {
		switch key {
		case "keys":
			haveKeys = true
			del.Keys = map[string]*metadata.Key{}
			return d.object(func(id string) bool {
				k := &metadata.Key{}
				del.Keys[id] = k
				return d.key(k)
			})
		case "roles":
			haveRoles = true
			del.Roles = []metadata.DelegatedRole{}
			return d.array(func() bool {
				del.Roles = append(del.Roles, metadata.DelegatedRole{})
				return d.role(&del.Roles[len(del.Roles)-1])
			})
		}
		return false
	})
	return ok && haveKeys && haveRoles
}

// key reads a key: keytype, keyval (public only) and scheme.
func (d *decoder) key(k *metadata.Key) bool {
	k.UnrecognizedFields = map[string]any{}
	k.Value.UnrecognizedFields = map[string]any{}
	have := 0
	ok := d.object(func(key string) bool {
		var ok bool
		switch key {
		case "keytype":
			k.Type, ok = d.str()
		case "scheme":
			k.Scheme, ok = d.str()
		case "keyval":
			ok = d.object(func(key string) bool {
				if key != "public" {
					return false
				}
				var ok bool
				k.Value.PublicKey, ok = d.str()
				have++
				return ok
			})
		default:
			return false
		}
		have++
		return ok
	})
	return ok && have == 4
}

// roleFields are the fields of DelegatedRole go-tuf reads itself.
var roleFields = []string{"keyids", "name", "path_hash_prefixes", "paths", "terminating", "threshold"}

// role reads a delegated role: name, keyids, threshold and terminating
// present, paths when there are (go-tuf writes them when not nil).
func (d *decoder) role(r *metadata.DelegatedRole) bool {
	r.UnrecognizedFields = map[string]any{}
	have := 0
	ok := d.object(func(key string) bool {
		var ok bool
		switch key {
		case "name":
			r.Name, ok = d.str()
		case "keyids":
			ok = d.strings(&r.KeyIDs)
		case "threshold":
			var n int64
			n, ok = d.integer(strconv.IntSize)
			r.Threshold = int(n)
		case "terminating":
			r.Terminating, ok = d.boolean()
		case "paths":
			return d.strings(&r.Paths)
		case "path_hash_prefixes":
			return false
		default:
			return d.unknown(key, roleFields, r.UnrecognizedFields)
		}
		have++
		return ok
	})
	return ok && have == 4
}
