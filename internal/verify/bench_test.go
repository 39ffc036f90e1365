package verify_test

// Benchmarks of full verification on repositories of 100, 1 000 and 10 000
// entries built by internal/testing/benchrepo (cached under .bench/). Run them with
// scripts/bench.sh (make bench), or directly:
//
//	go test -run '^$' -bench . ./internal/verify
//
// GIT_SECURE_BENCH_SIZES (for example "100,1000") chooses the sizes.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/benchrepo"
	"github.com/git-secure/git-secure/internal/verify"
)

func benchSizes(b *testing.B) []int {
	spec := os.Getenv("GIT_SECURE_BENCH_SIZES")
	if spec == "" {
		return []int{100, 1000, 10000}
	}
	var out []int
	for _, f := range strings.FieldsFunc(spec, func(r rune) bool { return r == ',' || r == ' ' }) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 2 {
			b.Fatalf("GIT_SECURE_BENCH_SIZES: bad size %q", f)
		}
		out = append(out, n)
	}
	return out
}

// openBench returns the cached n-entry repository, opened.
func openBench(b *testing.B, n int) (*benchrepo.Info, *gitrepo.Repo) {
	b.Helper()
	info, err := benchrepo.Cached(n)
	if err != nil {
		b.Fatal(err)
	}
	repo, err := gitrepo.OpenWithEnv(info.GitDir(), benchrepo.Env())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { repo.Close() })
	return info, repo
}

// peakHeap samples the bytes of live and not yet swept heap objects every
// millisecond until stop is called, and returns the maximum seen.
func peakHeap() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var peak uint64
	read := func() {
		metrics.Read(sample)
		if v := sample[0].Value.Uint64(); v > peak {
			peak = v
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				read()
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		read()
		return peak
	}
}

