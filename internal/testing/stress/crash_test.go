package stress

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// crashWorld is everything the crash test kills operations in.
type crashWorld struct {
	t          *testing.T
	owner, p1  *user
	recordDir  string   // local repository: git secure rsl record
	applyDir   string   // local repository: git secure policy apply
	file       *project // file:// server: git push through the helper
	daemon     *project // git daemon server: git push through the helper
	hooked     *project // file:// server whose pre-receive hook is killed
	hookPID    string   // file the hooked server's hook writes its pid to
	mirrorRoot string
}

// crashOp is one kind of operation the test kills.
type crashOp struct {
	name string
	// prepare readies iteration it (a new commit, a staged change).
	prepare func(it int) error
	// kill runs the operation and SIGKILLs it after delay.
	kill func(delay time.Duration) result
	// probe runs the operation again, to completion.
	probe func() result
	// applied reports whether the operation's effect is there.
	applied func(it int) bool
	// check verifies every repository the operation touches.
	check func() []result
	// lockDirs are the git directories to look for stale locks in.
	lockDirs []string
	// repair, when set, is the command verify names (repairHint) for an
	// interrupted operation.
	repair     func() result
	repairHint string
	// commitLock, for a push, is the server's lock of refs/secure/rsl: a
	// server killed while git commits the push (one lock renamed per
	// ref) can land the branch without its entry, and leaves this lock;
	// the retry (once the lock is removed) records the missing entry.
	commitLock string
}

// pushOp kills plain git push through git-remote-secure.
func (w *crashWorld) pushOp(name string, p *project) *crashOp {
	u, dir := p.persons[1], p.dirs[1]
	return &crashOp{
		name: name,
		prepare: func(it int) error {
			return u.writeCommit(dir, fmt.Sprintf("crash/%s-%d.txt", name, it), "x\n", name+" "+strconv.Itoa(it))
		},
		kill: func(d time.Duration) result {
			return u.runKill(dir, d, "git", "push", "-q", "origin", "HEAD:main")
		},
		probe: func() result { return u.run(dir, "git", "push", "-q", "origin", "HEAD:main") },
		applied: func(int) bool {
			return p.srv.admin.refs(p.repo)["refs/heads/main"] == u.run(dir, "git", "rev-parse", "HEAD").stdout
		},
		check: func() []result {
			return []result{w.mirrorVerify(p), u.run(dir, "git", "secure", "verify")}
		},
		lockDirs:   []string{p.repo, filepath.Join(dir, ".git")},
		commitLock: filepath.Join(p.repo, "refs", "secure", "rsl.lock"),
	}
}

func (w *crashWorld) mirrorVerify(p *project) result {
	r, err := verifyMirror(p.srv.admin, p.url, filepath.Join(w.mirrorRoot, "mirror.git"))
	if err != nil {
		r.code = -2
		r.stderr += "\n" + err.Error()
	}
	return r
}

