package gitrepo

import (
	"fmt"
	"strconv"
	"strings"
)

// Refspec is one fetch refspec of a remote (remote.<name>.fetch), as git
// parses it: "[+]<src>:<dst>" maps the remote's refs matching src onto
// local refs matching dst, with at most one "*" on each side (both or
// neither); "^<src>" is a negative refspec: refs matching src are never
// fetched.
type Refspec struct {
	Force    bool
	Negative bool
	Src      string
	Dst      string
}

// ParseFetchRefspec parses a fetch refspec. It refuses what it cannot map
// back with certainty: a source that is not a full ref name (git would
// guess among refs/heads/, refs/tags/, ... on the remote), a refspec
// without a destination (it stores no remote-tracking ref), and patterns
// git itself refuses.
func ParseFetchRefspec(s string) (Refspec, error) {
	bad := func(why string) (Refspec, error) {
		return Refspec{}, fmt.Errorf("gitrepo: fetch refspec %s: %s", strconv.QuoteToASCII(truncate(s, 100)), why)
	}
	var r Refspec
	rest := s
	switch {
	case strings.HasPrefix(rest, "^"):
		r.Negative, rest = true, rest[1:]
		if strings.Contains(rest, ":") {
			return bad("a negative refspec has no destination")
		}
		if err := checkRefPattern(rest); err != nil {
			return bad(err.Error())
		}
		r.Src = rest
		return r, nil
	case strings.HasPrefix(rest, "+"):
		r.Force, rest = true, rest[1:]
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 || i == len(rest)-1 {
		return bad("no destination: it stores no remote-tracking ref")
	}
	r.Src, r.Dst = rest[:i], rest[i+1:]
	if strings.Count(r.Src, "*") != strings.Count(r.Dst, "*") {
		return bad("a pattern needs one \"*\" on each side")
	}
	for _, side := range []string{r.Src, r.Dst} {
		if err := checkRefPattern(side); err != nil {
			return bad(err.Error())
		}
	}
	return r, nil
}

// checkRefPattern accepts a full ref name with at most one "*".
func checkRefPattern(p string) error {
	if !strings.HasPrefix(p, "refs/") {
		return fmt.Errorf("%s is not a full ref name (refs/...)", strconv.QuoteToASCII(truncate(p, 100)))
	}
	if strings.Count(p, "*") > 1 {
		return fmt.Errorf("%s has more than one \"*\"", strconv.QuoteToASCII(truncate(p, 100)))
	}
	return ValidRefName(strings.Replace(p, "*", "x", 1))
}

// String returns the refspec as git writes it.
func (r Refspec) String() string {
	switch {
	case r.Negative:
		return "^" + r.Src
	case r.Force:
		return "+" + r.Src + ":" + r.Dst
	}
	return r.Src + ":" + r.Dst
}

// MatchSrc reports whether the remote ref name matches the source side.
func (r Refspec) MatchSrc(name string) bool {
	_, ok := matchRefPattern(r.Src, name)
	return ok
}

// SrcOf maps a local ref back to the remote ref that a fetch with this
// refspec stores there: ok is false when local does not match the
// destination side, or for a negative refspec.
func (r Refspec) SrcOf(local string) (string, bool) {
	if r.Negative {
		return "", false
	}
	star, ok := matchRefPattern(r.Dst, local)
	if !ok {
		return "", false
	}
	return strings.Replace(r.Src, "*", star, 1), true
}

// matchRefPattern matches name against a pattern with at most one "*",
// which matches any run of characters (as in git's refspecs, slashes
// included); it returns what the "*" matched.
func matchRefPattern(pattern, name string) (string, bool) {
	before, after, glob := strings.Cut(pattern, "*")
	if !glob {
		return "", pattern == name
	}
	if len(name) < len(before)+len(after) || !strings.HasPrefix(name, before) || !strings.HasSuffix(name, after) {
		return "", false
	}
	return name[len(before) : len(name)-len(after)], true
}

// DstOf maps a remote ref to the local ref a fetch with this refspec
// stores it in: ok is false when name does not match the source side, or
// for a negative refspec.
func (r Refspec) DstOf(name string) (string, bool) {
	if r.Negative {
		return "", false
	}
	star, ok := matchRefPattern(r.Src, name)
	if !ok {
		return "", false
	}
	return strings.Replace(r.Dst, "*", star, 1), true
}

// Refspecs are a remote's fetch refspecs (remote.<name>.fetch), in
// configuration order.
type Refspecs []Refspec

// Excluded reports whether a negative refspec keeps the remote ref name
// out of every fetch.
func (s Refspecs) Excluded(name string) bool {
	for _, spec := range s {
		if spec.Negative && spec.MatchSrc(name) {
			return true
		}
	}
	return false
}

// Covers reports whether a fetch stores the remote ref name somewhere.
func (s Refspecs) Covers(name string) bool {
	_, _, ok := s.Map(name)
	return ok
}

// Map is where a fetch stores the remote ref name, as git does: the first
// refspec that maps it, unless a negative one excludes it; force says
// whether that refspec forces a move that is not a fast-forward.
func (s Refspecs) Map(name string) (dst string, force, ok bool) {
	if s.Excluded(name) {
		return "", false, false
	}
	for _, spec := range s {
		if d, ok := spec.DstOf(name); ok {
			return d, spec.Force, true
		}
	}
	return "", false, false
}
