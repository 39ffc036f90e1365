package stress

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// pushStats is what one pusher did.
type pushStats struct {
	name      string
	attempts  int // git push runs
	accepted  int // pushes git reported successful
	retried   int // pushes that failed and were retried after pulling
	ghosts    int // pushes reported failed whose commit is on the server anyway
	pullFails int
	// pullTorn counts pulls refused because the server's state did not
	// verify although the server was consistent: the fetch read the
	// branch after and the log before a concurrent push's ref
	// transaction committed (see the report below).
	pullTorn int
	acked    []string       // commits of the successful pushes
	reasons  map[string]int // why pushes failed
	samples  map[string]string
	err      error // why the pusher stopped early
}

// maxPushRetries bounds the retries of one commit's push (the race's time
// bound stops everything anyway).
const maxPushRetries = 200

// thinkTime bounds, in milliseconds, the random pause of a pusher after an
// accepted push: people work between pushes. Without it the winners push
// again at once and, as pushes got faster, a loser could lose 60 times in
// a row (git has no fairness between pushers; nothing was lost).
const thinkTime = 200

// backoffBase is the first retry's maximum backoff in milliseconds.
const backoffBase = 60

// maxBackoffShift caps the backoff at backoffBase<<3 (480 ms).
const maxBackoffShift = 3

// classify names why a push failed.
func classify(stderr string) string {
	switch {
	case strings.Contains(stderr, "others kept pushing"):
		return "helper gave up after its own retries (others kept pushing)"
	case strings.Contains(stderr, "cannot lock ref") || strings.Contains(stderr, "atomic transaction failed") || strings.Contains(stderr, "failed to update ref"):
		return "server ref transaction lost the race (cannot lock ref / failed to update ref)"
	case strings.Contains(stderr, "fetch first") || strings.Contains(stderr, "non-fast-forward"):
		return "non-fast-forward: someone else pushed main first"
	case strings.Contains(stderr, "moved during the push"):
		return "server hook: a ref moved during the push"
	case strings.Contains(stderr, "pre-receive hook declined") && !strings.Contains(stderr, "git-secure: rejected"):
		return "server hook declined without a message"
	case strings.Contains(stderr, "does not verify") || strings.Contains(stderr, "git-secure: rejected"):
		return "verification failed"
	case strings.Contains(stderr, "timed out"):
		return "timed out"
	}
	return "other"
}

// pull brings the server's main in with git pull --rebase (through the
// helper, so the log is fetched and verified), retrying a few times.
func pull(u *user, dir string, st *pushStats) error {
	var last result
	for i := 0; i < 8; i++ {
		last = u.run(dir, "git", "pull", "--rebase", "-q", "origin", "main")
		if last.code == 0 {
			return nil
		}
		st.pullFails++
		key := "pull failed"
		if strings.Contains(last.stderr, "does not verify") || strings.Contains(last.stderr, "does not match the log") {
			st.pullTorn++
			key = "pull refused: the server's state did not verify"
		}
		if st.samples[key] == "" {
			st.samples[key] = oneLine(last.stderr)
		}
		time.Sleep(time.Duration(20+rand.IntN(200)) * time.Millisecond)
	}
	return fmt.Errorf("git pull --rebase kept failing:\n%s", last)
}

// runPusher makes n commits, one file each, and pushes each with plain git
// push origin HEAD:main, pulling and retrying when the push is refused.
func runPusher(ctx context.Context, u *user, dir string, n int) *pushStats {
	st := &pushStats{name: u.name, reasons: map[string]int{}, samples: map[string]string{}}
	for k := 0; k < n; k++ {
		if ctx.Err() != nil {
			st.err = fmt.Errorf("stopped by the time bound after %d of %d pushes", k, n)
			return st
		}
		if err := pull(u, dir, st); err != nil {
			st.err = err
			return st
		}
		file := fmt.Sprintf("%s/%03d.txt", u.name, k)
		if err := u.writeCommit(dir, file, fmt.Sprintf("%s push %d\n", u.name, k), u.name+": "+file); err != nil {
			st.err = err
			return st
		}
		for attempt := 0; ; attempt++ {
			head := u.run(dir, "git", "rev-parse", "HEAD").stdout
			st.attempts++
			r := u.run(dir, "git", "push", "-q", "origin", "HEAD:main")
			if r.code == 0 {
				st.accepted++
				st.acked = append(st.acked, head)
				time.Sleep(time.Duration(rand.IntN(thinkTime)) * time.Millisecond)
				break
			}
			why := classify(r.stderr)
			st.reasons[why]++
			if st.samples[why] == "" {
				st.samples[why] = oneLine(r.stderr)
			}
			if attempt >= maxPushRetries || ctx.Err() != nil {
				st.err = fmt.Errorf("push of %s refused %d times; last:\n%s", file, attempt+1, r)
				return st
			}
			st.retried++
			// Exponential backoff with jitter: the pushers that lost step
			// aside so that the next round has fewer losers. The cap stays
			// near a few push times: a loser sleeping two seconds while
			// seven others push every 100-200 ms never finds a free window
			// (one pusher starved after 61 refusals once pushes got faster).
			time.Sleep(time.Duration(rand.IntN(backoffBase<<min(attempt, maxBackoffShift))) * time.Millisecond)
			if err := pull(u, dir, st); err != nil {
				st.err = err
				return st
			}
			// Refused, but there anyway? Then the pull found it upstream.
			if u.run(dir, "git", "merge-base", "--is-ancestor", head, "HEAD").code == 0 {
				st.ghosts++
				break
			}
		}
	}
	return st
}

