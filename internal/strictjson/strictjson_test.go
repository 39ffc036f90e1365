package strictjson

import (
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
