package remote

import (
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

func TestStateRoundTrip(t *testing.T) {
	h1 := gitrepo.Hash{1, 2, 3}
	h2 := gitrepo.Hash{9}
	// A server's listing names HEAD when it points at a branch (ls-remote
	// lists it): a listing with HEAD must be remembered too, or no push to
	// an ordinary server ever answers from memory.
	st := &remoteState{Head: "refs/heads/main", Refs: map[string]gitrepo.Hash{"HEAD": h1, "refs/heads/main": h1, "refs/secure/rsl": h2}}
	url := "https://user:secret@example.com/repo.git"
	data := st.encode(url)
	if strings.Contains(string(data), "secret") {
		t.Fatalf("the encoded listing holds the URL's credentials:\n%s", data)
	}
	got, err := parseState(data, url)
	if err != nil {
		t.Fatal(err)
	}
	if got.Head != st.Head || len(got.Refs) != 3 || got.Refs["HEAD"] != h1 || got.Refs["refs/heads/main"] != h1 || got.Refs["refs/secure/rsl"] != h2 {
		t.Fatalf("round trip: %+v", got)
	}
	if _, err := parseState(data, "https://example.com/other.git"); err == nil {
		t.Error("a listing remembered for another URL was used")
	}
	// A verified state says until when it holds.
	st.Until = time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	got, err = parseState(st.encode(url), url)
	if err != nil || !got.Until.Equal(st.Until) || len(got.Refs) != 3 {
		t.Fatalf("round trip with until: %+v, %v", got, err)
	}
}

func TestParseStateRejects(t *testing.T) {
	url := "file:///srv/r.git"
	key := "url " + urlKey(url) + "\n"
	main := strings.Repeat("a", 40)
	for _, tc := range []struct{ name, data string }{
		{"empty", ""},
		{"no head line", key},
		{"bad head", key + "head ../x\n"},
		{"bad hash", key + "head \n" + "xyz refs/heads/main\n"},
		{"zero hash", key + "head \n" + strings.Repeat("0", 40) + " refs/heads/main\n"},
		{"bad ref name", key + "head \n" + main + " refs/heads/a..b\n"},
		{"other top-level name", key + "head \n" + main + " FETCH_HEAD\n"},
		{"no separator", key + "head \n" + main + "\n"},
		{"zero until", key + "head \nuntil 0\n"},
		{"negative until", key + "head \nuntil -5\n"},
		{"bad until", key + "head \nuntil tomorrow\n"},
		{"until after the refs", key + "head \n" + main + " refs/heads/main\nuntil 5\n"},
		{"long line", key + "head \n" + main + " refs/heads/" + strings.Repeat("x", 70000) + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if st, err := parseState([]byte(tc.data), url); err == nil {
				t.Fatalf("parsed %q as %+v", tc.data, st)
			}
		})
	}
}

// FuzzParseState: the remembered listing is read from the git directory;
// whatever it holds, parsing must not panic and what it accepts must
// survive a round trip.
func FuzzParseState(f *testing.F) {
	url := "file:///srv/r.git"
	f.Add([]byte("url " + urlKey(url) + "\nhead refs/heads/main\n" + strings.Repeat("a", 40) + " refs/heads/main\n"))
	f.Add([]byte("url x\nhead \n"))
	f.Add([]byte("url " + urlKey(url) + "\nhead \nuntil 1800000000\n" + strings.Repeat("b", 40) + " refs/secure/rsl\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := parseState(data, url)
		if err != nil {
			return
		}
		again, err := parseState(st.encode(url), url)
		if err != nil || again.Head != st.Head || len(again.Refs) != len(st.Refs) || !again.Until.Equal(st.Until) {
			t.Fatalf("round trip of an accepted listing failed: %v", err)
		}
		for name, h := range st.Refs {
			if again.Refs[name] != h {
				t.Fatalf("round trip changed %s", name)
			}
		}
	})
}
