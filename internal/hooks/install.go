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
	"slices"
	"strings"

	hookscripts "github.com/git-secure/git-secure/hooks"
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

// Handled reports whether git-secure itself acts on client hook name.
func Handled(name string) bool { return slices.Contains(hookscripts.Handled, name) }

// Config keys git-secure owns.
const (
	keyHooksPath     = "core.hooksPath"
	keyPrevHooksPath = "secure.previousHooksPath"
	keyInstalled     = "secure.hooksInstalled"
	keyRemoteVCS     = "secure.managedRemotes"
	keyRouteNew      = "secure.routesNewRemotes"
)

// RouteAllKey is the git configuration that sends every push of a
// repository through git-remote-secure, to remotes added after the install
// included: an empty url.<base>.pushInsteadOf prefix matches every URL, so
// git rewrites each push URL to "secure::<url>" and runs the helper for
// it. A pre-push hook could not do this: git has chosen the transport (and
// listed the remote) before it runs the hook, so the hook could only
// refuse the push and ask for a second one. Only pushes are rewritten:
// fetching a remote you only read from (an upstream mirror) stays plain
// git, and the helper routes a named remote's fetches too on its first
// push (AdoptRemote). git-remote-secure neutralises the rewrite for its own
// git processes (NoRewrite). A remote with an explicit pushurl is not
// rewritten (git ignores pushInsteadOf for it): the pre-push hook refuses
// its protected refs and git secure hooks install routes it by name.
const RouteAllKey = "url.secure::.pushInsteadOf"

// NoRewrite returns git options that keep url from being rewritten to
// "secure::<url>" again: see gitrepo.NoRewrite.
func NoRewrite(url string) []string { return gitrepo.NoRewrite(url) }

const marker = "# git-secure hook"

// HelperMarker is the file in the git directory where git-remote-secure
// leaves "<pid> <remote>" while it carries a push, so that the pre-push
// hook knows, without starting a process, that the entries are taken care
// of.
const HelperMarker = "git-secure-push"

// Script returns the script of client hook name from the templates in the
// top-level hooks directory. gitDir and chainDir (where the hooks it
// replaced live) are known for a repository install; for a user install
// both are "" and the script finds them when it runs.
//
// guard selects the reference-transaction guard of refs/secure/* (see
// hookscripts.Guard) instead of a forwarder for that hook.
func Script(name, binary, gitDir, chainDir string, guard bool) string {
	find := `d=${GIT_DIR:-.git}; [ -d "$d" ] || d=$(git rev-parse --absolute-git-dir)` + "\n" + `h="$d/hooks/` + name + `"`
	if gitDir != "" {
		find = "d=" + shellQuote(gitDir) + "\nh=" + shellQuote(filepath.Join(chainDir, name))
	}
	return hookscripts.Render(hookscripts.Template(name, guard), map[string]string{
		"BINARY": shellQuote(binary), "FIND": find, "NAME": name, "MARKER": HelperMarker,
	})
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// writeDir writes a hooks directory. For one repository (chainDir known)
// it forwards only the hooks chainDir has, so that git runs no extra
// process for the others (a commit then costs what it did before); hooks
// added there later are picked up by SyncForwarders, which runs on every
// push, or by installing again. For a user (chainDir "") it forwards all.
func writeDir(dir, binary, gitDir, chainDir string, guard bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("hooks: create %s: %w", dir, err)
	}
	for _, name := range Names { // start over: the binary may have moved
		_ = os.Remove(filepath.Join(dir, name))
	}
	_, err := SyncForwarders(dir, binary, gitDir, chainDir, guard)
	return err
}

// SyncForwarders makes dir hold git-secure's handled hooks and a forwarder
// for each hook chainDir has (all hooks when chainDir is ""), removing
// forwarders whose target is gone. It returns the hooks it started
// forwarding.
func SyncForwarders(dir, binary, gitDir, chainDir string, guard bool) ([]string, error) {
	var added []string
	for _, name := range Names {
		p := filepath.Join(dir, name)
		guarded := guard && name == hookscripts.Guard
		want := Handled(name) || guarded || chainDir == ""
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
		script := Script(name, binary, gitDir, chainDir, guarded)
		if have && chainDir != "" {
			// Forwarders stay; git-secure's own hooks follow the binary
			// (an upgrade may have changed them).
			if cur, err := os.ReadFile(p); err != nil || !(Handled(name) || guarded) || string(cur) == script {
				continue
			}
		}
		if !have && chainDir != "" && !Handled(name) && !guarded {
			added = append(added, name)
		}
		if err := os.WriteFile(p+".tmp", []byte(script), 0o755); err != nil {
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
	// Guard also installs the reference-transaction guard of refs/secure/*.
	Guard bool
	// PushFirst (git secure init) leaves Remotes' fetches to plain git
	// when pushes to every remote are routed (RouteAllKey): the log was
	// just made, so no remote has it, and a remote may be an upstream the
	// project only fetches from, where a routed fetch verifies nothing
	// and says "push to set it up" every time. The first push to a
	// remote through git-secure routes its fetches (AdoptRemote).
	PushFirst bool

	// Report says what the last Install changed, so that the command
	// prints exactly that.
	Report Report
}

// Report is what one Install did.
type Report struct {
	// HooksPathSet is true when core.hooksPath was pointed at HooksDir
	// now (false: it already was, the scripts were only refreshed).
	HooksPathSet bool
	// Routed are the remotes given remote.<name>.vcs = secure now;
	// AlreadyRouted had it; OtherHelper use another remote helper, left
	// alone; PushFirst are left to plain git until their first push
	// (Installer.PushFirst).
	Routed, AlreadyRouted, OtherHelper, PushFirst []string
	// NewRemotes is "set" when url.secure::.insteadOf was set now, "kept"
	// when it already was, "" for a user install (which routes origin
	// only) or when the key holds a value of the user's.
	NewRemotes string
}

// Guarded reports whether hooks directory dir has the reference-transaction
// guard, so that refreshing the directory keeps it.
func Guarded(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, hookscripts.Guard))
	return err == nil && strings.Contains(string(data), "hook "+hookscripts.Guard)
}

