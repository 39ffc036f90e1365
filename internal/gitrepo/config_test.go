package gitrepo

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
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
	return parseConfigList(out)
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

// ConfigList reads every scope in git's order, and leaves to git what it
// cannot read exactly as git would.
func TestConfigListMatchesGit(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 1)
	gitDir := filepath.Join(dir, ".git")
	sys := filepath.Join(s.Home, "system")
	xdg := filepath.Join(s.Home, "xdg")
	write := func(path, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(sys, "[secure]\n\trootKeys = SHA256:system\n[a]\n\tk = system\n")
	write(filepath.Join(s.Home, ".gitconfig"), "[a]\n\tk = global\n[user]\n\tname = Home\n")
	write(filepath.Join(xdg, "git", "config"), "[a]\n\tk = xdg\n")
	write(filepath.Join(s.Home, ".config", "git", "config"), "[a]\n\tk = dot-config\n")
	s.Git(dir, "config", "a.k", "local")
	s.Git(dir, "config", "secure.rootKeys", "SHA256:local")

	g, err := OpenGitDir(gitDir, dir, inProcessEnv(s))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	base := []string{"HOME=" + s.Home, "PATH=" + os.Getenv("PATH"), "GIT_DIR=" + gitDir}
	cases := []struct {
		name      string
		env       []string
		inProcess bool
	}{
		{"system, home, local", []string{"GIT_CONFIG_SYSTEM=" + sys}, true},
		{"xdg", []string{"GIT_CONFIG_SYSTEM=" + sys, "XDG_CONFIG_HOME=" + xdg}, true},
		{"no system", []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_SYSTEM=" + sys}, true},
		{"no system false", []string{"GIT_CONFIG_NOSYSTEM=false", "GIT_CONFIG_SYSTEM=" + sys}, true},
		{"global file", []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + sys}, true},
		{"global /dev/null", []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}, true},
		{"git -c", []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_PARAMETERS='a.k'='cmdline'"}, false},
		{"GIT_CONFIG_COUNT", []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=a.k", "GIT_CONFIG_VALUE_0=count"}, false},
		{"GIT_CONFIG", []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG=" + sys}, false},
		{"odd NOSYSTEM", []string{"GIT_CONFIG_NOSYSTEM=maybe", "GIT_CONFIG_SYSTEM=" + sys}, false},
		{"relative global", []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=system"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g.env = append(append([]string(nil), base...), c.env...)
			_, ferr := g.readConfigFiles()
			if (ferr == nil) != c.inProcess {
				t.Fatalf("read in-process = %v (%v), want %v", ferr == nil, ferr, c.inProcess)
			}
			g.dropConfig()
			got, err := g.ConfigList()
			if c.name == "odd NOSYSTEM" {
				if err == nil || !strings.Contains(err.Error(), "bad boolean") {
					t.Fatalf("ConfigList = %v, want git's refusal of the environment", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out, err := g.run(nil, "config", "-z", "--list")
			if err != nil {
				t.Fatal(err)
			}
			want, err := parseConfigList(out)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("ConfigList\n got %+v\nwant %+v", got, want)
			}
		})
	}

	// Files that change what git reads go to git.
	g.env = append(append([]string(nil), base...), "GIT_CONFIG_NOSYSTEM=1")
	for _, extra := range []string{
		"[include]\n\tpath = " + sys + "\n",
		"[includeIf \"gitdir:" + gitDir + "\"]\n\tpath = " + sys + "\n",
		"[extensions]\n\tworktreeConfig = true\n",
	} {
		write(filepath.Join(s.Home, ".gitconfig"), "[a]\n\tk = global\n"+extra)
		if _, err := g.readConfigFiles(); err == nil {
			t.Errorf("read in-process with %q", extra)
		}
	}
	write(filepath.Join(s.Home, ".gitconfig"), "[a]\n\tk = global\n")
	// An unreadable global file, a broken one: git decides (and fails).
	write(filepath.Join(s.Home, ".gitconfig"), "[a\n")
	if _, err := g.readConfigFiles(); err == nil {
		t.Error("read a broken file in-process")
	}
	g.dropConfig()
	if _, err := g.ConfigList(); err == nil {
		t.Error("ConfigList of a broken file succeeded; git refuses it")
	}
}

// ConfigValue finds keys as git config --get does: section and variable
// names without case, subsections exactly, the last value winning.
func TestConfigValue(t *testing.T) {
	cfg := []ConfigEntry{
		{Key: "core.bare", Value: "false"},
		{Key: "remote.Origin.url", Value: "/upper"},
		{Key: "remote.origin.url", Value: "/lower"},
		{Key: "secure.rootkeys", Value: "SHA256:a"},
		{Key: "secure.rootkeys", Value: "SHA256:b"},
		{Key: "gpg.ssh", NoValue: true},
	}
	cases := []struct{ key, want string }{
		{"core.bare", "false"},
		{"CORE.Bare", "false"},
		{"remote.Origin.URL", "/upper"},
		{"Remote.origin.url", "/lower"},
		{"remote.ORIGIN.url", ""},
		{"secure.rootKeys", "SHA256:b"},
		{"gpg.ssh", "true"},
		{"no.such", ""},
	}
	for _, c := range cases {
		got, ok := lookupConfig(cfg, c.key)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("lookupConfig(%q) = %q, %v; want %q", c.key, got, ok, c.want)
		}
	}
}
