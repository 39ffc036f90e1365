package gitrepo

import (
	"bytes"
	"errors"
	"strings"
)

// ConfigEntry is one "key=value" of git's configuration, as git config
// --list prints it: section and key lower case, a subsection as written.
type ConfigEntry struct {
	Key   string
	Value string
	// NoValue is set for a key written without "=" (git's implicit true).
	NoValue bool
}

// ConfigList returns the repository's whole configuration, every scope in
// git's order (system, global, local, then the command line), as git
// config -z --list does.
//
// Hooks and the remote helper read it on every push, and waiting for git
// config was the last process on the server hook's path, so the usual case
// is read in-process (fastpath.Repo.Config); anything that reader does not
// handle exactly like git goes to git config, so the result is always
// git's.
//
// The result is read once and shared: callers must not modify it.
func (r *Repo) ConfigList() ([]ConfigEntry, error) {
	r.cfgMu.Lock()
	defer r.cfgMu.Unlock()
	if r.cfgRead {
		return r.cfg, nil
	}
	entries, ok := r.fast.Config()
	cfg := make([]ConfigEntry, len(entries))
	for i, e := range entries {
		cfg[i] = ConfigEntry(e)
	}
	if !ok {
		out, err := r.run(nil, "config", "-z", "--list")
		if err != nil {
			return nil, wrapf(err, "config --list")
		}
		if cfg, err = parseConfigList(out); err != nil {
			return nil, err
		}
	}
	r.cfg, r.cfgRead = cfg, true
	return cfg, nil
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
