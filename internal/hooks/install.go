// Package hooks installs git-secure into repositories and servers and runs
// its hooks. Installing never destroys what was there: a repository's own
// hooks (in .git/hooks, or a core.hooksPath such as husky's or the
// pre-commit framework's) keep running, in order, after git-secure's, and
// uninstalling restores exactly the previous configuration and files.
package hooks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// Names lists every hook git runs; git-secure's directory forwards all of
// them so that replacing core.hooksPath loses none.
var Names = []string{
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit",
	"pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-commit",
	"pre-rebase", "post-checkout", "post-merge", "pre-push", "pre-receive",
	"update", "proc-receive", "post-receive", "post-update",
	"reference-transaction", "push-to-checkout", "pre-auto-gc",
	"post-rewrite", "sendemail-validate", "fsmonitor-watchman",
	"p4-changelist", "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit",
	"post-index-change",
}

// Handled are the client hooks git-secure itself acts on.
var Handled = map[string]bool{"pre-push": true}

// Config keys git-secure owns.
const (
	keyHooksPath     = "core.hooksPath"
	keyPrevHooksPath = "secure.previousHooksPath"
	keyInstalled     = "secure.hooksInstalled"
	keyRemoteVCS     = "secure.managedRemotes"
)

const marker = "# git-secure hook"

// Script returns a hook script. For hooks git-secure handles it runs the
// binary (which then runs the chained hook); for the others it runs the
// chained hook directly, so they cost no more than before.
func Script(name, binary, chainDir string, handled bool) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n" + marker + " (" + name + "): installed by git secure hooks install; do not edit.\n")
	if handled {
		fmt.Fprintf(&b, "b=%s; [ -x \"$b\" ] || b=git-secure\n", shellQuote(binary))
		if name == "pre-push" && chainDir != "" {
			// The common case without starting the binary: the remote goes
			// through git-remote-secure (which records and sends the
			// entries) and there is no earlier pre-push hook to run.
			fmt.Fprintf(&b, "if [ \"$(git config --get \"remote.$1.vcs\")\" = secure ] && [ ! -x %s ]; then cat >/dev/null; exit 0; fi\n",
				shellQuote(filepath.Join(chainDir, name)))
		}
		fmt.Fprintf(&b, "exec \"$b\" hook %s \"$@\"\n", name)
		return b.String()
	}
	if chainDir == "" {
		// Installed for a user: the repository's own hooks directory. A
		// plain .git directory needs no process to find.
		b.WriteString("d=${GIT_DIR:-.git}; [ -d \"$d\" ] || d=$(git rev-parse --absolute-git-dir)\n")
		b.WriteString("h=\"$d/hooks/" + name + "\"\n")
	} else {
		fmt.Fprintf(&b, "h=%s\n", shellQuote(filepath.Join(chainDir, name)))
	}
	b.WriteString("[ -x \"$h\" ] && exec \"$h\" \"$@\"\nexit 0\n")
	return b.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// writeDir writes a hooks directory. For one repository (chainDir known)
// it forwards only the hooks chainDir has, so that git runs no extra
// process for the others (a commit then costs what it did before); hooks
// added there later are picked up by SyncForwarders, which runs on every
// push, or by installing again. For a user (chainDir "") it forwards all.
func writeDir(dir, binary, chainDir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("hooks: create %s: %w", dir, err)
	}
	for _, name := range Names { // start over: the binary may have moved
		_ = os.Remove(filepath.Join(dir, name))
	}
	_, err := SyncForwarders(dir, binary, chainDir)
	return err
}

// SyncForwarders makes dir hold git-secure's handled hooks and a forwarder
// for each hook chainDir has (all hooks when chainDir is ""), removing
// forwarders whose target is gone. It returns the hooks it started
// forwarding.
func SyncForwarders(dir, binary, chainDir string) ([]string, error) {
	var added []string
	for _, name := range Names {
		p := filepath.Join(dir, name)
		want := Handled[name] || chainDir == ""
		if !want {
			st, err := os.Stat(filepath.Join(chainDir, name))
			want = err == nil && !st.IsDir() && st.Mode()&0o111 != 0
		}
		_, statErr := os.Stat(p)
		have := statErr == nil
		if !want {
			if have {
				_ = os.Remove(p)
			}
			continue
		}
		if have && chainDir != "" {
			continue
		}
		if !have && chainDir != "" && !Handled[name] {
			added = append(added, name)
		}
		if err := os.WriteFile(p+".tmp", []byte(Script(name, binary, chainDir, Handled[name])), 0o755); err != nil {
			return added, fmt.Errorf("hooks: write %s: %w", p, err)
		}
		if err := os.Rename(p+".tmp", p); err != nil {
			return added, fmt.Errorf("hooks: write %s: %w", p, err)
		}
	}
	return added, nil
}

// Binary returns the absolute path of the running git-secure.
func Binary() string {
	p, err := os.Executable()
	if err != nil {
		return "git-secure"
	}
	if strings.HasPrefix(filepath.Base(p), "git-remote-") {
		p = filepath.Join(filepath.Dir(p), "git-secure")
	}
	return p
}

