package remote

import (
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

func TestOptionDepth(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"1", "ok"}, {"2147483647", "ok"}, {"", "error invalid depth"}, {"-1", "error invalid depth"},
		{"1 2", "error invalid depth"}, {"12345678901", "error invalid depth"}, {"x", "error invalid depth"},
	} {
		h := &Helper{}
		if got := h.optionDepth(c.in); got != c.want {
			t.Errorf("optionDepth(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// addUnfetched adds the listed forge refs the private fetch left out, and
// nothing else: a branch missing from the fetch stays missing (it was
// deleted meanwhile), it is not taken from the unverified listing.
func TestAddUnfetched(t *testing.T) {
	a, b := gitrepo.Hash{1}, gitrepo.Hash{2}
	fetched := map[string]gitrepo.Hash{"refs/heads/main": a}
	listing := map[string]gitrepo.Hash{"refs/heads/main": b, "refs/heads/gone": b, "refs/pull/1/head": b, "refs/merge-requests/2/head": b}
	got := addUnfetched(fetched, listing)
	want := map[string]gitrepo.Hash{"refs/heads/main": a, "refs/pull/1/head": b, "refs/merge-requests/2/head": b}
	if len(got) != len(want) {
		t.Fatalf("addUnfetched = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

// A filter spec goes to no git command line, but it is checked as one
// word all the same: an option that git never sends is refused.
func TestOptionFilter(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"blob:none", "ok"}, {"tree:0", "ok"}, {"combine:blob:none+tree:1", "ok"},
		{"", "error invalid filter"}, {"-x", "error invalid filter"}, {"blob:none x", "error invalid filter"},
		{"blob:none\x7f", "error invalid filter"}, {"blob:n\u00f6ne", "error invalid filter"},
	} {
		h := &Helper{}
		if got := h.optionFilter(c.in); got != c.want {
			t.Errorf("optionFilter(%q) = %q, want %q", c.in, got, c.want)
		}
		if c.want == "ok" && h.filter != c.in {
			t.Errorf("optionFilter(%q) kept %q", c.in, h.filter)
		}
	}
}
