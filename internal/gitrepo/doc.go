// Package gitrepo is the only package in git-secure that runs git or reads
// a repository's files. It gives typed, strictly validated access to one
// repository: objects, trees, commits, refs (with atomic compare-and-swap
// updates), configuration and an escape hatch for porcelain commands.
//
// # Git, and the common cases without it
//
// Hooks and the remote helper run on every push, where each git process
// costs milliseconds, so the common cases are read in-process by package
// fastpath (loose and packed objects, loose refs and packed-refs, the
// configuration files, trees, the layout check of OpenGitDir, loose object
// writes), each exactly as git does it and each falling back to git for
// anything else; IsAncestor first walks a few commits through the running
// cat-file. Refs are only written by git update-ref --stdin transactions,
// except HEAD's compare-and-swap (SetHead), which git 2.39 cannot do.
// The package doc of fastpath says what each reader buys, with the figure,
// and which differential test compares it with git.
//
// Each of these readers parses files an attacker may have written, so each
// is attack surface. Setting GIT_SECURE_NO_FASTPATH=1 (EnvNoFastPath; its
// first name GIT_SECURE_NO_INPROCESS, EnvNoInProcess, still works) in the
// environment a Repo is opened with turns all of them off: objects come
// from git cat-file, refs from git for-each-ref, the configuration from
// git config --list, trees from git ls-tree, ancestry from git merge-base,
// and every object write goes through git hash-object. It is read once,
// when the Repo is opened (no global state); it costs a few processes per
// push. make test runs the suite both ways.
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
