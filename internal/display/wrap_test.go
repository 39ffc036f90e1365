package display

import (
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	long := "entry #4 (68de88352fb8) refs/heads/main, rule protect-main: threshold not met: needs 2 of alice, bob, has 1 (alice); 1 more needed"
	cmd := "git secure attest approve refs/heads/main --from 8ff7123730810abf265554d42f7bab463a74dac6 --to 0c38234c4374c97d5383715ffc6687a97e78fa22"
	tests := []struct {
		name, prefix, msg string
		width             int
		want              string
	}{
		{"short", "git-secure: ", "fine", 100, "git-secure: fine\n"},
		{"wrapped", "git-secure: error: ", long, 60,
			"git-secure: error: entry #4 (68de88352fb8) refs/heads/main,\n" +
				"git-secure: error:   rule protect-main: threshold not met:\n" +
				"git-secure: error:   needs 2 of alice, bob, has 1 (alice); 1\n" +
				"git-secure: error:   more needed\n"},
		{"command on its own line", "git-secure: hint: ", "bob can approve with: " + cmd, 60,
			"git-secure: hint: bob can approve with:\ngit-secure: hint:   " + cmd + "\n"},
		{"long word", "p: ", strings.Repeat("x", 20), 10, "p: " + strings.Repeat("x", 20) + "\n"},
		{"paragraphs", "p: ", "a\nb", 10, "p: a\np: b\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Wrap(tt.prefix, tt.msg, tt.width); got != tt.want {
				t.Errorf("Wrap =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func FuzzWrap(f *testing.F) {
	f.Add("a b c: git x y", 20)
	f.Fuzz(func(t *testing.T, msg string, width int) {
		out := Wrap("p: ", msg, width)
		if !strings.HasSuffix(out, "\n") {
			t.Fatalf("no final newline: %q", out)
		}
		// No word is lost or changed.
		var words []string
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			words = append(words, strings.Fields(strings.TrimPrefix(line, "p:"))...)
		}
		if got, want := strings.Join(words, " "), strings.Join(strings.Fields(msg), " "); got != want {
			t.Fatalf("words changed: %q -> %q", want, got)
		}
	})
}
