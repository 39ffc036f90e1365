package gitrepo

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// SetConfig replaces a value in-process only where that gives, byte for
// byte, the file git config --local KEY VALUE writes (run on a copy of
// the same file), and leaves every other case to git, which then writes
// it: the result is git's either way, and the value reads back.
func TestSetConfigMatchesGit(t *testing.T) {
	const tip = "0123456789abcdef0123456789abcdef01234567"
	const key = "remote.origin.securetip"
	head := "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
	origin := "[remote \"origin\"]\n\turl = file:///srv/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
	cases := []struct {
		name, body, key string
		fast            bool // replaced in-process
	}{
		{"plain", head + origin + "\tsecuretip = 1111111111111111111111111111111111111111\n[branch \"main\"]\n\tremote = origin\n", key, true},
		{"mixed case and blanks", head + origin + "  secureTip=1111111111111111111111111111111111111111  \n", key, true},
		{"CRLF line", head + origin + "\tsecuretip = 1111111111111111111111111111111111111111\r\n", key, true},
		{"section name in capitals", head + "[Remote \"origin\"]\n\tsecuretip = 11\n", key, true},
		{"no final newline", head + origin + "\tsecuretip = 11", key, true},
		{"two-level key", head + "[secure]\n\tmode = warn\n", "secure.mode", true},
		{"same value", head + origin + "\tsecuretip = " + tip + "\n", key, true},
		{"not set", head + origin, key, false},
		{"set twice", head + origin + "\tsecuretip = 11\n\tsecuretip = 22\n", key, false},
		{"set in two sections of one name", head + origin + "\tsecuretip = 11\n" + origin + "\tsecuretip = 22\n", key, false},
		{"other remote only", head + "[remote \"Origin\"]\n\tsecuretip = 11\n", key, false},
		{"old-style header", head + "[remote.origin]\n\tsecuretip = 11\n", key, false},
		{"entry on the header line", head + "[remote \"origin\"] securetip = 11\n", key, false},
		{"quoted", head + origin + "\tsecuretip = \"11\"\n", key, false},
		{"comment", head + origin + "\tsecuretip = 11 # seen\n", key, false},
		{"continued line", head + origin + "\turl = a\\\nb\n\tsecuretip = 11\n", key, false},
		{"include", head + "[include]\n\tpath = other\n" + origin + "\tsecuretip = 11\n", key, false},
		{"no value", head + origin + "\tsecuretip\n", key, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := testutil.NewSandbox(t)
			dir := s.InitRepo("repo", 1)
			ref := s.InitRepo("ref", 0)
			for _, d := range []string{dir, ref} {
				cfg := filepath.Join(d, ".git", "config")
				if err := os.WriteFile(cfg, []byte(c.body), 0o640); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(cfg, 0o640); err != nil {
					t.Fatal(err)
				}
			}
			_, gitErr := s.RunErr(ref, nil, "git", "config", "--local", "--end-of-options", c.key, tip)
			want, err := os.ReadFile(filepath.Join(ref, ".git", "config"))
			if err != nil {
				t.Fatal(err)
			}
			g, err := OpenWithEnv(dir, inProcessEnv(s))
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			file := filepath.Join(dir, ".git", "config")
			if done := g.fast.SetLocalConfig(c.key, tip); done != c.fast {
				t.Fatalf("replaced in-process: %v, want %v", done, c.fast)
			}
			if !c.fast {
				if got, _ := os.ReadFile(file); string(got) != c.body {
					t.Fatalf("the file changed although git config was left to do it:\n%q", got)
				}
				if err := g.SetConfig(c.key, tip); (err != nil) != (gitErr != nil) {
					t.Fatalf("SetConfig: %v; git config: %v", err, gitErr)
				}
			}
			got, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("file after SetConfig:\n%q\ngit config writes:\n%q", got, want)
			}
			if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o640 {
				t.Errorf("mode after SetConfig: %v (%v), want 0640 as git keeps it", st.Mode(), err)
			}
			if _, err := os.Stat(file + ".lock"); !os.IsNotExist(err) {
				t.Errorf("config.lock left behind (%v)", err)
			}
			if v, ok, err := g.LocalConfig(c.key); gitErr == nil && (err != nil || !ok || v != tip) {
				t.Errorf("%s reads back as %q, %v, %v", c.key, v, ok, err)
			}
		})
	}
}

// A config.lock that git holds makes the in-process write give way: git
// config then fails as it always did, naming the lock.
func TestSetConfigLocked(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 1)
	s.Git(dir, "config", "remote.origin.securetip", "11")
	g, err := OpenGitDir(filepath.Join(dir, ".git"), dir, inProcessEnv(s))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	lock := filepath.Join(dir, ".git", "config.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if g.fast.SetLocalConfig("remote.origin.securetip", "22") {
		t.Fatal("replaced in-process while config.lock is held")
	}
	if err := g.SetConfig("remote.origin.securetip", "22"); err == nil {
		t.Fatal("SetConfig succeeded while config.lock is held")
	}
	if v, _, _ := g.LocalConfig("remote.origin.securetip"); v != "11" {
		t.Fatalf("value %q after a refused write", v)
	}
}
