// Package gitrepo is the only package in git-secure that runs git or reads
// a repository's files. It gives typed, strictly validated access to one
// repository: objects, trees, commits, refs (with atomic compare-and-swap
// updates), configuration and an escape hatch for porcelain commands.
//
// # Git, and the common cases without it
//
// Hooks and the remote helper run on every push, where each git process
// costs milliseconds, so the common cases are done in-process, each exactly
// as git does it and each falling back to git for anything else: loose and
// packed objects (checked against their names; cat-file --batch reads the
// rest), the files ref store (for-each-ref otherwise), the configuration
// files (git config --list when an include, git -c, or an unknown layout is
// involved), one existing ref moved under git's lock protocol (update-ref
// --stdin for every other transaction) and loose object writes (hash-object
// in a quarantine). Differential tests compare each with git.
//
// Each of these readers parses files an attacker may have written, so each
// is attack surface. Setting GIT_SECURE_NO_INPROCESS=1 (EnvNoInProcess) in
// the environment a Repo is opened with turns all of them off: objects
// come from git cat-file, refs from git for-each-ref, the configuration
// from git config --list, trees from git ls-tree, ancestry from git
// merge-base, and every ref and object write goes through git update-ref
// and git hash-object. It is read once, when the Repo is opened (no global
// state); it costs a few processes per push. CI runs the tests of the
// packages that read repositories both ways.
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
// cat-file processes, started on first need, are each guarded by a mutex;
// in-process reads share only immutable state and pooled buffers.
// Ref updates interoperate with every other git process through git's own
// lock files. The package holds no global mutable state.
package gitrepo
