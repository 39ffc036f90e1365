package fastpath

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