// ErrAlreadyInstalled is returned by Install when it already ran.
var ErrAlreadyInstalled = errors.New("hooks: already installed")

// Install points core.hooksPath at git-secure's hook directory, chaining
// to the previous one, and routes the remotes through git-remote-secure:
// each remote listed, and for a repository also every remote added later
// (RouteAllKey). Installing again refreshes the scripts and routes the
// remotes added since; in.Report says what changed.
func (in *Installer) Install() error {
	in.Report = Report{}
	cur, set, err := in.ConfigGet(keyHooksPath)
	if err != nil {
		return err
	}
	if set && (filepath.Clean(cur) == filepath.Clean(in.HooksDir) || in.copiedHooksPath(cur)) {
		if err := in.writeScripts(true); err != nil {
			return err
		}
	} else {
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
		in.Report.HooksPathSet = true
	}
	if in.PushFirst && !in.Global {
		if err := in.routeNewRemotes(); err != nil {
			return err
		}
		// AdoptRemote routes a pushed remote only where this installer
		// set the rewrite (keyRouteNew).
		adopts, err := in.adoptsOnPush()
		if err != nil {
			return err
		}
		if adopts {
			for _, r := range in.Remotes {
				if v, ok, err := in.ConfigGet("remote." + r + ".vcs"); err != nil {
					return err
				} else if !ok {
					in.Report.PushFirst = append(in.Report.PushFirst, r)
				} else if v == "secure" {
					in.Report.AlreadyRouted = append(in.Report.AlreadyRouted, r)
				} else {
					in.Report.OtherHelper = append(in.Report.OtherHelper, r+" ("+v+")")
				}
			}
			return nil
		}
		// Pushes are not routed (the key holds a value of the user's):
		// route the remotes by name, as hooks install does.
		return in.routeRemotes()
	}
	if err := in.routeRemotes(); err != nil {
		return err
	}
	if in.Global {
		return nil
	}
	return in.routeNewRemotes()
}

// routeRemotes sets remote.<name>.vcs = secure for each of in.Remotes that
// no other helper owns, remembering the ones it set for Uninstall.
func (in *Installer) routeRemotes() error {
	managed := map[string]bool{}
	if v, ok, err := in.ConfigGet(keyRemoteVCS); err != nil {
		return err
	} else if ok {
		for _, r := range strings.Fields(v) {
			managed[r] = true
		}
	}
	for _, r := range in.Remotes {
		key := "remote." + r + ".vcs"
		v, ok, err := in.ConfigGet(key)
		switch {
		case err != nil:
			return err
		case ok && v != "secure":
			in.Report.OtherHelper = append(in.Report.OtherHelper, r+" ("+v+")")
			continue // another helper owns this remote; leave it
		case ok:
			in.Report.AlreadyRouted = append(in.Report.AlreadyRouted, r)
			continue
		}
		if err := in.ConfigSet(key, "secure"); err != nil {
			return err
		}
		in.Report.Routed = append(in.Report.Routed, r)
		managed[r] = true
	}
	if len(in.Report.Routed) == 0 {
		return nil
	}
	names := make([]string, 0, len(managed))
	for r := range managed {
		names = append(names, r)
	}
	slices.Sort(names)
	return in.ConfigSet(keyRemoteVCS, strings.Join(names, " "))
}

// adoptsOnPush reports whether the first push to a remote routes its
// fetches: RouteAllKey is git-secure's own rewrite (AdoptRemote's
// condition).
func (in *Installer) adoptsOnPush() (bool, error) {
	if v, ok, err := in.ConfigGet(RouteAllKey); err != nil || !ok || v != "" {
		return false, err
	}
	_, ok, err := in.ConfigGet(keyRouteNew)
	return ok, err
}

// routeNewRemotes sets RouteAllKey, unless the user gave that key a value
// of their own.
func (in *Installer) routeNewRemotes() error {
	v, ok, err := in.ConfigGet(RouteAllKey)
	switch {
	case err != nil:
		return err
	case ok && v == "":
		in.Report.NewRemotes = "kept"
		return nil
	case ok:
		return nil // the user's own rewrite; Report.NewRemotes stays ""
	}
	if err := in.ConfigSet(RouteAllKey, ""); err != nil {
		return err
	}
	in.Report.NewRemotes = "set"
	return in.ConfigSet(keyRouteNew, "true")
}

