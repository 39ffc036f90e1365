package fastpath

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// configCases are configuration files that git reads, or refuses, in
// every way the parser has a branch for.
var configCases = []string{
	"",
	"\n\n",
	"[core]\n\tbare = false\n",
	"[Core]\n\tBare = TRUE\n\tName=x\n",
	"[core] bare = true\n", // a key on the header's line
	"[remote \"Origin\"]\n\turl = /srv/x.git\n\tfetch = +refs/heads/*:refs/remotes/Origin/*\n",
	"[remote.Origin]\n\turl = old style is lower-cased\n",
	"[a \"sub \\\"quoted\\\" \\\\ and \\x\"]\n\tk = v\n",
	"[a   \"spaces before\"]\nk=v\n",
	"[a \"x\" ]\nk=v\n",          // space before ']': refused
	"[a \"x\"\nk=v\n",            // unterminated header
	"[a \"x]\nk=v\n",             // unterminated subsection
	"[a\nk=v\n",                  // header cut by a newline
	"[]\nk=v\n",                  // empty section
	"[ \"x\"]\nk=v\n",            // empty section name, subsection x
	"[.]\nk=v\n",                 // a dot
	"[a.b.c]\nk=v\n",             //
	"[a_b]\nk=v\n",               // bad section character
	"[a]\nk\n",                   // no value: true
	"[a]\nk   \n",                // no value, trailing blanks
	"[a]\nk = \n",                // empty value
	"[a]\nk =\"\"\n",             //
	"[a]\n1k = v\n",              // key must start with a letter
	"[a]\nk_1 = v\n",             // bad key character
	"[a]\nk-1 = v\n",             //
	"[a]\nk x\n",                 // junk after a key
	"k = v\n",                    // a key before any section
	"[a]\nk = v ; comment\n",     //
	"[a]\nk = v # comment\n",     //
	"[a]\nk = \"v ; not\" ; c\n", //
	"[a]\nk =   lead and trail   \n",
	"[a]\nk = in  side\tblanks\n",
	"[a]\nk = \"  quoted  \"  \n",
	"[a]\nk = x \"  \"\n",
	"[a]\nk = esc \\\\ \\\" \\n \\t \\b end\n",
	"[a]\nk = bad \\x escape\n",
	"[a]\nk = cont\\\n inued\n",
	"[a]\nk = cont\\\r\n inued\n",
	"[a]\nk = end\\",
	"[a]\nk = \"unterminated\n",
	"[a]\nk = \"multi\nline\"\n",
	"[a]\r\nk = crlf\r\n",
	"[a]\nk = lone\rcr\n",
	"[a]\nk = trailing cr\r",
	"\xef\xbb\xbf[a]\nk = bom\n",
	"\xef\xbb[a]\nk = partial bom\n",
	"\xef[a]\n",
	"  ; comment\n# comment\n[a] # c\nk = v\n",
	"[a]\nk = v\n[a]\nk = w\n",
	"[a]\nk = é ünïcode\n",
	"[a]\nk = v\x01ctl\n",
	"[a]\nk = v\vtab\fform\n",
	"[a]\n\vk = v\n",
	"[a]\nk\t=\tv\n",
	"[a]\nk = v", // no final newline
	"[a]\nk",
	"[a]",
	"[a] [b] k = v\n",
	"[a]\n=v\n",
	"[include]\npath = x\n",
	"[includeIf \"gitdir:/x/\"]\npath = y\n",
	"[a]\nk = x\\",
	"[a \"x\\",
	"[a \"x\\\n\"]\n",
}

// gitConfigList runs git config -z --list with only file as configuration
// (outside any repository), as the reference the parser must match.
func gitConfigList(t testing.TB, dir, file string) ([]ConfigEntry, error) {
	cmd := exec.Command("git", "config", "-z", "--list")
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + file, "GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir)}
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("git config: %v", err)
		}
		return nil, err
	}
	var entries []ConfigEntry
	for _, item := range strings.SplitAfter(string(out), "\x00") {
		item, ok := strings.CutSuffix(item, "\x00")
		if !ok {
			break // the end
		}
		if k, v, ok := strings.Cut(item, "\n"); ok {
			entries = append(entries, ConfigEntry{Key: k, Value: v})
		} else {
			entries = append(entries, ConfigEntry{Key: item, NoValue: true})
		}
	}
	return entries, nil
}

// checkParseLikeGit fails if parseConfig reads data differently from git:
// both must refuse it, or both must read the same entries.
func checkParseLikeGit(t testing.TB, dir string, data []byte) {
	t.Helper()
	file := filepath.Join(dir, "config")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	want, gitErr := gitConfigList(t, dir, file)
	got, err := parseConfig(data)
	switch {
	case err != nil && gitErr != nil:
	case err != nil && bytesHaveNUL(data):
		// refused in-process so that git reads it (git truncates at NUL)
	case err != nil:
		t.Fatalf("parseConfig(%q) = %v; git reads %+v", data, err, want)
	case gitErr != nil:
		t.Fatalf("parseConfig(%q) = %+v; git refuses it: %v", data, got, gitErr)
	case !(len(got) == 0 && len(want) == 0) && !reflect.DeepEqual(got, want):
		t.Fatalf("parseConfig(%q)\n got %+v\nwant %+v (git)", data, got, want)
	}
}

func bytesHaveNUL(b []byte) bool { return strings.IndexByte(string(b), 0) >= 0 }

func TestParseConfigMatchesGit(t *testing.T) {
	dir := t.TempDir()
	for _, c := range configCases {
		checkParseLikeGit(t, dir, []byte(c))
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, c := range configCases {
		f.Add([]byte(c))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		checkParseLikeGit(t, dir, data)
	})
}
