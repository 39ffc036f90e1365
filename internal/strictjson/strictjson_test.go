package strictjson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"object", `{"a":1,"b":[1,2,{"c":null}]}`, true},
		{"duplicate key", `{"a":1,"a":2}`, false},
		{"nested duplicate", `{"a":{"b":1,"b":1}}`, false},
		{"same key in sibling objects", `[{"a":1},{"a":2}]`, true},
		{"trailing value", `{} {}`, false},
		{"truncated", `{"a":`, false},
		{"too deep", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), false},
		{"deep enough", strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), true},
		{"invalid utf8", "{\"a\":\"\xff\"}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check([]byte(tt.in), 1<<20)
			if (err == nil) != tt.ok {
				t.Fatalf("Check(%q) = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
		})
	}
	if err := Check([]byte(`"abc"`), 2); err == nil {
		t.Fatal("oversized input accepted")
	}
}

func FuzzCheck(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"c"}]}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = Check(data, 1<<16)
	})
}

func TestDecode(t *testing.T) {
	v, err := Decode([]byte(`{"a":[1,"x",{"b":true}],"c":null}`), 1<<10, 3)
	if err != nil {
		t.Fatal(err)
	}
	obj, ok := v.(Object)
	if !ok || len(obj) != 2 || obj["c"] != nil {
		t.Fatalf("Decode = %#v", v)
	}
	arr, ok := obj["a"].([]any)
	if !ok || len(arr) != 3 || arr[1] != "x" {
		t.Fatalf("a = %#v", obj["a"])
	}
	if inner, ok := arr[2].(Object); !ok || inner["b"] != true {
		t.Fatalf("a[2] = %#v", arr[2])
	}
	// The depth bound is the caller's: three levels pass above, two do not.
	if _, err := Decode([]byte(`{"a":[{"b":1}]}`), 1<<10, 2); err == nil || !errors.Is(err, ErrInvalid) {
		t.Fatalf("depth 3 under a bound of 2: %v", err)
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `[1] 2`, `{"a":`, "\"\xff\"", ``} {
		if _, err := Decode([]byte(bad), 1<<10, 8); !errors.Is(err, ErrInvalid) {
			t.Errorf("Decode(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

// FuzzDecode: Decode and Check agree on every input at the same bounds,
// and an accepted document is one encoding/json also accepts.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"c"}]}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Add([]byte(`[[[[1]]]]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, errD := Decode(data, 1<<16, MaxDepth)
		errC := Check(data, 1<<16)
		if (errD == nil) != (errC == nil) {
			t.Fatalf("Decode: %v, Check: %v", errD, errC)
		}
		if errD == nil && !json.Valid(data) {
			t.Fatalf("accepted what encoding/json refuses: %q", data)
		}
	})
}

// TestCheckItems: CheckItems refuses an object or array with more members
// than the bound, at any depth, through both readers (the fast walk and,
// for a document it refuses, the token reader), and accepts one at it.
func TestCheckItems(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		wantErr   string
	}{
		{"array at the bound", `[1,2,3]`, ""},
		{"object at the bound", `{"a":1,"b":2,"c":3}`, ""},
		{"array over", `[1,2,3,4]`, "an array has more than 3 elements"},
		{"object over", `{"a":1,"b":2,"c":3,"d":4}`, "an object has more than 3 members"},
		{"nested array over", `{"a":{"b":[[],[],[],[]]}}`, "an array has more than 3 elements"},
		{"empty", `{"a":[],"b":{}}`, ""},
		{"over, and invalid later", `[1,2,3,4,}`, "invalid JSON"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckItems([]byte(tt.doc), 1<<10, 3)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckItems(%s) = %v", tt.doc, err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("CheckItems(%s) = %v, want %q", tt.doc, err, tt.wantErr)
			}
		})
	}
	if err := Check([]byte(`[1,2,3,4]`), 1<<10); err != nil {
		t.Errorf("Check bounds collections: %v", err)
	}
}
