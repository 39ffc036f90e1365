package freshness

import (
	"bytes"
	"testing"
	"time"
)

// FuzzParse: Parse never panics, and whatever it accepts re-encodes to
// exactly its input (one encoding per statement).
func FuzzParse(f *testing.F) {
	f.Add(signed(f, t0, time.Hour, testSigner(f, "a")))
	f.Add(signed(f, t0, 24*time.Hour, testSigner(f, "a"), testSigner(f, "b")))
	f.Add([]byte("format: git-secure-timestamp/1\nrsl: 0123456789abcdef0123456789abcdef01234567\ntime: 2026-01-02T03:04:05Z\nexpires: 2026-01-03T03:04:05Z\n" + sigBegin + "AAAA\n" + sigEnd))
	f.Fuzz(func(t *testing.T, data []byte) {
		sd, err := Parse(data)
		if err != nil {
			return
		}
		if !bytes.Equal(sd.Encode(), data) {
			t.Fatalf("re-encoding differs:\n%q\n%q", sd.Encode(), data)
		}
		if !bytes.Equal(sd.Statement.Encode(), sd.Payload) {
			t.Fatalf("payload is not the statement's encoding")
		}
	})
}
