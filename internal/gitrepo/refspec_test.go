package gitrepo

import (
	"os/exec"
	"strings"
	"testing"
)

func TestParseFetchRefspec(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    Refspec
		wantErr string
	}{
		{in: "+refs/heads/*:refs/remotes/origin/*", want: Refspec{Force: true, Src: "refs/heads/*", Dst: "refs/remotes/origin/*"}},
		{in: "refs/heads/main:refs/remotes/origin/main", want: Refspec{Src: "refs/heads/main", Dst: "refs/remotes/origin/main"}},
		{in: "^refs/heads/wip/*", want: Refspec{Negative: true, Src: "refs/heads/wip/*"}},
		{in: "+refs/heads/*:refs/remotes/origin/heads/*", want: Refspec{Force: true, Src: "refs/heads/*", Dst: "refs/remotes/origin/heads/*"}},
		{in: "main:refs/remotes/origin/main", wantErr: "not a full ref name"},
		{in: "HEAD:refs/remotes/origin/HEAD", wantErr: "not a full ref name"},
		{in: "refs/heads/main", wantErr: "no destination"},
		{in: "refs/heads/main:", wantErr: "no destination"},
		{in: "refs/heads/*:refs/remotes/origin/main", wantErr: "one \"*\" on each side"},
		{in: "refs/heads/*/*:refs/remotes/origin/*/*", wantErr: "more than one"},
		{in: "^refs/heads/x:refs/remotes/x", wantErr: "negative"},
		{in: "refs/heads/a..b:refs/remotes/origin/x", wantErr: "invalid ref name"},
		{in: "+refs/heads/*:refs/remotes/o rigin/*", wantErr: "invalid ref name"},
		{in: "", wantErr: "no destination"},
	} {
		got, err := ParseFetchRefspec(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseFetchRefspec(%q) = %+v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseFetchRefspec(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
		if got.String() != tt.in {
			t.Errorf("%+v.String() = %q; want %q", got, got.String(), tt.in)
		}
	}
}

func TestRefspecSrcOf(t *testing.T) {
	glob := Refspec{Force: true, Src: "refs/heads/*", Dst: "refs/remotes/origin/*"}
	odd := Refspec{Src: "refs/heads/*", Dst: "refs/remotes/origin/heads/*"}
	exact := Refspec{Src: "refs/heads/main", Dst: "refs/remotes/origin/main"}
	for _, tt := range []struct {
		spec  Refspec
		local string
		want  string
	}{
		{glob, "refs/remotes/origin/main", "refs/heads/main"},
		{glob, "refs/remotes/origin/a/b", "refs/heads/a/b"},
		{glob, "refs/remotes/other/main", ""},
		{glob, "refs/heads/main", ""},
		{odd, "refs/remotes/origin/heads/main", "refs/heads/main"},
		{odd, "refs/remotes/origin/main", ""},
		{exact, "refs/remotes/origin/main", "refs/heads/main"},
		{exact, "refs/remotes/origin/mainx", ""},
		{Refspec{Negative: true, Src: "refs/heads/*"}, "refs/heads/main", ""},
	} {
		if _, ok := (Refspec{Negative: true, Src: "refs/heads/*"}).DstOf("refs/heads/main"); ok {
			t.Errorf("a negative refspec maps a ref")
		}
		if _, ok := exact.DstOf("refs/heads/mainx"); ok {
			t.Errorf("an exact refspec maps another ref")
		}
		got, ok := tt.spec.SrcOf(tt.local)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("%v.SrcOf(%s) = %q, %v; want %q", tt.spec, tt.local, got, ok, tt.want)
		}
		if tt.want == "" {
			continue
		}
		// DstOf is the way back: the remote ref maps onto the local one.
		if got, ok := tt.spec.DstOf(tt.want); got != tt.local || !ok {
			t.Errorf("%v.DstOf(%s) = %q, %v; want %q", tt.spec, tt.want, got, ok, tt.local)
		}
	}
}

