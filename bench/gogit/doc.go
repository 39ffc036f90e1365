// Package gogit measures go-git's commit reading on the repository shape
// that internal/gitrepo's BenchmarkReadCommits5000 uses, so that
// "make bench" can set git-secure's readers against it.
//
// It is a module of its own: git-secure does not use go-git, and its
// go.mod should not require it for one comparison.
package gogit
