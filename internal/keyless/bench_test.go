package keyless_test

import (
	"testing"

	"github.com/git-secure/git-secure/internal/keyless"
)

// BenchmarkVerifyReal: one offline verification of a real gitsign
// signature (CMS, chain, SET, inclusion proof, checkpoint).
func BenchmarkVerifyReal(b *testing.B) {
	payload, sig := realCommit(b)
	trust := publicTrust(b)
	for b.Loop() {
		if _, err := keyless.Verify(sig, payload, keyless.NamespaceGit, trust); err != nil {
			b.Fatal(err)
		}
	}
}
