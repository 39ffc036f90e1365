package fastpath

import "testing"

// Deltas are applied exactly, and every bound is checked.
func TestApplyDelta(t *testing.T) {
	base := []byte("0123456789abcdefghij")
	cases := []struct {
		name  string
		delta []byte
		want  string // "" for an error
	}{
		{"copy and insert", []byte{20, 7, 0x91, 2, 4, 3, 'X', 'Y', 'Z'}, "2345XYZ"},
		{"whole base", []byte{20, 20, 0x90, 20}, string(base)},
		{"wrong base size", []byte{19, 1, 1, 'a'}, ""},
		{"result longer than announced", []byte{20, 1, 2, 'a', 'b'}, ""},
		{"result shorter than announced", []byte{20, 3, 1, 'a'}, ""},
		{"copy past the base", []byte{20, 4, 0x91, 18, 4}, ""},
		{"insert past the end", []byte{20, 4, 4, 'a'}, ""},
		{"reserved instruction", []byte{20, 0, 0}, ""},
		{"truncated copy", []byte{20, 4, 0x91}, ""},
		{"truncated header", []byte{0x80}, ""},
		{"size 0 means 64 KiB", []byte{20, 4, 0x80}, ""},
	}
	for _, c := range cases {
		got, err := applyDelta(base, c.delta, 1<<20)
		if c.want == "" {
			if err == nil {
				t.Errorf("%s: applied (%q), want an error", c.name, got)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if _, err := applyDelta(base, []byte{20, 0x80, 0x80, 0x80, 0x80, 1}, 1<<20); err == nil {
		t.Error("a result over the size limit was announced and accepted")
	}
}

func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("0123456789"), []byte{10, 7, 0x91, 2, 4, 3, 'X', 'Y', 'Z'})
	f.Add([]byte{}, []byte{0, 0})
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		out, err := applyDelta(base, delta, 1<<16)
		if err == nil && len(out) > 1<<16 {
			t.Fatalf("result of %d bytes over the limit", len(out))
		}
	})
}
