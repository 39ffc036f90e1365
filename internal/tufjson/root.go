package tufjson

import (
	"strconv"

	"github.com/theupdateframework/go-tuf/v2/metadata"
)

// Root decodes data as metadata.Metadata[metadata.RootType] (root.json),
// as Targets decodes targets metadata: when it returns true, the value is
// the one go-tuf's FromBytes returns for data, and go-tuf's ToBytes(false)
// of that value is data, byte for byte. Every policy read (a record, a
// push's hooks and helper, a verification) decodes root.json, which
// go-tuf read three times over and git-secure then encoded again to
// compare. It reports false for anything else (blank space, keys out of
// order, a field missing, null, unknown fields of the envelope, its
// signatures or keys, a key value other than a public key): the caller
// then decodes data with go-tuf. Unknown fields of the signed part and of
// roles are kept, as go-tuf keeps them. data should be a document
// strictjson.Check accepted; Root reads any input without panicking.
func Root(data []byte) (*metadata.Metadata[metadata.RootType], bool) {
	return envelope(data, (*decoder).root)
}

// rootFields are the fields of RootType go-tuf reads itself.
var rootFields = []string{"_type", "consistent_snapshot", "expires", "keys", "roles", "spec_version", "version"}

// root reads the signed part; go-tuf writes every field.
func (d *decoder) root(r *metadata.RootType) bool {
	r.UnrecognizedFields = map[string]any{}
	have := 0
	ok := d.object(func(key string) bool {
		var ok bool
		switch key {
		case "_type":
			r.Type, ok = d.str()
			ok = ok && r.Type == metadata.ROOT
		case "spec_version":
			r.SpecVersion, ok = d.str()
		case "consistent_snapshot":
			r.ConsistentSnapshot, ok = d.boolean()
		case "version":
			r.Version, ok = d.integer(64)
		case "expires":
			ok = d.time(&r.Expires)
		case "keys":
			r.Keys = map[string]*metadata.Key{}
			ok = d.object(func(id string) bool {
				k := &metadata.Key{}
				r.Keys[id] = k
				return d.key(k)
			})
		case "roles":
			r.Roles = map[string]*metadata.Role{}
			ok = d.object(func(name string) bool {
				role := &metadata.Role{}
				r.Roles[name] = role
				return d.rootRole(role)
			})
		default:
			return d.unknown(key, rootFields, r.UnrecognizedFields)
		}
		have++
		return ok
	})
	return ok && have == len(rootFields)
}

// rootRoleFields are the fields of Role go-tuf reads itself.
var rootRoleFields = []string{"keyids", "threshold"}

// rootRole reads a top-level role: keyids and threshold, both present.
func (d *decoder) rootRole(r *metadata.Role) bool {
	r.UnrecognizedFields = map[string]any{}
	have := 0
	ok := d.object(func(key string) bool {
		var ok bool
		switch key {
		case "keyids":
			ok = d.strings(&r.KeyIDs)
		case "threshold":
			var n int64
			n, ok = d.integer(strconv.IntSize)
			r.Threshold = int(n)
		default:
			return d.unknown(key, rootRoleFields, r.UnrecognizedFields)
		}
		have++
		return ok
	})
	return ok && have == len(rootRoleFields)
}
