package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// refSplitHeaders is splitHeaders as it was, copying every value. It
// repeats the production splitter on purpose: it is the reference
// FuzzSplitHeadersMatchesReference holds the zero-copy one to, so it must
// not share code with it.
func refSplitHeaders(raw []byte) ([]header, []byte, error) {
	// A commit has a handful of headers: one allocation for all of them.
	hs := make([]header, 0, 8)
	pos := 0
	for {
		if pos >= len(raw) {
			return nil, nil, errors.New("missing blank line after headers")
		}
		if raw[pos] == '\n' {
			return hs, raw[pos+1:], nil
		}
		nl := bytes.IndexByte(raw[pos:], '\n')
		if nl < 0 {
			return nil, nil, errors.New("unterminated header line")
		}
		line := raw[pos : pos+nl]
		if bytes.IndexByte(line, 0) >= 0 {
			return nil, nil, errors.New("NUL in header")
		}
		if line[0] == ' ' {
			if len(hs) == 0 {
				return nil, nil, errors.New("continuation line without header")
			}
			h := &hs[len(hs)-1]
			h.value = append(append(h.value, '\n'), line[1:]...)
			h.end = pos + nl + 1
			pos = h.end
			continue
		}
		key, value, ok := bytes.Cut(line, []byte{' '})
		if !ok || len(key) == 0 {
			return nil, nil, fmt.Errorf("malformed header line %q", truncate(string(line), 40))
		}
		for _, c := range key {
			if c <= ' ' || c >= 0x7f {
				return nil, nil, fmt.Errorf("malformed header key %q", truncate(string(key), 40))
			}
		}
		// The value is copied once, continuation lines included (a
		// signature's armor), so that it owns its bytes.
		end := pos + nl + 1
		for end < len(raw) && raw[end] == ' ' {
			next := bytes.IndexByte(raw[end:], '\n')
			if next < 0 {
				break
			}
			end += next + 1
		}
		hs = append(hs, header{key: headerKey(key), value: append(make([]byte, 0, end-pos-len(key)-1), value...), start: pos, end: pos + nl + 1})
		pos += nl + 1
	}
}

// FuzzSplitHeadersMatchesReference: splitHeaders, which copies only the
// values that span several lines, finds the same headers, values, offsets
// and message as the version that copied every value, or the same error.
func FuzzSplitHeadersMatchesReference(f *testing.F) {
	commits, _ := realObjects(f)
	for _, c := range commits {
		f.Add(c)
	}
	id := "A <a@x> 1700000000 +0130\n"
	f.Add([]byte("tree " + EmptyTreeHash + "\nauthor " + id + "committer " + id + "encoding x\ngpgsig a\n b\n \n c\n\nmsg"))
	f.Add([]byte("gpgsig one\nx y\n z\n\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		in := bytes.Clone(raw)
		want, wantMsg, wantErr := refSplitHeaders(raw)
		var buf [8]header
		got, msg, err := splitHeaders(buf[:0], raw, nil)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("splitHeaders: %v; the reference: %v", err, wantErr)
		}
		if len(got) != len(want) || !bytes.Equal(msg, wantMsg) {
			t.Fatalf("%d headers, message %q; the reference %d, %q", len(got), msg, len(want), wantMsg)
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.key != w.key || !bytes.Equal(g.value, w.value) || g.start != w.start || g.end != w.end {
				t.Fatalf("header %d: %q %q %d %d; the reference %q %q %d %d", i, g.key, g.value, g.start, g.end, w.key, w.value, w.start, w.end)
			}
			// Appending to a value never writes into raw.
			_ = append(g.value, '!')
		}
		if !bytes.Equal(raw, in) {
			t.Fatal("raw was modified")
		}
	})
}
