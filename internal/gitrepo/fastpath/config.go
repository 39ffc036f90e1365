package fastpath

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
var errConfigFallback = errors.New("fastpath: configuration needs git")

// Config reads the repository's whole configuration as git config -z
// --list would give it: the files git would read, in its order (system,
// global, local), parsed by the same rules. ok is false whenever the
// reader cannot be sure to read it as git does (the switch off, an
// include, a worktree configuration, git -c values, an unknown system
// configuration path, a syntax error, an unreadable or very large file):
// then git config reads it.
func (f *Repo) Config() ([]ConfigEntry, bool) {
	if f == nil || LinkedWorkTree(f.gitDir) {
		return nil, false
	}
	files, err := configFiles(f.env, f.gitDir)
	if err != nil {
		return nil, false
	}
	var all []ConfigEntry
	for _, file := range files {
		entries, err := readConfigFile(file)
		switch {
		case err == nil:
		case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			continue // git skips missing files too
		default:
			return nil, false
		}
		all = append(all, entries...)
	}
	return all, true
}

// LocalConfig reads the repository's own configuration file alone, as git
// config --local --list gives it. ok is false whenever git config must
// read it: the switch off, a linked work tree, GIT_CONFIG set, a missing,
// unreadable or very large file, a syntax error, an include or a
// per-worktree configuration.
func (f *Repo) LocalConfig() ([]ConfigEntry, bool) {
	if f == nil || LinkedWorkTree(f.gitDir) {
		return nil, false
	}
	if _, ok := LookupEnv(f.env, "GIT_CONFIG"); ok {
		return nil, false
	}
	entries, err := readConfigFile(filepath.Join(f.gitDir, "config"))
	if err != nil {
		return nil, false
	}
	return entries, true
}

// readConfigFile reads and parses one configuration file; an entry that
// changes which files git reads is errConfigFallback.
func readConfigFile(file string) ([]ConfigEntry, error) {
	data, err := readBounded(file, maxConfigFile)
	if err != nil {
		return nil, err
	}
	entries, err := parseConfig(data)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if needsGitConfig(e) {
			return nil, errConfigFallback
		}
	}
	return entries, nil
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
		if _, ok := LookupEnv(env, k); ok {
			return nil, errConfigFallback
		}
	}
	var files []string
	noSystem := false
	if v, ok := LookupEnv(env, "GIT_CONFIG_NOSYSTEM"); ok {
		b, known := envBool(v)
		if !known {
			return nil, errConfigFallback
		}
		noSystem = b
	}
	if !noSystem {
		if v, ok := LookupEnv(env, "GIT_CONFIG_SYSTEM"); ok {
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
	if v, ok := LookupEnv(env, "GIT_CONFIG_GLOBAL"); ok {
		if v == "" {
			return nil, errConfigFallback
		}
		files = append(files, v)
	} else {
		home, _ := LookupEnv(env, "HOME")
		if home == "" {
			return nil, errConfigFallback
		}
		if xdg, _ := LookupEnv(env, "XDG_CONFIG_HOME"); xdg != "" {
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
