package stress

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestStressNonAtomicRace: in each round every person creates a protected
// branch (refs/heads/work/*) with its own log entry on the same log tip and
// pushes at the same moment, half of them with plain git without --atomic
// straight to the server (git then applies the push one ref per
// transaction and can refuse either ref after pre-receive), half through
// git-remote-secure (atomic). Whatever wins, the server must verify after
// every round: no branch without its entry, no entry without its branch,
// nothing a push was told landed is missing.
func TestStressNonAtomicRace(t *testing.T) {
	pushers, rounds := 4, 2
	if full() {
		pushers, rounds = 8, 25
	}
	pushers = envInt("GIT_SECURE_STRESS_PUSHERS", pushers)
	p := newProject(t, trFile, pushers)
	owner, odir := p.persons[0], p.dirs[0]
	var allow []string
	for _, u := range p.persons {
		allow = append(allow, "--allow", u.name)
	}
	owner.secure(odir, append([]string{"policy", "add-rule", "work", "--ref", "refs/heads/work/*"}, allow...)...)
	owner.secure(odir, "policy", "apply")
	owner.git(odir, "push", "-q", "origin", "refs/secure/*:refs/secure/*")
	raw := "file://" + p.repo
	start := time.Now()
	type outcome struct {
		atomic bool
		branch string
		r      result
	}
	var accepted, refusedWhole, helperAccepted int
	// The time bound, as the other stress tests: stop starting rounds 3
	// minutes before the test's deadline (a loaded machine runs fewer)
	// and still check and report what the rounds did.
	deadline := time.Now().Add(time.Hour)
	if dl, ok := t.Deadline(); ok {
		deadline = dl.Add(-3 * time.Minute)
	}
	done := 0
	for round := 0; round < rounds && time.Now().Before(deadline); round++ {
		done++
		for i, u := range p.persons {
			if r := u.run(p.dirs[i], "git", "fetch", "-q", "origin"); r.code != 0 {
				t.Fatalf("round %d: %s's fetch:\n%s", round, u.name, r)
			}
		}
		outs := make([]outcome, len(p.persons))
		var ready, wg sync.WaitGroup
		gate := make(chan struct{})
		for i, u := range p.persons {
			branch := fmt.Sprintf("work/%s-%d", u.name, round)
			atomic := i%2 == 1
			dir := p.dirs[i]
			u.git(dir, "branch", "-f", branch, "HEAD")
			if !atomic {
				// The entry is made here, on the log tip everyone shares.
				u.secure(dir, "rsl", "record", "refs/heads/"+branch)
			}
			ready.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				ready.Done()
				<-gate
				var r result
				if atomic {
					r = u.run(dir, "git", "push", "-q", "origin", branch)
				} else {
					r = u.run(dir, "git", "-c", "url."+raw+".pushInsteadOf="+raw, "push", "--no-verify", "--porcelain", raw, branch, "refs/secure/rsl:refs/secure/rsl") // past the helper
				}
				outs[i] = outcome{atomic: atomic, branch: branch, r: r}
			}()
		}
		ready.Wait()
		close(gate)
		wg.Wait()
		server := p.srv.admin.refs(p.repo)
		for i, o := range outs {
			landed := server["refs/heads/"+o.branch] != ""
			switch {
			case o.r.code == 0:
				accepted++
				if o.atomic {
					helperAccepted++
				}
				if !landed {
					t.Errorf("round %d: %s's push of %s succeeded but the branch is not on the server:\n%s", round, p.persons[i].name, o.branch, o.r)
				}
			case !o.atomic && !landed:
				refusedWhole++
			}
		}
		if r := p.srv.admin.run(p.repo, "git", "secure", "verify"); r.code != 0 {
			for _, o := range outs {
				t.Logf("%s", o.r)
			}
			t.Fatalf("round %d: the server does not verify after the race:\n%s", round, r)
		}
		// A person whose push was refused drops its entry (made on the log
		// tip of this round) before the next round fetches the server's.
		for i, u := range p.persons {
			if o := outs[i]; !o.atomic && o.r.code != 0 {
				u.git(p.dirs[i], "update-ref", "-d", "refs/heads/"+o.branch)
				u.git(p.dirs[i], "-c", "core.hooksPath=/dev/null", "update-ref", "refs/secure/rsl", "refs/secure/rsl~1")
			}
		}
	}
	// The non-atomic pushes of a protected branch are refused whole: the
	// transaction check never lets one ref land without the other.
	if refusedWhole == 0 {
		t.Errorf("no non-atomic push was refused whole; the race did not exercise the transaction check")
	}
	if helperAccepted == 0 {
		t.Errorf("no push through git-remote-secure was accepted")
	}
	mirror, err := verifyMirror(p.srv.admin, p.url, p.srv.admin.path("mirror.git"))
	if err != nil || mirror.code != 0 {
		t.Fatalf("a mirror of the server does not verify (%v):\n%s", err, mirror)
	}
	if done < rounds {
		t.Logf("non-atomic race: stopped after %d of %d rounds at the time bound", done, rounds)
	}
	t.Logf("non-atomic race: %d persons x %d rounds in %v: %d pushes accepted (%d through the helper), %d non-atomic pushes refused whole; the server verified after every round",
		pushers, done, time.Since(start).Round(time.Millisecond), accepted, helperAccepted, refusedWhole)
}
