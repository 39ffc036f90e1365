package timestampcmd

import (
	"context"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/clitest"
)

// TestRunSign: a bad --time is a usage error naming the flag; a policy
// without freshness refuses to sign, saying how to set it.
func TestRunSign(t *testing.T) {
	r := clitest.New(t)
	r.Init()
	ctx := context.Background()
	err := runSign(ctx, &SignOptions{F: r.F(), Key: r.Priv("alice"), Time: "yesterday"})
	if err == nil || err.Error() != `--time "yesterday": want an RFC 3339 time such as 2026-01-02T03:04:05Z` {
		t.Errorf("timestamp sign --time yesterday: %v", err)
	}
	err = runSign(ctx, &SignOptions{F: r.F(), Key: r.Priv("alice")})
	if err == nil || err.Error() != "refused: the policy in force sets no freshness (git secure policy set-freshness --key FILE --max-age 24h)" {
		t.Errorf("timestamp sign without freshness: %v", err)
	}
}
