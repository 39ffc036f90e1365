package fastpath

import (
	"bytes"
	"compress/zlib"
	"io"
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

// zlibStored writes streams every zlib reader reads back exactly: empty,
// small, at a stored block's limit and over it (several blocks).
func TestZlibStored(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 0xffff - 11, 0xffff - 10, 0xffff, 0x10000, 3*0xffff + 7} {
		header := []byte("blob 123\x00")
		data := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
		var buf bytes.Buffer
		zlibStored(&buf, header, data)
		zr, err := zlib.NewReader(&buf)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if err := zr.Close(); err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if want := append(append([]byte(nil), header...), data...); !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: read back %d bytes, want %d", n, len(got), len(want))
		}
	}
}