// FuzzParseFetchRefspec: a refspec that parses writes back to the same
// text, and its two sides map onto each other.
func FuzzParseFetchRefspec(f *testing.F) {
	for _, s := range []string{"+refs/heads/*:refs/remotes/origin/*", "refs/heads/main:refs/remotes/origin/main",
		"^refs/heads/wip/*", "+refs/tags/*:refs/tags/*", "refs/heads/*x:refs/y/*z", "main:x", "refs/a:refs/b:refs/c"} {
		f.Add(s, "feature/x")
	}
	f.Fuzz(func(t *testing.T, s, star string) {
		r, err := ParseFetchRefspec(s)
		if err != nil {
			return
		}
		if r.String() != s {
			t.Fatalf("ParseFetchRefspec(%q).String() = %q", s, r.String())
		}
		if r2, err := ParseFetchRefspec(r.String()); err != nil || r2 != r {
			t.Fatalf("re-parse of %q: %+v, %v", s, r2, err)
		}
		if r.Negative {
			return
		}
		src := strings.Replace(r.Src, "*", star, 1)
		dst := strings.Replace(r.Dst, "*", star, 1)
		if ValidRefName(src) != nil || ValidRefName(dst) != nil {
			return
		}
		if !r.MatchSrc(src) {
			t.Fatalf("%v does not match its own source %q", r, src)
		}
		got, ok := r.SrcOf(dst)
		if !ok {
			t.Fatalf("%v.SrcOf(%q) did not map", r, dst)
		}
		if got != src {
			t.Fatalf("%v: %q maps back to %q, want %q", r, dst, got, src)
		}
	})
}

// TestRefspecSidesLikeGit: every refspec side ParseFetchRefspec accepts, git
// accepts as a refspec pattern too (git check-ref-format --refspec-pattern).
func TestRefspecSidesLikeGit(t *testing.T) {
	for _, side := range []string{"refs/heads/*", "refs/heads/main", "refs/remotes/origin/*", "refs/a*b/c", "refs/*",
		"refs/heads/x.lock", "refs/heads/.x", "refs/heads/a..b", "refs/heads/*/*", "refs/heads/@{x}", "refs/heads/a b",
		"refs/heads/x/", "refs/heads/x.", "refs//x", "refs/heads/\x7f", "refs/heads/\u00e9", "refs/heads/a\\b"} {
		ours := checkRefPattern(side) == nil
		out, err := exec.Command("git", "check-ref-format", "--refspec-pattern", side).CombinedOutput()
		gits := err == nil
		if ours && !gits {
			t.Errorf("refspec side %q: accepted here, refused by git (%s)", side, out)
		}
	}
}

// TestRefspecsMap: a set of fetch refspecs maps a remote ref as git fetch
// does: the first refspec that maps it, unless a negative one excludes it.
func TestRefspecsMap(t *testing.T) {
	specs := Refspecs{
		{Src: "refs/heads/keep", Dst: "refs/remotes/origin/kept"},
		{Force: true, Src: "refs/heads/*", Dst: "refs/remotes/origin/*"},
		{Negative: true, Src: "refs/heads/secret*"},
	}
	for _, tt := range []struct {
		name, dst string
		force     bool
	}{
		{"refs/heads/main", "refs/remotes/origin/main", true},
		{"refs/heads/keep", "refs/remotes/origin/kept", false},
		{"refs/heads/secret-1", "", false},
		{"refs/tags/v1", "", false},
	} {
		dst, force, ok := specs.Map(tt.name)
		if dst != tt.dst || force != tt.force || ok != (tt.dst != "") {
			t.Errorf("Map(%s) = %q, %v, %v; want %q, %v", tt.name, dst, force, ok, tt.dst, tt.force)
		}
		if got := specs.Covers(tt.name); got != (tt.dst != "") {
			t.Errorf("Covers(%s) = %v", tt.name, got)
		}
	}
	if !specs.Excluded("refs/heads/secret-1") || specs.Excluded("refs/heads/main") {
		t.Errorf("Excluded: a negative refspec's refs and no other")
	}
}