// cpuTime is the user+system CPU time of this process (git children not
// included: the long-lived cat-file processes are still running).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkVerify is verify.Verify on the whole log: N entries, every 10th
// a release update needing bob's approval (see internal/testing/benchrepo). One
// warm-up run (not timed) starts git cat-file and checks the repository
// verifies. Metrics: ns/entry (wall), cpu-ns/entry (this process only),
// peak-heap-MB (largest live heap seen while verifying), B/op, allocs/op.
func BenchmarkVerify(b *testing.B) {
	for _, n := range benchSizes(b) {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			info, repo := openBench(b, n)
			opts := verify.Options{Now: info.Now()}
			run := func() {
				res, err := verify.Verify(repo, opts)
				if err != nil {
					b.Fatal(err)
				}
				if res.Entries != n || res.Tip != info.RSL {
					b.Fatalf("verified %d entries up to %s, want %d up to %s", res.Entries, res.Tip, n, info.RSL)
				}
			}
			run()
			runtime.GC()
			stop := peakHeap()
			cpu0 := cpuTime()
			b.ReportAllocs()
			for b.Loop() {
				run()
			}
			cpu := cpuTime() - cpu0
			peak := stop()
			per := float64(b.N * n)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/entry")
			b.ReportMetric(float64(cpu.Nanoseconds())/per, "cpu-ns/entry")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}

// BenchmarkVerifyPhases times the parts of a verification one by one, so
// that the wall time of BenchmarkVerify can be split (the git cat-file
// process's time is invisible to a Go CPU profile):
//
//   - read-objects: ReadObject of every entry commit (cat-file round trips);
//   - read-log: rsl.ReadLog (the above plus ParseCommit and rsl.FromCommit);
//   - parse: ParseCommit, rsl.FromCommit and SignedPayload from memory;
//   - signatures: sign.VerifySSHSig of every entry on one goroutine
//     (Verify spreads this over GOMAXPROCS goroutines);
//   - approvals: for each release entry, what verify does to count bob's
//     approval: read the approval directory from refs/secure/attestations,
//     parse and verify the envelope, parse and match the statement
//     (ns/approval).
//
// Two more show what suggested fixes would gain (they are not how verify
// works today):
//
//   - read-objects-pipelined: the entry IDs from one "git rev-list", then
//     every object through one "git cat-file --batch" whose requests are
//     written by another goroutine (no round trip per object);
//   - approvals-indexed: the approvals/ directory read once per
//     verification into a map, instead of once per approval.
func BenchmarkVerifyPhases(b *testing.B) {
	for _, n := range benchSizes(b) {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			info, repo := openBench(b, n)
			records, err := rsl.ReadLog(repo, info.RSL)
			if err != nil {
				b.Fatal(err)
			}
			pol, err := policy.Load(repo, info.Policy)
			if err != nil {
				b.Fatal(err)
			}
			perEntry := func(b *testing.B, count int) {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*count), "ns/entry")
			}
			b.Run("read-objects", func(b *testing.B) {
				for b.Loop() {
					for _, rec := range records {
						if _, _, err := repo.ReadObject(rec.ID, 1<<20); err != nil {
							b.Fatal(err)
						}
					}
				}
				perEntry(b, n)
			})
			b.Run("read-objects-pipelined", func(b *testing.B) {
				for b.Loop() {
					if got := readPipelined(b, info.GitDir(), info.RSL); got != n {
						b.Fatalf("read %d entries, want %d", got, n)
					}
				}
				perEntry(b, n)
			})
			b.Run("read-log", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := rsl.ReadLog(repo, info.RSL); err != nil {
						b.Fatal(err)
					}
				}
				perEntry(b, n)
			})
			b.Run("parse", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					for _, rec := range records {
						c, err := gitrepo.ParseCommit(rec.Commit.Raw)
						if err != nil {
							b.Fatal(err)
						}
						if _, err := rsl.FromCommit(c); err != nil {
							b.Fatal(err)
						}
						if len(c.SignedPayload()) == 0 {
							b.Fatal("empty payload")
						}
					}
				}
				perEntry(b, n)
			})
			b.Run("signatures", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					for _, rec := range records {
						if _, err := sign.VerifySSHSig(rec.Commit.Signature, rec.Commit.SignedPayload(), sign.NamespaceGit, pol.LookupKey); err != nil {
							b.Fatal(err)
						}
					}
				}
				perEntry(b, n)
			})
			b.Run("approvals", func(b *testing.B) {
				store, err := attest.OpenStore(repo)
				if err != nil {
					b.Fatal(err)
				}
				var releases []*rsl.Entry
				for _, rec := range records {
					if rec.Entry.Ref == benchrepo.ReleaseRef {
						releases = append(releases, rec.Entry)
					}
				}
				if len(releases) == 0 {
					b.Skip("no release entries")
				}
				b.ReportAllocs()
				for b.Loop() {
					for _, e := range releases {
						if err := checkApproval(store, pol, e); err != nil {
							b.Fatalf("entry #%d: %v", e.Number, err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(releases)), "ns/approval")
			})
			b.Run("approvals-indexed", func(b *testing.B) {
				var releases []*rsl.Entry
				for _, rec := range records {
					if rec.Entry.Ref == benchrepo.ReleaseRef {
						releases = append(releases, rec.Entry)
					}
				}
				if len(releases) == 0 {
					b.Skip("no release entries")
				}
				b.ReportAllocs()
				for b.Loop() {
					idx, err := indexApprovals(repo, info.Attestations)
					if err != nil {
						b.Fatal(err)
					}
					for _, e := range releases {
						if err := idx.check(repo, pol, e); err != nil {
							b.Fatalf("entry #%d: %v", e.Number, err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(releases)), "ns/approval")
			})
		})
	}
}

