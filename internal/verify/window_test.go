package verify

import (
	"os"
	"strings"
)

// Tests judge logs of a few entries: with windows of 3 entries, every
// scenario of the package crosses window boundaries (a policy change, an
// annotation or a revocation in a later window than what it judges), and
// must still report exactly what it reported when the log was judged
// whole. Benchmarks keep the product's window.
func init() {
	for _, a := range os.Args[1:] {
		if v, ok := strings.CutPrefix(a, "-test.bench="); ok && v != "" {
			return
		}
	}
	windowSize = 3
	// Pages of 2 records, 1 in memory: every scenario's annotations and
	// rewritten histories read states back from the spill file.
	spillPage, spillResident = 2, 1
	// A long log's listing is read 7 entries per cat-file.
	listingChunk = 7
}
