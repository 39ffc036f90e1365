package gitrepo

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo/fastpath"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

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
			withEnv(g, append(append([]string(nil), base...), c.env...))
			if _, ok := g.fast.Config(); ok != c.inProcess {
				t.Fatalf("read in-process = %v, want %v", ok, c.inProcess)
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
	withEnv(g, append(append([]string(nil), base...), "GIT_CONFIG_NOSYSTEM=1"))
	for _, extra := range []string{
		"[include]\n\tpath = " + sys + "\n",
		"[includeIf \"gitdir:" + gitDir + "\"]\n\tpath = " + sys + "\n",
		"[extensions]\n\tworktreeConfig = true\n",
	} {
		write(filepath.Join(s.Home, ".gitconfig"), "[a]\n\tk = global\n"+extra)
		if _, ok := g.fast.Config(); ok {
			t.Errorf("read in-process with %q", extra)
		}
	}
	write(filepath.Join(s.Home, ".gitconfig"), "[a]\n\tk = global\n")
	// An unreadable global file, a broken one: git decides (and fails).
	write(filepath.Join(s.Home, ".gitconfig"), "[a\n")
	if _, ok := g.fast.Config(); ok {
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

// withEnv gives g (opened with OpenGitDir) the environment env, for git
// and for the in-process readers.
func withEnv(g *Repo, env []string) {
	g.env = env
	g.fast.Close()
	g.fast = fastpath.Open(fastpath.Options{GitDir: g.gitDir, CommonDir: g.commonDir, Env: env, FilesRefs: true, ValidRefName: ValidRefName})
}