func (w *crashWorld) ops() []*crashOp {
	o := w.owner
	latestMain := func(dir string) string {
		entries, err := o.rslLog(dir)
		if err != nil {
			return ""
		}
		last := ""
		for _, e := range entries {
			if e.Ref == "refs/heads/main" {
				last = e.New
			}
		}
		return last
	}
	policyEntries := func(dir string) int {
		entries, _ := o.rslLog(dir)
		n := 0
		for _, e := range entries {
			if e.Ref == "refs/secure/policy" {
				n++
			}
		}
		return n
	}
	applyBase := 0
	record := &crashOp{
		name: "rsl record",
		prepare: func(it int) error {
			return o.writeCommit(w.recordDir, fmt.Sprintf("rec-%d.txt", it), "x\n", "record "+strconv.Itoa(it))
		},
		kill: func(d time.Duration) result {
			return o.runKill(w.recordDir, d, "git", "secure", "rsl", "record", "main")
		},
		probe: func() result { return o.run(w.recordDir, "git", "secure", "rsl", "record", "main") },
		applied: func(int) bool {
			return latestMain(w.recordDir) == o.run(w.recordDir, "git", "rev-parse", "HEAD").stdout
		},
		check:    func() []result { return []result{o.run(w.recordDir, "git", "secure", "verify")} },
		lockDirs: []string{filepath.Join(w.recordDir, ".git")},
	}
	apply := &crashOp{
		name: "policy apply",
		prepare: func(it int) error {
			applyBase = policyEntries(w.applyDir)
			r := o.run(w.applyDir, "git", "secure", "policy", "add-rule", fmt.Sprintf("r%d", it), "--ref", fmt.Sprintf("refs/heads/r%d", it), "--allow", o.name)
			if r.code != 0 {
				return fmt.Errorf("stage: %s", r)
			}
			return nil
		},
		kill: func(d time.Duration) result {
			return o.runKill(w.applyDir, d, "git", "secure", "policy", "apply")
		},
		repair:     func() result { return o.run(w.applyDir, "git", "secure", "policy", "list") },
		repairHint: "any git secure policy command completes it (git secure policy list)",
		probe: func() result {
			r := o.run(w.applyDir, "git", "secure", "policy", "apply")
			if r.code == 2 && strings.Contains(r.stderr, "nothing is staged") {
				r.code = 0 // the killed apply had finished
			}
			return r
		},
		applied:  func(int) bool { return policyEntries(w.applyDir) == applyBase+1 },
		check:    func() []result { return []result{o.run(w.applyDir, "git", "secure", "verify")} },
		lockDirs: []string{filepath.Join(w.applyDir, ".git")},
	}
	hook := w.pushOp("server hook (killed during a push)", w.hooked)
	u, dir := w.hooked.persons[1], w.hooked.dirs[1]
	hook.kill = func(d time.Duration) result {
		_ = os.Remove(w.hookPID)
		ch := make(chan result, 1)
		go func() { ch <- u.run(dir, "git", "push", "-q", "origin", "HEAD:main") }()
		for {
			select {
			case r := <-ch:
				return r // finished before the hook ran (refused early)
			case <-time.After(time.Millisecond):
			}
			b, err := os.ReadFile(w.hookPID)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || pid <= 0 {
				continue
			}
			time.Sleep(d)
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			r := <-ch
			r.killed = true // the hook was, not the push
			return r
		}
	}
	return []*crashOp{record, w.pushOp("git push (file://)", w.file), w.pushOp("git push (git daemon)", w.daemon), apply, hook}
}

// lockRE finds lock files named in git's and git-secure's messages.
var lockRE = regexp.MustCompile(`(/[^'"\s:]+\.lock)\b`)

// namedLocks returns the existing lock files named in msg.
func namedLocks(msg string) []string {
	var out []string
	for _, m := range lockRE.FindAllStringSubmatch(msg, -1) {
		if _, err := os.Stat(m[1]); err == nil {
			out = append(out, m[1])
		}
	}
	return out
}

func allLocks(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		for _, l := range locks(d) {
			out = append(out, filepath.Join(d, l))
		}
	}
	return out
}

func failedOf(rs []result) []result {
	var out []result
	for _, r := range rs {
		if r.code != 0 {
			out = append(out, r)
		}
	}
	return out
}

