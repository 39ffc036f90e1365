package porcelain

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// TestRetry checks the one retry policy of recording: a lost race is made
// again up to MaxRecordAttempts attempts in all, anything else ends it.
func TestRetry(t *testing.T) {
	changed := fmt.Errorf("update refs/secure/rsl: %w", gitrepo.ErrRefChanged)
	other := errors.New("disk full")
	for _, c := range []struct {
		name      string
		outcomes  func(n int) (bool, error)
		attempts  int
		wantLost  bool
		wantError string
	}{
		{"first attempt wins", func(int) (bool, error) { return false, nil }, 1, false, ""},
		{"log moved twice", func(n int) (bool, error) {
			if n < 3 {
				return false, changed
			}
			return false, nil
		}, 3, false, ""},
		{"push lost twice", func(n int) (bool, error) { return n < 3, nil }, 3, false, ""},
		{"log keeps moving", func(int) (bool, error) { return false, changed }, MaxRecordAttempts, true, "ref changed"},
		{"others keep pushing", func(int) (bool, error) { return true, nil }, MaxRecordAttempts, true, ""},
		{"another error", func(int) (bool, error) { return false, other }, 1, false, "disk full"},
		{"a lock held", func(int) (bool, error) { return false, fmt.Errorf("lock: %w", gitrepo.ErrLocked) }, 4, false, "refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			attempts := 0
			lost, err := Retry(func(n int) (bool, error) {
				attempts++
				if n != attempts {
					t.Fatalf("attempt numbered %d, want %d", n, attempts)
				}
				return c.outcomes(n)
			})
			if attempts != c.attempts || lost != c.wantLost {
				t.Errorf("attempts %d, lost %v; want %d, %v", attempts, lost, c.attempts, c.wantLost)
			}
			if c.wantError == "" && err != nil || c.wantError != "" && (err == nil || !strings.Contains(err.Error(), c.wantError)) {
				t.Errorf("error %v; want %q", err, c.wantError)
			}
		})
	}
}
