package remote

import (
	"slices"
	"testing"
)

// TestOptionPushCert: git push --signed[=if-asked] reaches the helper as
// "option pushcert"; the helper's own push to the server then carries
// --signed with the same value, and no other value is taken.
func TestOptionPushCert(t *testing.T) {
	for _, c := range []struct {
		options []string
		answer  string
		flag    string // in pushFlags, "" for none
	}{
		{[]string{"pushcert true"}, "ok", "--signed=true"},
		{[]string{"pushcert if-asked"}, "ok", "--signed=if-asked"},
		{[]string{"pushcert true", "pushcert false"}, "ok", ""},
		{[]string{"pushcert yes"}, "error invalid pushcert value", ""},
		{[]string{"pushcert --exec=x"}, "error invalid pushcert value", ""},
	} {
		h := &Helper{}
		var answer string
		for _, o := range c.options {
			answer = h.option(o)
		}
		if answer != c.answer {
			t.Errorf("%q: answer %q, want %q", c.options, answer, c.answer)
		}
		flags := h.pushFlags()
		if c.flag == "" {
			for _, f := range flags {
				if len(f) >= 8 && f[:8] == "--signed" {
					t.Errorf("%q: push flags %q sign", c.options, flags)
				}
			}
		} else if !slices.Contains(flags, c.flag) {
			t.Errorf("%q: push flags %q, want %s", c.options, flags, c.flag)
		}
	}
}
