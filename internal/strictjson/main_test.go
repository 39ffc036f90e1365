package strictjson

import (
	"flag"
	"os"
	"testing"
)

// fuzzMinimize is how long the fuzz targets of this package minimize
// each new input when -test.fuzzminimizetime is not given: 200 runs, as
// the policy package's. Go's minimizer is quadratic in the input and
// counts none of its runs as execs: at its default of 60 s, FuzzCheck
// managed 11 033 execs in 45 s, most of them in the first seconds.
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
