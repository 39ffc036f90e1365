// Package stress holds git-secure's adversarial end-to-end tests: races and
// crashes, run with the built binary against enforcing servers on loopback
// (a file:// bare repository and git daemon on 127.0.0.1).
//
//   - TestStressPushRace: P persons, each with their own ed25519 key, HOME
//     and clone (hooks installed, plain git), push N commits each to the
//     protected main at the same time, pulling and retrying when someone
//     else won. Afterwards the server's log must be linear, its main
//     entries must chain (each old is the previous new), they must record
//     exactly the first-parent history of the server's main, no push git
//     reported successful may be missing, and a fresh mirror clone must
//     verify. It prints pushes attempted, accepted, retried, entries,
//     losses, wall time and pushes per second.
//   - TestCrashKill: git-secure operations (rsl record, git push through
//     git-remote-secure, policy apply, and the server's pre-receive hook
//     during a push) are SIGKILLed, with their whole process group, after a
//     random delay. Afterwards the repository and the server must verify,
//     or fail with one clear, repairable state whose message names the fix
//     (a stale <ref>.lock names the lock file). Outcomes are counted per
//     category and printed.
//
// The package has no code of its own; everything is in its _test.go files.
// Under go test the runs are small (3 pushers x 5 pushes, 20 kills) and
// skipped with -short; scripts/stress.sh (make stress) runs the full sizes:
//
//	GIT_SECURE_STRESS=full go test -run 'TestStress|TestCrash' -timeout 20m -v ./internal/testing/stress/
//
// Sizes can be set one by one with GIT_SECURE_STRESS_PUSHERS,
// GIT_SECURE_STRESS_PUSHES, GIT_SECURE_STRESS_TRANSPORTS (file,daemon) and
// GIT_SECURE_CRASH_ITERATIONS.
package stress