// checkApproval does for release entry e what verify.Approvers does: it
// finds bob's approval of exactly e's transition and checks it.
func checkApproval(store *attest.Store, pol *policy.Policy, e *rsl.Entry) error {
	files, err := store.Approvals(e.Ref, e.Old, e.New)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return fmt.Errorf("%d approvals, want 1", len(files))
	}
	for name, data := range files {
		env, err := attest.ParseEnvelope(data)
		if err != nil {
			return err
		}
		if err := attest.CheckSignerFile(name, env); err != nil {
			return err
		}
		key, err := env.Verify(pol.LookupPersonKey)
		if err != nil {
			return err
		}
		a, err := attest.ParseApproval(env.Payload)
		if err != nil {
			return err
		}
		if err := a.Matches(e.Ref, e.Old, e.New); err != nil {
			return err
		}
		if p, ok := pol.PersonByFingerprint(sign.Fingerprint(key)); !ok || p.Name != benchrepo.Bob {
			return fmt.Errorf("approved by %s, not bob", sign.Fingerprint(key))
		}
	}
	return nil
}

// readPipelined reads every entry commit of the log at tip with one git
// rev-list and one git cat-file --batch fed by a separate goroutine, and
// returns how many it read.
func readPipelined(b *testing.B, gitDir string, tip gitrepo.Hash) int {
	b.Helper()
	list := exec.Command("git", "rev-list", "--first-parent", tip.String())
	list.Dir, list.Env = gitDir, benchrepo.Env()
	ids, err := list.Output()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir, cmd.Env = gitDir, benchrepo.Env()
	cmd.Stdin = bytes.NewReader(ids)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	r := bufio.NewReaderSize(out, 1<<16)
	count := 0
	for {
		line, err := r.ReadSlice('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		f := bytes.Fields(line)
		if len(f) != 3 || string(f[1]) != "commit" {
			b.Fatalf("unexpected response %q", line)
		}
		size, err := strconv.Atoi(string(f[2]))
		if err != nil {
			b.Fatal(err)
		}
		data := make([]byte, size+1)
		if _, err := io.ReadFull(r, data); err != nil {
			b.Fatal(err)
		}
		if _, err := gitrepo.ParseCommit(data[:size]); err != nil {
			b.Fatal(err)
		}
		count++
	}
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	return count
}

// approvalIndex is the approvals/ directory of the attestation store read
// once: directory name to tree.
type approvalIndex map[string]gitrepo.Hash

func indexApprovals(repo *gitrepo.Repo, tip gitrepo.Hash) (approvalIndex, error) {
	c, err := repo.ReadCommit(tip)
	if err != nil {
		return nil, err
	}
	root, err := repo.ReadTree(c.Tree)
	if err != nil {
		return nil, err
	}
	idx := approvalIndex{}
	for _, e := range root {
		if e.Name != "approvals" || e.Mode != gitrepo.ModeTree {
			continue
		}
		dirs, err := repo.ReadTree(e.Hash)
		if err != nil {
			return nil, err
		}
		for _, d := range dirs {
			if d.Mode == gitrepo.ModeTree {
				idx[d.Name] = d.Hash
			}
		}
	}
	return idx, nil
}

func (idx approvalIndex) check(repo *gitrepo.Repo, pol *policy.Policy, e *rsl.Entry) error {
	dir, ok := idx[strings.TrimPrefix(attest.ApprovalDir(e.Ref, e.Old, e.New), "approvals/")]
	if !ok {
		return fmt.Errorf("no approvals")
	}
	files, err := repo.ReadTree(dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		_, data, err := repo.ReadObject(f.Hash, attest.MaxEnvelopeSize)
		if err != nil {
			return err
		}
		env, err := attest.ParseEnvelope(data)
		if err != nil {
			return err
		}
		if err := attest.CheckSignerFile(f.Name, env); err != nil {
			return err
		}
		if _, err := env.Verify(pol.LookupPersonKey); err != nil {
			return err
		}
		a, err := attest.ParseApproval(env.Payload)
		if err != nil {
			return err
		}
		if err := a.Matches(e.Ref, e.Old, e.New); err != nil {
			return err
		}
	}
	return nil
}
