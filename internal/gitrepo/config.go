package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// ConfigEntry is one "key=value" of git's configuration, as git config
// --list prints it: section and key lower case, a subsection as written.
type ConfigEntry struct {
	Key   string
	Value string
	// NoValue is set for a key written without "=" (git's implicit true).
	NoValue bool
}

// maxConfigFile bounds the size of one configuration file read in-process;
// larger files are left to git.
const maxConfigFile = 1 << 20

// errConfigFallback means the in-process reader cannot be sure to read the
// configuration as git would; git config reads it instead.
var errConfigFallback = errors.New("gitrepo: configuration needs git")

// ConfigList returns the repository's whole configuration, every scope in
// git's order (system, global, local, then the command line), as git
// config -z --list does.
//
// Hooks and the remote helper read it on every push, and waiting for git
// config was the last process on the server hook's path, so the usual case
// is read in-process: the files git would read, parsed by the same rules.
// Anything the reader does not handle exactly like git (an include, a
// worktree configuration, git -c values, an unknown system configuration
// path, a syntax error, an unreadable or very large file) goes to git
// config, so the result is always git's.
//
// The result is read once and shared: callers must not modify it.
func (r *Repo) ConfigList() ([]ConfigEntry, error) {
	r.cfgMu.Lock()
	defer r.cfgMu.Unlock()
	if r.cfgRead {
		return r.cfg, nil
	}
	entries, err := r.readConfigFiles()
	if err != nil {
		out, gerr := r.run(nil, "config", "-z", "--list")
		if gerr != nil {
			return nil, fmt.Errorf("gitrepo: config --list: %w", gerr)
		}
		if entries, err = parseConfigList(out); err != nil {
			return nil, err
		}
	}
	r.cfg, r.cfgRead = entries, true
	return entries, nil
}

// ConfigValue returns key's value in the configuration read once
// (ConfigList): the last one, as git config --get gives it, and "true" for
// a key written without "=". ok is false when key is not set. Section and
// variable names compare without case, a subsection exactly, as in git.
func (r *Repo) ConfigValue(key string) (value string, ok bool, err error) {
	cfg, err := r.ConfigList()
	if err != nil {
		return "", false, err
	}
	value, ok = lookupConfig(cfg, key)
	return value, ok, nil
}

// lookupConfig is ConfigValue over entries already read.
func lookupConfig(cfg []ConfigEntry, key string) (string, bool) {
	want := canonicalConfigKey(key)
	for i := len(cfg) - 1; i >= 0; i-- {
		if cfg[i].Key == want {
			if cfg[i].NoValue {
				return "true", true
			}
			return cfg[i].Value, true
		}
	}
	return "", false
}

// canonicalConfigKey lower-cases a key's section and variable name, as
// git config --list prints them, and keeps its subsection.
func canonicalConfigKey(key string) string {
	first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if first < 0 {
		return strings.ToLower(key)
	}
	return strings.ToLower(key[:first]) + key[first:last] + strings.ToLower(key[last:])
}

// dropConfig forgets the configuration read, after a change to it.
func (r *Repo) dropConfig() {
	r.cfgMu.Lock()
	r.cfg, r.cfgRead = nil, false
	r.cfgMu.Unlock()
}

// parseConfigList parses git config -z --list output.
func parseConfigList(out []byte) ([]ConfigEntry, error) {
	var entries []ConfigEntry
	for len(out) > 0 {
		item, rest, ok := bytes.Cut(out, []byte{0})
		if !ok {
			return nil, errors.New("gitrepo: config --list: malformed output")
		}
		out = rest
		if k, v, ok := bytes.Cut(item, []byte{'\n'}); ok {
			entries = append(entries, ConfigEntry{Key: string(k), Value: string(v)})
		} else {
			entries = append(entries, ConfigEntry{Key: string(item), NoValue: true})
		}
	}
	return entries, nil
}

// readConfigFiles reads the configuration without git, or returns
// errConfigFallback.
func (r *Repo) readConfigFiles() ([]ConfigEntry, error) {
	if r.gitOnly || linkedWorkTree(r.gitDir) {
		return nil, errConfigFallback
	}
	files, err := configFiles(r.env, r.gitDir)
	if err != nil {
		return nil, err
	}
	var all []ConfigEntry
	for _, f := range files {
		data, err := readBounded(f, maxConfigFile)
		switch {
		case err == nil:
		case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			continue // git skips missing files too
		default:
			return nil, errConfigFallback
		}
		entries, err := parseConfig(data)
		if err != nil {
			return nil, errConfigFallback
		}
		for _, e := range entries {
			if needsGitConfig(e) {
				return nil, errConfigFallback
			}
		}
		all = append(all, entries...)
	}
	return all, nil
}

