package fastpath

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// SetLocalConfig replaces, in the repository's own configuration file,
// the one value of key by value, as git config --local KEY VALUE does
// when the key is set there once (the remote helper's
// remote.NAME.securetip after every push: a git config process was one
// of the push's processes). It writes only in the plain case, and done
// is false for anything else, which git config then handles: the switch
// off, a linked work tree, GIT_CONFIG set, an include or a per-worktree
// configuration, the key not set or set more than once, a key, a section
// header or a value other than simple tokens (letters, digits, "-", "_",
// "."; a subsection without quotes or backslashes), a line continued with
// a backslash anywhere in the file, a comment on the key's line, a
// symbolic link, a lock git holds. The new file is parsed again before it
// replaces the old one and must give the same entries but that value.
// Like git, it writes config.lock with the file's mode and renames it
// over the file.
func (f *Repo) SetLocalConfig(key, value string) (done bool) {
	if f == nil || LinkedWorkTree(f.gitDir) || !simpleConfigValue(value) {
		return false
	}
	if _, ok := LookupEnv(f.env, "GIT_CONFIG"); ok {
		return false
	}
	section, sub, name, ok := splitConfigKey(key)
	if !ok {
		return false
	}
	file := filepath.Join(f.gitDir, "config")
	st, err := os.Lstat(file)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	data, err := readBounded(file, maxConfigFile)
	if err != nil {
		return false
	}
	old, err := parseConfig(data)
	if err != nil || slices.ContainsFunc(old, needsGitConfig) {
		return false
	}
	canon := canonicalKey(section, sub, name)
	at := -1
	for i, e := range old {
		if e.Key == canon {
			if at >= 0 || e.NoValue || !simpleConfigValue(e.Value) {
				return false
			}
			at = i
		}
	}
	if at < 0 {
		return false
	}
	if old[at].Value == value {
		return true // git would rewrite the same bytes
	}
	out, ok := replaceConfigLine(data, section, sub, name, old[at].Value, value)
	if !ok {
		return false
	}
	// The new file must read as the old one with that one value changed.
	want := slices.Clone(old)
	want[at].Value = value
	if got, err := parseConfig(out); err != nil || !slices.Equal(got, want) {
		return false
	}
	return writeLocked(file, out, st.Mode().Perm())
}

// splitConfigKey splits a key of the form section.name or
// section.subsection.name, each part a simple token.
func splitConfigKey(key string) (section, sub, name string, ok bool) {
	i, j := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if i <= 0 || j == len(key)-1 {
		return "", "", "", false
	}
	section, name = key[:i], key[j+1:]
	if i != j {
		sub = key[i+1 : j]
		if !simpleConfigValue(sub) {
			return "", "", "", false
		}
	}
	for _, s := range []string{section, name} {
		for k := 0; k < len(s); k++ {
			if !configKeyChar(s[k]) {
				return "", "", "", false
			}
		}
	}
	return section, sub, name, configAlpha(name[0])
}

// canonicalKey is the key as ConfigEntry holds it.
func canonicalKey(section, sub, name string) string {
	if sub == "" {
		return strings.ToLower(section) + "." + strings.ToLower(name)
	}
	return strings.ToLower(section) + "." + sub + "." + strings.ToLower(name)
}

// simpleConfigValue: letters, digits, "-", "_" and "." only, not empty (no
// quoting, escapes or comments in the file either way).
func simpleConfigValue(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !configAlpha(c) && !('0' <= c && c <= '9') && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// replaceConfigLine finds the one line "NAME = OLD" (any case of NAME,
// blanks around) in the section header [SECTION "SUB"] (or [SECTION])
// and writes it as git config writes a replaced value, "\tNAME = VALUE".
// ok is false if that is not exactly one line of the file.
func replaceConfigLine(data []byte, section, sub, name, oldValue, value string) ([]byte, bool) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	in, at := false, -1
	for i, raw := range lines {
		l := bytes.TrimRight(raw, "\n")
		if bytes.HasSuffix(bytes.TrimRight(l, "\r"), []byte(`\`)) {
			return nil, false // a continued line: leave it to git
		}
		t := bytes.TrimLeft(l, " \t")
		if len(t) > 0 && t[0] == '[' {
			in = headerIs(t, section, sub)
			continue
		}
		k, v, found := bytes.Cut(t, []byte("="))
		if !found || !strings.EqualFold(string(bytes.TrimRight(k, " \t")), name) {
			if bytes.Contains(bytes.ToLower(l), []byte(strings.ToLower(name))) && in {
				return nil, false // the name elsewhere in the section: unsure
			}
			continue
		}
		if !in || string(bytes.Trim(v, " \t\r")) != oldValue || at >= 0 {
			return nil, false
		}
		at = i
	}
	if at < 0 {
		return nil, false
	}
	var out bytes.Buffer
	for i, l := range lines {
		if i != at {
			out.Write(l)
			continue
		}
		out.WriteString("\t" + name + " = " + value + "\n")
	}
	return out.Bytes(), true
}

// headerIs reports whether the header line t is exactly [SECTION "SUB"]
// (or [SECTION] for no SUB), nothing after it but blanks.
func headerIs(t []byte, section, sub string) bool {
	want := "[" + section + "]"
	if sub != "" {
		want = "[" + section + ` "` + sub + `"]`
	}
	h := bytes.TrimRight(t, " \t\r")
	if len(h) != len(want) {
		return false
	}
	if sub == "" {
		return strings.EqualFold(string(h), want)
	}
	// The section name is case-insensitive, the subsection is not.
	n := len(section) + 1
	return strings.EqualFold(string(h[:n]), want[:n]) && string(h[n:]) == want[n:]
}

// writeLocked writes data to file through file.lock (git's lock: created
// exclusively, so that a git process holding it makes this fail), with
// mode perm, and renames it over file.
func writeLocked(file string, data []byte, perm os.FileMode) bool {
	lock := file + ".lock"
	fh, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return false
	}
	_, err = fh.Write(data)
	err = errors.Join(err, fh.Chmod(perm), fh.Close())
	if err == nil {
		err = os.Rename(lock, file)
	}
	if err != nil {
		_ = os.Remove(lock)
		return false
	}
	return true
}
