// Package fastpath holds git-secure's in-process readers of a git
// repository: code that re-implements parts of git so that the hooks and
// the remote helper, which run on every push, start fewer git processes.
// Package gitrepo is the only user; it asks git whenever a reader answers
// "not here".
//
// # git is the reference
//
// Each reader does one common case exactly as git does it, and answers
// "not here" for anything else (another format version, an include, a
// damaged or unusual file, a size over its bound), after which gitrepo asks
// git, which also reports any error properly. Every object a reader returns
// is checked against its name. Because git-secure's view of a repository
// must never differ from git's (one such difference, in tree modes, was a
// security hole), each reader has a differential test that compares it
// with git on real repositories, and a fuzz target where it parses
// repository bytes:
//
//   - loose objects (ReadLoose): TestReadLoose against cat-file,
//     FuzzInflateLoose;
//   - packed objects, index v2, packs v2/v3, both delta kinds (ReadPacked):
//     TestReadPackedMatchesCatFile, TestReadPackedDamaged, FuzzReadPack,
//     FuzzApplyDelta;
//   - loose refs and packed-refs (ListRefs): TestReadRefsFilesMatchesGit
//     against for-each-ref, FuzzReadPackedRefs;
//   - configuration files (Config): TestParseConfigMatchesGit and
//     FuzzParseConfig against git config --list, TestConfigListMatchesGit;
//   - trees (TreeEntries, ParseMode): TestReadTreeMatchesLsTree,
//     TestParseTreeModesLikeGit, FuzzParseTreeLikeGit against ls-tree;
//   - the layout check of gitrepo.OpenGitDir (PlainLayout): TestOpenGitDir
//     against rev-parse (gitrepo.Open);
//   - loose object writes (WriteLoose): TestWriteLooseLikeGit (git reads
//     back what was written, under the name hash-object gives, and fsck
//     --strict accepts it);
//   - loose ref updates (UpdateLooseRef, an rsl record's one ref
//     transaction): TestUpdateRefInProcessLikeGit (the ref file and the
//     reflog line git update-ref writes for the same transaction, read
//     back by rev-parse and reflog), TestUpdateRefInProcessCompareAndSwap
//     (a moved ref, a held lock), TestUpdateRefInProcessFallsBackToGit
//     (hooks, fsync, shared repositories, a date in the environment, a
//     packed ref go to git update-ref);
//   - the ancestry walk of gitrepo.IsAncestor (not a reader of files, but
//     under the same switch): TestNoInProcessReadsLikeGit against
//     merge-base.
//
// The tests of package gitrepo named above run the readers with the
// switch cleared whatever the environment says, and
// TestNoInProcessReadsLikeGit compares a repository read with and without
// them.
//
// # The switch
//
// GIT_SECURE_NO_FASTPATH=1 (EnvOff; GIT_SECURE_NO_INPROCESS, its first
// name, still works) in the environment a repository is opened with turns
// every reader off: Open returns nil, a nil *Repo answers "not here" to
// everything, PlainLayout says no, and gitrepo asks git for everything
// (cat-file, for-each-ref, config --list, ls-tree, rev-parse, hash-object,
// merge-base). "make test" runs the suite both ways.
//
// # What each reader buys
//
// Measured with BenchmarkFastPaths in package gitrepo (go test -run '^$'
// -bench FastPaths -benchtime 100x ./internal/gitrepo/), each reader
// against git doing the same, per call, in three runs on a shared 2-core
// machine under heavy load (load average 23 to 31: a git process took 10
// to 40 ms there, 1 to 3 ms on a quiet machine); the ratio is the figure
// to read:
//
//	reader                    in-process     git (switch on)
//	open from a hook          0.04-0.05 ms   15-36 ms  (rev-parse)
//	configuration             0.13-1.2 ms    12-35 ms  (config --list)
//	list refs (70, packed)    0.55-2.1 ms    10-44 ms  (for-each-ref)
//	read a tree               0.07-0.15 ms   11-31 ms  (ls-tree)
//	write a loose object      3.7-9.2 ms     14-44 ms  (hash-object)
//	read a loose commit       0.06-0.17 ms   0.26-0.46 ms (cat-file --batch, running)
//	read a packed commit      0.05-0.12 ms   0.12-0.33 ms (cat-file --batch, running)
//
// Over many objects the running cat-file costs little more: reading 5 000
// packed commits one by one (BenchmarkReadCommits5000/batch) took 202
// us a commit with the pack reader and 223 us with the switch on, against
// 414 us with go-git (bench/gogit) and 30 ms with a git process per
// commit. What the object readers buy is mostly not starting cat-file at
// all: a hook that reads a few objects starts no process for them. A push
// runs the client hooks, the remote helper and the server hook, each
// opening the repository and reading its configuration and refs: the
// readers save about ten processes per push, 10 to 30 ms on a quiet
// machine.
//
// # Ref writes go through git
//
// Refs are written only by git update-ref --stdin transactions
// (gitrepo.Repo.UpdateRefs). An in-process writer of one ref by git's lock
// protocol existed: it saved one process per push (1.2-2.2 ms against
// 27-35 ms for update-ref on the loaded machine, about 2 ms on a quiet
// one), too little for code whose bug would corrupt a repository rather
// than misread it, so it was removed.
package fastpath