// needsGitConfig reports whether an entry changes which files git reads
// (includes, a per-worktree configuration).
func needsGitConfig(e ConfigEntry) bool {
	section, _, _ := strings.Cut(e.Key, ".")
	return section == "include" || section == "includeif" || e.Key == "extensions.worktreeconfig"
}

// configFiles lists the files git reads, in order, for the environment
// env and the git directory gitDir, or returns errConfigFallback when git
// would read anything else (values from git -c, GIT_CONFIG) or the system
// file's path is not known for sure.
func configFiles(env []string, gitDir string) ([]string, error) {
	for _, k := range []string{"GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"} {
		if _, ok := lookupEnv(env, k); ok {
			return nil, errConfigFallback
		}
	}
	var files []string
	noSystem := false
	if v, ok := lookupEnv(env, "GIT_CONFIG_NOSYSTEM"); ok {
		b, known := envBool(v)
		if !known {
			return nil, errConfigFallback
		}
		noSystem = b
	}
	if !noSystem {
		if v, ok := lookupEnv(env, "GIT_CONFIG_SYSTEM"); ok {
			if v == "" {
				return nil, errConfigFallback
			}
			files = append(files, v)
		} else {
			sys, err := systemConfigPath()
			if err != nil {
				return nil, err
			}
			files = append(files, sys)
		}
	}
	if v, ok := lookupEnv(env, "GIT_CONFIG_GLOBAL"); ok {
		if v == "" {
			return nil, errConfigFallback
		}
		files = append(files, v)
	} else {
		home, _ := lookupEnv(env, "HOME")
		if home == "" {
			return nil, errConfigFallback
		}
		if xdg, _ := lookupEnv(env, "XDG_CONFIG_HOME"); xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		} else {
			files = append(files, filepath.Join(home, ".config", "git", "config"))
		}
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	for _, f := range files {
		if !filepath.IsAbs(f) {
			return nil, errConfigFallback // git resolves these itself
		}
	}
	return append(files, filepath.Join(gitDir, "config")), nil
}

// envBool reads a boolean environment variable as git does for the
// values it commonly holds; known is false for anything else.
func envBool(v string) (value, known bool) {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true, true
	case "", "0", "false", "no", "off":
		return false, true
	}
	return false, false
}

// systemConfigPath returns the system configuration file of the git that
// gitrepo runs. Only the Linux distributions' layout is known for sure: git
// installed with prefix /usr reads /etc/gitconfig. Elsewhere (a
// git built with another prefix, macOS, Windows) the path is compiled into
// git, so git config is asked.
func systemConfigPath() (string, error) {
	if runtime.GOOS != "linux" {
		return "", errConfigFallback
	}
	git, err := exec.LookPath("git")
	if err != nil {
		return "", errConfigFallback
	}
	// git puts its exec-path first in PATH for hooks and helpers, so the
	// git found there is the one in /usr/lib/git-core (Debian) or
	// /usr/libexec/git-core (Fedora) of the same /usr installation.
	switch filepath.Dir(git) {
	case "/usr/bin", "/bin", "/usr/lib/git-core", "/usr/libexec/git-core":
		return "/etc/gitconfig", nil
	}
	return "", errConfigFallback
}

// parseConfig parses one configuration file by git's rules (config.c in
// git 2.39: sections, old and new style subsections, quoting, escapes,
// line continuations, comments, a UTF-8 byte order mark, CRLF line ends).
// It returns an error wherever git reports a bad config line, and for NUL
// bytes, which git would silently truncate values at.
func parseConfig(data []byte) ([]ConfigEntry, error) {
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, errors.New("config: NUL byte")
	}
	p := configParser{data: data}
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		p.pos = 3
	} else if len(data) > 0 && data[0] == 0xef {
		return nil, p.errorf("partial byte order mark")
	}
	var entries []ConfigEntry
	var section []byte // "section." or "section.subsection."
	comment := false
	for {
		c := p.next()
		switch {
		case c == '\n':
			if p.eof {
				return entries, nil
			}
			comment = false
			continue
		case comment, configSpace(c):
			continue
		case c == '#' || c == ';':
			comment = true
			continue
		case c == '[':
			name, err := p.sectionHeader()
			if err != nil {
				return nil, err
			}
			section = append(name, '.')
			continue
		case !configAlpha(c):
			return nil, p.errorf("bad config line")
		}
		e, err := p.entry(section, c)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
}

