// Command mkbenchrepo builds (or finds in the cache) the benchmark
// repositories of internal/testing/benchrepo and prints one line per size:
//
//	<entries> <built|cached> <build seconds> <objects> <bytes> <directory>
//
// Usage: mkbenchrepo [-rebuild] SIZE...
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/git-secure/git-secure/internal/testing/benchrepo"
)

func main() {
	rebuild := flag.Bool("rebuild", false, "rebuild even when cached")
	flag.Parse()
	for _, arg := range flag.Args() {
		n, err := strconv.Atoi(arg)
		if err != nil || n < 2 {
			fmt.Fprintf(os.Stderr, "mkbenchrepo: bad size %q\n", arg)
			os.Exit(2)
		}
		if *rebuild {
			_ = os.RemoveAll(benchrepo.CachePath(n))
		}
		start := time.Now()
		info, err := benchrepo.Cached(n)
		if err != nil {
			fmt.Fprintf(os.Stderr, "mkbenchrepo: %d entries: %v\n", n, err)
			os.Exit(1)
		}
		status, secs := "built", time.Since(start).Seconds()
		if info.Cached {
			status, secs = "cached", info.BuildSeconds
		}
		fmt.Printf("%d %s %.3f %d %d %s\n", n, status, secs, info.Objects, info.Bytes, info.Dir)
	}
}
