//go:build race

package testutil

// raceBuild is set when the tests run with -race: the binary the tests
// run (BuildBinary) is then built with the race detector too, so that
// `go test -race ./internal/testing/e2e` finds races in the remote helper
// and the hooks, which run in that binary and not in the test process.
const raceBuild = true