// TestCrashKill SIGKILLs git-secure operations after a random delay and
// checks that what is left verifies or names its repair (see the package
// doc).
func TestCrashKill(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the crash test takes minutes")
	}
	// Random kills find rare states by design: they run in make stress
	// (or with GIT_SECURE_CRASH=1), not in every make test, where a rare
	// new finding must not stop unrelated work from landing. The states
	// they found are pinned deterministically by TestStaleLock* here.
	if !full() && os.Getenv("GIT_SECURE_CRASH") == "" {
		t.Skip("random SIGKILL loop: run make stress, or set GIT_SECURE_CRASH=1")
	}
	iterations := 20
	if full() {
		iterations = 100
	}
	iterations = envInt("GIT_SECURE_CRASH_ITERATIONS", iterations)
	w := setupCrashWorld(t)
	ops := w.ops()

	// Each operation's duration, run once to completion: kills are spread
	// over it (half of them in the first 80 ms, where process start-up,
	// configuration and the first git calls are).
	baseline := map[string]time.Duration{}
	for _, op := range ops {
		if err := op.prepare(-1); err != nil {
			t.Fatalf("%s: %v", op.name, err)
		}
		r := op.probe()
		if r.code != 0 {
			t.Fatalf("%s does not work without a kill:\n%s", op.name, r)
		}
		baseline[op.name] = r.dur
		if bad := failedOf(op.check()); len(bad) > 0 {
			t.Fatalf("%s: does not verify before any kill:\n%s", op.name, bad[0])
		}
	}

	outcomes := map[string]int{}
	examples := map[string]string{}
	var bugs, broken []string
	count := func(op *crashOp, what, example string) {
		k := op.name + ": " + what
		outcomes[k]++
		if examples[k] == "" && example != "" {
			examples[k] = example
		}
	}
	killed := 0
	start := time.Now()
	deadline := time.Now().Add(time.Hour)
	if dl, ok := t.Deadline(); ok {
		deadline = dl.Add(-2 * time.Minute)
	}
	done := 0
	for it := 0; it < iterations; it++ {
		if time.Now().After(deadline) {
			t.Errorf("stopped by the time bound after %d of %d iterations", it, iterations)
			break
		}
		op := ops[it%len(ops)]
		if err := op.prepare(it); err != nil {
			t.Fatalf("iteration %d, %s: %v", it, op.name, err)
		}
		var delay time.Duration
		if it/len(ops)%2 == 0 {
			delay = time.Duration(rand.Int64N(int64(80 * time.Millisecond)))
		} else {
			delay = time.Duration(rand.Int64N(int64(baseline[op.name])*12/10 + 1))
		}
		r := op.kill(delay)
		if r.killed {
			killed++
		}
		done++
		applied := op.applied(it)
		// Right after the kill: everything verifies, or says what to fix.
		after := failedOf(op.check())
		stale := allLocks(op.lockDirs)
		for _, f := range after {
			msg := f.stderr + f.stdout
			if len(namedLocks(msg)) > 0 {
				count(op, "verify fails naming a stale lock file", oneLine(msg))
				continue
			}
			if op.commitLock != "" && slices.Contains(stale, op.commitLock) && strings.Contains(msg, "changed without an entry") {
				// Git's ref transaction was cut between two lock
				// renames on the server: the branch without its entry,
				// the log's lock left. Verification fails closed; the
				// retry below must name the lock and, once it is
				// removed, record the entry.
				count(op, "verify fails: the server's ref transaction was cut (branch without its entry, log lock left); the retry repairs", oneLine(msg))
				continue
			}
			if op.repair != nil && strings.Contains(msg, op.repairHint) {
				// One clear, repairable state, with the command that
				// repairs it: run that command, then verify must pass.
				count(op, "verify names the repair of an interrupted operation; running it repairs", oneLine(msg))
				if r := op.repair(); r.code != 0 {
					broken = append(broken, fmt.Sprintf("iteration %d, %s: the repair command failed:\n%s", it, op.name, r))
				}
				continue
			}
			broken = append(broken, fmt.Sprintf("iteration %d, %s killed after %v: verify fails right after the kill (locks left: %v):\n%s", it, op.name, delay, stale, f))
			count(op, "BROKEN: verify fails after the kill", oneLine(msg))
		}
		// The repair: run the operation again; a stale lock must be named.
		p := op.probe()
		state := "completed before the kill"
		if !applied {
			state = "not applied"
		}
		switch {
		case p.code == 0 && len(stale) == 0:
			count(op, "verifies; "+state+"; the retry succeeds", "")
		case p.code == 0:
			count(op, "verifies; "+state+"; the retry succeeds, but stale locks stay behind", strings.Join(stale, " "))
		default:
			msg := p.stderr + p.stdout
			named := namedLocks(msg)
			switch {
			case len(named) > 0:
				count(op, "the retry fails naming the stale lock; removing it repairs", oneLine(msg))
				for _, l := range named {
					_ = os.Remove(l)
				}
			case len(stale) > 0:
				count(op, "BUG: the retry fails without naming the stale lock", oneLine(msg))
				bugs = append(bugs, fmt.Sprintf("iteration %d, %s killed after %v left %v; the retry's message does not name it:\n%s", it, op.name, delay, stale, p))
				for _, l := range stale {
					_ = os.Remove(l)
				}
			default:
				count(op, "the retry fails (no lock left)", oneLine(msg))
				broken = append(broken, fmt.Sprintf("iteration %d, %s killed after %v: the retry fails:\n%s", it, op.name, delay, p))
			}
			// git names one lock per failure; a cut transaction can
			// leave several (the branch's, HEAD's, the log's).
			for round := 0; ; round++ {
				if p = op.probe(); p.code == 0 {
					break
				}
				named := namedLocks(p.stderr + p.stdout)
				if round >= 4 || len(named) == 0 {
					broken = append(broken, fmt.Sprintf("iteration %d, %s killed after %v: the retry still fails after the repair:\n%s", it, op.name, delay, p))
					count(op, "BROKEN: not repairable", oneLine(p.stderr))
					break
				}
				count(op, "the retry fails naming another stale lock; removing it repairs", oneLine(p.stderr+p.stdout))
				for _, l := range named {
					_ = os.Remove(l)
				}
			}
		}
		// After the repair: everything verifies and the operation took effect.
		if bad := failedOf(op.check()); len(bad) > 0 {
			broken = append(broken, fmt.Sprintf("iteration %d, %s killed after %v: does not verify after the repair:\n%s", it, op.name, delay, bad[0]))
			count(op, "BROKEN: does not verify after the repair", oneLine(bad[0].stderr))
		} else if !op.applied(it) {
			broken = append(broken, fmt.Sprintf("iteration %d, %s: the repaired operation did not take effect", it, op.name))
			count(op, "BROKEN: the retry did not take effect", "")
		}
		for _, l := range allLocks(op.lockDirs) {
			// Locks the retry did not trip over (a stale config.lock, say);
			// removed so that the next iteration starts clean.
			_ = os.Remove(l)
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "crash test: %d iterations (%d killed before they finished) in %v\n", done, killed, time.Since(start).Round(time.Millisecond))
	var names []string
	for _, op := range ops {
		fmt.Fprintf(&b, "  %-40s runs %v to completion\n", op.name, baseline[op.name].Round(time.Millisecond))
	}
	for k := range outcomes {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, "  %4d  %s\n", outcomes[k], k)
		if e := examples[k]; e != "" {
			fmt.Fprintf(&b, "        e.g. %s\n", clip(e, 400))
		}
	}
	// Killed helpers cannot clean up their private namespace.
	for _, p := range []*project{w.file, w.daemon, w.hooked} {
		out := p.persons[1].run(p.dirs[1], "git", "for-each-ref", "--format=%(refname)", "refs/secure-incoming/").stdout
		ns := map[string]bool{}
		for _, r := range strings.Fields(out) {
			if parts := strings.SplitN(r, "/", 4); len(parts) == 4 {
				ns[parts[2]] = true
			}
		}
		fmt.Fprintf(&b, "  note: %s: %d refs in %d refs/secure-incoming/<pid>/ namespaces left behind by killed helpers\n", p.url, len(strings.Fields(out)), len(ns))
	}
	t.Log("\n" + b.String())
	for _, s := range broken {
		t.Error(s)
	}
	if len(bugs) > 0 && !t.Failed() {
		t.Errorf("after a crash, a stale lock file blocks git-secure, and its error does not name the lock (%d times); first:\n%s", len(bugs), bugs[0])
	}
}

func setupCrashWorld(t *testing.T) *crashWorld {
	t.Helper()
	w := &crashWorld{t: t, mirrorRoot: t.TempDir()}
	w.owner, w.p1 = newUser(t, "p0"), newUser(t, "p1")
	persons := []*user{w.owner, w.p1}
	w.recordDir = localRepo(w.owner, "local-record")
	w.applyDir = localRepo(w.owner, "local-apply")
	fileSrv := startServer(t, trFile)
	w.file = newProjectOn(t, fileSrv, "project", persons)
	w.daemon = newProjectOn(t, startServer(t, trDaemon), "viadaemon", persons)
	w.hooked = newProjectOn(t, fileSrv, "hooked", persons)
	// The hooked server's pre-receive hook writes its pid and runs
	// git-secure's hook in a process group of its own, which the test
	// kills.
	w.hookPID = filepath.Join(fileSrv.admin.sb.Home, "hook.pid")
	script := fmt.Sprintf("#!/bin/sh\necho $$ > '%s'\nexec setsid '%s' hook pre-receive \"$@\"\n", w.hookPID, filepath.Join(binDir, "git-secure"))
	if err := os.WriteFile(filepath.Join(w.hooked.repo, "hooks", "pre-receive"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}
