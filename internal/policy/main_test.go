package policy

import (
	"flag"
	"os"
	"testing"
)

// fuzzMinimize is how long the fuzz targets of this package minimize
// each new input when -test.fuzzminimizetime is not given: 200 runs. The
// inputs are policy files of several kilobytes, and Go's minimizer tries
// every range of bytes (quadratic in the size), so with its default of
// 60 s (or the 2 s scripts/fuzz.sh used to pass) every new input found
// every second or two stopped the fuzzing: FuzzParseSigned managed 105
// executions in 4 minutes. The executions of a minimization are not
// counted as execs.
const fuzzMinimize = "200x"

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.fuzzminimizetime" })
	if !given {
		if err := flag.Set("test.fuzzminimizetime", fuzzMinimize); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
