package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// LocalConfig reads the repository's own file only: a key the user's
// global configuration sets (git secure hooks install --global) is not
// the repository's.
func TestLocalConfig(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 1)
	s.Git(dir, "config", "--global", "remote.origin.vcs", "secure")
	s.Git(dir, "config", "--global", "secure.hooksInstalled", "true")
	s.Git(dir, "config", "secure.hooksInstalled", "local")
	g, err := OpenGitDir(filepath.Join(dir, ".git"), dir, inProcessEnv(s))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		key, want string
		ok        bool
	}{
		{"remote.origin.vcs", "", false},
		{"secure.hooksInstalled", "local", true},
		{"no.such", "", false},
	}
	for _, c := range cases {
		got, ok, err := g.LocalConfig(c.key)
		if err != nil || got != c.want || ok != c.ok {
			t.Errorf("LocalConfig(%q) = %q, %v, %v; want %q, %v", c.key, got, ok, err, c.want, c.ok)
		}
	}
	if v, ok, _ := g.Config("remote.origin.vcs"); !ok || v != "secure" {
		t.Errorf("Config(remote.origin.vcs) = %q, %v: the global value should be seen there", v, ok)
	}
	if _, _, err := g.LocalConfig("-x"); err == nil {
		t.Error("LocalConfig accepted an invalid key")
	}
}

// Config and LocalConfig, read in-process, give what git config --get and
// git config --local --get give for the same key: the last value, "" for a
// key without "=", names compared as git compares them; a local file git
// must read itself (an include) goes to git.
func TestConfigGetMatchesGit(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 1)
	gitDir := filepath.Join(dir, ".git")
	appendFile(t, filepath.Join(s.Home, ".gitconfig"), "[a]\n\tk = global\n\tg = only-global\n[Remote \"Origin\"]\n\turl = global-url\n")
	appendFile(t, filepath.Join(gitDir, "config"), "[a]\n\tk = local\n\tm = 1\n\tm = 2\n\tnovalue\n\tq = \"x \\\"y\\\"\\tz\" # comment\n"+
		"[remote \"origin\"]\n\turl = one\n\tSecureTip = abc\n[remote \"Origin\"]\n\turl = capital\n")
	g, err := OpenGitDir(gitDir, dir, inProcessEnv(s))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, ok := g.fast.Config(); !ok {
		t.Fatal("the configuration is not read in-process")
	}
	if _, ok := g.fast.LocalConfig(); !ok {
		t.Fatal("the local configuration is not read in-process")
	}
	keys := []string{"a.k", "A.K", "a.g", "a.m", "a.novalue", "a.q", "remote.origin.url", "remote.Origin.url",
		"REMOTE.origin.securetip", "remote.ORIGIN.url", "a.none", "none.at.all"}
	check := func(t *testing.T) {
		t.Helper()
		for _, key := range keys {
			for _, scope := range []string{"config", "config --local"} {
				get := g.Config
				if scope != "config" {
					get = g.LocalConfig
				}
				v, ok, err := get(key)
				if err != nil {
					t.Fatalf("%s %s: %v", scope, key, err)
				}
				out, gerr := g.run(nil, append(strings.Fields(scope), "--get", "--null", "--end-of-options", key)...)
				wantOK := gerr == nil
				want := strings.TrimSuffix(string(out), "\x00")
				if gerr != nil && exitCode(gerr) != 1 {
					t.Fatalf("git %s --get %s: %v", scope, key, gerr)
				}
				if v != want || ok != wantOK {
					t.Errorf("%s --get %s = %q, %v; git says %q, %v", scope, key, v, ok, want, wantOK)
				}
			}
		}
	}
	check(t)
	// An include in the local file: git reads it (and --local does not
	// follow it), the answers stay git's.
	appendFile(t, filepath.Join(gitDir, "config"), "[include]\n\tpath = "+filepath.Join(s.Home, ".gitconfig")+"\n")
	if _, ok := g.fast.LocalConfig(); ok {
		t.Fatal("a local file with an include is read in-process")
	}
	check(t)
}

func appendFile(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}
