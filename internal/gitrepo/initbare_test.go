package gitrepo

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// Processes that share a cache repository (a push's helper and its
// pre-push hook both keep the organisation policy under
// .git/secure/org/) may open it at the same moment: each InitBare must
// succeed. git init of an existing repository rewrote its configuration
// under config.lock, and the loser failed with "could not lock config
// file ...: File exists" (seen in TestOrgRevokedKeySignsNoRepoPolicy).
func TestInitBareConcurrent(t *testing.T) {
	s := testutil.NewSandbox(t)
	for round := range 3 {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("cache-%d.git", round))
		var wg sync.WaitGroup
		errs := make(chan error, 12)
		for range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := InitBare(dir, s.Environ())
				if err == nil {
					r.Close()
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if got := strings.TrimSpace(s.Git(dir, "rev-parse", "--is-bare-repository")); got != "true" {
			t.Fatalf("round %d: %s is not a bare repository: %q", round, dir, got)
		}
	}
}
