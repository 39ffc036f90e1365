package gitrepo

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo/fastpath"
)

func contextBackground() context.Context { return context.Background() }

// checkConfigKey rejects keys that git could take as options or that
// contain control characters.
func checkConfigKey(key string) error {
	if key == "" || key[0] == '-' || !strings.Contains(key, ".") || len(key) > 1024 ||
		strings.ContainsFunc(key, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		return fmt.Errorf("gitrepo: invalid config key %s", strconv.QuoteToASCII(truncate(key, 100)))
	}
	return nil
}

// Config returns the value of key (git config --get, last value wins). ok
// is false if the key is not set. The files are read again at every call,
// in-process when the fast path reads them exactly as git does
// (fastpath.Repo.Config), else by git config.
func (r *Repo) Config(key string) (string, bool, error) {
	return r.configGet("config", r.fast.Config, key)
}

// configGet returns git config [scope] --get for key: what, "config" or
// "config --local", names the command in errors and gives the scope; fast
// reads that scope in-process (ok false: git config reads it). The hooks
// and the remote helper read several keys on every push and clone: one
// git config process each cost more than the rest of a lookup.
func (r *Repo) configGet(what string, fast func() ([]fastpath.ConfigEntry, bool), key string) (string, bool, error) {
	if err := checkConfigKey(key); err != nil {
		return "", false, err
	}
	if entries, ok := fast(); ok {
		v, ok := getConfig(entries, key)
		return v, ok, nil
	}
	args := append(strings.Fields(what), "--get", "--null", "--end-of-options", key)
	out, err := r.run(nil, args...)
	if err != nil {
		if exitCode(err) == 1 {
			return "", false, nil
		}
		return "", false, wrapf(err, "%s %s", what, key)
	}
	v, ok := bytes.CutSuffix(out, []byte{0})
	if !ok {
		return "", false, fmt.Errorf("gitrepo: %s %s: malformed output", what, key)
	}
	return string(v), true, nil
}

// ConfigAll returns every value of key (git config --get-all); none if
// unset.
func (r *Repo) ConfigAll(key string) ([]string, error) {
	if err := checkConfigKey(key); err != nil {
		return nil, err
	}
	out, err := r.run(nil, "config", "--get-all", "--null", "--end-of-options", key)
	if err != nil {
		if exitCode(err) == 1 {
			return nil, nil
		}
		return nil, wrapf(err, "config %s", key)
	}
	if len(out) == 0 || out[len(out)-1] != 0 {
		return nil, fmt.Errorf("gitrepo: config %s: malformed output", key)
	}
	return strings.Split(string(out[:len(out)-1]), "\x00"), nil
}

// SetConfig sets key to value in the repository's local config.
func (r *Repo) SetConfig(key, value string) error {
	if err := checkConfigKey(key); err != nil {
		return err
	}
	if strings.IndexByte(value, 0) >= 0 {
		return fmt.Errorf("gitrepo: set config %s: value contains NUL", key)
	}
	defer r.dropConfig()
	if r.fast.SetLocalConfig(key, value) {
		return nil // the one value replaced in-process, as git config would
	}
	if _, err := r.run(nil, "config", "--local", "--end-of-options", key, value); err != nil {
		return wrapf(err, "set config %s", key)
	}
	return nil
}

// UnsetConfig removes every value of key from the local config. Unsetting
// a key that is not set is not an error.
func (r *Repo) UnsetConfig(key string) error {
	if err := checkConfigKey(key); err != nil {
		return err
	}
	defer r.dropConfig()
	if _, err := r.run(nil, "config", "--local", "--unset-all", "--end-of-options", key); err != nil {
		if exitCode(err) == 5 {
			return nil
		}
		return wrapf(err, "unset config %s", key)
	}
	return nil
}

