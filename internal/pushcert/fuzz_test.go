package pushcert

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, refuses anything over the limits, and
// whatever it accepts is kept byte for byte, re-encodes to exactly its
// input, and splits into the signed part and one signature block.
func FuzzParse(f *testing.F) {
	raw := readTestdata(f, "signed.cert")
	f.Add(raw)
	s := string(raw)
	f.Add([]byte(strings.Replace(s, "push-option ci.skip\n", "", 1)))
	f.Add([]byte(strings.Replace(s, "pusher SHA256:5B5cvi9dEYnYrX9smGjb4k93lga5QfLu9w+gRXxmKho  ", "pusher A U Thor <a@example.com> ", 1)))
	f.Add([]byte("certificate version 0.1\npusher k 1 +0000\n\n" + strings.Repeat("0", 40) + " " + strings.Repeat("1", 40) + " refs/heads/x\n" + sigBegin + "AAAA\n" + sigEnd))
	for _, name := range []string{"signed-openpgp.cert", "signed-openpgp-fpr.cert"} {
		pgp := readTestdata(f, name)
		f.Add(pgp)
		f.Add(bytes.Replace(pgp, []byte(pgpBegin+"\n"), []byte(pgpBegin+"Version: x\n\n"), 1))
		f.Add(append(bytes.Clone(pgp), raw[bytes.Index(raw, []byte(sigBegin)):]...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		if len(data) > MaxSize || len(c.Updates) == 0 || len(c.Updates) > MaxUpdates || len(c.Options) > MaxOptions {
			t.Fatalf("accepted past the limits: %d bytes, %d updates, %d options", len(data), len(c.Updates), len(c.Options))
		}
		if !bytes.Equal(c.Raw, data) || !bytes.Equal(append(append([]byte(nil), c.Payload...), c.Signature...), data) {
			t.Fatalf("Raw or Payload+Signature differ from the input")
		}
		if got := c.Encode(); !bytes.Equal(got, data) {
			t.Fatalf("re-encoding differs:\n%q\n%q", got, data)
		}
		begin := sigBegin
		if c.Format == FormatOpenPGP {
			begin = pgpBegin
		}
		if !bytes.HasPrefix(c.Signature, []byte(begin)) || bytes.Count(c.Signature, []byte("-----BEGIN ")) != 1 || bytes.Count(c.Signature, []byte("-----END ")) != 1 {
			t.Fatalf("signature block %q", c.Signature)
		}
		seen := map[string]bool{}
		for _, u := range c.Updates {
			if seen[u.Ref] || !strings.HasPrefix(u.Ref, "refs/") {
				t.Fatalf("update %+v", u)
			}
			seen[u.Ref] = true
		}
	})
}
