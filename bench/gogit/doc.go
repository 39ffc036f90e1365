// Package gogit measures go-git's commit reading on the repository shape
// that internal/gitrepo's BenchmarkReadCommits5000 uses, so that
// "make bench" can set git-secure's readers against it.
//
// It is a module of its own: git-secure does not use go-git, and its
// go.mod should not require it for one comparison. git itself is the
// reference for a repository (go-git differs from it in places: its
// compare-and-swap of a ref does not take git's lock file and writes no
// reflog), and git-secure reads through git or through its own readers,
// each checked against git (internal/gitrepo/fastpath). Reading 5 000 commits one by one, on a
// loaded 2-core machine: go-git 414 us a commit, git-secure 202 us (223 us
// with every in-process reader off, through git cat-file --batch).
package gogit