type configParser struct {
	data []byte
	pos  int
	line int
	eof  bool
}

func (p *configParser) errorf(format string, args ...any) error {
	return fmt.Errorf("config: line %d: %s", p.line+1, fmt.Sprintf(format, args...))
}

// next returns the next character as git's get_next_char does: CRLF reads
// as '\n', and the end of the data as '\n' with eof set.
func (p *configParser) next() byte {
	if p.pos >= len(p.data) {
		p.eof = true
		return '\n'
	}
	c := p.data[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
		c = '\n'
		p.pos++
	}
	if c == '\n' {
		p.line++
	}
	return c
}

// sectionHeader reads "name]" or `name "subsection"]` after a '['. Names
// are lower-cased; a subsection in quotes keeps its case, an old-style
// "[section.Sub]" does not.
func (p *configParser) sectionHeader() ([]byte, error) {
	var name []byte
	for {
		c := p.next()
		switch {
		case p.eof:
			return nil, p.errorf("incomplete section header")
		case c == ']':
			if len(name) == 0 {
				return nil, p.errorf("empty section name")
			}
			return name, nil
		case configSpace(c):
			return p.subsection(name, c)
		case !configKeyChar(c) && c != '.':
			return nil, p.errorf("bad section name")
		}
		name = append(name, configLower(c))
	}
}

func (p *configParser) subsection(name []byte, c byte) ([]byte, error) {
	for {
		if c == '\n' {
			return nil, p.errorf("incomplete section header")
		}
		if c = p.next(); !configSpace(c) {
			break
		}
	}
	if c != '"' {
		return nil, p.errorf("bad section header")
	}
	name = append(name, '.')
	for {
		c := p.next()
		switch c {
		case '\n':
			return nil, p.errorf("incomplete section header")
		case '"':
			if p.next() != ']' {
				return nil, p.errorf("bad section header")
			}
			return name, nil
		case '\\':
			if c = p.next(); c == '\n' {
				return nil, p.errorf("incomplete section header")
			}
		}
		name = append(name, c)
	}
}

// entry reads one "key [= value]" whose first character c was read.
func (p *configParser) entry(section []byte, c byte) (ConfigEntry, error) {
	key := append(append([]byte(nil), section...), configLower(c))
	for {
		c = p.next()
		if p.eof || !configKeyChar(c) {
			break
		}
		key = append(key, configLower(c))
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	if c == '\n' {
		return ConfigEntry{Key: string(key), NoValue: true}, nil
	}
	if c != '=' {
		return ConfigEntry{}, p.errorf("bad config line")
	}
	v, err := p.value()
	if err != nil {
		return ConfigEntry{}, err
	}
	return ConfigEntry{Key: string(key), Value: v}, nil
}

// value reads a value up to the end of its line, as git's parse_value:
// leading blanks dropped, trailing blanks outside quotes dropped, blanks
// inside kept as spaces, '#' and ';' outside quotes start a comment, and the escapes
// \\ \" \n \t \b and a backslash before the line end (continuation).
func (p *configParser) value() (string, error) {
	var v []byte
	quote, comment := false, false
	trim := 0 // where trailing blanks began, 0 if none
	for {
		c := p.next()
		if c == '\n' {
			if quote {
				return "", p.errorf("unterminated quote")
			}
			if trim > 0 {
				v = v[:trim]
			}
			return string(v), nil
		}
		if comment {
			continue
		}
		if configSpace(c) && !quote {
			if trim == 0 {
				trim = len(v)
			}
			if len(v) > 0 {
				v = append(v, ' ') // git keeps each inner blank as a space
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		trim = 0
		if c == '\\' {
			switch c = p.next(); c {
			case '\n':
				continue // a continuation line (at the end of the file, git ends the value)
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", p.errorf("bad escape")
			}
			v = append(v, c)
			continue
		}
		if c == '"' {
			quote = !quote
			continue
		}
		v = append(v, c)
	}
}

// git's own character classes (sane_ctype): ASCII only.
func configSpace(c byte) bool   { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func configAlpha(c byte) bool   { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func configKeyChar(c byte) bool { return configAlpha(c) || '0' <= c && c <= '9' || c == '-' }
func configLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
