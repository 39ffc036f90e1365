package porcelain_test

// Benchmarks of "rsl record" (porcelain.Repo.Record) on copies of the
// repositories of internal/testing/benchrepo (cached under .bench/). Run them with
// scripts/bench.sh (make bench), or directly:
//
//	go test -run '^$' -bench Record ./internal/porcelain
//
// GIT_SECURE_BENCH_RECORD_SIZES (default "1000,10000") chooses the log
// lengths.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/testing/benchrepo"
	"github.com/git-secure/git-secure/internal/verify"
)

func recordSizes(b *testing.B) []int {
	spec := os.Getenv("GIT_SECURE_BENCH_RECORD_SIZES")
	if spec == "" {
		return []int{1000, 10000}
	}
	var out []int
	for _, f := range strings.FieldsFunc(spec, func(r rune) bool { return r == ',' || r == ' ' }) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 2 {
			b.Fatalf("GIT_SECURE_BENCH_RECORD_SIZES: bad size %q", f)
		}
		out = append(out, n)
	}
	return out
}

// recBench is a private copy of a generated repository that entries are
// recorded onto.
type recBench struct {
	info  *benchrepo.Info
	git   *gitrepo.Repo // for moving refs between timed operations
	cur   map[string]gitrepo.Hash
	spare int
	entry uint64 // number of the last entry
}

func newRecBench(b *testing.B, n int) *recBench {
	b.Helper()
	cached, err := benchrepo.Cached(n)
	if err != nil {
		b.Fatal(err)
	}
	info, err := benchrepo.Copy(cached, filepath.Join(b.TempDir(), "copy"))
	if err != nil {
		b.Fatal(err)
	}
	g, err := gitrepo.OpenWithEnv(info.GitDir(), benchrepo.Env())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	return &recBench{
		info:  info,
		git:   g,
		cur:   map[string]gitrepo.Hash{benchrepo.MainRef: info.Main, benchrepo.ReleaseRef: info.Release},
		entry: uint64(n),
	}
}

func (rb *recBench) porcelain(g *gitrepo.Repo) *porcelain.Repo {
	return &porcelain.Repo{Git: g, Now: time.Now, Home: os.Getenv("HOME")}
}

// move points ref at the next spare commit, as a push or commit would.
func (rb *recBench) move(b *testing.B, ref string) gitrepo.Hash {
	b.Helper()
	next := rb.info.Spare[rb.spare%len(rb.info.Spare)]
	rb.spare++
	if err := rb.git.UpdateRefs([]gitrepo.RefUpdate{{Name: ref, Old: rb.cur[ref], New: next}}, "bench: move "+ref); err != nil {
		b.Fatal(err)
	}
	rb.cur[ref] = next
	return next
}

func (rb *recBench) check(b *testing.B, res *porcelain.RecordResult, err error, ref string) {
	b.Helper()
	rb.entry++
	if err != nil {
		b.Fatal(err)
	}
	if res.NoOp || res.Entry != rb.entry || res.New != rb.cur[ref] || len(res.Pending) != 0 {
		b.Fatalf("recorded %+v, want entry #%d of %s at %s with nothing pending", res, rb.entry, ref, rb.cur[ref])
	}
}

// verifyAll checks that everything recorded verifies (small logs only: it
// replays the whole log).
func (rb *recBench) verifyAll(b *testing.B) {
	b.Helper()
	if rb.entry > 2000 {
		return
	}
	res, err := verify.Verify(rb.git, verify.Options{Now: time.Now()})
	if err != nil {
		b.Fatal(err)
	}
	if uint64(res.Entries) != rb.entry {
		b.Fatalf("verified %d entries, want %d", res.Entries, rb.entry)
	}
}

// BenchmarkRecord is the cost of recording one entry (git processes
// included), for a log of N entries signed with an ed25519 key file:
//
//   - main/warm: refs/heads/main moved, then Record("main") on one
//     long-lived porcelain.Repo (its git cat-file processes already run);
//   - main/cold: the same with a fresh gitrepo.Open and Close around each
//     Record, as one "git secure rsl record" process does (Go start-up
//     excepted);
//   - new-tag/checkpoint: a new tag, in a clone with a verification
//     checkpoint at the log's tip;
//   - release/warm: refs/heads/release moved and approved by bob
//     (porcelain.Approve, not timed), then Record("release"): the path
//     where approvals count.
//
// Moving refs and approving are not timed.
func BenchmarkRecord(b *testing.B) {
	for _, n := range recordSizes(b) {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			b.Run("main/warm", func(b *testing.B) {
				rb := newRecBench(b, n)
				r := rb.porcelain(rb.git)
				key := rb.info.KeyFile(benchrepo.Alice)
				for b.Loop() {
					b.StopTimer()
					rb.move(b, benchrepo.MainRef)
					b.StartTimer()
					res, err := r.Record("main", key)
					rb.check(b, res, err, benchrepo.MainRef)
				}
				rb.verifyAll(b)
			})
			b.Run("main/cold", func(b *testing.B) {
				rb := newRecBench(b, n)
				key := rb.info.KeyFile(benchrepo.Alice)
				env := benchrepo.Env()
				for b.Loop() {
					b.StopTimer()
					rb.move(b, benchrepo.MainRef)
					b.StartTimer()
					g, err := gitrepo.OpenWithEnv(rb.info.GitDir(), env)
					if err != nil {
						b.Fatal(err)
					}
					res, err := rb.porcelain(g).Record("main", key)
					g.Close()
					rb.check(b, res, err, benchrepo.MainRef)
				}
				rb.verifyAll(b)
			})
			b.Run("new-tag/checkpoint", func(b *testing.B) {
				// A ref the log has never seen, in a clone that verified
				// once (as every fetch does): the walk for its previous
				// entry stops at the checkpoint instead of the first entry.
				rb := newRecBench(b, n)
				if _, err := verify.WithCheckpoint(rb.git, verify.Options{Now: time.Now()}, false); err != nil {
					b.Fatal(err)
				}
				r := rb.porcelain(rb.git)
				key := rb.info.KeyFile(benchrepo.Alice)
				i := 0
				for b.Loop() {
					b.StopTimer()
					i++
					tag := fmt.Sprintf("refs/tags/bench-%d", i)
					rb.move(b, tag)
					b.StartTimer()
					res, err := r.Record(tag, key)
					rb.check(b, res, err, tag)
				}
				rb.verifyAll(b)
			})
			b.Run("release/warm", func(b *testing.B) {
				rb := newRecBench(b, n)
				r := rb.porcelain(rb.git)
				alice, bob := rb.info.KeyFile(benchrepo.Alice), rb.info.KeyFile(benchrepo.Bob)
				for b.Loop() {
					b.StopTimer()
					to := rb.move(b, benchrepo.ReleaseRef)
					if _, err := r.Approve("release", to.String(), "", bob); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					res, err := r.Record("release", alice)
					rb.check(b, res, err, benchrepo.ReleaseRef)
				}
				rb.verifyAll(b)
			})
		})
	}
}