// MergeBase returns a best common ancestor of a and all of others
// (git merge-base). ok is false when there is none.
func (r *Repo) MergeBase(a Hash, others ...Hash) (Hash, bool, error) {
	if len(others) == 0 {
		return ZeroHash, false, fmt.Errorf("gitrepo: merge-base %s: no other commits", a)
	}
	args := []string{"merge-base", "--end-of-options", a.String()}
	for _, o := range others {
		args = append(args, o.String())
	}
	out, err := r.run(nil, args...)
	if err != nil {
		if exitCode(err) == 1 {
			return ZeroHash, false, nil
		}
		return ZeroHash, false, wrapf(err, "merge-base %s", a)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	h, err := ParseHash(line)
	if err != nil {
		return ZeroHash, false, wrapf(err, "merge-base %s", a)
	}
	return h, true, nil
}

// getConfig is git config --get of key over entries already read: the
// last value, "" for a key written without "=" (where ConfigValue says
// "true").
func getConfig(entries []fastpath.ConfigEntry, key string) (string, bool) {
	want := canonicalConfigKey(key)
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Key == want {
			return entries[i].Value, true
		}
	}
	return "", false
}

// MergeTree returns the tree of merging theirs into ours as git merge
// does (git merge-tree --write-tree, no commit written); clean is false
// when the merge conflicts (tree is then zero). It tells what content a
// merge commit of the two must have: a merge commit is any tree its
// author chose, and its parents alone say nothing about its content.
func (r *Repo) MergeTree(ours, theirs Hash) (tree Hash, clean bool, err error) {
	out, err := r.run(nil, "merge-tree", "--write-tree", "--no-messages", "--end-of-options", ours.String(), theirs.String())
	// A conflict exits 1 after the tree with conflict markers; so does a
	// commit git cannot find, with no tree.
	line, _, _ := bytes.Cut(out, []byte{'\n'})
	tree, perr := ParseHash(string(line))
	switch {
	case err != nil && exitCode(err) == 1 && perr == nil:
		return ZeroHash, false, nil
	case err != nil:
		return ZeroHash, false, wrapf(err, "merge-tree %s %s", ours, theirs)
	case perr != nil:
		return ZeroHash, false, fmt.Errorf("gitrepo: merge-tree %s %s: malformed output %q", ours, theirs, truncate(string(out), 80))
	}
	return tree, true, nil
}

// maxIndependentArgs bounds the commits one git merge-base --independent
// is given (its command line).
const maxIndependentArgs = 500

// Independent returns commits of hs that reach every commit hs reaches
// (duplicates count once): those that no other commit of hs reaches (git
// merge-base --independent), in no particular order. Beyond
// maxIndependentArgs commits it reduces them a part at a time; when the
// part kept so far alone is that large, the rest is kept unreduced (still
// a set reaching exactly what hs reaches).
func (r *Repo) Independent(hs ...Hash) ([]Hash, error) {
	seen := make(map[Hash]bool, len(hs))
	var uniq []Hash
	for _, h := range hs {
		if !seen[h] {
			seen[h] = true
			uniq = append(uniq, h)
		}
	}
	if len(uniq) <= maxIndependentArgs {
		return r.independent(uniq)
	}
	var kept []Hash
	for i := 0; i < len(uniq); {
		if len(kept) >= maxIndependentArgs/2 {
			return append(kept, uniq[i:]...), nil
		}
		n := min(maxIndependentArgs-len(kept), len(uniq)-i)
		next, err := r.independent(append(kept, uniq[i:i+n]...))
		if err != nil {
			return nil, err
		}
		kept, i = next, i+n
	}
	return kept, nil
}

func (r *Repo) independent(hs []Hash) ([]Hash, error) {
	if len(hs) <= 1 {
		return hs, nil
	}
	args := []string{"merge-base", "--independent", "--end-of-options"}
	for _, h := range hs {
		args = append(args, h.String())
	}
	out, err := r.run(nil, args...)
	if err != nil {
		return nil, wrapf(err, "merge-base --independent of %d commits", len(hs))
	}
	var tips []Hash
	for _, line := range strings.Fields(string(out)) {
		h, err := ParseHash(line)
		if err != nil {
			return nil, wrapf(err, "merge-base --independent")
		}
		tips = append(tips, h)
	}
	if len(tips) == 0 {
		return nil, fmt.Errorf("gitrepo: merge-base --independent of %d commits: no output", len(hs))
	}
	return tips, nil
}
