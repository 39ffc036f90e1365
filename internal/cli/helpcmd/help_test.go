package helpcmd

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestSuggest(t *testing.T) {
	cmds := []*cli.Command{{Name: "verify"}, {Name: "version"}, {Name: "policy"}, {Name: "hook", Hidden: true}, {Name: "init"}}
	for _, tc := range []struct {
		typo string
		want string
	}{
		{"verfy", "verify"},
		{"verison", "version"},
		{"ver", "verify version"}, // a prefix: both
		{"plicy", "policy"},
		{"hok", ""}, // hidden commands are never suggested
		{"int", "init"},
		{"xyzzy", ""},
	} {
		if got := strings.Join(suggest(tc.typo, cmds), " "); got != tc.want {
			t.Errorf("suggest(%q) = %q, want %q", tc.typo, got, tc.want)
		}
	}
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "abc", 3}, {"verify", "verify", 0}, {"verfy", "verify", 1}, {"vreify", "verify", 1}, {"kitten", "sitting", 3}} {
		if d := levenshtein(tc.a, tc.b); d != tc.d {
			t.Errorf("levenshtein(%q, %q) = %d, want %d", tc.a, tc.b, d, tc.d)
		}
	}
}
