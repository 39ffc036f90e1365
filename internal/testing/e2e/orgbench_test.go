package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkOrgRefUpdate: one ref update (git update-ref of an
// unprotected branch) in a member repository's bare server repository
// with git-secure's hooks: its reference-transaction hook looks up which
// refs the policy, combined with the organisation's, protects.
func BenchmarkOrgRefUpdate(b *testing.B) {
	f := newOrgFixture(b, true, nil, "app1")
	path := filepath.Join(f.srv.root, "app1.git")
	main := strings.TrimSpace(f.srv.admin.git(path, "rev-parse", "refs/heads/main"))
	child := strings.TrimSpace(f.srv.admin.git(path, "commit-tree", "refs/heads/main^{tree}", "-p", main, "-m", "topic"))
	values := []string{main, child}
	f.srv.admin.git(path, "update-ref", "refs/heads/topic", main)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.srv.admin.git(path, "update-ref", "refs/heads/topic", values[(i+1)%2], values[i%2])
	}
}
