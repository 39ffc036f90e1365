// Package gitrepo is the only package in git-secure that runs git. It gives
// typed, strictly validated access to one repository: objects (through a
// long-lived "git cat-file --batch" reader), trees, commits, refs (with
// atomic compare-and-swap updates through "git update-ref --stdin"),
// configuration and an escape hatch for porcelain commands.
//
// # Trust
//
// The package trusts the git binary found on PATH and the process
// environment handed to Open/OpenWithEnv (and the local repository
// configuration, which git itself reads). It trusts nothing stored in the
// repository: object contents, ref names and values read back from git are
// parsed strictly, with size limits, and any value that is later handed to
// git on a command line is validated first (hashes must be 40 lowercase hex
// digits, ref names follow git's check-ref-format rules, revisions must not
// start with '-' and are passed after --end-of-options). Replace refs
// (refs/replace/*) are disabled for every git process the package starts
// (GIT_NO_REPLACE_OBJECTS=1) so an attacker cannot make an object id resolve
// to different content.
//
// Only SHA-1 repositories are supported; Open rejects SHA-256 repositories.
//
// # Concurrency
//
// A *Repo is safe for concurrent use by multiple goroutines. The long-lived
// cat-file processes are each guarded by a mutex, so object reads are
// serialised per process; all other operations start their own git process.
// Ref updates interoperate with every other git process through git's own
// lock files. The package holds no global mutable state.
package gitrepo
