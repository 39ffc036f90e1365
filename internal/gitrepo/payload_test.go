package gitrepo

import (
	"bytes"
	"strings"
	"testing"
)

// splitSignedPayload is SignedPayload as it was written on splitHeaders:
// the reference the in-place walk must agree with on any input.
func splitSignedPayload(raw []byte) []byte {
	hs, _, err := refSplitHeaders(raw)
	if err != nil {
		return nil
	}
	out := make([]byte, 0, len(raw))
	pos := 0
	for _, h := range hs {
		if strings.HasPrefix(h.key, "gpgsig") {
			out = append(out, raw[pos:h.start]...)
			pos = h.end
		}
	}
	return append(out, raw[pos:]...)
}

// FuzzSignedPayload checks SignedPayload against splitSignedPayload.
func FuzzSignedPayload(f *testing.F) {
	for _, s := range []string{
		"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a> 1 +0000\ncommitter a <a> 1 +0000\ngpgsig -----BEGIN SSH SIGNATURE-----\n abc\n -----END SSH SIGNATURE-----\n\nmsg\n",
		"tree 1\ngpgsig x\n y\ngpgsig-sha256 z\n w\nother v\n\nbody",
		"gpgsig a\n\n",
		"tree a\n b\ngpgsig c\n",
		" cont\n\n",
		"tree a\n\x00\n\n",
		"",
		"\n",
		"k v\ngpgsigx 1\n 2\n 3\nlast x\n\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got := (&Commit{Raw: raw}).SignedPayload()
		want := splitSignedPayload(raw)
		if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("SignedPayload(%q) = %q, want %q", raw, got, want)
		}
	})
}
