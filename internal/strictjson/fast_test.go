package strictjson

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// fastCases are documents where a walk that skips the token API could
// go wrong: escapes (keys equal only once unescaped), numbers, blank
// space everywhere, nesting at the limit.
var fastCases = []string{
	`{"a":1,"\u0061":2}`,
	`{"a\"b":1,"a\\":[true,false,null]}`,
	`{"\ud800":1,"\ufffd":2}`,
	`["\ud83d\ude00","\u00e9","é","\/\b\f\n\r\t"]`,
	` { "a" : [ 1 , -0.5e+10 , 2E-3 , 0 ] , "b" : { } , "c" : [ ] } `,
	`-12`, `"x"`, `true`, `null`, `[]`, `{}`,
	`{"a":1} x`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `01`, `"\x"`, `{"a":1,"a":1}`,
	strings.Repeat("[", 3) + strings.Repeat("]", 3),
	strings.Repeat(`{"a":`, 4) + "1" + strings.Repeat("}", 4),
}

// TestReadFastMatchesReader checks the walk against the token reader it
// stands in for: the same documents accepted, with the same values.
func TestReadFastMatchesReader(t *testing.T) {
	for _, doc := range fastCases {
		for depth := 0; depth <= 5; depth++ {
			for _, build := range []bool{true, false} {
				compareReaders(t, []byte(doc), depth, build)
			}
		}
	}
}

func FuzzReadFastMatchesReader(f *testing.F) {
	for _, doc := range fastCases {
		f.Add([]byte(doc), 3, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, depth int, build bool) {
		if depth < 0 || depth > MaxDepth {
			return
		}
		compareReaders(t, data, depth, build)
	})
}

func compareReaders(t *testing.T, data []byte, depth int, build bool) {
	t.Helper()
	if !utf8.Valid(data) {
		return // refused before either reader runs
	}
	// maxItems 0 is Check and Decode; 1 and 2 are CheckItems' bound met
	// and passed by the cases' small collections.
	for items := 0; items <= 2; items++ {
		fast, ok := readFast(data, depth, items, build)
		slow, err := readTokens(data, depth, items, build)
		if ok != (err == nil) {
			t.Fatalf("%q depth %d items %d: walk ok=%v, token reader err=%v", data, depth, items, ok, err)
		}
		// Without build only acceptance counts: Check drops the value.
		if ok && build && !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q depth %d items %d: walk %#v, token reader %#v", data, depth, items, fast, slow)
		}
	}
}
