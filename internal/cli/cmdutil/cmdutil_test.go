package cmdutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/clitest"
)

// TestReadPublicKey: a public key, a private key (its .pub beside it or
// derived) and their failures, each a usage error naming the file.
func TestReadPublicKey(t *testing.T) {
	r := clitest.New(t)
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"public", r.Pub("alice"), r.FP("alice")},
		{"private with .pub", r.Priv("bob"), r.FP("bob")},
		{"missing", filepath.Join(dir, "none.pub"), "read key " + filepath.Join(dir, "none.pub")},
		{"garbage", garbage, garbage + " is not an SSH public key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pub, err := ReadPublicKey(tc.path)
			if err != nil {
				if e, ok := report.As(err); !ok || e.Code != report.ExitUsage || !strings.Contains(e.Msg, tc.want) {
					t.Errorf("ReadPublicKey(%s): %v, want a usage error with %q", tc.path, err, tc.want)
				}
				return
			}
			if got := sign.Fingerprint(pub); got != tc.want {
				t.Errorf("ReadPublicKey(%s) = %s, want %s", tc.path, got, tc.want)
			}
		})
	}
}

// TestRootPin: flags replace the configured pin; a threshold flag alone
// keeps the configured keys.
func TestRootPin(t *testing.T) {
	r := clitest.New(t)
	r.Git("config", "secure.rootKeys", r.FP("alice")+" "+r.FP("bob"))
	r.Git("config", "secure.rootThreshold", "2")
	repo, err := r.F().Repo()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		pin       Pin
		keys      string
		threshold int
	}{
		{"configured", Pin{}, r.FP("alice") + " " + r.FP("bob"), 2},
		{"flags", Pin{Keys: PinFlags([]string{r.FP("carol")}), KeysSet: true}, r.FP("carol"), 0},
		{"threshold only", Pin{Threshold: 1, ThresholdSet: true}, r.FP("alice") + " " + r.FP("bob"), 1},
	} {
		keys, threshold, err := RootPin(tc.pin, repo)
		if err != nil || strings.Join(keys, " ") != tc.keys || threshold != tc.threshold {
			t.Errorf("%s: RootPin = %v, %d, %v; want %s, %d", tc.name, keys, threshold, err, tc.keys, tc.threshold)
		}
	}
}
