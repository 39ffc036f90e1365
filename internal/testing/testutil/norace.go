//go:build !race

package testutil

// raceBuild: see race.go.
const raceBuild = false
