package fastpath

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxConfigScan bounds how much of a configuration file PlainLayout reads.
const maxConfigScan = 1 << 20

// PlainLayout reports whether gitDir, an absolute git directory that git
// itself handed to a hook or a remote helper (GIT_DIR), has the plain
// layout that needs no git rev-parse to interpret: its own objects, refs
// and configuration, SHA-1 objects, no core.worktree, no include, and not
// bare when withWorkTree. false (with a nil error) means: ask git. It is
// always false when env turns the readers off.
func PlainLayout(gitDir string, withWorkTree bool, env []string) (bool, error) {
	if Off(env) || !LooksLikeGitDir(gitDir) || LinkedWorkTree(gitDir) {
		return false, nil
	}
	cfg, err := readBounded(filepath.Join(gitDir, "config"), maxConfigScan)
	if errors.Is(err, errTooBig) {
		return false, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("fastpath: layout of %s: %w", gitDir, err)
	}
	lower := bytes.ToLower(cfg)
	// Leave anything that changes where objects or the work tree are, or
	// what hashes mean, to git; "include" files could set them too.
	for _, word := range []string{"objectformat", "worktree", "include", "refstorage"} {
		if bytes.Contains(lower, []byte(word)) {
			return false, nil
		}
	}
	if withWorkTree {
		for _, line := range bytes.Split(lower, []byte("\n")) {
			if string(bytes.Join(bytes.Fields(line), nil)) == "bare=true" {
				return false, nil // a bare repository has no work tree
			}
		}
	}
	return true, nil
}

// LooksLikeGitDir reports whether dir has what every git directory has.
func LooksLikeGitDir(dir string) bool {
	for _, name := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

// LinkedWorkTree reports whether gitDir is a linked work tree's (its refs,
// objects and configuration live in a common directory it names).
func LinkedWorkTree(gitDir string) bool {
	_, err := os.Lstat(filepath.Join(gitDir, "commondir"))
	return err == nil
}

// FilesRefStore reports whether gitDir keeps its refs in its own files ref
// store (loose files and packed-refs), which ListRefs can read: not a
// linked work tree, no other ref storage configured (an include could
// configure one).
func FilesRefStore(gitDir string) bool {
	if LinkedWorkTree(gitDir) {
		return false
	}
	cfg, err := readBounded(filepath.Join(gitDir, "config"), maxConfigScan)
	if err != nil {
		return false
	}
	lower := bytes.ToLower(cfg)
	return !bytes.Contains(lower, []byte("refstorage")) && !bytes.Contains(lower, []byte("include"))
}

// BareLayout reports whether git, started with no GIT_DIR in the
// directory dir (absolute, symbolic links resolved), would certainly use
// dir itself as a bare repository of the plain layout: no .git entry in
// dir (git looks for one first), dir a git directory by git's test
// (is_git_directory: objects and refs directories, a HEAD naming a ref
// under refs/ or holding an object id), core.bare true in its
// configuration, repository format 0 or 1 without extensions, no
// core.worktree or include (PlainLayout), and no safe.bareRepository in
// the protected configuration (system and global files, read in-process;
// git -c values, includes or an unknown system path leave it to git).
// Ownership is the caller's to check. false means: ask git rev-parse.
func BareLayout(dir string, env []string) bool {
	if Off(env) {
		return false
	}
	if _, ok := LookupEnv(env, "GIT_OBJECT_DIRECTORY"); ok {
		return false // is_git_directory looks there for objects
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git")); !errors.Is(err, os.ErrNotExist) {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err != nil || !st.IsDir() {
			return false
		}
	}
	if !validHead(filepath.Join(dir, "HEAD")) {
		return false
	}
	if plain, err := PlainLayout(dir, false, env); err != nil || !plain {
		return false
	}
	local, err := readConfigFile(filepath.Join(dir, "config"))
	if err != nil {
		return false
	}
	bare, version := false, "0"
	for _, e := range local {
		section, _, _ := strings.Cut(e.Key, ".")
		switch {
		case section == "extensions", e.Key == "core.worktree":
			return false
		case e.Key == "core.bare":
			b, known := configBool(e)
			if !known {
				return false
			}
			bare = b
		case e.Key == "core.repositoryformatversion":
			version = e.Value
		}
	}
	if !bare || (version != "0" && version != "1") {
		return false
	}
	files, err := configFiles(env, dir)
	if err != nil {
		return false
	}
	for _, file := range files[:len(files)-1] { // all but the local file
		entries, err := readConfigFile(file)
		switch {
		case err == nil:
		case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			continue
		default:
			return false
		}
		for _, e := range entries {
			if e.Key == "safe.barerepository" {
				return false
			}
		}
	}
	return true
}

// configBool reads a boolean configuration value in the spellings git
// writes; known is false for anything else (numbers, odd spellings).
func configBool(e ConfigEntry) (value, known bool) {
	if e.NoValue {
		return true, true
	}
	switch strings.ToLower(e.Value) {
	case "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0", "":
		return false, true
	}
	return false, false
}

// validHead reports whether path is a HEAD git's validate_headref accepts
// in its common forms: a regular file holding "ref: refs/..." or a 40-hex
// object id. Anything else (a symbolic link, other content) is false, and
// the caller asks git.
func validHead(path string) bool {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	data, err := readBounded(path, 255)
	if err != nil {
		return false
	}
	if rest, ok := bytes.CutPrefix(data, []byte("ref:")); ok {
		return bytes.HasPrefix(bytes.TrimLeft(rest, " \t\n\v\f\r"), []byte("refs/"))
	}
	// get_oid_hex: 40 hex digits, whatever follows them.
	if len(data) < 40 {
		return false
	}
	for _, c := range data[:40] {
		if !isHexDigit(c) {
			return false
		}
	}
	return true
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
