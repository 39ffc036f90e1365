package verify

import (
	"os"
	"strings"
	"testing"
)

// Tests judge logs of a few entries: with windows of 3 entries, every
// scenario of the package crosses window boundaries (a policy change, an
// annotation or a revocation in a later window than what it judges), and
// must still report exactly what it reported when the log was judged
// whole. Benchmarks keep the product's window.
func init() {
	if benchmarking(os.Args[1:]) {
		return
	}
	windowSize = 3
	// Pages of 2 records, 1 in memory: every scenario's annotations and
	// rewritten histories read states back from the spill file.
	spillPage, spillResident = 2, 1
	// A long log's listing is read 7 entries per cat-file.
	listingChunk = 7
	// Every long log (rsl.PipelineMin entries and more) is read
	// in-process, as logs of a million entries are; with the readers off
	// (GIT_SECURE_NO_FASTPATH=1, make test's second run) git reads it.
	inProcessChainMin = 0
}

// benchmarking reports whether the test binary was asked to run
// benchmarks: "-test.bench=X" as go test passes it, or "-test.bench X"
// (or -bench) given to a compiled test binary by hand, which must not
// measure the tests' tiny windows and spill pages.
func benchmarking(args []string) bool {
	for i, a := range args {
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		name, v, ok := strings.Cut(a, "=")
		if name != "test.bench" && name != "bench" {
			continue
		}
		if !ok && i+1 < len(args) {
			v = args[i+1]
		}
		if v != "" {
			return true
		}
	}
	return false
}

func TestBenchmarkingArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"-test.bench=BenchmarkVerify"}, true},
		{[]string{"-test.run", "^$", "-test.bench", "BenchmarkVerify"}, true},
		{[]string{"-bench", "."}, true},
		{[]string{"-test.bench="}, false},
		{[]string{"-test.benchtime=1x", "-test.run=TestX"}, false},
		{[]string{"-test.bench"}, false},
		{nil, false},
	} {
		if got := benchmarking(tc.args); got != tc.want {
			t.Errorf("benchmarking(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}