// TestStressPushRace: P persons push N commits each to the protected main
// of an enforcing server at the same time (see the package doc).
func TestStressPushRace(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the push race takes minutes")
	}
	pushers, pushes := 3, 5
	if full() {
		pushers, pushes = 8, 50
	}
	pushers = envInt("GIT_SECURE_STRESS_PUSHERS", pushers)
	pushes = envInt("GIT_SECURE_STRESS_PUSHES", pushes)
	trs := []transport{trFile, trDaemon}
	if v := os.Getenv("GIT_SECURE_STRESS_TRANSPORTS"); v != "" {
		trs = nil
		for _, s := range strings.Split(v, ",") {
			trs = append(trs, transport(strings.TrimSpace(s)))
		}
	}
	for _, tr := range trs {
		t.Run(string(tr), func(t *testing.T) { pushRace(t, tr, pushers, pushes) })
	}
}

func pushRace(t *testing.T, tr transport, pushers, pushes int) {
	setupStart := time.Now()
	p := newProject(t, tr, pushers)
	t.Logf("%s: set up %d persons and clones in %v", tr, pushers, time.Since(setupStart).Round(time.Millisecond))

	// The time bound: the test's deadline, less a margin for the checks.
	ctx := context.Background()
	if dl, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-3*time.Minute))
		defer cancel()
	}
	var wg sync.WaitGroup
	stats := make([]*pushStats, pushers)
	start := time.Now()
	gate := make(chan struct{})
	for i := range p.persons {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			stats[i] = runPusher(ctx, p.persons[i], p.dirs[i], pushes)
		}()
	}
	close(gate)
	wg.Wait()
	wall := time.Since(start)

	var tot pushStats
	tot.reasons = map[string]int{}
	samples := map[string]string{}
	var acked []string
	for _, st := range stats {
		tot.attempts += st.attempts
		tot.accepted += st.accepted
		tot.retried += st.retried
		tot.ghosts += st.ghosts
		tot.pullFails += st.pullFails
		tot.pullTorn += st.pullTorn
		acked = append(acked, st.acked...)
		for k, v := range st.reasons {
			tot.reasons[k] += v
		}
		for k, v := range st.samples {
			if samples[k] == "" {
				samples[k] = v
			}
		}
		if st.err != nil {
			t.Errorf("pusher %s stopped: %v", st.name, st.err)
		}
	}

	// The server's state.
	admin := p.srv.admin
	mirror := filepath.Join(t.TempDir(), "mirror.git")
	vr, err := verifyMirror(admin, p.url, mirror)
	if err != nil {
		t.Fatal(err)
	}
	if vr.code != 0 {
		t.Errorf("git secure verify in a fresh mirror clone of the server failed:\n%s", vr)
	}
	entries, err := admin.rslLog(mirror)
	if err != nil {
		t.Fatal(err)
	}
	if merges := admin.git(mirror, "rev-list", "--min-parents=2", "refs/secure/rsl"); merges != "" {
		t.Errorf("the log has merge commits: %s", merges)
	}
	if roots := strings.Fields(admin.git(mirror, "rev-list", "--max-parents=0", "refs/secure/rsl")); len(roots) != 1 {
		t.Errorf("the log has %d roots, want 1", len(roots))
	}
	if n := admin.git(mirror, "rev-list", "--count", "refs/secure/rsl"); n != fmt.Sprint(len(entries)) {
		t.Errorf("the log has %s commits but rsl log lists %d entries", n, len(entries))
	}
	for i, e := range entries {
		if e.Number != uint64(i+1) {
			t.Errorf("entry %d of the log has number %d (want 1..N without gaps)", i+1, e.Number)
			break
		}
	}
	var mainEntries []rslEntry
	for _, e := range entries {
		if e.Type == "ref" && e.Ref == "refs/heads/main" {
			mainEntries = append(mainEntries, e)
		}
	}
	if len(mainEntries) == 0 {
		t.Fatalf("no entry for main in the log")
	}
	for i, e := range mainEntries {
		want := zeroHash
		if i > 0 {
			want = mainEntries[i-1].New
		}
		if e.Old != want {
			t.Errorf("main entry #%d: old %s, but the previous main entry's new is %s", e.Number, e.Old, want)
		}
	}
	serverMain := admin.refs(p.repo)["refs/heads/main"]
	chain := strings.Fields(admin.git(mirror, "rev-list", "--first-parent", "--reverse", "refs/heads/main"))
	if last := mainEntries[len(mainEntries)-1].New; last != serverMain {
		t.Errorf("the latest main entry records %s, but the server's main is %s", last, serverMain)
	}
	// The first-parent chain from the commit recorded at init.
	if i := indexOf(chain, mainEntries[0].New); i < 0 {
		t.Errorf("the first main entry's commit %s is not on main's first-parent chain", mainEntries[0].New)
	} else {
		chain = chain[i:]
	}
	recorded := map[string]int{}
	for _, e := range mainEntries {
		recorded[e.New]++
	}
	for c, n := range recorded {
		if n != 1 {
			t.Errorf("commit %s is recorded by %d main entries, want 1", c, n)
		}
	}
	onChain := map[string]bool{}
	for _, c := range chain {
		onChain[c] = true
		if recorded[c] == 0 {
			t.Errorf("commit %s on main's first-parent chain has no entry (accepted without being recorded)", c)
		}
	}
	for c := range recorded {
		if !onChain[c] {
			t.Errorf("commit %s is recorded for main but is not on its first-parent chain", c)
		}
	}
	if len(chain) == len(mainEntries) {
		for i := range chain {
			if chain[i] != mainEntries[i].New {
				t.Errorf("main entry %d records %s, but the %d-th commit of main's first-parent chain is %s", mainEntries[i].Number, mainEntries[i].New, i, chain[i])
				break
			}
		}
	} else {
		t.Errorf("main's first-parent chain has %d commits, the log %d main entries", len(chain), len(mainEntries))
	}
	losses := 0
	for _, c := range acked {
		if !onChain[c] || recorded[c] != 1 {
			losses++
			t.Errorf("LOSS: commit %s was reported pushed, but is not recorded on the server's main", c)
		}
	}
	accepted := len(mainEntries) - 1

	var b strings.Builder
	fmt.Fprintf(&b, "push race over %s: %d pushers x %d pushes\n", tr, pushers, pushes)
	fmt.Fprintf(&b, "  pushes attempted:        %d\n", tot.attempts)
	fmt.Fprintf(&b, "  reported successful:     %d\n", tot.accepted)
	fmt.Fprintf(&b, "  accepted by the server:  %d (main entries after init)\n", accepted)
	fmt.Fprintf(&b, "  rejected and retried:    %d\n", tot.retried)
	fmt.Fprintf(&b, "  refused but accepted:    %d\n", tot.ghosts)
	fmt.Fprintf(&b, "  failed pulls (retried):  %d\n", tot.pullFails)
	fmt.Fprintf(&b, "  log entries:             %d (%d for main)\n", len(entries), len(mainEntries))
	fmt.Fprintf(&b, "  losses:                  %d\n", losses)
	fmt.Fprintf(&b, "  wall time:               %v\n", wall.Round(time.Millisecond))
	fmt.Fprintf(&b, "  accepted pushes/s:       %.2f\n", float64(accepted)/wall.Seconds())
	fmt.Fprintf(&b, "  push attempts/s:         %.2f\n", float64(tot.attempts)/wall.Seconds())
	fmt.Fprintf(&b, "  mirror verify:           exit %d in %v\n", vr.code, vr.dur.Round(time.Millisecond))
	var keys []string
	for k := range tot.reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  refused: %4d  %s\n           e.g. %s\n", tot.reasons[k], k, samples[k])
	}
	if s := samples["pull failed"]; s != "" {
		fmt.Fprintf(&b, "  pull failure e.g. %s\n", s)
	}
	if tot.pullTorn > 0 {
		fmt.Fprintf(&b, "  BUG: %d pulls were refused because the server's state \"did not verify\", although the\n"+
			"       server verifies before and after: the fetch read refs/heads/main after and refs/secure/rsl\n"+
			"       before a concurrent push's ref transaction committed (git's files backend renames the\n"+
			"       locks one by one, so readers can see half of an --atomic push); the helper reports an\n"+
			"       attack (\"changed without an entry\") where a fetch again would verify. e.g.\n       %s\n",
			tot.pullTorn, samples["pull refused: the server's state did not verify"])
	}
	t.Log("\n" + b.String())
	if want := pushers * pushes; accepted != want && !t.Failed() {
		t.Errorf("the server accepted %d pushes, want %d", accepted, want)
	}
	if tot.accepted+tot.ghosts != accepted {
		t.Errorf("pushes reported successful (%d) + refused-but-accepted (%d) != accepted by the server (%d)", tot.accepted, tot.ghosts, accepted)
	}
	if tot.ghosts > 0 {
		t.Logf("note: %d pushes were reported as failed although the server accepted them", tot.ghosts)
	}
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}