// Installer configures one repository (or, with Global, the user).
type Installer struct {
	Git    *gitrepo.Repo // nil with Global
	Binary string
	// Global installs for the user: HooksDir under their config directory.
	Global   bool
	HooksDir string
	// ConfigGet/ConfigSet/ConfigUnset act on the right config file.
	ConfigGet   func(key string) (string, bool, error)
	ConfigSet   func(key, value string) error
	ConfigUnset func(key string) error
	Remotes     []string
}

// ErrAlreadyInstalled is returned by Install when it already ran.
var ErrAlreadyInstalled = errors.New("hooks: already installed")

// Install points core.hooksPath at git-secure's hook directory, chaining
// to the previous one, and routes the remotes through git-remote-secure.
func (in *Installer) Install() error {
	cur, set, err := in.ConfigGet(keyHooksPath)
	if err != nil {
		return err
	}
	if set && filepath.Clean(cur) == filepath.Clean(in.HooksDir) {
		return in.writeScripts(true)
	}
	if set {
		if err := in.ConfigSet(keyPrevHooksPath, cur); err != nil {
			return err
		}
	}
	if err := in.writeScripts(set); err != nil {
		return err
	}
	if err := in.ConfigSet(keyHooksPath, in.HooksDir); err != nil {
		return err
	}
	if err := in.ConfigSet(keyInstalled, "true"); err != nil {
		return err
	}
	var managed []string
	for _, r := range in.Remotes {
		key := "remote." + r + ".vcs"
		if v, ok, err := in.ConfigGet(key); err != nil {
			return err
		} else if ok && v != "secure" {
			continue // another helper owns this remote; leave it
		} else if ok {
			continue
		}
		if err := in.ConfigSet(key, "secure"); err != nil {
			return err
		}
		managed = append(managed, r)
	}
	if len(managed) > 0 {
		return in.ConfigSet(keyRemoteVCS, strings.Join(managed, " "))
	}
	return nil
}

func (in *Installer) writeScripts(chained bool) error {
	chain := ""
	if prev, ok, err := in.ConfigGet(keyPrevHooksPath); err != nil {
		return err
	} else if ok {
		chain = prev
		if !filepath.IsAbs(chain) && in.Git != nil && in.Git.WorkTree() != "" {
			chain = filepath.Join(in.Git.WorkTree(), chain)
		}
	} else if !in.Global && in.Git != nil {
		chain = filepath.Join(in.Git.GitDir(), "hooks")
	}
	return writeDir(in.HooksDir, in.Binary, chain)
}

// Uninstall restores the configuration Install changed and removes the
// hook directory.
func (in *Installer) Uninstall() error {
	cur, set, err := in.ConfigGet(keyHooksPath)
	if err != nil {
		return err
	}
	if set && filepath.Clean(cur) == filepath.Clean(in.HooksDir) {
		if prev, ok, err := in.ConfigGet(keyPrevHooksPath); err != nil {
			return err
		} else if ok {
			if err := in.ConfigSet(keyHooksPath, prev); err != nil {
				return err
			}
		} else if err := in.ConfigUnset(keyHooksPath); err != nil {
			return err
		}
	}
	if managed, ok, err := in.ConfigGet(keyRemoteVCS); err == nil && ok {
		for _, r := range strings.Fields(managed) {
			if v, ok, _ := in.ConfigGet("remote." + r + ".vcs"); ok && v == "secure" {
				if err := in.ConfigUnset("remote." + r + ".vcs"); err != nil {
					return err
				}
			}
		}
	}
	for _, k := range []string{keyPrevHooksPath, keyInstalled, keyRemoteVCS} {
		if err := in.ConfigUnset(k); err != nil {
			return err
		}
	}
	return os.RemoveAll(in.HooksDir)
}

// Server turns a bare repository into an enforcing server: its pre-receive
// hook verifies every push. An existing pre-receive hook is kept and run
// after git-secure's.
func InstallServer(gitDir, binary string) error {
	dir := filepath.Join(gitDir, "hooks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	p := filepath.Join(dir, "pre-receive")
	chained := p + ".git-secure-chained"
	if data, err := os.ReadFile(p); err == nil && !strings.Contains(string(data), marker) {
		if _, err := os.Stat(chained); err == nil {
			return fmt.Errorf("hooks: %s exists already; remove or merge it by hand", chained)
		}
		if err := os.Rename(p, chained); err != nil {
			return err
		}
	}
	script := Script("pre-receive", binary, "", true)
	if err := os.WriteFile(p+".tmp", []byte(script), 0o755); err != nil {
		return err
	}
	return os.Rename(p+".tmp", p)
}

// UninstallServer restores the server's previous pre-receive hook.
func UninstallServer(gitDir string) error {
	p := filepath.Join(gitDir, "hooks", "pre-receive")
	data, err := os.ReadFile(p)
	if err != nil || !strings.Contains(string(data), marker) {
		return fmt.Errorf("hooks: %s is not git-secure's hook", p)
	}
	if err := os.Remove(p); err != nil {
		return err
	}
	if _, err := os.Stat(p + ".git-secure-chained"); err == nil {
		return os.Rename(p+".git-secure-chained", p)
	}
	return nil
}
