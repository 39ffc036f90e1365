package remote

import (
	"crypto/sha1"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/testing/benchrepo"
	"github.com/git-secure/git-secure/internal/verify"
)

// junkStates returns n commit ids that no log records.
func junkStates(n int) map[gitrepo.Hash]bool {
	out := make(map[gitrepo.Hash]bool, n)
	for i := 0; i < n; i++ {
		out[gitrepo.Hash(sha1.Sum(fmt.Appendf(nil, "junk %d", i)))] = true
	}
	return out
}

// openBenchCopy returns a writable copy of the cached n-entry repository.
func openBenchCopy(tb testing.TB, n int) (*benchrepo.Info, *gitrepo.Repo) {
	tb.Helper()
	cached, err := benchrepo.Cached(n)
	if err != nil {
		tb.Fatal(err)
	}
	info, err := benchrepo.Copy(cached, filepath.Join(tb.TempDir(), "copy"))
	if err != nil {
		tb.Fatal(err)
	}
	g, err := gitrepo.OpenWithEnv(info.GitDir(), benchrepo.Env())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { g.Close() })
	return info, g
}

// A fetch remembers the keep refs the log does not record: the next one
// finds the same answer, the recorded state still taken, a damaged file
// is nothing remembered, and a state the log records later is found.
func TestRecordedKeepsRemembers(t *testing.T) {
	info, g := openBenchCopy(t, 50)
	keeps := junkStates(3)
	keeps[info.Main] = true
	for i := 0; i < 2; i++ {
		got, err := recordedKeeps(g, info.RSL, keeps, nil)
		if err != nil || len(got) != 1 || !got[info.Main] {
			t.Fatalf("fetch %d: recorded %v, %v; want only main's state %s", i, got, err, info.Main)
		}
	}
	tip, known := loadKeepMemo(g.GitDir())
	if tip != info.RSL || len(known) != 3 || known[info.Main] {
		t.Fatalf("remembered tip %s states %v, want %s and the 3 junk states", tip, known, info.RSL)
	}
	if err := os.WriteFile(keepMemoPath(g.GitDir()), []byte("tip nothex\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := recordedKeeps(g, info.RSL, keeps, nil); err != nil || len(got) != 1 {
		t.Fatalf("with a damaged file: %v, %v", got, err)
	}
	// Told (wrongly) that main's state is unrecorded up to an entry that
	// is not in this log: the whole log is read, and it is found.
	if err := saveKeepMemo(g.GitDir(), gitrepo.Hash{1}, map[gitrepo.Hash]bool{info.Main: true}); err != nil {
		t.Fatal(err)
	}
	if got, err := recordedKeeps(g, info.RSL, keeps, nil); err != nil || !got[info.Main] {
		t.Fatalf("with a foreign tip: %v, %v", got, err)
	}
	// A verification that read the whole log answers, and is remembered;
	// one of another log, or that did not read it all, is not taken.
	_ = os.Remove(keepMemoPath(g.GitDir()))
	res := &verify.Result{Tip: info.RSL, StatesComplete: true, FoundStates: map[gitrepo.Hash]bool{info.Main: true}}
	if got, err := recordedKeeps(g, info.RSL, keeps, res); err != nil || len(got) != 1 || !got[info.Main] {
		t.Fatalf("answered by the verification: %v, %v", got, err)
	}
	if tip, known := loadKeepMemo(g.GitDir()); tip != info.RSL || len(known) != 3 {
		t.Fatalf("after the verification's answer: remembered %s %v", tip, known)
	}
	for _, res := range []*verify.Result{
		{Tip: gitrepo.Hash{1}, StatesComplete: true},
		{Tip: info.RSL},
	} {
		if got, err := recordedKeeps(g, info.RSL, keeps, res); err != nil || len(got) != 1 || !got[info.Main] {
			t.Fatalf("with %+v: %v, %v", res, got, err)
		}
	}
}

// BenchmarkKeepLookup measures the fetch's lookup of the keep refs a
// remote serves on a 10 000-entry log, when 100 of them are for states the
// log does not record (they stay on the remote, so every fetch looks them
// up again): "whole log" is the lookup before (rsl.FindRecorded reads
// every entry on every fetch), "next fetch" the lookup now, once a fetch
// has remembered them, "first fetch" the lookup of a clone that remembers
// nothing yet without the verification's answer (one whole walk, as
// before); "first fetch, verification" is a first fetch's verification
// asked about the keep refs plus the lookup, against "first fetch,
// verification before": the verification not asked, then the whole walk.
func BenchmarkKeepLookup(b *testing.B) {
	info, g := openBenchCopy(b, 10_000)
	keeps := junkStates(100)
	keeps[info.Main] = true
	b.Run("whole log", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if got, err := rsl.FindRecorded(g, info.RSL, keeps, 0); err != nil || len(got) != 1 {
				b.Fatal(got, err)
			}
		}
	})
	b.Run("first fetch", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			_ = os.Remove(keepMemoPath(g.GitDir()))
			b.StartTimer()
			if got, err := recordedKeeps(g, info.RSL, keeps, nil); err != nil || len(got) != 1 {
				b.Fatal(got, err)
			}
		}
	})
	b.Run("first fetch, verification", func(b *testing.B) {
		// The fetch's verification of a log it has no checkpoint for,
		// asked about the keep refs (the lookup itself then reads nothing).
		for i := 0; i < b.N; i++ {
			res, err := verify.Verify(g, verify.Options{Now: info.Now(), FindStates: keeps})
			if err != nil || !res.StatesComplete || len(res.FoundStates) != 1 {
				b.Fatal(err)
			}
			if got, err := recordedKeeps(g, info.RSL, keeps, res); err != nil || len(got) != 1 {
				b.Fatal(got, err)
			}
		}
	})
	b.Run("first fetch, verification before", func(b *testing.B) {
		// The same verification not asked, then the whole walk (before).
		for i := 0; i < b.N; i++ {
			if _, err := verify.Verify(g, verify.Options{Now: info.Now()}); err != nil {
				b.Fatal(err)
			}
			if got, err := rsl.FindRecorded(g, info.RSL, keeps, 0); err != nil || len(got) != 1 {
				b.Fatal(got, err)
			}
		}
	})
	b.Run("next fetch", func(b *testing.B) {
		if _, err := recordedKeeps(g, info.RSL, keeps, nil); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if got, err := recordedKeeps(g, info.RSL, keeps, nil); err != nil || len(got) != 1 {
				b.Fatal(got, err)
			}
		}
	})
}
