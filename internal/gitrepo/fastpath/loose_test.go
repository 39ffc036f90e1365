package fastpath

import (
	"strings"
	"testing"
)

// FuzzInflateLoose: loose object files come from the repository; whatever
// they hold, reading must not panic and must only accept contents that
// hash to the name asked for.
func FuzzInflateLoose(f *testing.F) {
	f.Add([]byte("x\x9c\x4b\xca\xc9\x4f\x52\x30\x64\x00\x00\x11\x36\x03\x0b"), []byte("blob 1\x00"))
	f.Add([]byte{}, []byte("tree 0\x00"))
	f.Fuzz(func(t *testing.T, file, want []byte) {
		h := ObjectID("blob", want)
		typ, data, ok := inflateLoose(strings.NewReader(string(file)), h, 1<<16)
		if ok && ObjectID(typ, data) != h {
			t.Fatalf("accepted %s %q for %x", typ, data, h)
		}
	})
}