// AdoptRemote routes remote name through git-remote-secure by name
// (remote.<name>.vcs = secure, remembered for Uninstall), so that its
// fetches are verified too. The helper calls it when RouteAllKey brought it
// a push of a named remote. It reports whether it changed anything.
func AdoptRemote(g *gitrepo.Repo, name string) (bool, error) {
	if _, ok, err := g.Config(keyRouteNew); err != nil || !ok {
		return false, err // not routed by git secure hooks install
	}
	if _, ok, err := g.Config("remote." + name + ".url"); err != nil || !ok {
		return false, err // a URL, not a remote
	}
	if _, ok, err := g.Config("remote." + name + ".vcs"); err != nil || ok {
		return false, err
	}
	if err := g.SetConfig("remote."+name+".vcs", "secure"); err != nil {
		return false, err
	}
	managed, _, err := g.Config(keyRemoteVCS)
	if err != nil {
		return true, err
	}
	if !slices.Contains(strings.Fields(managed), name) {
		managed = strings.TrimSpace(managed + " " + name)
	}
	return true, g.SetConfig(keyRemoteVCS, managed)
}

func (in *Installer) writeScripts(chained bool) error {
	chain, gitDir := "", ""
	if !in.Global && in.Git != nil {
		gitDir = in.Git.GitDir()
	}
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
	return writeDir(in.HooksDir, in.Binary, gitDir, chain, in.Guard)
}

// Uninstall restores the configuration Install changed and removes the
// hook directory.
func (in *Installer) Uninstall() error {
	cur, set, err := in.ConfigGet(keyHooksPath)
	if err != nil {
		return err
	}
	if set && (filepath.Clean(cur) == filepath.Clean(in.HooksDir) || in.copiedHooksPath(cur)) {
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
	if _, ok, err := in.ConfigGet(keyRouteNew); err == nil && ok {
		if v, ok, _ := in.ConfigGet(RouteAllKey); ok && v == "" {
			if err := in.ConfigUnset(RouteAllKey); err != nil {
				return err
			}
		}
	}
	for _, k := range []string{keyPrevHooksPath, keyInstalled, keyRemoteVCS, keyRouteNew} {
		if err := in.ConfigUnset(k); err != nil {
			return err
		}
	}
	return os.RemoveAll(in.HooksDir)
}

// copiedHooksPath reports whether core.hooksPath value cur is the hook
// directory git-secure installed in another clone (.../secure/hooks) while
// this configuration says git-secure installed it here: the clone was
// copied or moved, and the path still names where it was installed.
func (in *Installer) copiedHooksPath(cur string) bool {
	if in.Global {
		return false
	}
	if v, ok, err := in.ConfigGet(keyInstalled); err != nil || !ok || v != "true" {
		return false
	}
	clean := filepath.Clean(cur)
	return filepath.Base(clean) == "hooks" && filepath.Base(filepath.Dir(clean)) == "secure"
}

// InstallServer turns a bare repository into an enforcing server: its
// pre-receive hook verifies every push, its reference-transaction hook makes
// each push land whole. Hooks that were there before are kept and run after
// git-secure's.
func InstallServer(gitDir, binary string) error {
	dir := filepath.Join(gitDir, "hooks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range hookscripts.ServerHooks {
		p := filepath.Join(dir, name)
		chained := p + ".git-secure-chained"
		if data, err := os.ReadFile(p); err == nil && !strings.Contains(string(data), marker) {
			if _, err := os.Stat(chained); err == nil {
				return fmt.Errorf("hooks: %s exists already; remove or merge it by hand", chained)
			}
			if err := os.Rename(p, chained); err != nil {
				return err
			}
		}
		script := hookscripts.Render(hookscripts.ServerTemplate(name), map[string]string{"BINARY": shellQuote(binary)})
		if err := os.WriteFile(p+".tmp", []byte(script), 0o755); err != nil {
			return err
		}
		if err := os.Rename(p+".tmp", p); err != nil {
			return err
		}
	}
	return EnsureCertNonceSeed(gitDir)
}

// UninstallServer restores the server's previous hooks.
func UninstallServer(gitDir string) error {
	p := filepath.Join(gitDir, "hooks", "pre-receive")
	if data, err := os.ReadFile(p); err != nil || !strings.Contains(string(data), marker) {
		return fmt.Errorf("hooks: %s is not git-secure's hook", p)
	}
	for _, name := range hookscripts.ServerHooks {
		p := filepath.Join(gitDir, "hooks", name)
		data, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(data), marker) {
			continue // installed by an older version: pre-receive only
		}
		if err := os.Remove(p); err != nil {
			return err
		}
		if _, err := os.Stat(p + ".git-secure-chained"); err == nil {
			if err := os.Rename(p+".git-secure-chained", p); err != nil {
				return err
			}
		}
	}
	return nil
}
